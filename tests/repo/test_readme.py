"""The README's Quick start and .ci/run must say the same thing."""

from __future__ import annotations

import re

from support import REPO


def _quick_start_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    section = text.split("## Quick start", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "README Quick start has no ```sh block"
    return [line.strip() for line in block.group(1).splitlines() if line.strip()]


def test_quick_start_has_two_commands() -> None:
    commands = _quick_start_commands()
    assert len(commands) == 2
    assert commands[0].startswith("pip install . ")
    assert commands[1].startswith("pip install '.[test]'")


def test_ci_runs_the_quick_start_commands_verbatim() -> None:
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    for command in _quick_start_commands():
        assert command in [line.strip() for line in ci], f".ci/run lacks: {command}"


def test_ci_fails_on_every_pytest_failure() -> None:
    """pytest's exit status is .ci/run's: 5 ("no tests collected") is a failure too, so
    nothing may turn errexit off or map a status to success."""
    lines = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()
             if line.strip() and not line.strip().startswith("#")]
    assert "set -euo pipefail" in lines
    assert not [line for line in lines if re.match(r"set [+]\w*e", line)], lines
    assert not [line for line in lines if re.search(r"\bexit\b|\|\| *true", line)], lines
    assert lines[-1] == "pip install '.[test]' && pytest", lines[-1]


def test_readme_says_how_long_the_suite_takes() -> None:
    """A newcomer knows what to expect from `pytest` before running it."""
    text = (REPO / "README.md").read_text()
    assert re.search(r"took \d+ min \d+ s", text)
