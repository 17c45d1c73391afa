"""The layers hold: the contracts in pyproject.toml (the foundation imports no app above it, the domain
apps do not import retrieval or chat, and no package has a circle between its modules)."""

import subprocess
import sys
from pathlib import Path

from tests.helpers import ROOT


def test_the_layer_contracts_are_kept():
    lint_imports = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout
