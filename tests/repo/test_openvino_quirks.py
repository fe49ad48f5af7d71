"""The quirk records of tests/support/quirks.py: a test about an OpenVINO CPU-plugin quirk
passes where the quirk reproduces and where OpenVINO behaves, fails on any other answer,
and the session says which it saw on this CPU. Shown with OpenVINO's answer faked each
way, in a pytest session of its own (pytester)."""

from __future__ import annotations

import signal

import pytest
from support.quirks import BEHAVES, REPRODUCED, UnknownDifference, classify

pytest_plugins = ("pytester",)

# A quirk test as the suite writes them (test_zero_trip_loops.py's reproducer): OpenVINO's
# exit status is classified; here it comes from the parametrisation instead of a process.
FAKED = f"""
import pytest

@pytest.mark.parametrize("rc", [-{int(signal.SIGFPE)}, 0, -{int(signal.SIGSEGV)}],
                         ids=["quirk", "behaves", "unknown"])
def test_reproducer(rc, openvino_quirk):
    assert 1 + 1 == 2  # irtool's own side: asserted, never classified
    openvino_quirk("zero-trip-sigfpe", reproduced=rc == -{int(signal.SIGFPE)},
                   behaves=rc == 0, answer=f"exit status {{rc}}")
"""


def test_both_outcomes_pass_and_an_unknown_answer_fails(pytester: pytest.Pytester) -> None:
    pytester.makeconftest('pytest_plugins = ["support.quirks"]')
    pytester.makepyfile(test_faked=FAKED)
    junit = pytester.path / "junit.xml"
    result = pytester.runpytest_inprocess(f"--junitxml={junit}", "-o", "junit_family=xunit1",
                                          "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        "OpenVINO's answer is neither the reference nor the documented quirk "
        "'zero-trip-sigfpe' (docs/openvino-quirks.md): exit status -11",
        "OpenVINO quirks on * with OpenVINO *: 1 reproduced and behaves (zero-trip-sigfpe)",
    ])
    result.stdout.fnmatch_lines(["FAILED test_faked.py::test_reproducer[[]unknown[]]*"])
    xml = junit.read_text()
    assert 'name="openvino_quirk" value="zero-trip-sigfpe: reproduced"' in xml
    assert 'name="openvino_quirk" value="zero-trip-sigfpe: behaves"' in xml
    assert 'name="openvino_quirk" value="zero-trip-sigfpe: unknown difference"' in xml


def test_the_summary_names_each_outcome(pytester: pytest.Pytester) -> None:
    """Where OpenVINO behaves on every quirk, the line says so (no 'reproduced')."""
    pytester.makeconftest('pytest_plugins = ["support.quirks"]')
    pytester.makepyfile(test_faked="""
def test_a(openvino_quirk):
    assert openvino_quirk("nan-rows", reproduced=False, behaves=True) == "behaves"

def test_b(openvino_quirk):
    assert openvino_quirk("cast-length", reproduced=True, behaves=False) == "reproduced"
""")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["OpenVINO quirks on *: 1 reproduced (cast-length); 1 behaves (nan-rows)"])


def test_classify() -> None:
    assert classify("q", reproduced=True, behaves=False) == REPRODUCED
    assert classify("q", reproduced=False, behaves=True) == BEHAVES
    assert classify("q", reproduced=True, behaves=True) == BEHAVES
    with pytest.raises(UnknownDifference, match=r"quirk 'q'.*: got 3"):
        classify("q", reproduced=False, behaves=False, answer="got 3")
