"""The floor plan holds: the foundation below, each app above only what it builds on (the contracts in
pyproject.toml), every app the same shape, every model saying what it is, migrations named, and no
package holding most of the code."""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from django.apps import apps

from tests.helpers import ROOT, application_packages

# The project's own package: settings, URLs, entry points; it is not an app.
SITE_PACKAGE = "config"
# What every app has, so that a newcomer finds the same thing in the same place in each.
APP_MODULES = ("apps", "models", "services", "selectors", "api", "admin", "tasks")
# No package holds more than this share of the application's lines.
MAX_SHARE = 0.40
# Names Django makes up when a migration is not named.
UNNAMED_MIGRATION = re.compile(r"_auto_\d{8}_\d{4}$|_and_more$|^\d{4}_initial_\d")
# The docstring Django gives a model that has none: "Name(id, field, ...)".
GENERATED_DOC = re.compile(r"^\w+\(.*\)$", re.S)

APPS = [package for package in application_packages() if package != SITE_PACKAGE]


def _lines(package: str) -> int:
    return sum(
        len(path.read_text(encoding="utf-8").splitlines())
        for path in (ROOT / package).rglob("*.py")
        if "migrations" not in path.relative_to(ROOT).parts
    )


def test_the_layer_contracts_are_kept():
    lint_imports = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


def test_every_package_has_its_place_in_the_layers():
    with (ROOT / "pyproject.toml").open("rb") as project:
        contracts = tomllib.load(project)["tool"]["importlinter"]["contracts"]
    (layers,) = [contract["layers"] for contract in contracts if contract["id"] == "layers"]
    placed = {name.strip() for layer in layers for name in re.split(r"[|:]", layer)}
    on_disk = {path.parent.name for path in ROOT.glob("*/__init__.py")} - {"tests", "bench"}
    assert placed == set(application_packages()) == on_disk


@pytest.mark.parametrize("package", APPS)
def test_every_app_has_the_same_module_set(package):
    missing = [
        module
        for module in APP_MODULES
        if not (ROOT / package / f"{module}.py").exists() and not (ROOT / package / module / "__init__.py").exists()
    ]
    assert not missing, f"{package} has no {', '.join(missing)}"
    assert (ROOT / "tests" / package).is_dir(), "the tests mirror the code"


def test_every_app_is_installed_lowest_first():
    installed = [config.name for config in apps.get_app_configs() if config.name in APPS]
    assert installed == list(reversed(APPS))


def test_every_model_says_what_it_is():
    undocumented = [
        model._meta.label
        for model in apps.get_models()
        if model._meta.app_config.name in APPS and (not model.__doc__ or GENERATED_DOC.match(model.__doc__.strip()))
    ]
    assert not undocumented


def test_every_migration_is_named():
    unnamed = [
        str(path.relative_to(ROOT))
        for package in APPS
        for path in (ROOT / package / "migrations").glob("[0-9]*.py")
        if UNNAMED_MIGRATION.search(path.stem)
    ]
    assert not unnamed


def test_the_unnamed_migration_check_knows_djangos_names():
    generated = ["0002_auto_20261125_0550", "0007_remove_apitoken_owner_remove_modelcall_owner_and_more"]
    assert all(UNNAMED_MIGRATION.search(name) for name in generated)
    assert not UNNAMED_MIGRATION.search("0007_models_move_to_foundation_and_accounts")


def test_no_package_holds_most_of_the_code():
    lines = {package: _lines(package) for package in application_packages()}
    total = sum(lines.values())
    assert {package: round(count / total, 2) for package, count in lines.items() if count > MAX_SHARE * total} == {}


# A code reference in the docs: a path in the tree, or a dotted name in one of the product's packages.
CODE_REFERENCE = re.compile(r"`([\w./-]+)`")


def _references(text: str) -> set[str]:
    tops = set(application_packages()) | {"tests", "bench", "templates"}
    return {ref for ref in CODE_REFERENCE.findall(text) if re.split(r"[./]", ref)[0] in tops}


def _resolves(reference: str) -> bool:
    if "/" in reference:
        return (ROOT / reference.rstrip("/")).exists()
    parts = reference.split(".")
    for cut in range(len(parts), 0, -1):
        module = ROOT.joinpath(*parts[:cut])
        if module.with_suffix(".py").exists() or (module / "__init__.py").exists():
            if cut == len(parts):
                return True
            source = module.with_suffix(".py") if module.with_suffix(".py").exists() else module / "__init__.py"
            return re.search(rf"\b{re.escape(parts[cut])}\b", source.read_text(encoding="utf-8")) is not None
    return False


@pytest.mark.parametrize(
    "page", ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md"))]
)
def test_the_docs_name_only_code_that_exists(page):
    references = _references((ROOT / page).read_text(encoding="utf-8"))
    assert not sorted(ref for ref in references if not _resolves(ref))


def test_the_architecture_page_names_every_package():
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert all(f"`{package}/`" in page for package in application_packages())
