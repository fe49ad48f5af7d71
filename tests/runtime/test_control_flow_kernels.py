"""The Loop / TensorIterator kernels of ``irtool/runtime/control_flow.py`` where the other
runtime tests do not reach: a TensorIterator without sliced inputs (its body runs once,
as in OpenVINO's CPU plugin), run options reaching a
loop nested in a TensorIterator body, and errors naming the nested layer by its full path.

Expected values are written by hand; where OpenVINO runs the IR, it must agree too.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.compare import assert_same
from support.ir_builders import (
    A0,
    F32,
    Net,
    check,
    finish,
    info,
    run_openvino,
    runaway_body,
    unsqueeze,
)

import irtool
from irtool.errors import ExecutionError, IRValidationError


def counting_ti(concat_dims: tuple[int, ...], axis: int) -> irtool.Model:
    """A TensorIterator without sliced inputs: acc += 1 per iteration; outputs acc and the
    stacked accs, declared ``concat_dims`` along ``axis``."""
    body = Net()
    acc = body.param("acc_in", "f32", (2,))
    nxt = body.op("Add", "opset1", [acc, body.const(np.ones(2, F32))],
                  {"auto_broadcast": "numpy"}, shape=(2,))
    r_acc = body.result(nxt)
    r_scan = body.result(unsqueeze(body, nxt, axis))
    net = Net()
    ti = net.tensor_iterator(body, "counter")
    ti.carried(net.param("a0", "f32", (2,)), acc, r_acc)
    ti.output(r_acc, info("f32", (2,)), names=["acc"])
    ti.output(r_scan, info("f32", concat_dims), names=["steps"], axis=axis)
    return finish(net, ti)


@pytest.mark.parametrize("dims,axis", [((1, 2), 0), ((2, 1), 1)])
def test_tensor_iterator_without_sliced_inputs_runs_once_like_openvino(
        dims: tuple[int, ...], axis: int) -> None:
    check(counting_ti(dims, axis), {"a0": A0},
          {"acc": A0 + 1, "steps": np.expand_dims(A0 + 1, axis)})


@pytest.mark.saves_invalid_ir  # for OpenVINO, which runs it
@pytest.mark.parametrize("dims,axis", [((3, 2), 0), ((2, 4), 1)])
def test_tensor_iterator_without_sliced_inputs_declaring_more_steps_is_refused(
        dims: tuple[int, ...], axis: int) -> None:
    """Nothing is sliced, so the body runs once whatever the concatenated output declares:
    OpenVINO's CPU plugin gives the one step; irtool names the declared dim as wrong."""
    model = counting_ti(dims, axis)
    assert_same(run_openvino(model, {"a0": A0}),
                {"acc": A0 + 1, "steps": np.expand_dims(A0 + 1, axis)}, "openvino")
    with pytest.raises(IRValidationError, match=rf"ITERATION_COUNT .*it slices no input, so "
                       rf"its body runs once: 1 part, .* along axis {axis}, but the output "
                       rf"port declares \[{','.join(map(str, dims))}\]"):
        irtool.run(model, {"a0": A0})


def test_tensor_iterator_without_sliced_inputs_or_static_concat_dim_runs_once() -> None:
    check(counting_ti((-1, 2), 0), {"a0": A0}, {"acc": A0 + 1, "steps": (A0 + 1)[None, :]})


def runaway_in_a_tensor_iterator() -> tuple[irtool.Model, int, int]:
    """A TensorIterator over the 2 rows of X whose body runs ``runaway_body``'s endless
    loop ("inner") on each row: the model, the TensorIterator's and the inner loop's ids."""
    inner, acc, r_acc, r_keep = runaway_body()
    body = Net()
    row = body.param("row", "f32", (1, 1))
    x = body.op("Squeeze", "opset1", [row, body.const(np.array([0, 1], np.int64))], shape=())
    lp = body.loop(inner, "inner")
    lp.trip_count(body.const(np.int64(-1)))
    lp.condition(body.const(np.array(True)))
    lp.carried(x, acc, r_acc)
    lp.execution_condition(r_keep)
    lp.output(r_acc, info("f32", ()), names=["y"])
    inner_layer, (y,) = lp.build()
    r_y = body.result(unsqueeze(body, y))
    net = Net()
    ti = net.tensor_iterator(body, "rows")
    ti.sliced(net.param("X", "f32", (2, 1)), row, 0)
    ti.output(r_y, info("f32", (2,)), names=["ys"], axis=0)
    model = finish(net, ti)
    return model, model.graph.layers_of_type("TensorIterator")[0].id, inner_layer.id


def test_max_iterations_reaches_a_loop_inside_a_tensor_iterator() -> None:
    model, ti, inner = runaway_in_a_tensor_iterator()
    with pytest.raises(ExecutionError) as info_:
        irtool.run(model, {"X": np.zeros((2, 1), F32)}, max_iterations=4)
    assert str(info_.value) == (
        f'layer {ti}/body/{inner} "inner" (Loop-opset5): loop stopped: it would run more '
        f"than 4 iterations (max_iterations=4) (at iteration 0 of {ti})")


def zero_trip_loop(outer_dims: tuple[int, ...]) -> irtool.Model:
    """A Loop stacking its body's [1, 3] row per iteration; the Loop output declared
    ``outer_dims``."""
    body = Net()
    row = body.param("row_in", "f32", (1, 3))
    r_row = body.result(row)
    net = Net()
    lp = net.loop(body, "stacker")
    lp.trip_count(net.param("trip", "i64", ()))
    lp.condition(net.param("cond", "boolean", ()))
    lp.invariant(net.param("R", "f32", (1, 3)), row)
    lp.execution_condition(body.result(body.const(np.array(True))))
    lp.output(r_row, info("f32", outer_dims), names=["rows"], axis=0)
    return finish(net, lp)


@pytest.mark.parametrize("outer_dims", [(-1, 3), (-1, -1)])
def test_zero_iterations_take_the_concat_shape_from_the_body_result(
        outer_dims: tuple[int, ...]) -> None:
    """Zero iterations: the rows output is empty along the axis, with the other dims of the
    body Result's declared [1, 3] (the Loop's own output dims may leave them unknown)."""
    feeds = {"trip": np.array(0), "cond": np.array(True), "R": np.ones((1, 3), F32)}
    got = irtool.run(zero_trip_loop(outer_dims), feeds)["rows"]
    assert got.shape == (0, 3) and got.dtype == F32
    check(zero_trip_loop(outer_dims), feeds, {"rows": np.zeros((0, 3), F32)})  # OpenVINO too
    feeds["trip"] = np.array(2)
    check(zero_trip_loop(outer_dims), feeds, {"rows": np.ones((2, 3), F32)})


def zero_trip_outputs() -> irtool.Model:
    """A Loop with outputs: its iteration number (a body Parameter), an invariant passed
    through, and a value computed in the body (x * 2, declared [2])."""
    body = Net()
    i = body.param("i", "i64", ())
    x = body.param("x_in", "f32", (2,))
    r_i = body.result(i)
    r_x = body.result(x)
    r_twice = body.result(body.op("Multiply", "opset1", [x, body.const(np.full(2, 2, F32))],
                                  {"auto_broadcast": "numpy"}, shape=(2,)))
    net = Net()
    lp = net.loop(body, "zero")
    lp.trip_count(net.param("trip", "i64", ()))
    lp.condition(net.param("cond", "boolean", ()))
    lp.current_iteration(i)
    lp.invariant(net.param("X", "f32", (2,)), x)
    lp.execution_condition(body.result(body.const(np.array(True))))
    lp.output(r_i, info("i64", ()), names=["last_i"])
    lp.output(r_x, info("f32", (2,)), names=["x"])
    lp.output(r_twice, info("f32", (2,)), names=["twice"])
    return finish(net, lp)


def test_zero_iterations_outputs_without_axis() -> None:
    """The body never runs: the invariant passes through and the iteration number is 0
    (hand, and OpenVINO); a value computed in the body has its declared type and shape (its
    values are OpenVINO's uninitialised memory, so only those are compared)."""
    x = np.array([1.5, -2], F32)
    for trip, want in [(0, {"last_i": np.array(0, np.int64), "x": x}),
                       (3, {"last_i": np.array(2, np.int64), "x": x, "twice": 2 * x})]:
        feeds = {"trip": np.array(trip), "cond": np.array(True), "X": x}
        got = irtool.run(zero_trip_outputs(), feeds)
        # OpenVINO names the pass-through output after the input it passes on ("X").
        ov = run_openvino(zero_trip_outputs(), feeds)
        ov["x"] = ov.pop("X", ov.get("x"))
        for name, value in want.items():
            for who, out in (("irtool", got), ("openvino", ov)):
                assert out[name].dtype == value.dtype, (who, name, out[name].dtype)
                np.testing.assert_array_equal(out[name], value, err_msg=f"{who} {name}")
        assert (got["twice"].dtype, got["twice"].shape) == (ov["twice"].dtype, (2,))
        assert ov["twice"].shape == (2,)


def test_zero_iterations_of_a_concat_of_unknown_shape_says_so() -> None:
    body = Net()
    row = body.param("row_in", "f32", None)
    r_row = body.result(row)
    net = Net()
    lp = net.loop(body, "stacker")
    lp.trip_count(net.param("trip", "i64", ()))
    lp.condition(net.param("cond", "boolean", ()))
    lp.invariant(net.param("R", "f32", None), row)
    lp.execution_condition(body.result(body.const(np.array(True))))
    lp.output(r_row, info("f32", None), names=["rows"], axis=0)
    model = finish(net, lp)
    layer = model.graph.layers_of_type("Loop")[0]
    feeds = {"trip": np.array(0), "cond": np.array(True), "R": np.ones((1, 3), F32)}
    with pytest.raises(ExecutionError) as info_:
        irtool.run(model, feeds)
    assert str(info_.value) == (
        f'layer {layer.id} "stacker" (Loop-opset5): output port {layer.outputs[0].id}: the '
        "loop ran zero iterations and the empty concatenation has no known shape: the body "
        "Result's shape is unknown")
