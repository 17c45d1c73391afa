"""The code stays lint-clean; CI runs the same test suite as a user, so the check lives here."""

import subprocess
import sys

from tests.helpers import ROOT


def test_ruff_finds_nothing():
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--output-format", "concise", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
