"""OpenVINO's CPU-plugin quirks, recorded rather than required (a pytest plugin).

What OpenVINO's CPU plugin gets wrong depends on the CPU (AVX2, AVX-512, BF16 kernels) and
on the OpenVINO build: a crash or a wrong value seen here may not reproduce elsewhere. A
test about a quirk (docs/openvino-quirks.md) therefore asks ``openvino_quirk`` to classify
OpenVINO's answer instead of asserting it:

* ``behaves``: the answer matches the reference (onnxruntime, the spec, hand numpy): the
  quirk does not reproduce on this CPU, and the test passes;
* ``reproduced``: the answer has the documented signature of the quirk: the test passes;
* anything else is a real, unknown difference: the test fails, saying what OpenVINO did.

Both outcomes are recorded: as the test's ``openvino_quirk`` property (``record_property``,
shown in JUnit XML) and in one line at the end of the session naming this CPU, e.g.
``OpenVINO quirks on AMD EPYC (avx2, avx512f) with OpenVINO 2026.4.1: 3 reproduced
(zero-trip-sigfpe, ...), 1 behaves (...)``. The test's own claims about irtool stay plain
assertions: only OpenVINO's side is classified.

    def test_x(openvino_quirk):
        ...irtool's side, asserted...
        openvino_quirk("zero-trip-sigfpe", reproduced=rc == -SIGFPE, behaves=rc == 0,
                       answer=f"exit {rc}")
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

REPRODUCED = "reproduced"
BEHAVES = "behaves"


@dataclass(frozen=True)
class Sighting:
    """One classification: which quirk, what OpenVINO did, in which test."""

    quirk: str
    outcome: str
    answer: str
    test: str


_SEEN = pytest.StashKey[list[Sighting]]()


class UnknownDifference(AssertionError):
    """OpenVINO's answer is neither the reference nor the quirk's documented signature."""


def classify(quirk: str, *, reproduced: bool, behaves: bool, answer: str = "") -> str:
    """``behaves`` or ``reproduced`` (behaving wins when both hold); neither raises
    ``UnknownDifference`` naming the quirk and ``answer`` (what OpenVINO did)."""
    if behaves:
        return BEHAVES
    if reproduced:
        return REPRODUCED
    raise UnknownDifference(f"OpenVINO's answer is neither the reference nor the documented "
                            f"quirk {quirk!r} (docs/openvino-quirks.md): {answer}")


QuirkRecorder = Callable[..., str]


def run_documented(section: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run the reproducer of docs/openvino-quirks.md's section ``## {section}`` (its first
    Python block) in a fresh interpreter, so that a crash of the plugin is an exit status."""
    from support import REPO

    text = (REPO / "docs" / "openvino-quirks.md").read_text()
    part = text.split(f"## {section}\n", 1)[1]
    match = re.search(r"```python\n(.*?)```", part, re.DOTALL)
    assert match is not None, f"no reproducer in {section!r}"
    script = tmp_path / "repro.py"
    script.write_text(match.group(1))
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300)


@pytest.fixture
def openvino_quirk(request: pytest.FixtureRequest,
                   record_property: Callable[[str, object], None]) -> QuirkRecorder:
    """``openvino_quirk(name, *, reproduced, behaves, answer="")``: classify OpenVINO's
    answer (``classify``), record it for this test and the session summary, and return
    ``"reproduced"`` or ``"behaves"``; an unknown difference fails the test."""

    def record(quirk: str, *, reproduced: bool, behaves: bool, answer: str = "") -> str:
        try:
            outcome = classify(quirk, reproduced=reproduced, behaves=behaves, answer=answer)
        except UnknownDifference as err:
            unknown = str(err)
        else:
            unknown = ""
        if unknown:
            record_property("openvino_quirk", f"{quirk}: unknown difference")
            pytest.fail(unknown, pytrace=False)
        record_property("openvino_quirk", f"{quirk}: {outcome}")
        sightings(request.config).append(Sighting(quirk, outcome, answer, request.node.nodeid))
        return outcome

    return record


def sightings(config: pytest.Config) -> list[Sighting]:
    """What this session's tests recorded, in order."""
    return config.stash.setdefault(_SEEN, [])


def cpu_description() -> str:
    """This CPU's model name and the vector extensions OpenVINO's kernels choose by."""
    model, flags = "unknown CPU", set()
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        text = ""
    if m := re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE):
        model = m.group(1).strip()
    if m := re.search(r"^flags\s*:\s*(.+)$", text, re.MULTILINE):
        flags = set(m.group(1).split())
    isa = [f for f in ("avx2", "avx512f", "avx512_bf16", "amx_bf16") if f in flags]
    return f"{model} ({', '.join(isa) or 'no AVX2'})"


def summary_line(seen: list[Sighting]) -> str | None:
    """One line: each quirk's outcome on this CPU (a quirk seen both ways says so)."""
    if not seen:
        return None
    outcomes: dict[str, set[str]] = {}
    for s in seen:
        outcomes.setdefault(s.quirk, set()).add(s.outcome)
    groups: dict[str, list[str]] = {}
    for quirk, found in sorted(outcomes.items()):
        groups.setdefault(" and ".join(sorted(found, reverse=True)), []).append(quirk)
    try:
        import openvino

        version = openvino.get_version().split("-")[0]
    except Exception:  # the summary must not fail the session
        version = "?"
    parts = [f"{len(names)} {outcome} ({', '.join(names)})" for outcome, names in
             sorted(groups.items(), key=lambda kv: kv[0] != REPRODUCED)]
    return f"OpenVINO quirks on {cpu_description()} with OpenVINO {version}: " \
           + "; ".join(parts)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    line = summary_line(sightings(terminalreporter.config))
    if line is not None:
        terminalreporter.write_line(line)
