"""Every ONNX backend node case through irtool and through OpenVINO's own ONNX frontend.

The runner is ``irtool.tools.conformance`` (the one that writes
docs/conformance.md): each case on three paths in worker processes, compared
with the case's expected outputs under its rtol/atol; crashes are retried and
then recorded, hangs time out. Cases whose inputs or outputs are sequences or
optionals are ``n/a`` on every path and never count as passing.

To see the per-case results: ``python -m irtool.tools.conformance [-k NAME]``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from irtool.tools.conformance import (
    count_statuses,
    node_case_names,
    not_passing,
    run_cases,
)

IRTOOL_PATHS = ("irtool-openvino", "irtool")
# Every case each irtool path passed when `python bench/conformance.py` last ran (it writes
# this file with docs/conformance.md): a case that stops passing fails the test by name.
PASSING = Path(__file__).with_name("node_suite_passing.txt")


def recorded_passing() -> dict[str, set[str]]:
    """``{path: cases}`` from node_suite_passing.txt."""
    out: dict[str, set[str]] = {p: set() for p in IRTOOL_PATHS}
    for line in PASSING.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            path, case = line.split(" ")
            out[path].add(case)
    return out


def test_recorded_passing_cases() -> None:
    """The list holds both paths, some 1,600 cases each (not an empty file)."""
    recorded = recorded_passing()
    for path in IRTOOL_PATHS:
        assert len(recorded[path]) > 1500, (path, len(recorded[path]))


@pytest.mark.slow
def test_onnx_node_suite() -> None:
    names = node_case_names()
    results = run_cases(names, workers=2)
    assert len(results) == 3 * len(names)
    cf_names = set(node_case_names(control_flow_only=True))
    control_flow = [r for r in results if r.case in cf_names]

    # The control-flow bar: every control-flow case whose inputs and outputs are tensors
    # converts and runs correctly on both irtool paths.
    cf = count_statuses(control_flow)
    tensor_only = {r.case for r in control_flow if r.status != "n/a"}
    assert len(tensor_only) >= 28, f"only {len(tensor_only)} control-flow cases with tensors"
    for path in IRTOOL_PATHS:
        assert cf[path]["pass"] == len(tensor_only), \
            f"{path}: {cf[path]['pass']} of {len(tensor_only)} control-flow cases pass\n" + \
            not_passing(control_flow, (path,))

    # Every other case: none of those that passed may be lost.
    recorded = recorded_passing()
    for path in IRTOOL_PATHS:  # the list names real cases
        assert recorded[path] <= set(names), sorted(recorded[path] - set(names))[:10]
    lost = [f"{r.case} {r.path}: {r.status}: {r.reason}" for r in results
            if r.path in IRTOOL_PATHS and r.case in recorded[r.path] and r.status != "pass"]
    assert not lost, f"{len(lost)} cases no longer pass:\n" + "\n".join(lost)
