"""The Loop / TensorIterator kernels of ``irtool/runtime/control_flow.py`` where the other
runtime tests do not reach: a TensorIterator without sliced inputs (its body runs once,
as in OpenVINO's CPU plugin), run options reaching a
loop nested in a TensorIterator body, errors naming the nested layer by its full path,
what each kind of output gives after zero iterations, and where a loop's batched form
runs instead of the loop.

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
from irtool.core.errors import ExecutionError, IRValidationError
from irtool.ir import Layer, Value
from irtool.runtime import Executor


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


def scan_loop(axis: int, body_shape: tuple | None, out_shape: tuple) -> irtool.Model:
    """Scan ``i * v`` along ``axis``: the body's v declared ``body_shape`` (less than the
    [2, 1] input ``V`` gives), the Loop output ``out_shape``."""
    body = Net()
    i = body.param("i", "i64", ())
    v = body.param("v", "f32", body_shape)
    fi = body.op("Convert", "opset1", [i], {"destination_type": "f32"}, et="f32")
    r_y = body.result(body.op("Multiply", "opset1", [v, fi], {"auto_broadcast": "numpy"}))
    net = Net()
    lp = net.loop(body, "scan")
    lp.trip_count(net.param("trip", "i64", ()))
    lp.condition(net.param("cond", "boolean", ()))
    lp.invariant(net.param("V", "f32", (2, 1)), v)
    lp.current_iteration(i)
    lp.execution_condition(body.result(body.const(np.array(True))))
    lp.output(r_y, info("f32", out_shape), names=["scan"], axis=axis)
    return finish(net, lp)


@pytest.mark.parametrize("body_shape", [(-1, 1), None], ids=["dynamic-dim", "dynamic-rank"])
@pytest.mark.parametrize("trip", [0, 2])
def test_zero_iterations_take_a_dim_the_body_leaves_open_from_the_loop_output(
        body_shape: tuple | None, trip: int) -> None:
    """The body Result declares [?, 1] or no shape at all, the Loop output [2, ?] along axis
    1: zero iterations give [2, 0] (hand, and OpenVINO), not 0 for the body's open dim."""
    v = np.array([[1.5], [-2.0]], F32)
    feeds = {"trip": np.array(trip), "cond": np.array(True), "V": v}
    expected = np.concatenate([v * F32(k) for k in range(trip)], axis=1) if trip else \
        np.zeros((2, 0), F32)
    check(scan_loop(1, body_shape, (2, -1)), feeds, {"scan": expected})


def one_layer_loop(make_body, outer: tuple[str, tuple], out: tuple[str, tuple | None],  # type: ignore[no-untyped-def]
                   sliced: bool = False, axis: int | None = None) -> irtool.Model:
    """A Loop over X whose body ``make_body(body, x)`` returns the Result of its one output,
    declared ``out`` (concatenated along ``axis``, if given); X is sliced along axis 0
    (``sliced``) or invariant."""
    body = Net()
    head = body.const(np.array(True))  # the body's first layer (id 0) is no Parameter
    x = body.param("x_in", outer[0], (1, *outer[1][1:]) if sliced else outer[1])
    r_out = make_body(body, x)
    net = Net()
    lp = net.loop(body, "loop")
    lp.trip_count(net.param("trip", "i64", ()))
    lp.condition(net.param("cond", "boolean", ()))
    big_x = net.param("X", *outer)
    if sliced:
        lp.sliced(big_x, x, axis=0)
    else:
        lp.invariant(big_x, x)
    lp.execution_condition(body.result(head))
    lp.output(r_out, info(*out), names=["y"], axis=axis)
    return finish(net, lp)


def twice(body: Net, x):  # type: ignore[no-untyped-def]
    return body.result(body.op("Add", "opset1", [x, x], {"auto_broadcast": "numpy"}))


X32 = np.arange(6, dtype=F32).reshape(3, 2)

# (name, model, X, the output after zero iterations, after two): hand-written, and OpenVINO's
# shape and type (its values after zero iterations of a body-computed output are its
# uninitialised memory, so only irtool's zeros are compared by value)
ZERO_TRIP_OUTPUTS = [
    # a Result fed straight by an invariant Parameter (not body layer 0) passes the input on
    ("invariant", lambda: one_layer_loop(lambda b, x: b.result(x), ("f32", (3, 2)),
                                         ("f32", (3, 2))), X32, X32, X32),
    # a Result fed straight by the sliced part: nothing carried, zeros of its declared type
    ("sliced-part", lambda: one_layer_loop(lambda b, x: b.result(x), ("f32", (3, 2)),
                                           ("f32", (1, 2)), sliced=True),
     X32, np.zeros((1, 2), F32), X32[1:2]),
    # a value computed in the body, declared [?, 2]: the open dim is 0
    ("computed-open-dim", lambda: one_layer_loop(twice, ("f32", (-1, 2)), ("f32", (-1, 2))),
     X32, np.zeros((0, 2), F32), 2 * X32),
]


@pytest.mark.parametrize("name,make,x,zero,two", ZERO_TRIP_OUTPUTS,
                         ids=[c[0] for c in ZERO_TRIP_OUTPUTS])
def test_zero_iterations_of_an_output_without_axis(name: str, make, x: np.ndarray,  # type: ignore[no-untyped-def]
                                                   zero: np.ndarray, two: np.ndarray) -> None:
    for trip, want in ((0, zero), (2, two)):
        feeds = {"trip": np.array(trip), "cond": np.array(True), "X": x}
        got = irtool.run(make(), feeds)["y"]
        ov = run_openvino(make(), feeds)
        # OpenVINO names a pass-through output after the input it passes on ("X").
        (ov_y,) = ov.values()
        assert (got.dtype, got.shape) == (want.dtype, want.shape), (trip, got)
        assert (ov_y.dtype, ov_y.shape) == (want.dtype, want.shape), (trip, ov_y)
        np.testing.assert_array_equal(got, want, err_msg=f"irtool, trip {trip}")
        if trip or name == "invariant":
            np.testing.assert_array_equal(ov_y, want, err_msg=f"openvino, trip {trip}")


CONCAT_EMPTY = "the empty concatenation has no known shape: "


@pytest.mark.parametrize("et,shape,out_shape,axis,why", [
    ("f32", None, None, 0, CONCAT_EMPTY + "the body Result's shape is unknown"),
    ("dynamic", (1, 3), (-1, 3), 0, CONCAT_EMPTY + "the body Result's element type is unknown"),
    ("f32", None, None, None, "the body Result is not a carried value and has no declared "
                              "type and shape"),
    (None, (1, 3), (1, 3), None, "the body Result is not a carried value and has no declared "
                                 "type and shape"),
], ids=["concat-no-shape", "concat-no-type", "no-axis-no-shape", "no-axis-no-ports-info"])
def test_zero_iterations_of_an_output_of_unknown_shape_or_type_says_so(
        et: str | None, shape: tuple | None, out_shape: tuple | None, axis: int | None,
        why: str) -> None:
    """The body computes the output (x + x, not a carried value) and declares no shape or
    no element type (or, built in memory, its ports have neither: ``et`` None): zero
    iterations leave nothing to give, and the error says which; the same loop run twice
    gives its values."""
    model = one_layer_loop(twice, (et or "f32", shape), (et or "f32", out_shape), axis=axis)
    loop = model.graph.layers_of_type("Loop")[0]
    if et is None:
        (add,) = loop.bodies["body"].layers_of_type("Add")
        (result,) = [r for r in loop.bodies["body"].results() if r.inputs[0].dims == (1, 3)]
        for port in (add.outputs[0], result.inputs[0]):
            port.precision, port.dims = None, None
    feeds = {"trip": np.array(0), "cond": np.array(True), "X": np.ones((1, 3), F32)}
    with pytest.raises(ExecutionError) as info_:
        irtool.run(model, feeds)
    assert str(info_.value) == (
        f'layer {loop.id} "loop" (Loop-opset5): output port {loop.outputs[0].id}: the loop '
        f"ran zero iterations and {why}")
    got = irtool.run(model, {**feeds, "trip": np.array(2)})["y"]
    np.testing.assert_array_equal(got, np.full((2, 3) if axis == 0 else (1, 3), 2, F32))


@pytest.mark.parametrize("body_et,out_et", [("f32", "dynamic"), ("dynamic", "f32")])
def test_zero_iterations_of_a_concat_take_the_type_either_side_declares(
        body_et: str, out_et: str) -> None:
    """The body Result or the Loop output leaves the element type dynamic, the other says
    f32: zero iterations give an empty f32 [0, 3] (irtool refused it when only the Loop
    output declared the type), two give the rows x + x."""
    model = one_layer_loop(twice, (body_et, (1, 3)), (out_et, (-1, 3)), axis=0)
    x = np.array([[1.5, -2.0, 0.25]], F32)
    got = irtool.run(model, {"trip": np.array(0), "cond": np.array(True), "X": x})["y"]
    assert (got.dtype, got.shape) == (np.dtype(F32), (0, 3))
    got = irtool.run(model, {"trip": np.array(2), "cond": np.array(True), "X": x})["y"]
    np.testing.assert_array_equal(got, np.concatenate([2 * x, 2 * x]))


def test_zero_iterations_of_a_concat_along_an_axis_out_of_range_say_so() -> None:
    """The concat axis 1 does not fit the rank-1 body Result nor the rank-1 Loop output
    (validate refuses such IR; the runtime's own check is what is left with check=False):
    the kernel compiles, and zero iterations name the axis and the rank."""
    model = one_layer_loop(twice, ("f32", (3,)), ("f32", (-1,)), axis=1)
    loop = model.graph.layers_of_type("Loop")[0]
    assert "CONCAT_AXIS" in {d.code for d in irtool.validate(model)}
    executor = Executor(model, check=False)
    with pytest.raises(ExecutionError) as info_:
        executor.run({"trip": np.array(0), "cond": np.array(True), "X": np.ones(3, F32)})
    assert str(info_.value) == (
        f'layer {loop.id} "loop" (Loop-opset5): output port {loop.outputs[0].id}: the loop '
        f"ran zero iterations and {CONCAT_EMPTY}axis 1 is out of range for rank 1")


def doubling_map(ti: bool, x_dims: tuple[int, int], axis: int = 0) -> irtool.Model:
    """A Loop (trip count and condition inputs) or TensorIterator over the rows of X (sliced
    along ``axis``, 0 or -2), y = 2x row by row, concatenated: iterations independent of
    each other, so the loop has a batched form (``passes.vectorize``) that doubles all of X
    at once."""
    body = Net()
    row = body.param("row", "f32", (1, 2))
    r_y = body.result(body.op("Multiply", "opset1", [row, body.const(np.full((1, 2), 2, F32))],
                              {"auto_broadcast": "numpy"}))
    return row_map(body, row, r_y, ti, x_dims, axis, (-1, 2))


def row_map(body: Net, row: Value, r_y: Layer, ti: bool, x_dims: tuple[int, int], axis: int,
            y_dims: tuple[int, int]) -> irtool.Model:
    """A Loop named "map" (trip count and condition inputs, a true body condition) or a
    TensorIterator running ``body`` over X sliced along ``axis`` into ``row``, ``r_y``
    concatenated into y."""
    net = Net()
    lp = net.tensor_iterator(body, "map") if ti else net.loop(body, "map")
    if not ti:
        lp.trip_count(net.param("trip", "i64", ()))
        lp.condition(net.param("cond", "boolean", ()))
        lp.execution_condition(body.result(body.const(np.array(True))))
    lp.sliced(net.param("X", "f32", x_dims), row, axis=axis)
    lp.output(r_y, info("f32", y_dims), names=["y"], axis=0)
    return finish(net, lp)


# (Loop or TensorIterator, X's declared dims, rows fed, trip count, max_iterations, whether
# the batched form runs): it runs where the trip count is the number of rows (and the rows
# the declared number, if declared), one row and the cap itself included; the loop runs
# anything else (zero iterations, fewer iterations than rows). X is sliced along axis 0,
# and in the last two along axis -2.
BATCHING = [
    (False, (-1, 2), 3, 3, None, True),
    (False, (-1, 2), 1, 1, None, True),
    (False, (-1, 2), 3, 3, 3, True),
    (False, (-1, 2), 3, 2, None, False),
    (False, (-1, 2), 0, 0, None, False),
    (False, (3, 2), 3, 3, None, True),
    (False, (3, 2), 3, 2, None, False),
    (True, (-1, 2), 3, 3, None, True),
    (True, (-1, 2), 1, 1, None, True),
    (True, (-1, 2), 3, 3, 3, True),
    (True, (-1, 2), 0, 0, None, False),
    (True, (3, 2), 3, 3, None, True),
    (False, (-1, 2), 3, 3, None, True, -2),
    (True, (-1, 2), 3, 3, None, True, -2),
]


def _batching_id(case: tuple) -> str:
    ti, x_dims, rows, trip, cap, _, axis = (*case, 0)[:7]
    return (f"{'ti' if ti else 'loop'}-{'dynamic' if -1 in x_dims else 'static'}-rows{rows}"
            f"-trip{trip}" + (f"-cap{cap}" if cap else "") + (f"-axis{axis}" if axis else ""))


@pytest.mark.parametrize("ti,x_dims,rows,trip,cap,batched,axis",
                         [(*case, 0)[:7] for case in BATCHING],
                         ids=[_batching_id(case) for case in BATCHING])
def test_the_batched_form_runs_where_it_computes_the_loop(
        ti: bool, x_dims: tuple[int, int], rows: int, trip: int, cap: int | None,
        batched: bool, axis: int) -> None:
    """Where the batched form runs (counted on its plan), and the doubled rows by hand
    either way."""
    model = doubling_map(ti, x_dims, axis)
    executor = Executor(model, max_iterations=cap)
    (step,) = [s for s in executor.plan.steps if s.layer.type in ("Loop", "TensorIterator")]
    assert step.kernel.batched is not None
    runs: list[int] = []
    plan = step.kernel.batched[1]
    execute = plan.execute
    plan.execute = lambda inputs: runs.append(1) or execute(inputs)
    x = np.arange(2 * rows, dtype=F32).reshape(rows, 2) - 2.5
    feeds = {"X": x} if ti else {"X": x, "trip": np.array(trip), "cond": np.array(True)}
    got = executor.run(feeds)["y"]
    assert_same({"y": got}, {"y": 2 * x[:trip]}, "irtool")
    assert len(runs) == batched


def pairs_in_a_loop(nested: bool) -> tuple[irtool.Model, str]:
    """A Loop ("pairs") over X (rows [?, 2]) sliced in parts of 2 rows every 2 (stride 2),
    trip count input n, a constant true body condition; concatenated parts out.
    ``nested``: inside the body of a one-iteration outer Loop, X and n passed in. The model
    and the path of "pairs" as errors name it."""
    inner = Net()
    part = inner.param("part", "f32", (2, 2))
    r_part = inner.result(part)
    host = Net()
    if nested:
        body = Net()
        n, x = body.param("n_in", "i64", ()), body.param("x_in", "f32", (-1, 2))
    else:
        body = host
        n, x = host.param("n", "i64", ()), host.param("X", "f32", (-1, 2))
    lp = body.loop(inner, "pairs")
    lp.trip_count(n)
    lp.condition(body.const(np.array(True)))
    lp.sliced(x, part, 0, stride=2, part_size=2)
    lp.execution_condition(inner.result(inner.const(np.array(True))))
    lp.output(r_part, info("f32", (-1, 2)), names=["parts"], axis=0)
    pairs, (out,) = lp.build()
    if not nested:
        host.result(out)
        return host.model(), str(pairs.id)
    r_out = body.result(out)
    outer = host.loop(body, "outer")
    outer.trip_count(host.const(np.int64(1)))
    outer.condition(host.const(np.array(True)))
    outer.invariant(host.param("n", "i64", ()), n)
    outer.invariant(host.param("X", "f32", (-1, 2)), x)
    outer.execution_condition(body.result(body.const(np.array(True))))
    outer.output(r_out, info("f32", (-1, 2)), names=["parts"])
    model = finish(host, outer)
    return model, f"{model.graph.layers_of_type('Loop')[0].id}/body/{pairs.id}"


@pytest.mark.parametrize("nested", [False, True], ids=["top", "nested"])
@pytest.mark.parametrize("n,rows,says,at", [
    (2, 5, "sliced input on port 2: the range of length 5 does not split into parts of 2 "
           "every 2", None),
    (3, 4, "iteration 2 needs part 2 of the sliced inputs, which have only 2 parts", 2),
    # unbounded, and the body condition constant: the parts end it, before any cap
    (-1, 4, "iteration 2 needs part 2 of the sliced inputs, which have only 2 parts", 2),
], ids=["does-not-split", "runs-out", "unbounded-runs-out"])
def test_sliced_input_errors_name_the_loop_by_its_path(nested: bool, n: int, rows: int,
                                                       says: str, at: int | None) -> None:
    """A run-time slicing error of a Loop at the top or in a body names it by its full
    path, and the iteration (``at``, of "pairs"; inside the outer Loop's iteration 0 too);
    X is port 2 of "pairs", after the trip count and the condition. Four rows in two pairs
    pass (the rows by hand)."""
    model, path = pairs_in_a_loop(nested)
    x = np.arange(2 * rows, dtype=F32).reshape(rows, 2)
    with pytest.raises(ExecutionError) as info_:
        Executor(model, max_iterations=10).run({"n": np.array(n), "X": x})
    notes = [f"iteration {at} of {path}"] if at is not None else []
    if nested:
        notes.append(f"iteration 0 of {path.split('/')[0]}")
    tail = f" (at {'; '.join(notes)})" if notes else ""
    assert str(info_.value) == f'layer {path} "pairs" (Loop-opset5): {says}{tail}'
    got = Executor(model).run({"n": np.array(2), "X": x[:4]})
    np.testing.assert_array_equal(got["parts"], x[:4])


def test_zero_iteration_outputs_are_copies() -> None:
    """After zero iterations an output passing an input on, or a body Const, is a copy (as
    OpenVINO's outputs are): writing to it changes neither the input nor what the next
    run gives."""
    const = np.array([[0.5, 4.0]], F32)
    model = one_layer_loop(lambda b, x: b.result(x), ("f32", (1, 2)), ("f32", (1, 2)))
    with_const = one_layer_loop(lambda b, x: b.result(b.const(const)), ("f32", (1, 2)),
                                ("f32", (1, 2)))
    x = np.array([[1.5, -2.0]], F32)
    feeds = {"trip": np.array(0), "cond": np.array(True), "X": x}
    for m, want in ((model, x.copy()), (with_const, const)):
        executor = Executor(m)
        got = executor.run(feeds)["y"]
        np.testing.assert_array_equal(got, want)
        got[...] = 99
        np.testing.assert_array_equal(x, [[1.5, -2.0]])
        np.testing.assert_array_equal(executor.run(feeds)["y"], want)


@pytest.mark.parametrize("ti", [False, True])
@pytest.mark.parametrize("vectorize", [True, False])
def test_a_batched_loop_checks_declared_dims_as_the_loop_does(ti: bool, vectorize: bool) -> None:
    """X is [?, ?], the body's row [1, ?], and the row plus itself is declared [1, 2] (then
    summed to [1, 1]): X of 3 columns breaks the declaration, which the run reports (the
    body layer, its port, the iteration), batched or as a loop; 2 columns give the sums of
    2x."""
    body = Net()
    row = body.param("row", "f32", (1, -1))
    twice = body.op("Add", "opset1", [row, row], {"auto_broadcast": "numpy"}, shape=(1, 2),
                    name="sum")
    r_y = body.result(body.op("ReduceSum", "opset1", [twice, body.const(np.array([1]))],
                              {"keep_dims": "true"}, shape=(1, 1)))
    model = row_map(body, row, r_y, ti, (-1, -1), 0, (-1, -1))
    executor = Executor(model, vectorize=vectorize)
    (step,) = [s for s in executor.plan.steps if s.layer.type in ("Loop", "TensorIterator")]
    assert (step.kernel.batched is not None) == vectorize
    x = np.ones((3, 3), F32)
    feeds = {"X": x} if ti else {"X": x, "trip": np.array(3), "cond": np.array(True)}
    add = model.graph.layer(step.layer.id).bodies["body"].layers_of_type("Add")[0]
    with pytest.raises(ExecutionError) as info_:
        executor.run(feeds)
    assert str(info_.value) == (
        f'layer {step.layer.id}/body/{add.id} "sum" (Add-opset1): computed f32[1,3] but its '
        f"output port {add.outputs[0].id} declares f32[1,2] (at iteration 0 of "
        f"{step.layer.id})")
    feeds["X"] = np.ones((3, 2), F32)
    np.testing.assert_array_equal(executor.run(feeds)["y"], np.full((3, 1), 4, F32))

