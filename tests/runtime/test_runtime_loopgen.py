"""The loop rewrites of ``irtool/runtime/codegen/loops.py`` must not change any result.

Each test builds IR whose body has the pattern a rewrite targets (stacked
Unsqueeze outputs, Gather by the iteration number, sliced inputs feeding a
Squeeze), asserts that the rewrite is in effect, and checks irtool's outputs
against a hand-written numpy loop and OpenVINO on the same IR: zero iterations,
negative axes, reversed outputs, early stops and the cases where the rewrite
must fall back included.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from support.compare import assert_same
from support.ir_builders import (
    Net,
    check,
    counted_loop,
    finish,
    growing_history,
    history_loop,
    info,
    iterate,
    run_openvino,
    true_result,
    unsqueeze,
)

import irtool
from irtool.core.errors import ExecutionError
from irtool.ir import Value
from irtool.runtime import Executor

F32 = np.float32


def iteration(model: irtool.Model):  # type: ignore[no-untyped-def]
    """The compiled iteration of the model's (first) Loop / TensorIterator."""
    step = next(s for s in Executor(model).plan.steps
                if s.layer.type in ("Loop", "TensorIterator"))
    return step.kernel.iteration.iterate


# ---------------------------------------------------------------------------
# Stacking: Result = Unsqueeze(v, a), output concatenated along c


V0 = (np.arange(6, dtype=F32).reshape(2, 3) - 2.5) / 3


def tanh_step(body: Net) -> tuple[Value, Value]:
    """The carried acc (f32 2x3) of ``body`` and its next value tanh(acc * 1.5 + 0.25)."""
    acc = body.param("acc_in", "f32", (2, 3))
    scaled = body.op("Multiply", "opset1", [acc, body.const(F32(1.5))],
                     {"auto_broadcast": "numpy"})
    return acc, body.op("Tanh", "opset1", [body.op("Add", "opset1", [
        scaled, body.const(F32(0.25))], {"auto_broadcast": "numpy"})])


def stacking_loop(unsqueeze_axis: int, concat_axis: int, identity: bool = False,
                  stride: int = 1) -> irtool.Model:
    """acc <- tanh(acc * 1.5 + 0.25) (shape 2x3), carried; every iteration's acc goes
    through Unsqueeze(., unsqueeze_axis) (after an Identity copy when ``identity``) to an
    output concatenated along ``concat_axis``."""
    body = Net()
    acc, nxt = tanh_step(body)
    r_acc = body.result(nxt)
    v = body.op("Identity", "opset16", [nxt]) if identity else nxt
    u = unsqueeze(body, v, unsqueeze_axis)
    r_scan = body.result(u)
    net = Net()
    lp = counted_loop(net, body)
    a0 = net.param("a0", "f32", (2, 3))
    lp.carried(a0, acc, r_acc)
    lp.execution_condition(true_result(body))
    lp.output(r_acc, info("f32", (2, 3)), names=["acc"])
    out_shape = tuple(-1 if k == (concat_axis % 3) else d  # the iterations' axis
                      for k, d in enumerate(u.shape))  # type: ignore[arg-type]
    attrs = {"start": -1, "end": 0, "stride": -1} if stride < 0 else {}
    lp.output(r_scan, info("f32", out_shape), names=["scan"], axis=concat_axis, **attrs)
    return finish(net, lp)


def stacking_expected(trip: int, unsqueeze_axis: int, concat_axis: int,
                      reverse: bool = False) -> dict:
    acc, values = V0.copy(), []
    for _ in range(trip):
        acc = np.tanh(acc * F32(1.5) + F32(0.25))
        values.append(np.expand_dims(acc, unsqueeze_axis))
    if reverse:
        values = values[::-1]
    if not values:
        shape = list(np.expand_dims(V0, unsqueeze_axis).shape)
        shape[concat_axis] = 0
        return {"acc": V0.copy(), "scan": np.zeros(shape, F32)}
    return {"acc": acc, "scan": np.concatenate(values, axis=concat_axis)}


def feeds(trip: int, **more: np.ndarray) -> dict:
    return {"trip": np.array(trip), "cond": np.array(True), **more}


@pytest.mark.parametrize("unsqueeze_axis,concat_axis", [
    (0, 0), (1, 1), (2, 2),  # the plain stacks
    (-3, 0), (-2, 1), (-1, 2),  # negative Unsqueeze axes: the same stacks
    (0, 1), (1, 0), (2, 0), (-1, 1),  # different axes: concatenated as before
])
@pytest.mark.parametrize("trip", [0, 1, 5])
def test_stacked_outputs(unsqueeze_axis: int, concat_axis: int, trip: int) -> None:
    model = stacking_loop(unsqueeze_axis, concat_axis)
    assert 0 in iteration(model).stacking  # the rewrite is in effect
    expected = stacking_expected(trip, unsqueeze_axis, concat_axis)
    # OpenVINO's CPU plugin wants each iteration's value to be 1 wide along the output
    # axis, so it runs only the stacks; irtool concatenates the others as it always did.
    check(model, feeds(trip, a0=V0), expected, openvino=unsqueeze_axis % 3 == concat_axis)


def test_stacked_output_with_a_scalar_unsqueeze_axis() -> None:
    """Unsqueeze's axes as a 0-d constant (the spec allows a scalar): the same stack."""
    body = Net()
    acc, nxt = tanh_step(body)
    r_acc = body.result(nxt)
    u = body.op("Unsqueeze", "opset1", [nxt, body.const(np.array(1, np.int64))], shape=(2, 1, 3))
    r_scan = body.result(u)
    net = Net()
    lp = counted_loop(net, body)
    lp.carried(net.param("a0", "f32", (2, 3)), acc, r_acc)
    lp.execution_condition(true_result(body))
    lp.output(r_acc, info("f32", (2, 3)), names=["acc"])
    lp.output(r_scan, info("f32", (2, -1, 3)), names=["scan"], axis=1)
    model = finish(net, lp)
    assert 0 in iteration(model).stacking
    check(model, feeds(4, a0=V0), stacking_expected(4, 1, 1))


def scanned_loop(kind: str) -> irtool.Model:
    """v <- v + 1 (i64, shape 2, carried); each iteration's y, by ``kind``, goes to an
    output "ys" concatenated along 0: "read" y = Unsqueeze(v, [0]) also read by
    z = y * 2 (scanned as "zs"); "add0" y = v + [0] (two inputs, an int constant of one
    element, but no Unsqueeze); "two-axes" y = Unsqueeze(v, [0, 1]); "axes-input"
    y = Unsqueeze(v, a) with the axes a loop input, not a constant."""
    body = Net()
    v = body.param("v_in", "i64", (2,))
    nxt = body.op("Add", "opset1", [v, body.const(np.array(1, np.int64))],
                  {"auto_broadcast": "numpy"})
    axes: Value | None = None
    if kind == "axes-input":
        axes = body.param("a", "i64", (1,))
    extra = []
    if kind == "add0":
        y = body.op("Add", "opset1", [nxt, body.const(np.array([0], np.int64))],
                    {"auto_broadcast": "numpy"})
    elif kind == "two-axes":
        y = body.op("Unsqueeze", "opset1", [nxt, body.const(np.array([0, 1], np.int64))],
                    shape=(1, 1, 2))
    elif kind == "axes-input":
        y = body.op("Unsqueeze", "opset1", [nxt, axes], shape=(1, 2))
    else:
        y = unsqueeze(body, nxt, 0)
        extra = [body.op("Multiply", "opset1", [y, body.const(np.array(2, np.int64))],
                         {"auto_broadcast": "numpy"})]
    r_v = body.result(nxt)
    net = Net()
    lp = counted_loop(net, body)
    lp.carried(net.param("v0", "i64", (2,)), v, r_v)
    if axes is not None:
        lp.invariant(net.param("A", "i64", (1,)), axes)
    lp.execution_condition(true_result(body))
    for name, value in (("ys", y), *(("zs", e) for e in extra)):
        lp.output(body.result(value), info("i64", (-1, *value.shape[1:])), names=[name],
                  axis=0)
    return finish(net, lp)


@pytest.mark.parametrize("kind", ["read", "add0", "two-axes", "axes-input"])
def test_scanned_values_that_are_not_plain_stacks(kind: str) -> None:
    """Concatenated outputs that stacking must leave to the Unsqueeze / Add step (hand
    numpy; OpenVINO on the same IR where its CPU plugin runs it: it wants each iteration's
    value 1 wide along the output axis, which "add0" is not, and refuses the dynamic rank
    an Unsqueeze by run-time axes gives)."""
    v0 = np.array([3, 5], np.int64)
    vs = [v0 + k for k in range(1, 4)]
    ys = {"read": [v[None] for v in vs], "add0": vs, "two-axes": [v[None, None] for v in vs],
          "axes-input": [v[None] for v in vs]}[kind]
    expected = {"ys": np.concatenate(ys, axis=0)}
    if kind == "read":
        expected["zs"] = expected["ys"] * 2
    more = {"A": np.array([0], np.int64)} if kind == "axes-input" else {}
    check(scanned_loop(kind), feeds(3, v0=v0, **more), expected,
          openvino=kind in ("read", "two-axes"))


def test_stacked_result_that_is_also_the_last_value_output() -> None:
    """The Unsqueeze's Result is concatenated and is also a last-iteration output: it must
    still be computed in the loop (not only collected for the stack)."""
    body = Net()
    acc, nxt = tanh_step(body)
    r_acc = body.result(nxt)
    r_scan = body.result(unsqueeze(body, nxt, 0))
    net = Net()
    lp = counted_loop(net, body)
    lp.carried(net.param("a0", "f32", (2, 3)), acc, r_acc)
    lp.execution_condition(true_result(body))
    lp.output(r_scan, info("f32", (-1, 2, 3)), names=["scan"], axis=0)
    lp.output(r_scan, info("f32", (1, 2, 3)), names=["last"])
    expected = stacking_expected(4, 0, 0)
    check(finish(net, lp), feeds(4, a0=V0),
          {"scan": expected["scan"], "last": expected["acc"][None]})


def test_stacked_result_that_is_also_the_body_condition() -> None:
    """The body condition Unsqueeze(i < 2) (a [1] boolean) is also concatenated: it must
    still be computed in the loop, which stops after iteration 2 (i = 0, 1, 2)."""
    body = Net()
    i = body.param("i", "i64", ())
    less = body.op("Less", "opset1", [i, body.const(np.array(2, np.int64))],
                   {"auto_broadcast": "numpy"}, et="boolean", shape=())
    r_c = body.result(unsqueeze(body, less, 0))
    net = Net()
    lp = counted_loop(net, body)
    lp.current_iteration(i)
    lp.execution_condition(r_c)
    lp.output(r_c, info("boolean", (-1,)), names=["conds"], axis=0)
    check(finish(net, lp), feeds(10), {"conds": np.array([True, True, False])})


@pytest.mark.parametrize("unsqueeze_axis,concat_axis", [(0, -3), (1, -2), (-1, -1), (2, -2)])
def test_stacked_outputs_with_negative_concat_axis(unsqueeze_axis: int,
                                                    concat_axis: int) -> None:
    """A negative output axis counts from the end (OpenVINO's CPU plugin mishandles
    negative output axes, see test_loop_semantics, so it checks the positive spelling)."""
    expected = stacking_expected(4, unsqueeze_axis, concat_axis + 3)
    assert_same(Executor(stacking_loop(unsqueeze_axis, concat_axis)).run(feeds(4, a0=V0)),
                expected, "irtool")
    check(stacking_loop(unsqueeze_axis, concat_axis + 3), feeds(4, a0=V0), expected,
          openvino=unsqueeze_axis % 3 == concat_axis + 3)


@pytest.mark.parametrize("unsqueeze_axis,concat_axis", [(0, 0), (1, 1), (-1, 2), (0, 1)])
def test_stacked_output_reversed(unsqueeze_axis: int, concat_axis: int) -> None:
    """stride -1: the iterations' values stacked last first."""
    model = stacking_loop(unsqueeze_axis, concat_axis, stride=-1)
    check(model, feeds(4, a0=V0), stacking_expected(4, unsqueeze_axis, concat_axis, True),
          openvino=unsqueeze_axis % 3 == concat_axis)


@pytest.mark.parametrize("trip", [0, 3])
def test_identity_before_the_unsqueeze_is_skipped(trip: int) -> None:
    model = stacking_loop(0, 0, identity=True)
    it = iteration(model)
    assert "Identity" not in it.source and 0 in it.stacking
    out = Executor(model).run(feeds(trip, a0=V0))
    check(model, feeds(trip, a0=V0), stacking_expected(trip, 0, 0))
    # The scan is a new array: writing to it leaves the carried output alone.
    if trip:
        before = out["acc"].copy()
        out["scan"][-1] = 7
        np.testing.assert_array_equal(out["acc"], before)
        assert not np.shares_memory(out["scan"], out["acc"])


def scalar_scan_loop(unsqueeze_axis: int) -> irtool.Model:
    """s <- s * 0.5 + 1 (a scalar); scanned through Unsqueeze(s, unsqueeze_axis)."""
    body = Net()
    s = body.param("s_in", "f32", ())
    nxt = body.op("Add", "opset1", [body.op("Multiply", "opset1", [s, body.const(F32(0.5))],
                                            {"auto_broadcast": "numpy"}),
                                    body.const(F32(1))], {"auto_broadcast": "numpy"})
    r_s = body.result(nxt)
    r_scan = body.result(unsqueeze(body, nxt, unsqueeze_axis))
    net = Net()
    lp = counted_loop(net, body)
    s0 = net.param("s0", "f32", ())
    lp.carried(s0, s, r_s)
    lp.execution_condition(true_result(body))
    lp.output(r_s, info("f32", ()), names=["s"])
    lp.output(r_scan, info("f32", (-1,)), names=["scan"], axis=0)
    return finish(net, lp)


@pytest.mark.parametrize("unsqueeze_axis", [0, -1])
@pytest.mark.parametrize("trip", [0, 6])
def test_stacked_scalars(unsqueeze_axis: int, trip: int) -> None:
    s, values = F32(3), []
    for _ in range(trip):
        s = F32(s * F32(0.5) + F32(1))
        values.append(s)
    model = scalar_scan_loop(unsqueeze_axis)
    assert iteration(model).stacking
    check(model, feeds(trip, s0=np.array(3, F32)),
          {"s": np.array(s, F32), "scan": np.array(values, F32)})


def growing_scan_loop(unsqueeze_axis: int, concat_axis: int) -> irtool.Model:
    """hist <- Concat(hist, [i]) grows each iteration and is scanned through an Unsqueeze:
    the per-iteration values differ in shape."""
    body = Net()
    i, hist, grown = growing_history(body)
    r_hist = body.result(grown)
    r_scan = body.result(unsqueeze(body, grown, unsqueeze_axis))
    net, lp = history_loop(body, i, hist, r_hist)
    lp.output(r_scan, info("i64", (-1, -1)), names=["scan"], axis=concat_axis)
    return finish(net, lp)


def test_stacking_values_of_different_shapes_falls_back() -> None:
    """Unsqueeze(., 0) concatenated along 1: rows of different lengths join into one row
    (np.stack could not do that; the concatenation of the unsqueezed values can)."""
    model = growing_scan_loop(0, 1)
    assert iteration(model).stacking
    h, rows = [9], []
    for k in range(4):
        h = [*h, k]
        rows.append(np.array([h]))
    check(model, feeds(4, h0=np.array([9])),
          {"hist": np.array(h), "scan": np.concatenate(rows, axis=1)}, openvino=False)


def test_stacking_values_of_different_shapes_is_still_an_error() -> None:
    """Unsqueeze(., 0) along 0: rows of different lengths cannot be concatenated, and the
    error is the one the unfused loop gives."""
    with pytest.raises(ExecutionError, match="cannot concatenate the iterations' values"):
        Executor(growing_scan_loop(0, 0)).run(feeds(3, h0=np.array([9])))


# ---------------------------------------------------------------------------
# Gather(X, current_iteration, axis) of a loop-invariant X


def gather_loop(x_shape: tuple, axis: int, counter_used: bool = False, const_x: np.ndarray
                | None = None, iter_et: str = "i64", version: str = "opset8") -> irtool.Model:
    """row = Gather(X, i, axis); y = tanh(row * 2) (+ i when ``counter_used``); outputs the
    last row as is (must be a copy) and the scan of y."""
    body = Net()
    i = body.param("i", iter_et, ())
    x = body.const(const_x) if const_x is not None else body.param("x", "f32", x_shape)
    row_shape = tuple(d for k, d in enumerate(x_shape) if k != axis % len(x_shape))
    attrs = {"batch_dims": "0"} if version != "opset1" else {}
    row = body.op("Gather", version, [x, i, body.const(np.array(axis, np.int64))], attrs,
                  shape=row_shape)
    y = body.op("Tanh", "opset1", [body.op("Multiply", "opset1", [row, body.const(F32(2))],
                                           {"auto_broadcast": "numpy"})])
    if counter_used:
        fi = body.op("Convert", "opset1", [i], {"destination_type": "f32"}, et="f32", shape=())
        y = body.op("Add", "opset1", [y, fi], {"auto_broadcast": "numpy"})
    r_row = body.result(row)
    r_scan = body.result(unsqueeze(body, y, 0))
    net = Net()
    lp = counted_loop(net, body)
    if const_x is None:
        lp.invariant(net.param("X", "f32", x_shape), x)
    lp.current_iteration(i)
    lp.execution_condition(true_result(body))
    lp.output(r_row, info("f32", row_shape), names=["row"])
    lp.output(r_scan, info("f32", (-1, *row_shape)), names=["scan"], axis=0)
    return finish(net, lp)


def gather_expected(x: np.ndarray, axis: int, trip: int, counter_used: bool = False) -> dict:
    rows, ys = [], []
    for i in range(trip):
        n = x.shape[axis]
        row = np.take(x, i, axis=axis) if i < n else np.zeros_like(np.take(x, 0, axis=axis))
        y = np.tanh(row * F32(2))
        ys.append(y + F32(i) if counter_used else y)
        rows.append(row)
    shape = np.take(x, 0, axis=axis).shape
    return {"row": rows[-1] if rows else np.zeros(shape, F32),
            "scan": np.stack(ys) if ys else np.zeros((0, *shape), F32)}


X3 = (np.arange(24, dtype=F32).reshape(2, 4, 3) - 11) / 7


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2])
def test_gather_by_iteration_number(axis: int) -> None:
    trip = X3.shape[axis]
    model = gather_loop(X3.shape, axis)
    assert "if i < n" in iteration(model).source  # X indexed by the loop counter
    check(model, feeds(trip, X=X3), gather_expected(X3, axis, trip))


@pytest.mark.parametrize("trip", [0, 1, 6])
def test_gather_by_iteration_number_past_the_end(trip: int) -> None:
    """Iterations past X's length take the Gather kernel's path (zeros out of range). After
    zero iterations the last row is undefined in OpenVINO (irtool gives zeros)."""
    check(gather_loop(X3.shape, 1), feeds(trip, X=X3), gather_expected(X3, 1, trip),
          openvino=trip > 0)


@pytest.mark.parametrize("iter_et", ["i32", "i64"])
def test_gather_by_iteration_number_that_is_also_used_elsewhere(iter_et: str) -> None:
    model = gather_loop(X3.shape, 1, counter_used=True, iter_et=iter_et)
    check(model, feeds(4, X=X3), gather_expected(X3, 1, 4, counter_used=True))


@pytest.mark.parametrize("version", ["opset1", "opset7"])
def test_gather_by_iteration_number_of_a_constant(version: str) -> None:
    model = gather_loop(X3.shape, 0, const_x=X3, version=version)
    assert "if i < n" in iteration(model).source
    check(model, feeds(2), gather_expected(X3, 0, 2))


@pytest.mark.parametrize("vectorize", [True, False])
def test_gathered_row_that_leaves_the_loop_is_a_copy(vectorize: bool) -> None:
    x = X3.copy()
    out = Executor(gather_loop(X3.shape, 0), vectorize=vectorize).run(feeds(2, X=x))
    np.testing.assert_array_equal(out["row"], X3[1])
    assert not np.shares_memory(out["row"], x)
    out["row"][...] = 5
    np.testing.assert_array_equal(x, X3)


def gather_feeding(consumer: str) -> irtool.Model:
    """A step before the Gather (all = Reshape(X, [-1])); row = Gather(X, i, 0) read only
    by ``consumer`` ("Reshape": flat = Reshape(row, [-1]), a kernel returning a view of
    its input; "Tanh": an inlined numpy step; "nothing": no step reads it); outputs all
    and the consumer's last value."""
    body = Net()
    i = body.param("i", "i64", ())
    x = body.param("x", "f32", X3.shape)
    flat_shape = body.const(np.array([-1], np.int64))
    before = body.op("Reshape", "opset1", [x, flat_shape], {"special_zero": "false"},
                     shape=(X3.size,))
    row = body.op("Gather", "opset8", [x, i, body.const(np.array(0, np.int64))],
                  {"batch_dims": "0"}, shape=X3.shape[1:])
    r_before, r_out = body.result(before), None
    if consumer == "Reshape":
        out = body.op("Reshape", "opset1", [row, flat_shape], {"special_zero": "false"},
                      shape=(X3[0].size,))
        r_out = body.result(out)
    elif consumer == "Tanh":
        out = body.op("Tanh", "opset1", [row])
        r_out = body.result(out)
    net = Net()
    lp = counted_loop(net, body)
    lp.invariant(net.param("X", "f32", X3.shape), x)
    lp.current_iteration(i)
    lp.execution_condition(true_result(body))
    lp.output(r_before, info("f32", (X3.size,)), names=["all"])
    if r_out is not None:
        lp.output(r_out, info("f32", r_out.inputs[0].dims), names=["out"])
    return finish(net, lp)


@pytest.mark.parametrize("consumer", ["Reshape", "Tanh"])
def test_gathered_row_read_by_one_step_after_another_step(consumer: str) -> None:
    """The counter Gather after another step of the body, its row read only by one step:
    hand numpy (last iteration i = 1), OpenVINO, and irtool with loops as loops."""
    model = gather_feeding(consumer)
    assert "if i < n" in iteration(model).source
    last = X3[1].reshape(-1) if consumer == "Reshape" else np.tanh(X3[1])
    check(model, feeds(2, X=X3), {"all": X3.reshape(-1), "out": last})


def test_gather_by_another_index_keeps_its_index() -> None:
    """Gather(X, i) and Gather(X, 1) in one body: only the first reads row i; the second
    reads row 1 on every iteration (hand numpy, OpenVINO)."""
    body = Net()
    i = body.param("i", "i64", ())
    x = body.param("x", "f32", X3.shape)
    axis = body.const(np.array(0, np.int64))
    rows = [body.op("Gather", "opset8", [x, index, axis], {"batch_dims": "0"},
                    shape=X3.shape[1:]) for index in (i, body.const(np.array(1, np.int64)))]
    total = body.op("Add", "opset1", rows, {"auto_broadcast": "numpy"})
    r_scan = body.result(unsqueeze(body, total, 0))
    net = Net()
    lp = counted_loop(net, body)
    lp.invariant(net.param("X", "f32", X3.shape), x)
    lp.current_iteration(i)
    lp.execution_condition(true_result(body))
    lp.output(r_scan, info("f32", (-1, *X3.shape[1:])), names=["scan"], axis=0)
    check(finish(net, lp), feeds(2, X=X3), {"scan": np.stack([X3[0] + X3[1], X3[1] * 2])})


def test_gathered_row_nothing_reads() -> None:
    """A counter Gather whose row no step and no Result reads: the loop still runs."""
    model = gather_feeding("nothing")
    check(model, feeds(2, X=X3), {"all": X3.reshape(-1)})


def test_counter_gather_on_an_axis_past_the_rank_names_the_gather() -> None:
    """Gather(X, i, axis=3) of a rank-3 X the IR gives no rank for: the error (raised when
    the Gather runs, on the first iteration) names the Gather layer and the iteration."""
    body = Net()
    i = body.param("i", "i64", ())
    x = body.param("x", "f32", None)
    row = body.op("Gather", "opset8", [x, i, body.const(np.array(3, np.int64))],
                  {"batch_dims": "0"}, shape=None)
    r_row = body.result(row)
    net = Net()
    lp = counted_loop(net, body)
    lp.invariant(net.param("X", "f32", None), x)
    lp.current_iteration(i)
    lp.execution_condition(true_result(body))
    lp.output(r_row, info("f32", None), names=["row"])
    model = finish(net, lp)
    assert "if i < n" in iteration(model).source
    for vectorize in (True, False):
        with pytest.raises(ExecutionError) as err:
            Executor(model, vectorize=vectorize).run(feeds(2, X=X3))
        assert '"Gather_' in str(err.value) and "iteration 0 of" in str(err.value)
        assert "axis 3 is out of range for rank 3" in str(err.value)  # what numpy said


@pytest.mark.parametrize("vectorize", [True, False])
def test_gathered_row_through_a_view_that_leaves_the_loop_is_a_copy(vectorize: bool) -> None:
    """Reshape's kernel returns a view of its input: the row it reads must be a copy, or
    the output would be a window into the caller's X."""
    x = X3.copy()
    out = Executor(gather_feeding("Reshape"), vectorize=vectorize).run(feeds(2, X=x))
    np.testing.assert_array_equal(out["out"], X3[1].reshape(-1))
    assert not np.shares_memory(out["out"], x)
    out["out"][...] = 5
    np.testing.assert_array_equal(x, X3)


# ---------------------------------------------------------------------------
# Sliced inputs: parts cut once per run; Squeeze of a part folded into the cut


def squeeze_scan(x_shape: tuple, axis: int, squeeze_axis: int | None, ti: bool = True,
                 axes: str = "1d", **slice_attrs: int) -> irtool.Model:
    """Scan-like: s <- s + Squeeze(part, squeeze_axis) (the part itself without a
    Squeeze); scans tanh(s) through Unsqueeze(., 0). ``axes``: the Squeeze's axes input
    as a 1-D constant, a 0-d one ("scalar"), or none ("none": every dim of size 1 goes,
    which must then be ``squeeze_axis`` alone)."""
    ax = axis % len(x_shape)
    part_shape = tuple(1 if k == ax else d for k, d in enumerate(x_shape))
    if squeeze_axis is None:
        row_shape = part_shape
    else:
        sq = squeeze_axis % len(x_shape)
        row_shape = tuple(d for k, d in enumerate(part_shape) if k != sq)
    body = Net()
    part = body.param("part", "f32", part_shape)
    s = body.param("s_in", "f32", row_shape)
    row = part
    if squeeze_axis is not None:
        squeeze_inputs = [part]
        if axes != "none":
            squeeze_inputs.append(body.const(np.array(
                squeeze_axis if axes == "scalar" else [squeeze_axis], np.int64)))
        row = body.op("Squeeze", "opset1", squeeze_inputs, shape=row_shape)
    nxt = body.op("Add", "opset1", [s, row], {"auto_broadcast": "numpy"})
    r_s = body.result(nxt)
    r_scan = body.result(unsqueeze(body, body.op("Tanh", "opset1", [nxt]), 0))
    net = Net()
    x = net.param("X", "f32", x_shape)
    s0 = net.param("s0", "f32", row_shape)
    lp = iterate(net, body, ti)
    lp.sliced(x, part, axis, **slice_attrs)
    lp.carried(s0, s, r_s)
    lp.output(r_s, info("f32", row_shape), names=["s"])
    lp.output(r_scan, info("f32", (-1, *row_shape)), names=["scan"], axis=0)
    return finish(net, lp)


def squeeze_expected(x: np.ndarray, axis: int, squeeze_axis: int | None, s0: np.ndarray,
                     positions: list[int]) -> dict:
    s, scan = s0.copy(), []
    for b in positions:
        part = np.take(x, [b], axis=axis)
        row = part if squeeze_axis is None else np.squeeze(part, axis=squeeze_axis)
        s = s + row
        scan.append(np.tanh(s))
    return {"s": s, "scan": np.stack(scan)}


X45 = (np.arange(20, dtype=F32).reshape(4, 5) - 9) / 4
X55 = (np.arange(25, dtype=F32).reshape(5, 5) - 12) / 5


def check_positive_spelling(make, axis: int, squeeze_axis: int | None, inputs: dict,
                            expected: dict, rank: int = 2) -> None:
    """irtool on the IR as written; OpenVINO (whose IR reader rejects negative port_map
    axes) on the same IR with the slicing axis written as ``axis + rank``."""
    assert_same(Executor(make(axis, squeeze_axis)).run(inputs), expected, "irtool")
    assert_same(Executor(make(axis, squeeze_axis), vectorize=False).run(inputs), expected,
                "irtool, loops as loops")
    assert_same(run_openvino(make(axis % rank, squeeze_axis), inputs), expected, "openvino")


@pytest.mark.parametrize("axis,squeeze_axis", [(0, 0), (1, 1), (-1, 1), (1, -1), (-2, -2)])
@pytest.mark.parametrize("reverse", [False, True])
def test_sliced_input_with_squeeze(axis: int, squeeze_axis: int, reverse: bool) -> None:
    attrs = {"start": -1, "end": 0, "stride": -1} if reverse else {}

    def make(ax: int, sq: int | None) -> irtool.Model:
        return squeeze_scan(X45.shape, ax, sq, **attrs)

    it = iteration(make(axis, squeeze_axis))
    assert it.squeezed and it.run_squeezed is not None
    n = X45.shape[axis]
    positions = list(range(n))[::-1] if reverse else list(range(n))
    s0 = np.full(np.squeeze(np.take(X45, [0], axis=axis), axis=squeeze_axis).shape, 0.5, F32)
    expected = squeeze_expected(X45, axis, squeeze_axis, s0, positions)
    check_positive_spelling(make, axis, squeeze_axis, {"X": X45, "s0": s0}, expected)


@pytest.mark.parametrize("axes", ["scalar", "none"])
@pytest.mark.parametrize("ti", [True, False])
def test_sliced_input_with_squeeze_axes_spelled_otherwise(axes: str, ti: bool) -> None:
    """The Squeeze's axes as a 0-d constant, or no axes input at all (Squeeze-1 then drops
    every dim of size 1, here the slicing axis alone): the same walk as with [0]."""
    model = squeeze_scan(X45.shape, 0, 0, ti=ti, axes=axes)
    s0 = np.full((5,), 0.5, F32)
    inputs = {"X": X45, "s0": s0} if ti else {"X": X45, "s0": s0, **feeds(4)}
    check(model, inputs, squeeze_expected(X45, 0, 0, s0, [0, 1, 2, 3]))


X415 = (np.arange(20, dtype=F32).reshape(4, 1, 5) - 9) / 4


def part_feeding(kind: str) -> irtool.Model:
    """A TensorIterator over the rows of X (4x1x5; parts 1x1x5) whose part feeds, by
    ``kind``: "squeeze+result" Squeeze(part, [0]) and a Result of the part itself;
    "squeeze+add" Squeeze(part, [0]) and part + 1; "squeeze2" Squeeze(part, [0, 1]);
    "unsqueeze" Unsqueeze(part, [0]); "squeeze+last" Squeeze(part, [0]), and the part
    itself is the last-value output "last". Each value goes to an output concatenated
    along 0."""
    body = Net()
    part = body.param("part", "f32", (1, 1, 5))
    if kind == "squeeze2":
        values = [body.op("Squeeze", "opset1", [part, body.const(np.array([0, 1], np.int64))],
                          shape=(5,))]
    elif kind == "unsqueeze":
        values = [unsqueeze(body, part, 0)]
    elif kind == "squeeze+last":
        values = [body.op("Squeeze", "opset1", [part, body.const(np.array([0], np.int64))],
                          shape=(1, 5))]
    else:
        values = [body.op("Squeeze", "opset1", [part, body.const(np.array([0], np.int64))],
                          shape=(1, 5))]
        values.append(part if kind == "squeeze+result" else body.op(
            "Add", "opset1", [part, body.const(F32(1))], {"auto_broadcast": "numpy"}))
    net = Net()
    ti = net.tensor_iterator(body)
    ti.sliced(net.param("X", "f32", X415.shape), part, 0)
    for k, v in enumerate(values):
        ti.output(body.result(unsqueeze(body, v, 0)), info("f32", (-1, *v.shape)),
                  names=[f"y{k}"], axis=0)
    if kind == "squeeze+last":
        ti.output(body.result(part), info("f32", (1, 1, 5)), names=["last"])
    return finish(net, ti)


@pytest.mark.parametrize("kind", ["squeeze+result", "squeeze+add", "squeeze2", "unsqueeze",
                                  "squeeze+last"])
def test_sliced_part_read_otherwise_than_by_one_squeeze_of_its_axis(kind: str) -> None:
    """The Squeeze of a part is folded into the cut only where the Squeeze of the slicing
    axis is the part's one reader: each of these runs as written (hand numpy)."""
    rows = [X415[b:b + 1] for b in range(4)]
    expected = {
        "squeeze+result": {"y0": np.stack([r[0] for r in rows]), "y1": np.stack(rows)},
        "squeeze+add": {"y0": np.stack([r[0] for r in rows]), "y1": np.stack(rows) + 1},
        "squeeze2": {"y0": np.stack([r[0, 0] for r in rows])},
        "unsqueeze": {"y0": np.stack([r[None] for r in rows])},
        "squeeze+last": {"y0": np.stack([r[0] for r in rows]), "last": rows[-1]},
    }[kind]
    check(part_feeding(kind), {"X": X415}, expected)


def test_sliced_input_with_a_squeeze_of_another_axis() -> None:
    """Slicing axis 1 of a (1, 5) input, squeezing axis 0 (also of size 1): the parts are
    not squeezed along the slicing axis, so the Squeeze itself runs."""
    x = X45[:1]
    model = squeeze_scan(x.shape, 1, 0)
    assert iteration(model).squeezed == {0: 0}
    s0 = np.zeros((1,), F32)
    check(model, {"X": x, "s0": s0}, squeeze_expected(x, 1, 0, s0, list(range(5))))


@pytest.mark.parametrize("axis,attrs,positions", [
    (0, {"stride": 2}, [0, 2, 4]),
    (0, {"start": -1, "end": 0, "stride": -2}, [4, 2, 0]),
    (-1, {"stride": 2}, [0, 2, 4]),
    (1, {"start": 1, "end": 4}, [1, 2, 3]),
    (1, {"start": -1, "end": 0, "stride": -1}, [4, 3, 2, 1, 0]),
    (1, {}, [0, 1, 2, 3, 4]),
])
@pytest.mark.parametrize("squeeze", [False, True])
def test_sliced_input_strides_and_ranges(axis: int, attrs: dict, positions: list[int],
                                         squeeze: bool) -> None:
    """Loops (the trip count says how many parts) over strided and partial ranges, checked
    against the spec's walk written out by hand. OpenVINO's CPU plugin (2026.4) cannot
    confirm these: it fails on a stride other than +-1 ("iter < iter_count") and starts a
    Loop's slices at 0 whatever ``start`` says; the whole-axis walks with OpenVINO are in
    test_sliced_input_with_squeeze."""
    squeeze_axis = axis if squeeze else None
    model = squeeze_scan(X55.shape, axis, squeeze_axis, ti=False, **attrs)
    assert bool(iteration(model).squeezed) == squeeze
    part = np.take(X55, [0], axis=axis)
    s0 = np.full(part.shape if not squeeze else np.squeeze(part, axis=axis).shape, 1, F32)
    inputs = {"X": X55, "s0": s0, "trip": np.array(len(positions)), "cond": np.array(True)}
    expected = squeeze_expected(X55, axis, squeeze_axis, s0, positions)
    check(model, inputs, expected, openvino="stride" not in attrs and "start" not in attrs)


def test_loop_over_sliced_input_stopping_early() -> None:
    """A Loop whose trip count is below the part count: only the first parts are used."""
    model = squeeze_scan(X45.shape, 0, 0, ti=False)
    s0 = np.zeros(5, F32)
    check(model, {"X": X45, "s0": s0, "trip": np.array(2), "cond": np.array(True)},
          squeeze_expected(X45, 0, 0, s0, [0, 1]))


# ---------------------------------------------------------------------------
# Back edges, counters and conditions in the generated loop


def swap_loop(through_op: bool) -> irtool.Model:
    """(p, q) <- (q, p); outputs p, q and the iteration number."""
    body = Net()
    i = body.param("i", "i64", ())
    p_in = p = body.param("p_in", "f32", (2,))
    q_in = q = body.param("q_in", "f32", (2,))
    one = body.const(F32(1))
    if through_op:
        p, q = (body.op("Multiply", "opset1", [v, one], {"auto_broadcast": "numpy"})
                for v in (p, q))
    r_p = body.result(q)  # back edge: p <- q
    r_q = body.result(p)  # back edge: q <- p
    r_i = body.result(i)
    net = Net()
    lp = counted_loop(net, body)
    p0, q0 = net.param("p0", "f32", (2,)), net.param("q0", "f32", (2,))
    lp.carried(p0, p_in, r_p)
    lp.carried(q0, q_in, r_q)
    lp.current_iteration(i)
    lp.execution_condition(true_result(body))
    lp.output(r_p, info("f32", (2,)), names=["p"])
    lp.output(r_q, info("f32", (2,)), names=["q"])
    lp.output(r_i, info("i64", ()), names=["i"])
    return finish(net, lp)


@pytest.mark.parametrize("trip", [1, 4, 5, 4097])
def test_results_fed_by_carried_parameters_keep_the_last_iteration(trip: int) -> None:
    """(p, q) <- (q, p), with the outputs taken straight from the Parameters: the last
    iteration's values (read before the back edges update them), and the iteration number
    (a counter past the first block of 4096). OpenVINO's CPU plugin gives the swapped
    values for even trip counts when the Results are fed by the Parameters themselves, so
    it confirms the expectation on the spelling with a ``Multiply(., 1)`` in between."""
    pv, qv = np.array([1, 2], F32), np.array([3, 4], F32)
    a, b = pv, qv
    for _ in range(trip):
        a, b = b, a
    expected = {"p": a, "q": b, "i": np.array(trip - 1)}
    inputs = feeds(trip, p0=pv, q0=qv)
    check(swap_loop(through_op=False), inputs, expected, openvino=False)
    if trip < 100:
        check(swap_loop(through_op=True), inputs, expected)


@pytest.mark.parametrize("vectorize", [True, False])
def test_iteration_number_output_does_not_reach_later_runs(vectorize: bool) -> None:
    """The iteration number a run returns is not a window into the counters of later runs:
    writing to it (where numpy allows it) leaves the next run's count alone (the spec:
    the last iteration's number, trip - 1)."""
    model = swap_loop(through_op=False)
    inputs = feeds(3, p0=np.zeros(2, F32), q0=np.ones(2, F32))
    out = Executor(model, vectorize=vectorize).run(inputs)
    assert out["i"] == 2
    with contextlib.suppress(ValueError):  # read-only: nothing to write
        out["i"][...] = 99
    for _ in range(2):
        assert Executor(model, vectorize=vectorize).run(inputs)["i"] == 2


@pytest.mark.parametrize("trip", [3, 4100])
def test_iteration_number_of_shape_1(trip: int) -> None:
    """A [1] current_iteration (the spec allows it), scanned and as the last value: [k]
    in iteration k (past the first counter block too)."""
    body = Net()
    i = body.param("i", "i64", (1,))
    net = Net()
    lp = counted_loop(net, body)
    lp.current_iteration(i)
    lp.execution_condition(true_result(body))
    lp.output(body.result(i), info("i64", (-1,)), names=["scan"], axis=0)
    lp.output(body.result(i), info("i64", (1,)), names=["last"])
    check(finish(net, lp), feeds(trip),
          {"scan": np.arange(trip, dtype=np.int64), "last": np.array([trip - 1])},
          openvino=trip < 100)


def test_iteration_number_nothing_reads() -> None:
    """A current_iteration Parameter no step reads: the loop runs as without it."""
    body = Net()
    body.param("i", "i64", ())
    acc = body.param("acc_in", "f32", (2,))
    r_acc = body.result(body.op("Add", "opset1", [acc, body.const(F32(1))],
                                {"auto_broadcast": "numpy"}))
    net = Net()
    lp = counted_loop(net, body)
    lp.carried(net.param("a0", "f32", (2,)), acc, r_acc)
    lp.current_iteration(0)
    lp.execution_condition(true_result(body))
    lp.output(r_acc, info("f32", (2,)), names=["acc"])
    check(finish(net, lp), feeds(3, a0=np.zeros(2, F32)), {"acc": np.full(2, 3, F32)})


def test_constant_false_body_condition_runs_once() -> None:
    body = Net()
    acc = body.param("acc_in", "f32", ())
    r_acc = body.result(body.op("Add", "opset1", [acc, body.const(F32(1))],
                                {"auto_broadcast": "numpy"}))
    r_stop = body.result(body.const(np.array(False)))
    net = Net()
    lp = counted_loop(net, body)
    a0 = net.param("a0", "f32", ())
    lp.carried(a0, acc, r_acc)
    lp.execution_condition(r_stop)
    lp.output(r_acc, info("f32", ()), names=["acc"])
    model = finish(net, lp)
    assert "cond = False" in iteration(model).source  # a Python bool, no array check
    check(model, feeds(10, a0=np.array(1, F32)), {"acc": np.array(2, F32)})
    check(model, feeds(-1, a0=np.array(1, F32)), {"acc": np.array(2, F32)})


@pytest.mark.parametrize("iter_et,dtype", [("i64", np.int64), ("i32", np.int32)])
@pytest.mark.parametrize("trip", [0, 3, 4100])
def test_scan_of_the_iteration_number(trip: int, iter_et: str, dtype: type) -> None:
    """The iteration number, stacked through Unsqueeze: the counter must exist although
    no remaining step reads it (past the first counter block too), in the iteration
    number's element type."""
    body = Net()
    i = body.param("i", iter_et, ())
    r_scan = body.result(unsqueeze(body, i, 0))
    net = Net()
    lp = counted_loop(net, body)
    lp.current_iteration(i)
    lp.execution_condition(true_result(body))
    lp.output(r_scan, info(iter_et, (-1,)), names=["scan"], axis=0)
    model = finish(net, lp)
    assert iteration(model).stacking
    check(model, feeds(trip), {"scan": np.arange(trip, dtype=dtype)}, openvino=trip < 100)
