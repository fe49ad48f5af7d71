"""irtool's runtime on the corpus of IR that OpenVINO wrote (``irtool/tools/corpus.py``),
against OpenVINO's own outputs.

Every control-flow case (Loop / TensorIterator / If anywhere in the IR) must
match. The whole corpus runs in a slow test that reports the pass count and the
misses and holds it to >= 97 %. Floats: rtol 1e-4, atol 1e-5; integers,
booleans and strings exact; shapes and dtypes exact.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from support import CORPUS_CASES, CORPUS_CONTROL_FLOW_CASES

import irtool
from irtool.core.errors import IRToolError
from irtool.runtime import Executor
from irtool.tools.corpus import CONTROL_FLOW_OPS, CorpusCase, compare_output, corpus_cases

RTOL, ATOL = 1e-4, 1e-5
OVERALL_BAR = 0.97


def _feed(executor: Executor, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The case's inputs keyed by irtool's input names; by position when OpenVINO renamed
    an input (it does for pass-through graphs) and the counts agree."""
    names = executor.input_names
    if set(inputs) == set(names) or len(inputs) != len(names):
        return inputs
    return dict(zip(names, inputs.values()))


def run_case(case: CorpusCase) -> str | None:
    """Why irtool's outputs differ from OpenVINO's for ``case``, or None when they agree.

    Errors irtool raises on purpose (``IRToolError``) are misses; any other exception
    propagates, since the runtime must wrap every failure."""
    try:
        executor = Executor(irtool.load(case.xml))
        got = executor.run(_feed(executor, case.inputs))
    except IRToolError as err:
        return f"{type(err).__name__}: {err.message}"[:200]
    expected = case.expected
    if set(got) != set(expected):
        if len(got) != len(expected):
            return f"outputs {sorted(got)} != expected {sorted(expected)}"
        got = dict(zip(expected, got.values()))  # OpenVINO renamed: match by position
    for name, want in expected.items():
        problem = compare_output(np.asarray(got[name]), want, RTOL, ATOL)
        if problem:
            return f"{name}: {problem}"
    return None


def _control_flow_cases() -> list[CorpusCase]:
    return [c for c in corpus_cases() if c.op_types & CONTROL_FLOW_OPS]


@pytest.mark.parametrize("case", _control_flow_cases(), ids=lambda c: c.name)
def test_control_flow_case(case: CorpusCase) -> None:
    problem = run_case(case)
    assert problem is None, f"{case.name}: {problem}"


def test_corpus_has_control_flow_cases() -> None:
    names = {c.name for c in _control_flow_cases()}
    assert {"test_loop11", "test_if", "test_scan9_sum"} <= names
    assert len(names) >= CORPUS_CONTROL_FLOW_CASES, sorted(names)


@pytest.mark.slow
def test_whole_corpus() -> None:
    cases = corpus_cases()
    assert len(cases) >= CORPUS_CASES, f"{len(cases)} corpus cases, not {CORPUS_CASES}"
    misses: dict[str, str] = {}
    for case in cases:
        problem = run_case(case)
        if problem is not None:
            misses[case.name] = problem
    passed = len(cases) - len(misses)
    rate = passed / len(cases)
    print(f"\nirtool runtime on the OpenVINO corpus: {passed}/{len(cases)} cases "
          f"({rate:.1%}) match OpenVINO")
    reasons = Counter(m.split(":")[0] for m in misses.values())
    for reason, count in reasons.most_common():
        print(f"  {count:4d}  {reason}")
    for name, problem in sorted(misses.items()):
        print(f"  miss {name}: {problem}")
    assert rate >= OVERALL_BAR, f"{rate:.1%} of the corpus passes, below {OVERALL_BAR:.0%}"
