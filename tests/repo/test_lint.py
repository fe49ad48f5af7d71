"""The code base stays ``ruff`` clean (rules in pyproject.toml): a lint error fails the suite."""

from __future__ import annotations

import subprocess
import sys

from support import REPO


def test_ruff_check_is_clean() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "irtool", "tests", "bench",
         "samples"],
        cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
