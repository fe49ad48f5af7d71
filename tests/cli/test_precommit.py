"""The pre-commit hook, tried for real: pre-commit's own runner, in a throw-away git
repository whose ``.pre-commit-config.yaml`` points at this checkout (``repo: <path>``,
``rev:`` its HEAD), installs irtool from it as it would from GitHub and runs the
``irtool-validate`` hook of ``.pre-commit-hooks.yaml`` on a good and a broken IR.

Slow (pre-commit builds irtool's environment: pip install of the checkout, from pip's
cache when warm). The hook is the one committed at HEAD.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import REPO
from support.gate import copy_ir

pytestmark = pytest.mark.slow

FIXTURES = REPO / "tests" / "fixtures" / "ir_producers"


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          check=True, timeout=120).stdout.strip()


@pytest.fixture(scope="module")
def head() -> str:
    pytest.importorskip("pre_commit", reason="pre-commit is a test extra: pip install "
                                             "'.[test]'")
    if shutil.which("git") is None:
        pytest.skip("no git")
    try:
        rev = _git("rev-parse", "HEAD", cwd=REPO)
        _git("cat-file", "-e", f"{rev}:.pre-commit-hooks.yaml", cwd=REPO)
    except subprocess.CalledProcessError:
        pytest.skip("the checkout's HEAD has no .pre-commit-hooks.yaml (commit it first)")
    return rev


def _pre_commit(repo: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    return subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=1800)


def test_the_hook_passes_good_ir_and_stops_broken_ir(head: str, tmp_path: Path) -> None:
    repo = tmp_path / "models"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {REPO}\n  rev: {head}\n  hooks:\n  - id: irtool-validate\n")
    copy_ir(FIXTURES / "cnn_torch.xml", repo / "ir" / "cnn.xml")
    (repo / "pom.xml").write_text("<project/>\n")  # other XML: the hook skips it
    _git("add", "-A", cwd=repo)
    home = tmp_path / "pre-commit-home"

    proc = _pre_commit(repo, home)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "irtool validate" in proc.stdout and "Passed" in proc.stdout

    copy_ir(FIXTURES / "cnn_torch.xml", repo / "ir" / "broken.xml",
            edit=('precision="FP32"', 'precision="FP33"'))  # an element type no IR has
    _git("add", "-A", cwd=repo)
    proc = _pre_commit(repo, home)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Failed" in proc.stdout
    assert "ir/broken.xml:7: error: ELEMENT_TYPE layer 0" in proc.stdout
    assert "cnn.xml:" not in proc.stdout and "pom.xml" not in proc.stdout
