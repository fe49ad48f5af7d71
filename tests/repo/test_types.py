"""The type contract holds: mypy passes on irtool/ with the settings in pyproject.toml
(strict on ir/, passes/, validation/ and engines/, mypy's defaults elsewhere)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from support import REPO


@pytest.mark.skipif(bool(os.environ.get("IRTOOL_MIN_VERSIONS")),
                    reason="the dependencies' floors ship other type stubs (numpy's): the "
                           "contract is checked with the versions the project develops with")
def test_mypy_passes() -> None:
    # mypy's own cache (.mypy_cache, git-ignored) makes a second run take seconds.
    proc = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary"],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
