"""The code stays lint-clean and readable; CI runs the same test suite as a user, so the checks live here."""

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from tests.helpers import ROOT, application_packages

# The packages that make the product; their migrations are generated and left out.
APPLICATION_PACKAGES = application_packages()
# A function longer than this is split into named steps.
MAX_FUNCTION_LINES = 60


def test_ruff_finds_nothing():
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--output-format", "concise", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _function_lengths(source: str) -> Iterator[tuple[str, int, int]]:
    """(name, first line, lines) of every function and method in ``source``, nested ones included; a
    function's lines run from its first decorator to its last line."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
            yield node.name, first, node.end_lineno - first + 1


def _application_modules() -> list[Path]:
    return [
        path
        for package in APPLICATION_PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.relative_to(ROOT).parts
    ]


def test_no_application_function_is_over_the_limit():
    modules = _application_modules()
    assert len(modules) > len(APPLICATION_PACKAGES)  # the packages were found, not an empty tree
    too_long = [
        f"{path.relative_to(ROOT)}:{line} {name} ({lines} lines)"
        for path in modules
        for name, line, lines in _function_lengths(path.read_text(encoding="utf-8"))
        if lines > MAX_FUNCTION_LINES
    ]
    assert not too_long, f"over {MAX_FUNCTION_LINES} lines, split into named steps:\n" + "\n".join(too_long)


def test_the_length_check_counts_decorators_methods_and_nested_functions():
    def statements(indent: int, count: int) -> list[str]:
        return [f"{' ' * indent}x{i} = {i}" for i in range(count)]

    source = "\n".join(
        [
            "@decorated",
            "def at_the_limit():",
            *statements(4, MAX_FUNCTION_LINES - 2),
            "class Holder:",
            "    async def over_the_limit(self):",
            "        def nested():",
            *statements(12, MAX_FUNCTION_LINES - 1),
            *statements(8, 1),
        ]
    )
    lengths = {name: lines for name, _, lines in _function_lengths(source)}
    assert lengths == {
        "at_the_limit": MAX_FUNCTION_LINES,
        "over_the_limit": MAX_FUNCTION_LINES + 2,
        "nested": MAX_FUNCTION_LINES,
    }
