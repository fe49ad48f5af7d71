"""``LoopsOverUnreadSlices``: a TensorIterator whose body reads none of its sliced inputs
(OpenVINO's CPU plugin runs it once: docs/openvino-quirks.md) becomes a Loop of as many
iterations, where no value anything takes depends on a slice; a read that something takes
keeps the TensorIterator. Values from onnxruntime, on OpenVINO and irtool's runtime."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper
from support.compare import assert_same
from support.conversion import check_conversion, const_node, make_model, run_onnxruntime, vi

import irtool
from irtool.passes.unread_slices import LoopsOverUnreadSlices

F32, I64 = np.float32, np.int64


def _scan(case: str) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A Scan over the rows of ``x`` with states ``n`` (``n' = n + 1``) and ``t``
    (``t' = t + sum(row)``) and scan outputs ``c`` and ``r`` (``sum(row)``); ``case`` says
    what ``c`` is and which values the graph takes:

    * ``unread output``: ``n`` and ``c = n``, and ``t' = t``; the rows reach only ``r``,
      which nobody takes (the plugin drops it, and the read with it: one iteration);
    * ``dead state``: ``n``; the rows reach only ``t``, whose final value nobody takes;
    * ``read output``: ``n`` and ``r``;
    * ``read state``: ``n`` and ``c = t``: the rows reach a taken output through a back edge.
    """
    state = case == "read state"
    c_type = F32 if state else I64
    body = helper.make_graph(
        [const_node("one", np.array([1], I64)), helper.make_node("Add", ["n", "one"], ["n2"]),
         helper.make_node("ReduceSum", ["row"], ["r"], keepdims=1),
         helper.make_node("Add", ["t", "one" if case == "unread output" else "r"], ["t2"])
         if case != "unread output" else helper.make_node("Identity", ["t"], ["t2"]),
         helper.make_node("Identity", ["t" if state else "n"], ["c"])],
        "body", [vi("n", I64, [1]), vi("t", F32, [1]), vi("row", F32, [2])],
        [vi("n2", I64, [1]), vi("t2", F32, [1]), vi("c", c_type, [1]), vi("r", F32, [1])])
    scan = helper.make_node("Scan", ["n0", "t0", "x"], ["n", "t", "c", "r"], body=body,
                            num_scan_inputs=1)
    outputs = {"unread output": ["n", "c"], "dead state": ["n"], "read output": ["n", "r"],
               "read state": ["n", "c"]}[case]
    types = {"n": (I64, [1]), "c": (c_type, [5, 1]), "r": (F32, [5, 1])}
    model = make_model([scan], [vi("n0", I64, [1]), vi("t0", F32, [1]), vi("x", F32, [5, 2])],
                       [vi(o, *types[o]) for o in outputs])
    feeds = {"n0": np.array([10], I64), "t0": np.array([0.5], F32),
             "x": np.arange(10, dtype=F32).reshape(5, 2)}
    return model, feeds


@pytest.mark.parametrize(("case", "form"), [
    ("unread output", "Loop"), ("dead state", "Loop"),
    ("read output", "TensorIterator"), ("read state", "TensorIterator")])
@pytest.mark.parametrize("vectorize", [True, False])
def test_a_tensor_iterator_becomes_a_loop_where_no_slice_is_read(
        case: str, form: str, vectorize: bool, tmp_path: Path) -> None:
    model, feeds = _scan(case)
    ir = check_conversion(model, feeds, tmp_path, vectorize=vectorize)
    assert [layer.type for _, layer in ir.graph.walk()
            if layer.type in ("Loop", "TensorIterator")] == [form]
    if form == "Loop":  # the slices, read by nothing, are not inputs of the Loop
        (loop,) = ir.graph.layers_of_type("Loop")
        assert all(e.axis is None for e in loop.port_maps["port_map"] if e.kind == "input")


def test_the_pass_leaves_what_it_rewrote_alone() -> None:
    model, _ = _scan("unread output")
    ir = irtool.convert(model)
    assert LoopsOverUnreadSlices()(ir).changes == 0


@pytest.mark.parametrize("rows", [0, 3])
def test_a_state_nothing_reads_keeps_its_initial_value(rows: int) -> None:
    """A state whose final value is taken but which the body never reads (``a' = 2 + b``)
    keeps its initial value and back edge in the Loop: after no iteration, it is the
    output (the spec's ``a0``; onnxruntime refuses a scan input of 0 rows)."""
    body = helper.make_graph(
        [const_node("two", np.array([2], I64)), helper.make_node("Add", ["two", "b"], ["a2"]),
         helper.make_node("Identity", ["b"], ["b2"])], "body",
        [vi("a", I64, [1]), vi("b", I64, [1]), vi("row", F32, [2])],
        [vi("a2", I64, [1]), vi("b2", I64, [1])])
    model = make_model([helper.make_node("Scan", ["a0", "b0", "x"], ["a", "b"], body=body,
                                         num_scan_inputs=1)],
                       [vi("a0", I64, [1]), vi("b0", I64, [1]), vi("x", F32, [None, 2])],
                       [vi("a", I64, [1])])
    feeds = {"a0": np.array([7], I64), "b0": np.array([3], I64),
             "x": np.zeros((rows, 2), F32)}
    expected = run_onnxruntime(model, feeds) if rows else {"a": np.array([7], I64)}
    assert expected["a"].tolist() == ([7] if rows == 0 else [5])
    for vectorize in (True, False):
        ir = irtool.convert(model, vectorize=vectorize)
        assert_same(irtool.run(ir, feeds), expected, "irtool")
        assert not [layer for _, layer in ir.graph.walk() if layer.type == "TensorIterator"]


def test_two_values_of_lengths_known_only_at_run_time_keep_the_tensor_iterator() -> None:
    """Rows of ``x`` and ``y``, both of dynamic length: only the run can tell whether they
    agree (the TensorIterator's error where they do not; a Loop of ``len(x)`` iterations
    would give values), so the rewrite is not made. The same value twice is rewritten."""
    body = helper.make_graph(
        [const_node("one", np.array([1], I64)), helper.make_node("Add", ["n", "one"], ["n2"])],
        "body", [vi("n", I64, [1]), vi("a", F32, [2]), vi("b", F32, [2])],
        [vi("n2", I64, [1])])
    for second, form in (("y", "TensorIterator"), ("x", "Loop")):
        model = make_model([helper.make_node("Scan", ["n0", "x", second], ["n"], body=body,
                                             num_scan_inputs=2)],
                           [vi("n0", I64, [1]), vi("x", F32, [None, 2]), vi("y", F32, [None, 2])],
                           [vi("n", I64, [1])])
        ir = irtool.convert(model, vectorize=False)
        assert [layer.type for _, layer in ir.graph.walk()
                if layer.type in ("Loop", "TensorIterator")] == [form]
        feeds = {"n0": np.array([0], I64), "x": np.zeros((4, 2), F32),
                 "y": np.zeros((4, 2), F32)}
        assert_same(irtool.run(ir, feeds), run_onnxruntime(model, feeds), "irtool")
