"""irtool as an ONNX backend, driven by ONNX's own ``BackendTest`` runner.

The runner's control-flow node tests (Loop, Scan, If, and the ``Range``
functions that expand to a Loop) run twice: with irtool's runtime and with
``target="openvino"`` (irtool's IR on OpenVINO). Cases whose graph inputs or
outputs are sequences/optionals are outside what IR can express; for those the
conversion must fail with a clear ``ConversionError`` naming the value.

The slow test at the end re-runs every node case against docs/conformance.md.
"""

from __future__ import annotations

import re
import sys

import numpy as np
import onnx
import onnx.backend.test
import pytest
from onnx.backend.test.loader import load_model_tests
from support import REPO

import irtool
import irtool.backend
from irtool.tools.conformance import Counts

CONTROL_FLOW = r"^test_(loop|scan|if)|^test_range_.*_expanded"
# Graph inputs/outputs of sequence or optional type: IR ports are tensors only.
NON_TENSOR_IO = ["test_if_opt", "test_if_seq", "test_loop13_seq", "test_loop16_seq_none"]


def _exclude(names: list[str]) -> str:
    return "^(" + "|".join(names) + ")_"


_irtool_tests = (onnx.backend.test.BackendTest(irtool.backend, __name__)
                 .include(CONTROL_FLOW).exclude(_exclude(NON_TENSOR_IO)))
_openvino_tests = (onnx.backend.test.BackendTest(irtool.backend.openvino, __name__)
                   .include(CONTROL_FLOW).exclude(_exclude(NON_TENSOR_IO)))



def _selected(runner: onnx.backend.test.BackendTest, suffix: str,
              excluded: list[str]) -> dict[str, type]:
    """The runner's unittest classes holding only the selected CPU tests: the runner also
    lists every other ONNX test as a skip, thousands of lines of noise. The excluded
    cases are tested on their own below."""
    out = {}
    for name, case in runner.test_cases.items():
        keep = {m: getattr(case, m) for m in dir(case)
                if m.startswith("test_") and m.endswith("_cpu") and re.search(CONTROL_FLOW, m)
                and not re.search(_exclude(excluded), m)}
        if keep:
            cls = type(f"{name}{suffix}", (case,), {})
            for m in dir(case):
                if m.startswith("test_") and m not in keep:
                    setattr(cls, m, None)  # unittest/pytest ignore non-callables
            out[cls.__name__] = cls
    return out


# The official runner's unittest classes, one set per target.
globals().update(_selected(_irtool_tests, "Irtool", NON_TENSOR_IO))
globals().update(_selected(_openvino_tests, "OpenVINO", NON_TENSOR_IO))


def _node_case(name: str):  # type: ignore[no-untyped-def]
    return next(c for c in load_model_tests(kind="node") if c.name == name)


def test_runner_selects_the_control_flow_cases() -> None:
    names = {m for cls in _selected(_irtool_tests, "", NON_TENSOR_IO).values() for m in dir(cls)
             if m.startswith("test_") and callable(getattr(cls, m))}
    for expected in ("test_loop11_cpu", "test_scan_sum_cpu", "test_scan9_sum_cpu", "test_if_cpu",
                     "test_range_float_type_positive_delta_expanded_cpu"):
        assert expected in names
    assert not any(n.startswith("test_if_seq") for n in names)


@pytest.mark.parametrize("name", NON_TENSOR_IO)
def test_non_tensor_graph_io_is_a_clear_conversion_error(name: str) -> None:
    model = _node_case(name).model
    non_tensor = [vi.name for vi in [*model.graph.input, *model.graph.output]
                  if not vi.type.HasField("tensor_type")]
    with pytest.raises(irtool.ConversionError) as info:
        irtool.backend.prepare(model, "CPU")
    message = str(info.value)
    assert "\n" not in message
    assert any(repr(n) in message for n in non_tensor), message
    assert re.search(r"sequence|optional", message)


def test_bfloat16_on_openvino_target() -> None:
    # OpenVINO's Python API types bf16 data as float16; run_ir must pass the bits through.
    case = _node_case("test_range_bfloat16_type_positive_delta_expanded")
    rep = irtool.backend.prepare(case.model, "CPU", target="openvino")
    (actual,) = rep.run(case.data_sets[0][0])
    (expected,) = case.data_sets[0][1]
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    np.testing.assert_array_equal(actual.astype(np.float32), expected.astype(np.float32))


def test_backend_device_and_targets() -> None:
    assert irtool.backend.supports_device("CPU")
    assert not irtool.backend.supports_device("CUDA")
    model = _node_case("test_loop11").model
    with pytest.raises(irtool.BackendError, match="unknown target"):
        irtool.backend.prepare(model, "CPU", target="tpu")


# -- conformance (slow): the summary tables of docs/conformance.md still hold ----------------



def _bench_conformance():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import conformance
    finally:
        sys.path.remove(str(REPO / "bench"))
    return conformance


def _check_against_doc(documented: Counts, measured: Counts, recorded: dict[str, str],
                       installed: dict[str, str], *, control_flow: bool) -> None:
    """A summary table of the doc against a fresh run: every row when this machine matches
    the doc's ``Installed:`` line; else what the differences cannot move (see the doc)."""
    differ = [f"{d} {recorded.get(d, '?')} (installed {installed.get(d, '?')})"
              for d in ("onnx", "openvino", "cpu") if recorded.get(d) != installed.get(d)]
    if not differ:
        assert measured == documented
        return
    note = "docs/conformance.md was generated with " + ", ".join(differ)
    if all(d.startswith("cpu ") for d in differ):
        # Another CPU moves OpenVINO's bf16 results; irtool's numpy runtime stays put.
        assert measured["irtool"] == documented["irtool"], f"{note}: irtool's runtime column"
        return
    if not control_flow:
        return  # other onnx/openvino versions: other cases, other frontend; nothing fixed
    for path in ("irtool-openvino", "irtool"):
        assert measured[path]["pass"] == documented[path]["pass"], \
            f"{note}: {path} passes {measured[path]['pass']}, the doc says " \
            f"{documented[path]['pass']}"


def test_doc_check_with_another_machine_compares_what_it_cannot_move() -> None:
    doc = {"openvino": {"pass": 9, "error": 19}, "irtool-openvino": {"pass": 28, "error": 0},
           "irtool": {"pass": 28, "error": 0}}
    frontend_moved = {**doc, "openvino": {"pass": 20, "error": 8}}
    same = {"onnx": "1.23.2", "openvino": "2026.4.1", "cpu": "FP32+BF16"}
    other = {**same, "openvino": "2025.1.0"}
    other_cpu = {**same, "cpu": "FP32"}
    with pytest.raises(AssertionError):
        _check_against_doc(doc, frontend_moved, same, same, control_flow=True)
    _check_against_doc(doc, frontend_moved, other, same, control_flow=True)
    _check_against_doc(doc, frontend_moved, other_cpu, same, control_flow=False)
    irtool_moved = {**frontend_moved, "irtool": {"pass": 27, "error": 1}}
    with pytest.raises(AssertionError, match=r"generated with openvino 2025\.1\.0 "
                                             r"\(installed 2026\.4\.1\).*irtool passes 27"):
        _check_against_doc(doc, irtool_moved, other, same, control_flow=True)
    with pytest.raises(AssertionError, match=r"cpu FP32\+BF16 \(installed FP32\)"):
        _check_against_doc(doc, irtool_moved, same, other_cpu, control_flow=False)


@pytest.mark.slow
def test_conformance_summary_matches_docs() -> None:
    """A fresh run of every node case (about 4 minutes on 2 cores) reproduces both summary
    tables of docs/conformance.md."""
    from irtool.tools.conformance import node_case_names, run_cases

    bench_conformance = _bench_conformance()
    doc = REPO / "docs" / "conformance.md"
    if not doc.is_file():
        pytest.fail("docs/conformance.md is missing: run python bench/conformance.py")
    text = doc.read_text(encoding="utf-8")
    recorded = bench_conformance.read_versions(text)
    installed = bench_conformance.installed_versions()
    results = run_cases(node_case_names(), workers=2)
    control_flow = set(node_case_names(control_flow_only=True))
    for heading, subset, is_cf in (
            (bench_conformance.CONTROL_FLOW_HEADING,
             [r for r in results if r.case in control_flow], True),
            (bench_conformance.ALL_HEADING, results, False)):
        _check_against_doc(bench_conformance.read_counts(text, heading),
                           bench_conformance.counts(subset), recorded, installed,
                           control_flow=is_cf)


def test_conformance_runner_in_workers() -> None:
    """The shared per-case runner: worker processes, three paths, n/a for sequences."""
    from irtool.tools.conformance import PATHS, run_cases

    results = run_cases(["test_loop11", "test_if_seq", "test_abs"], workers=1)
    got = {(r.case, r.path): r for r in results}
    assert [r.case for r in results] == ["test_abs"] * 3 + ["test_if_seq"] * 3 + \
        ["test_loop11"] * 3
    for path in PATHS:
        assert got[("test_loop11", path)].status == "pass", got[("test_loop11", path)]
        assert got[("test_abs", path)].status == "pass"
        assert got[("test_if_seq", path)].status == "n/a"
