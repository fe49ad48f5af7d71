"""Slices by the iteration number in a Loop body, ``x[i + a : i + b]``: their length is
declared static only where it provably is (a constant trip count keeps both bounds inside
the axis for every iteration), and every case, proven or not, matches onnxruntime in
irtool and in OpenVINO on irtool's IR.

A proven length is what keeps ranks static further on: ``Squeeze(x[i : i + 1])`` is a
scalar, so a value carried through it has rank 0, and OpenVINO's CPU plugin, which
compiles no Loop of dynamic rank, runs the loop (the exporter fixture
``onnxscript_nested_for_if`` is that case).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper
from support.conversion import check_conversion, const_node, make_model, vi

DIM = 5


def _slice_sum_loop(trip: int | None, start: int, stop: int, *, step: int = 1,
                    index_type: int = TensorProto.INT64) -> tuple:
    """``acc += ReduceSum(x[i + start : i + stop : step])`` over a Loop of ``trip``
    iterations (None: the trip count is the model input ``M``), x of static length DIM
    captured from the main graph; the iteration number is cast to ``index_type`` first."""
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["ic"], to=index_type),
         helper.make_node("Unsqueeze", ["ic", "zero"], ["iu"]),
         const_node("a", [start], np.int64 if index_type == TensorProto.INT64 else np.int32),
         const_node("b", [stop], np.int64 if index_type == TensorProto.INT64 else np.int32),
         helper.make_node("Add", ["iu", "a"], ["s"]),
         helper.make_node("Add", ["iu", "b"], ["e"]),
         const_node("st", [step], np.int64 if index_type == TensorProto.INT64 else np.int32),
         helper.make_node("Slice", ["x", "s", "e", "zero_axis", "st"], ["piece"]),
         helper.make_node("ReduceSum", ["piece"], ["total"], keepdims=0),
         helper.make_node("Add", ["acc", "total"], ["acc_out"]),
         helper.make_node("Identity", ["cond"], ["cond_out"])],
        "body",
        [vi("i", np.int64, []), vi("cond", np.bool_, []), vi("acc", np.float32, [])],
        [vi("cond_out", np.bool_, []), vi("acc_out", np.float32, [])])
    nodes = [const_node("zero", [0], np.int64),
             const_node("zero_axis", [0], np.int64 if index_type == TensorProto.INT64
                        else np.int32),
             const_node("acc0", 0.0, np.float32)]
    inputs = [vi("x", np.float32, [DIM])]
    if trip is None:
        inputs.append(vi("M", np.int64, []))
        m = "M"
    else:
        nodes.append(const_node("M", trip, np.int64))
        m = "M"
    nodes.append(helper.make_node("Loop", [m, "", "acc0"], ["acc_last"], body=body))
    return make_model(nodes, inputs, [vi("acc_last", np.float32, [])], opset=17)


def _slice_dims(ir) -> list:  # irtool.Model
    return [layer.outputs[0].dims for _, layer in ir.graph.walk() if layer.type == "Slice"]


@pytest.mark.parametrize("trip, start, stop, length", [
    (5, 0, 1, 1),  # x[i:i+1] over every row
    (4, 1, 2, 1),  # x[i+1:i+2]: the last iteration reads the last row
    (3, 1, 3, 2),  # two rows at a time
    (5, 0, 0, 0),  # empty in every iteration
    (4, 1, 0, 0),  # stop before start: empty
    (1, 0, 5, 5),  # one iteration, all of x
])
def test_proven_lengths_are_declared_and_match_onnxruntime(trip: int, start: int, stop: int,
                                                           length: int,
                                                           tmp_path: Path) -> None:
    model = _slice_sum_loop(trip, start, stop)
    x = np.arange(1, DIM + 1, dtype=np.float32) ** 2
    ir = check_conversion(model, {"x": x}, tmp_path, vectorize=False)
    assert _slice_dims(ir) == [(length,)]


@pytest.mark.parametrize("trip, start, stop, step, why", [
    (6, 0, 1, 1, "the sixth iteration slices past the end (an empty piece)"),
    (5, 1, 2, 1, "the last iteration's piece is empty"),
    (5, -1, 0, 1, "the first iteration's start -1 counts from the end"),
    (3, 0, 2, 2, "a step other than 1"),
    (5, 0, 7, 1, "the stop is clamped to the axis"),
])
def test_unproven_lengths_stay_dynamic_and_match_onnxruntime(trip: int, start: int, stop: int,
                                                             step: int, why: str,
                                                             tmp_path: Path) -> None:
    model = _slice_sum_loop(trip, start, stop, step=step)
    x = np.arange(1, DIM + 1, dtype=np.float32) ** 2
    ir = check_conversion(model, {"x": x}, tmp_path, vectorize=False)
    assert _slice_dims(ir) == [(-1,)], why


def test_a_run_time_trip_count_proves_nothing(tmp_path: Path) -> None:
    model = _slice_sum_loop(None, 0, 1)
    x = np.arange(1, DIM + 1, dtype=np.float32)
    for m in (0, 3, 5, 7):
        ir = check_conversion(model, {"x": x, "M": np.array(m, np.int64)}, tmp_path,
                              vectorize=False)
        assert _slice_dims(ir) == [(-1,)]


def test_an_offset_through_a_narrow_type_is_proven_only_when_it_fits(tmp_path: Path) -> None:
    """The iteration number cast to int32 (exact for these few iterations, but a Convert
    i64 -> i32 that may wrap is not looked through): not proven, and still right."""
    model = _slice_sum_loop(5, 0, 1, index_type=TensorProto.INT32)
    x = np.arange(1, DIM + 1, dtype=np.float32)
    ir = check_conversion(model, {"x": x}, tmp_path, vectorize=False)
    assert _slice_dims(ir) == [(-1,)]


def test_a_squeezed_row_keeps_the_carried_maximum_a_scalar(tmp_path: Path) -> None:
    """The onnxscript idiom of the exporter fixture, written out: the running maximum of
    ``Squeeze(x[j : j + 1])`` over a Loop of 4 iterations, taken by an If. The carried
    value is declared a scalar, and OpenVINO compiles and runs the loop."""
    then_branch = helper.make_graph([helper.make_node("Identity", ["v"], ["t"])], "then", [],
                                    [vi("t", np.float32, None)])
    else_branch = helper.make_graph([helper.make_node("Identity", ["best"], ["f"])], "else",
                                    [], [vi("f", np.float32, None)])
    body = helper.make_graph(
        [helper.make_node("Unsqueeze", ["j", "zero"], ["jj"]),
         helper.make_node("Add", ["jj", "one"], ["jj1"]),
         helper.make_node("Slice", ["x", "jj", "jj1"], ["piece"]),
         helper.make_node("Squeeze", ["piece"], ["v"]),
         helper.make_node("Greater", ["v", "best"], ["bigger"]),
         helper.make_node("If", ["bigger"], ["best_out"], then_branch=then_branch,
                          else_branch=else_branch),
         helper.make_node("Identity", ["cond"], ["cond_out"])],
        "body", [vi("j", np.int64, []), vi("cond", np.bool_, []), vi("best", np.float32, None)],
        [vi("cond_out", np.bool_, None), vi("best_out", np.float32, None)])
    nodes = [const_node("zero", [0], np.int64), const_node("one", [1], np.int64),
             const_node("M", 4, np.int64), const_node("start", -1000.0, np.float32),
             helper.make_node("Loop", ["M", "", "start"], ["best_last"], body=body)]
    model = make_model(nodes, [vi("x", np.float32, [4])], [vi("best_last", np.float32, [])])
    x = np.array([0.5, 3.0, -2.0, 1.0], np.float32)
    ir = check_conversion(model, {"x": x}, tmp_path, vectorize=False)
    loop = next(layer for _, layer in ir.graph.walk() if layer.type == "Loop")
    assert loop.outputs[0].dims == ()
