"""The README's claims hold: its Quick start is what .ci/run runs, its commands and its
Python example run, its links resolve, it lists every command, it stays short."""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
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


# -- what the README claims, checked ----------------------------------------------------------

DOCS = [REPO / "README.md", REPO / "docs" / "user-guide.md", REPO / "docs" / "sklearn.md"]


def _anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces '-'."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    return {_anchor(m.group(1)) for m in re.finditer(r"^#+ (.+)$", path.read_text(), re.M)}


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_links_resolve(doc: Path) -> None:
    """Every relative link and image of the README and the user guide names a file of the
    repository, and every #anchor a heading of the file it points into."""
    for target in re.findall(r"\]\(([^)\s]+)\)", doc.read_text()):
        if re.match(r"[a-z]+://", target):
            continue
        path, _, anchor = target.partition("#")
        file = (doc.parent / path).resolve() if path else doc
        assert file.is_file(), f"{doc.name}: {target} names no file"
        if anchor:
            assert anchor in _anchors(file), f"{doc.name}: {target}: no such heading"


def _block(heading: str, language: str) -> str:
    text = (REPO / "README.md").read_text()
    section = text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(rf"```{language}\n(.*?)```", section, re.S)
    assert block, f"README's {heading} has no ```{language} block"
    return block.group(1)


@pytest.fixture()
def sample_dir(tmp_path: Path) -> Path:
    """A folder holding a copy of samples/, where the README's commands run."""
    shutil.copytree(REPO / "samples", tmp_path / "samples")
    return tmp_path


def test_the_commands_run(sample_dir: Path) -> None:
    """Each line of the README's Commands block, as written, exits 0 (the PNG one only
    where graphviz is installed, as CI has it)."""
    irtool = [sys.executable, "-m", "irtool"]
    for line in _block("Commands", "sh").splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        assert words[0] == "irtool", line
        if "--png" in words and shutil.which("dot") is None and not os.environ.get("CI"):
            continue
        proc = subprocess.run(irtool + words[1:], cwd=sample_dir, capture_output=True,
                              text=True, timeout=600)
        assert proc.returncode == 0, (line, proc.stdout[-2000:], proc.stderr)
    assert (sample_dir / "out" / "predict_net.xml").is_file()


def test_the_python_example_runs(sample_dir: Path) -> None:
    """The README's Python block, run as it is: the outputs it reads are onnxruntime's."""
    script = sample_dir / "example.py"
    script.write_text(_block("Python", "python") + textwrap.dedent("""
        import onnxruntime as ort
        sess = ort.InferenceSession("samples/predict_net.onnx",
                                    providers=["CPUExecutionProvider"])
        want = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feed)))
        for name, value in want.items():
            np.testing.assert_array_equal(outputs[name], value)
            np.testing.assert_array_equal(step[name], value)
            assert all(np.array_equal(s[name], value) for s in steps)
        assert problems == [] and report.ok
    """))
    proc = subprocess.run([sys.executable, str(script)], cwd=sample_dir, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_every_command_is_in_the_commands_list() -> None:
    """A command ``irtool --help`` offers has its line in the README's Commands list, and
    its section in the user guide."""
    from irtool.cli import build_parser

    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    section = (REPO / "README.md").read_text().split("## Commands\n", 1)[1].split("\n## ")[0]
    listed = set(re.findall(r"^- `irtool (\w+)", section, re.M))
    assert listed == set(action.choices), listed ^ set(action.choices)
    guide = _anchors(REPO / "docs" / "user-guide.md")
    assert set(action.choices) <= guide, set(action.choices) - guide


def test_the_readme_stays_short() -> None:
    """What a newcomer needs: what it is, the two commands, the commands, the Python API,
    where to read on; the rest is in docs/."""
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= 150
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert headings[:3] == ["Quick start", "Commands", "Python"], headings
    assert "Read on" in headings


def test_system_dependencies_are_named() -> None:
    """graphviz's ``dot`` renders --svg/--png; the README says so (and the one-line error
    without it is tests/tools/test_inspect.py's)."""
    text = " ".join((REPO / "README.md").read_text().split())
    assert "graphviz's `dot` program" in text and "apt-get install graphviz" in text


def test_the_exit_status_the_readme_gives_is_the_cli_s() -> None:
    """The README's exit codes are those of ``irtool --help`` (each code is exercised in
    tests/cli/test_cli_conventions.py)."""
    text = " ".join((REPO / "README.md").read_text().split())
    for words in ("0 success", "1 bad input or a failed check", "2 a usage error",
                  "3 an internal error"):
        assert words in text, words
    proc = subprocess.run([sys.executable, "-m", "irtool", "--help"], capture_output=True,
                          text=True, timeout=120)
    help_text = " ".join(proc.stdout.split())
    for words in ("0 success", "2 usage errors", "3 an internal error"):
        assert words in help_text, words
