"""The declared floors are tried: .ci/min-versions pins every dependency to its floor
(fast check here) and, as a slow test, installs them in a venv and runs the smoke subset."""

from __future__ import annotations

import subprocess
import sys

import pytest
from support import REPO

SCRIPT = REPO / ".ci" / "min-versions"


def test_every_dependency_has_a_pinned_floor() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+; the script runs on 3.11 in CI
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = [*project["dependencies"], *project["optional-dependencies"]["test"]]
    proc = subprocess.run([sys.executable, str(SCRIPT), "--pins"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    pins = proc.stdout.split()
    assert len(pins) == len(declared)
    for requirement, pin in zip(declared, pins):
        name, floor = requirement.split(">=")
        assert pin == f"{name}=={floor}"


def test_smoke_tests_exist() -> None:
    source = SCRIPT.read_text()
    start = source.index("SMOKE_TESTS = [")
    listed = [line.strip().strip('",') for line in
              source[start:source.index("]", start)].splitlines()[1:]]
    assert listed and all((REPO / path).is_file() for path in listed), listed


@pytest.mark.slow
def test_min_versions_run(tmp_path) -> None:  # type: ignore[no-untyped-def]
    proc = subprocess.run([sys.executable, str(SCRIPT), "--venv", str(tmp_path / "venv")],
                          capture_output=True, text=True, timeout=3000)
    assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-3000:])
    assert "every floor installed and passed the smoke run" in proc.stdout
