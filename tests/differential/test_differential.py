"""The standing differential suite (issue 21): generated Loop/Scan/If models, every irtool
form (``support.differential.forms.FORMS``) against onnxruntime, OpenVINO's own ONNX
frontend the arbiter. A form that differs where onnxruntime and the frontend agree, or
irtool failing on a model onnxruntime runs, fails the test; hypothesis then shrinks the
case and prints it (``Case.text()`` in the message).

Fixed seed (derandomized) and a small budget: ``test_smoke`` runs in the default suite,
``test_differential`` (more cases) is slow. ``bench/differential.py`` is the long run.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from support.differential.forms import evaluate
from support.differential.generate import Case, cases

KNOWN_OPEN: frozenset[str] = frozenset()
"""Constructs left out of the CI runs while irtool gets them wrong (each with a strict
xfail reproducer in ``test_found.py``; when it passes, its construct leaves this set).
None today: narrowed trip counts, swapped carried values and seeded random ops, left out
until issue 21's fixes were merged, are in again."""


_SETTINGS = {"derandomize": True, "deadline": None, "database": None,
             "suppress_health_check": list(HealthCheck), "print_blob": False}


def check(case: Case) -> None:
    """No form differs where the engines agree, and irtool fails on nothing onnxruntime
    runs; a case onnxruntime cannot run is no test of irtool and is dropped."""
    note(case.text())
    evaluation = evaluate(case)
    note(f"onnxruntime: {evaluation.reference or 'ran'}; OpenVINO's frontend: "
         f"{evaluation.arbiter or 'ran'}")
    assume(evaluation.reference is None)
    failures = [f"{v.form}: {v.kind}: {v.detail}" for v in evaluation.failures()]
    assert not failures, f"{case.summary}\n" + "\n".join(failures)


@settings(max_examples=8, **_SETTINGS)
@given(case=cases(exclude=KNOWN_OPEN))
def test_smoke(case: Case) -> None:
    check(case)


@pytest.mark.slow
@settings(max_examples=50, **_SETTINGS)
@given(case=cases(exclude=KNOWN_OPEN))
def test_differential(case: Case) -> None:
    check(case)
