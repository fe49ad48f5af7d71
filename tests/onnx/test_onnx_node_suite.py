"""Every ONNX backend node case through irtool and through OpenVINO's own ONNX frontend.

The runner is ``irtool.crosscheck.conformance`` (the one that writes
docs/conformance.md): each case on three paths in worker processes, compared
with the case's expected outputs under its rtol/atol; crashes are retried and
then recorded, hangs time out. Cases whose inputs or outputs are sequences or
optionals are ``n/a`` on every path and never count as passing.

To see the per-case results: ``python -m irtool.crosscheck.conformance [-k NAME]``.
"""

from __future__ import annotations

import pytest

from irtool.crosscheck.conformance import (
    count_statuses,
    node_case_names,
    not_passing,
    run_cases,
)

IRTOOL_PATHS = ("irtool-openvino", "irtool")
# Passing cases of all 1884, measured with `python bench/conformance.py` (onnx 1.23.2,
# openvino 2026.4.1): irtool -> OpenVINO 1598, irtool -> irtool runtime 1632. Each floor is
# the measurement minus 15, a margin for numeric noise near the tolerances (random-data cases,
# OpenVINO kernel choices), so a real regression of more than a handful of cases fails.
FLOORS = {"irtool-openvino": 1598 - 15, "irtool": 1632 - 15}


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

    every = count_statuses(results)
    for path, floor in FLOORS.items():
        assert every[path]["pass"] >= floor, \
            f"{path}: {every[path]['pass']} of {len(names)} cases pass, expected >= {floor}\n" \
            f"{every[path]}"
