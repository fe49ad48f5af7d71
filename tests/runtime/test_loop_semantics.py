"""Loop-5, TensorIterator-1 and If-8 semantics, one test per feature.

Each test builds IR in code (``tests/support/ir_builders.py``), writes the expected
outputs by hand as a plain numpy loop following the spec, and checks both
irtool's runtime and OpenVINO's CPU plugin (on the same IR, saved to disk)
against that expectation.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support.compare import assert_same
from support.ir_builders import (
    A0,
    Net,
    check,
    counted_loop,
    counting_expected,
    counting_loop,
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
from irtool.ir import Value
from irtool.runtime import Executor

F32 = np.float32


def test_for_loop() -> None:
    feeds = {"trip": np.array(5), "cond": np.array(True), "a0": A0}
    check(counting_loop(), feeds, counting_expected(5, True, A0))


@pytest.mark.parametrize("trip_et,dtype", [("i32", np.int32), ("i64", np.int64)])
def test_trip_count_types(trip_et: str, dtype: type) -> None:
    feeds = {"trip": np.array(4, dtype), "cond": np.array(True), "a0": A0}
    check(counting_loop(trip_et), feeds, counting_expected(4, True, A0))


def test_one_element_trip_count_and_condition() -> None:
    feeds = {"trip": np.array([3]), "cond": np.array([True]), "a0": A0}
    check(counting_loop(trip_shape=(1,), cond_shape=(1,)), feeds, counting_expected(3, True, A0))


def test_initial_condition_false_runs_zero_iterations() -> None:
    feeds = {"trip": np.array(5), "cond": np.array(False), "a0": A0}
    expected = counting_expected(5, False, A0)
    assert expected["steps"].shape == (0, 2)
    check(counting_loop(), feeds, expected)


@pytest.mark.parametrize("iter_et", ["i32", "i64"])
@pytest.mark.parametrize("iter_shape", [(), (1,)])
def test_current_iteration_scalar_and_one_element(iter_shape: tuple, iter_et: str) -> None:
    feeds = {"trip": np.array(6), "cond": np.array(True), "a0": A0}
    check(counting_loop(iter_shape=iter_shape, iter_et=iter_et), feeds,
          counting_expected(6, True, A0))


@pytest.mark.parametrize("iter_et,iter_shape,dtype,each", [
    ("dynamic", (), np.int64, ()), ("i64", None, np.int64, (1,)),
    ("i32", (-1,), np.int32, (1,))], ids=["dynamic-type", "dynamic-rank", "dynamic-dim"])
def test_current_iteration_of_dynamic_type_or_shape(iter_et: str, iter_shape: tuple | None,
                                                    dtype: type, each: tuple) -> None:
    """A current_iteration Parameter of dynamic element type holds an i64, one of dynamic
    shape a [1] tensor, as OpenVINO's reference implementation makes it (its CPU plugin
    refuses both: no dynamic element type, and a [1] shape check): the iteration numbers
    by hand, the last one and all of them concatenated."""
    body = Net()
    i = body.param("i", iter_et, iter_shape)
    r_i = body.result(i)
    net = Net()
    lp = counted_loop(net, body)
    lp.current_iteration(i)
    lp.execution_condition(true_result(body))
    lp.output(r_i, info(iter_et, iter_shape), names=["last"])
    lp.output(r_i, info(iter_et, None), names=["all"], axis=0)
    model = finish(net, lp)
    got = irtool.run(model, {"trip": np.array(4), "cond": np.array(True)})
    assert_same(got, {"last": np.full(each, 3, dtype), "all": np.arange(4, dtype=dtype)},
                "irtool")


def threshold_loop(limit: float) -> irtool.Model:
    """acc = acc * 2 while the body's condition (acc < limit after the step) holds."""
    body = Net()
    acc = body.param("acc_in", "f32", ())
    nxt = body.op("Multiply", "opset1", [acc, body.const(F32(2))], {"auto_broadcast": "numpy"})
    keep = body.op("Less", "opset1", [nxt, body.const(F32(limit))], {"auto_broadcast": "numpy"},
                   et="boolean")
    r_acc = body.result(nxt)
    r_keep = body.result(keep)
    net = Net()
    lp = counted_loop(net, body)
    a0 = net.param("a0", "f32", ())
    lp.carried(a0, acc, r_acc)
    lp.execution_condition(r_keep)
    lp.output(r_acc, info("f32", ()), names=["acc"])
    lp.output(body.result(unsqueeze(body, nxt)), info("f32", (-1,)), names=["steps"], axis=0)
    return finish(net, lp)


def threshold_expected(trip: int, cond: bool, a0: float, limit: float) -> dict:
    """The spec's ``for (i = 0; i != trip && cond; ++i) { ...; cond = ... }``."""
    acc, steps, i = F32(a0), [], 0
    while i != trip and cond:
        acc = F32(acc * 2)
        steps.append(acc)
        cond = bool(acc < limit)
        i += 1
    return {"acc": np.array(acc, F32), "steps": np.array(steps, F32)}


def test_while_loop() -> None:
    """trip -1 and a condition: runs while the condition holds (acc 1 -> 2 -> ... -> 128)."""
    feeds = {"trip": np.array(-1), "cond": np.array(True), "a0": np.array(1, F32)}
    expected = threshold_expected(-1, True, 1.0, 100.0)
    assert expected["steps"].shape == (7,)
    check(threshold_loop(100.0), feeds, expected)


def test_while_loop_with_false_condition() -> None:
    feeds = {"trip": np.array(-1), "cond": np.array(False), "a0": np.array(1, F32)}
    check(threshold_loop(100.0), feeds, threshold_expected(-1, False, 1.0, 100.0))


def test_do_while_loop() -> None:
    """trip -1, initial condition true: the body runs once even though its condition fails."""
    feeds = {"trip": np.array(-1), "cond": np.array(True), "a0": np.array(500, F32)}
    expected = threshold_expected(-1, True, 500.0, 100.0)
    assert expected["steps"].shape == (1,)
    check(threshold_loop(100.0), feeds, expected)


@pytest.mark.parametrize("trip", [3, 20])
def test_for_with_condition(trip: int) -> None:
    """Stops at the trip count (3) or when the condition turns false first (20)."""
    feeds = {"trip": np.array(trip), "cond": np.array(True), "a0": np.array(1, F32)}
    expected = threshold_expected(trip, True, 1.0, 100.0)
    assert expected["steps"].shape == ((3,) if trip == 3 else (7,))
    check(threshold_loop(100.0), feeds, expected)


def test_for_with_condition_under_a_lower_cap() -> None:
    """trip 20 over max_iterations=10: the cap alone does not stop the loop before it
    starts, since the condition may end it first (after 7 iterations here); with the cap
    at 5 it would run more, and stops."""
    feeds = {"trip": np.array(20), "cond": np.array(True), "a0": np.array(1, F32)}
    expected = threshold_expected(20, True, 1.0, 100.0)
    assert expected["steps"].shape == (7,)
    assert_same(Executor(threshold_loop(100.0), max_iterations=10).run(feeds), expected,
                "irtool")
    with pytest.raises(irtool.ExecutionError, match="more than 5 iterations"):
        Executor(threshold_loop(100.0), max_iterations=5).run(feeds)


def test_invariant_inputs() -> None:
    """W and b reach every iteration unchanged: h = tanh(h @ W + b)."""
    body = Net()
    h = body.param("h_in", "f32", (1, 3))
    w = body.param("w", "f32", (3, 3))
    b = body.param("b", "f32", (3,))
    mm = body.op("MatMul", "opset1", [h, w], {"transpose_a": "false", "transpose_b": "false"})
    add = body.op("Add", "opset1", [mm, b], {"auto_broadcast": "numpy"})
    nxt = body.op("Tanh", "opset1", [add])
    r_h = body.result(nxt)
    net = Net()
    lp = counted_loop(net, body)
    h0, wv, bv = net.param("h0", "f32", (1, 3)), net.param("W", "f32", (3, 3)), \
        net.param("B", "f32", (3,))
    lp.carried(h0, h, r_h)
    lp.invariant(wv, w)
    lp.invariant(bv, b)
    lp.execution_condition(true_result(body))
    lp.output(r_h, info("f32", (1, 3)), names=["h"])
    model = finish(net, lp)
    rng = np.random.default_rng(0)
    feeds = {"trip": np.array(4), "cond": np.array(True),
             "h0": rng.standard_normal((1, 3)).astype(F32),
             "W": rng.standard_normal((3, 3)).astype(F32), "B": rng.standard_normal(3).astype(F32)}
    hv = feeds["h0"]
    for _ in range(4):
        hv = np.tanh(hv @ feeds["W"] + feeds["B"])
    check(model, feeds, {"h": hv})


def slicing_loop(x_shape: tuple, axis: int, part_shape: tuple, trip: Value | None = None,
                 ti: bool = False, **slice_attrs: int) -> irtool.Model:
    """Sum the parts of X (sliced along ``axis``) and scan every part along ``axis``."""
    body = Net()
    part = body.param("part", "f32", part_shape)
    acc = body.param("acc_in", "f32", part_shape)
    nxt = body.op("Add", "opset1", [acc, part], {"auto_broadcast": "numpy"})
    r_acc = body.result(nxt)
    r_part = body.result(part)
    net = Net()
    x = net.param("X", "f32", x_shape)
    a0 = net.param("a0", "f32", part_shape)
    lp = iterate(net, body, ti)
    lp.sliced(x, part, axis, **slice_attrs)
    lp.carried(a0, acc, r_acc)
    lp.output(r_acc, info("f32", part_shape), names=["sum"])
    # OpenVINO checks the output's start/end/stride against its dims too.
    scan_attrs = {k: v for k, v in slice_attrs.items() if k in ("start", "end", "stride")}
    lp.output(r_part, info("f32", x_shape), names=["parts"], axis=axis, **scan_attrs)
    outs = lp.build()[1]
    return finish(net, outs)


def sliced_expected(x: np.ndarray, axis: int, part: int, reverse: bool, a0: np.ndarray,
                    reverse_scan: bool) -> dict:
    n = x.shape[axis] // part
    acc, parts = a0.copy(), []
    for k in range(n):
        j = (n - 1 - k) if reverse else k
        p = np.take(x, range(j * part, (j + 1) * part), axis=axis)
        acc = acc + p
        parts.append(p)
    if reverse_scan:
        parts = parts[::-1]
    return {"sum": acc, "parts": np.concatenate(parts, axis=axis)}


X43 = np.arange(12, dtype=F32).reshape(4, 3) ** 1.5


@pytest.mark.parametrize("axis", [0, 1])
def test_sliced_input(axis: int) -> None:
    n = X43.shape[axis]
    part_shape = (1, 3) if axis == 0 else (4, 1)
    a0 = np.full(part_shape, 0.25, F32)
    feeds = {"trip": np.array(n), "cond": np.array(True), "X": X43, "a0": a0}
    check(slicing_loop(X43.shape, axis, part_shape), feeds,
          sliced_expected(X43, axis, 1, False, a0, False))


def test_sliced_input_negative_stride_reverse() -> None:
    """start=-1 end=0 stride=-1 walks the axis backwards; a scan with stride -1 is stacked in
    reverse iteration order, giving X back in its original order."""
    a0 = np.zeros((1, 3), F32)
    feeds = {"trip": np.array(4), "cond": np.array(True), "X": X43, "a0": a0}
    model = slicing_loop(X43.shape, 0, (1, 3), start=-1, end=0, stride=-1)
    expected = sliced_expected(X43, 0, 1, True, a0, True)
    np.testing.assert_array_equal(expected["parts"], X43)
    check(model, feeds, expected)


def test_sliced_input_part_size_two() -> None:
    x = np.arange(18, dtype=F32).reshape(6, 3)
    a0 = np.zeros((2, 3), F32)
    feeds = {"trip": np.array(3), "cond": np.array(True), "X": x, "a0": a0}
    model = slicing_loop(x.shape, 0, (2, 3), stride=2, part_size=2)
    check(model, feeds, sliced_expected(x, 0, 2, False, a0, False))


def test_back_edges_swap_simultaneously() -> None:
    """(a, b) <- (b, a + b): every back edge takes the values of the same iteration."""
    body = Net()
    a = body.param("a_in", "i64", ())
    b = body.param("b_in", "i64", ())
    s = body.op("Add", "opset1", [a, b], {"auto_broadcast": "numpy"})
    r_a = body.result(b)
    r_b = body.result(s)
    net = Net()
    lp = counted_loop(net, body)
    a0, b0 = net.param("a0", "i64", ()), net.param("b0", "i64", ())
    lp.carried(a0, a, r_a)
    lp.carried(b0, b, r_b)
    lp.execution_condition(true_result(body))
    lp.output(r_a, info("i64", ()), names=["a"])
    lp.output(r_b, info("i64", ()), names=["b"])
    model = finish(net, lp)
    av, bv = 0, 1
    for _ in range(10):
        av, bv = bv, av + bv
    feeds = {"trip": np.array(10), "cond": np.array(True), "a0": np.array(0), "b0": np.array(1)}
    check(model, feeds, {"a": np.array(av), "b": np.array(bv)})


def test_carried_shape_grows_each_iteration() -> None:
    """history <- Concat(history, [i]): the carried value's shape changes every iteration."""
    body = Net()
    i, hist, grown = growing_history(body)
    net, lp = history_loop(body, i, hist, body.result(grown))
    model = finish(net, lp)
    h = [7, 7]
    for k in range(5):
        h = [*h, k]
    feeds = {"trip": np.array(5), "cond": np.array(True), "h0": np.array([7, 7])}
    check(model, feeds, {"hist": np.array(h)})


def column_scan_loop(axis: int, result_shape: tuple, out_shape: tuple) -> irtool.Model:
    """Scan a per-iteration value of shape ``result_shape`` along ``axis``: i * v + a."""
    body = Net()
    i = body.param("i", "i64", ())
    v = body.param("v", "f32", result_shape)
    fi = body.op("Convert", "opset1", [i], {"destination_type": "f32"}, et="f32")
    y = body.op("Multiply", "opset1", [v, fi], {"auto_broadcast": "numpy"})
    r_y = body.result(y)
    net = Net()
    lp = counted_loop(net, body)
    vv = net.param("V", "f32", result_shape)
    lp.invariant(vv, v)
    lp.current_iteration(i)
    lp.execution_condition(true_result(body))
    lp.output(r_y, info("f32", out_shape), names=["scan"], axis=axis)
    return finish(net, lp)


def scan_expected(v: np.ndarray, axis: int, trip: int) -> dict:
    return {"scan": np.concatenate([v * F32(k) for k in range(trip)], axis=axis)}


@pytest.mark.parametrize("axis,result_shape,out_shape", [(0, (1, 2), (-1, 2)),
                                                         (1, (2, 1), (2, -1))])
def test_concatenated_output_axes(axis: int, result_shape: tuple, out_shape: tuple) -> None:
    v = np.array([1.0, -3.0], F32).reshape(result_shape)
    feeds = {"trip": np.array(4), "cond": np.array(True), "V": v}
    check(column_scan_loop(axis, result_shape, out_shape), feeds, scan_expected(v, axis, 4))


@pytest.mark.parametrize("axis,result_shape,out_shape", [(-1, (2, 1), (2, -1)),
                                                         (-2, (1, 2), (-1, 2))])
@pytest.mark.parametrize("trip", [4, 0])
def test_concatenated_output_negative_axis(axis: int, result_shape: tuple,
                                           out_shape: tuple, trip: int) -> None:
    """The spec: a negative axis counts from the end. OpenVINO's CPU plugin (2026.4) gets
    negative output axes wrong (-1 yields shape (2, 1), -2 raises), so OpenVINO confirms the
    expectation on the same IR with the axis written as ``axis + rank``. Zero iterations
    leave the output empty along that axis, the other dim declared."""
    v = np.array([1.0, -3.0], F32).reshape(result_shape)
    feeds = {"trip": np.array(trip), "cond": np.array(True), "V": v}
    empty = np.zeros([0 if k == axis + 2 else d for k, d in enumerate(result_shape)], F32)
    expected = scan_expected(v, axis + 2, trip) if trip else {"scan": empty}
    assert_same(irtool.run(column_scan_loop(axis, result_shape, out_shape), feeds), expected,
                "irtool")
    positive = column_scan_loop(axis + 2, result_shape, out_shape)
    assert_same(run_openvino(positive, feeds), expected, "openvino")


@pytest.mark.parametrize("axis,result_shape,out_shape,empty", [
    (0, (1, 2), (-1, 2), (0, 2)), (1, (2, 1), (2, -1), (2, 0))])
def test_zero_iteration_outputs(axis: int, result_shape: tuple, out_shape: tuple,
                                empty: tuple) -> None:
    """Trip count 0: concatenated outputs are empty along their axis, other dims declared."""
    feeds = {"trip": np.array(0), "cond": np.array(True),
             "V": np.ones(result_shape, F32)}
    check(column_scan_loop(axis, result_shape, out_shape), feeds,
          {"scan": np.zeros(empty, F32)})


def test_zero_iteration_carried_values() -> None:
    feeds = {"trip": np.array(0), "cond": np.array(True), "a0": A0}
    expected = counting_expected(0, True, A0)
    np.testing.assert_array_equal(expected["acc"], A0)
    check(counting_loop(), feeds, expected)


def test_nested_loop_in_loop() -> None:
    """table[i, j] = i * 10 + j: the outer loop scans rows that an inner loop scans."""
    inner = Net()
    j = inner.param("j", "i64", ())
    base = inner.param("base", "i64", ())
    val = inner.op("Add", "opset1", [base, j], {"auto_broadcast": "numpy"})
    r_val = inner.result(unsqueeze(inner, val))
    outer_body = Net()
    i = outer_body.param("i", "i64", ())
    m = outer_body.param("m", "i64", ())
    base_v = outer_body.op("Multiply", "opset1", [i, outer_body.const(np.int64(10))],
                           {"auto_broadcast": "numpy"})
    ilp = outer_body.loop(inner)
    ilp.trip_count(m)
    ilp.condition(outer_body.const(np.array(True)))
    ilp.invariant(base_v, base)
    ilp.current_iteration(j)
    ilp.execution_condition(true_result(inner))
    ilp.output(r_val, info("i64", (-1,)), names=["row"], axis=0)
    (row,) = ilp.build()[1]
    r_row = outer_body.result(unsqueeze(outer_body, row))
    net = Net()
    lp = counted_loop(net, outer_body)
    mv = net.param("M", "i64", ())
    lp.invariant(mv, m)
    lp.current_iteration(i)
    lp.execution_condition(true_result(outer_body))
    lp.output(r_row, info("i64", (-1, -1)), names=["table"], axis=0)
    model = finish(net, lp)
    table = [[r * 10 + c for c in range(4)] for r in range(3)]
    feeds = {"trip": np.array(3), "cond": np.array(True), "M": np.array(4)}
    check(model, feeds, {"table": np.array(table, np.int64)})


def sign_if(net: Net, cond: Value, x: Value) -> Value:
    """If cond: x + 1 else: x * -1 (each branch has its own Parameter for x)."""
    then_b, else_b = Net(), Net()
    tx = then_b.param("tx", x.element_type.name, x.shape)
    ex = else_b.param("ex", x.element_type.name, x.shape)
    t_out = then_b.result(then_b.op("Add", "opset1", [tx, then_b.const(F32(1))],
                                    {"auto_broadcast": "numpy"}))
    e_out = else_b.result(else_b.op("Multiply", "opset1", [ex, else_b.const(F32(-1))],
                                    {"auto_broadcast": "numpy"}))
    branch = net.if_(cond, then_b, else_b)
    branch.then_input(x, tx)
    branch.else_input(x, ex)
    branch.output(t_out, e_out, x.info, names=["y"])
    (out,) = branch.build()[1]
    return out


@pytest.mark.parametrize("flag", [True, False])
def test_if_true_false(flag: bool) -> None:
    net = Net()
    c = net.param("c", "boolean", ())
    x = net.param("x", "f32", (3,))
    model = finish(net, [sign_if(net, c, x)])
    xv = np.array([1.0, -2.0, 3.5], F32)
    expected = xv + 1 if flag else xv * -1
    check(model, {"c": np.array(flag), "x": xv}, {"y": expected.astype(F32)})


def test_if_inside_loop() -> None:
    """acc <- acc + 1 while i < 2, else acc * -1: the branch changes between iterations."""
    body = Net()
    i = body.param("i", "i64", ())
    acc = body.param("acc_in", "f32", (2,))
    small = body.op("Less", "opset1", [i, body.const(np.int64(2))], {"auto_broadcast": "numpy"},
                    et="boolean")
    nxt = sign_if(body, small, acc)
    r_acc = body.result(nxt)
    net = Net()
    lp = counted_loop(net, body)
    a0 = net.param("a0", "f32", (2,))
    lp.carried(a0, acc, r_acc)
    lp.current_iteration(i)
    lp.execution_condition(true_result(body))
    lp.output(r_acc, info("f32", (2,)), names=["acc"])
    model = finish(net, lp)
    av = A0.copy()
    for k in range(5):
        av = av + F32(1) if k < 2 else av * F32(-1)
    check(model, {"trip": np.array(5), "cond": np.array(True), "a0": A0}, {"acc": av})


@pytest.mark.parametrize("reverse", [False, True])
def test_tensor_iterator(reverse: bool) -> None:
    """Iterations come from the sliced input; reverse walks it (and stacks) backwards."""
    attrs = {"start": -1, "end": 0, "stride": -1} if reverse else {}
    a0 = np.full((1, 3), 2.0, F32)
    model = slicing_loop(X43.shape, 0, (1, 3), ti=True, **attrs)
    check(model, {"X": X43, "a0": a0}, sliced_expected(X43, 0, 1, reverse, a0, reverse))


def test_tensor_iterator_axis1_reverse_scan_order() -> None:
    """A forward-sliced input with a stride -1 output: the scan comes out reversed."""
    body = Net()
    part = body.param("part", "f32", (4, 1))
    r_part = body.result(part)
    net = Net()
    x = net.param("X", "f32", (4, 3))
    lp = iterate(net, body, ti=True)
    lp.sliced(x, part, 1)
    lp.output(r_part, info("f32", (4, 3)), names=["rev"], axis=1, start=-1, end=0, stride=-1)
    model = finish(net, lp)
    check(model, {"X": X43}, {"rev": X43[:, ::-1]})


def test_condition_result_is_also_an_output_and_feeds_a_parameter() -> None:
    """The execution-condition Result is wired to a Loop output as well, and a body
    Parameter takes the Loop's condition input (port 1) first and the body's condition
    through a back edge after; the iteration number is an output too."""
    body = Net()
    i = body.param("i", "i64", ())
    c_in = body.param("c_in", "boolean", ())
    acc = body.param("acc_in", "f32", ())
    nxt = body.op("Multiply", "opset1", [acc, body.const(F32(3))], {"auto_broadcast": "numpy"})
    keep = body.op("Less", "opset1", [nxt, body.const(F32(50))], {"auto_broadcast": "numpy"},
                   et="boolean")
    r_acc = body.result(nxt)
    r_keep = body.result(keep)
    seen = body.op("Convert", "opset1", [c_in], {"destination_type": "f32"}, et="f32")
    r_seen = body.result(unsqueeze(body, seen))
    r_i = body.result(i)
    net = Net()
    lp = counted_loop(net, body)
    lp.carried_condition(c_in, r_keep)
    a0 = net.param("a0", "f32", ())
    lp.carried(a0, acc, r_acc)
    lp.current_iteration(i)
    lp.execution_condition(r_keep)
    lp.output(r_acc, info("f32", ()), names=["acc"])
    lp.output(r_keep, info("boolean", ()), names=["last_cond"])
    lp.output(r_seen, info("f32", (-1,)), names=["seen"], axis=0)
    lp.output(r_i, info("i64", ()), names=["last_i"])
    model = finish(net, lp)
    acc_v, c, seen_v, k = F32(1), True, [], 0
    while c:  # trip -1
        seen_v.append(F32(c))
        acc_v = F32(acc_v * 3)
        last_i = k
        c = bool(acc_v < 50)
        k += 1
    expected = {"acc": np.array(acc_v, F32), "last_cond": np.array(c),
                "seen": np.array(seen_v, F32), "last_i": np.array(last_i)}
    assert len(seen_v) == 4
    check(model, {"trip": np.array(-1), "cond": np.array(True), "a0": np.array(1, F32)}, expected)


@pytest.mark.parametrize(("et", "shape"), [("i64", ()), ("i32", (1,))])
def test_back_edge_into_the_current_iteration_parameter(et: str, shape: tuple,
                                                        tmp_path: Path) -> None:
    """A body Parameter that is the current_iteration *and* a carried value (its back
    edge brings i + 10): OpenVINO gives it the iteration number 0 on the first iteration
    and the back edge's value after, not the iteration number each time. The Loop is built
    with OpenVINO's op API and run there in memory; irtool runs the IR OpenVINO writes for
    it. (OpenVINO's own IR reader refuses that file: two port_map inputs name the same
    Parameter, which is why irtool's validator reports PORT_MAP_DUPLICATE on it.)"""
    import openvino as ov
    import openvino.opset8 as ops

    dtype = np.dtype(np.int64 if et == "i64" else np.int32)
    ov_type = ov.Type.i64 if et == "i64" else ov.Type.i32
    trip = ops.parameter([], ov.Type.i64, name="trip")
    init = ops.parameter(list(shape), ov_type, name="init")
    i = ops.parameter(list(shape), ov_type, name="i")
    r_next = ops.result(ops.add(i, ops.constant(np.full(shape, 10, dtype))))
    r_seen = ops.result(ops.unsqueeze(i, ops.constant(np.array([0], np.int64))))
    r_cond = ops.result(ops.constant(np.array(True)))
    loop = ops.loop(trip, ops.constant(np.array(True)))
    loop.set_function(ov.Model([r_next, r_seen, r_cond], [i], "body"))
    loop.set_special_body_ports([0, 2])  # i: current_iteration; Result 2: condition
    loop.set_merged_input(i, init.output(0), r_next.output(0))
    outs = [loop.get_iter_value(r_next.output(0), -1),
            loop.get_concatenated_slices(r_seen.output(0), 0, 1, 1, -1, 0)]
    for out, name in zip(outs, ("last", "seen")):
        out.get_tensor().set_names({name})
    model = ov.Model(outs, [trip, init], "fed_back")
    feeds = {"trip": np.array(4, np.int64), "init": np.full(shape, 100, dtype)}
    compiled = ov.Core().compile_model(model, "CPU")
    result = compiled(feeds)
    expected = {name: np.asarray(result[out]) for name, out in zip(("last", "seen"),
                                                                  compiled.outputs)}
    # By hand: 0, then each value + 10.
    seen = np.array([0, 10, 20, 30], dtype).reshape(4, *shape)
    assert_same(expected, {"last": np.full(shape, 40, dtype), "seen": seen}, "openvino")
    xml = tmp_path / "fed_back.xml"
    ov.save_model(model, str(xml))
    with pytest.raises(irtool.IRValidationError, match="PORT_MAP_DUPLICATE"):
        irtool.load(xml)  # the gate: not an IR OpenVINO reads
    got = Executor(irtool.load(xml, strict=False), check=False).run(feeds)
    assert_same(got, expected, "irtool")


def test_gather_by_a_fed_back_current_iteration_parameter(tmp_path: Path) -> None:
    """Gather(X, i) where i is the current_iteration Parameter *and* carried (back edge
    i + 10): the Gather reads the Parameter's value (0, 10, 20, 30), not the loop's
    iteration number. OpenVINO runs the model built with its op API; irtool the IR it
    writes (refused by the validator, see the test above, so run unchecked)."""
    import openvino as ov
    import openvino.opset8 as ops

    trip = ops.parameter([], ov.Type.i64, name="trip")
    init = ops.parameter([], ov.Type.i64, name="init")
    table = ops.parameter([40], ov.Type.f32, name="X")
    i = ops.parameter([], ov.Type.i64, name="i")
    x = ops.parameter([40], ov.Type.f32, name="x")
    r_next = ops.result(ops.add(i, ops.constant(np.array(10, np.int64))))
    row = ops.gather(x, i, ops.constant(np.array(0, np.int64)))
    r_seen = ops.result(ops.unsqueeze(row, ops.constant(np.array([0], np.int64))))
    r_cond = ops.result(ops.constant(np.array(True)))
    loop = ops.loop(trip, ops.constant(np.array(True)))
    loop.set_function(ov.Model([r_next, r_seen, r_cond], [i, x], "body"))
    loop.set_special_body_ports([0, 2])
    loop.set_merged_input(i, init.output(0), r_next.output(0))
    loop.set_invariant_input(x, table.output(0))
    out = loop.get_concatenated_slices(r_seen.output(0), 0, 1, 1, -1, 0)
    out.get_tensor().set_names({"seen"})
    model = ov.Model([out], [trip, init, table], "fed_back_gather")
    xs = np.arange(40, dtype=F32) * 2 + 1
    feeds = {"trip": np.array(4, np.int64), "init": np.array(100, np.int64), "X": xs}
    compiled = ov.Core().compile_model(model, "CPU")
    expected = {"seen": np.asarray(compiled(feeds)[compiled.outputs[0]])}
    # By hand: i = 0, then each value + 10.
    assert_same(expected, {"seen": xs[[0, 10, 20, 30]]}, "openvino")
    xml = tmp_path / "fed_back_gather.xml"
    ov.save_model(model, str(xml))
    for vectorize in (True, False):
        got = Executor(irtool.load(xml, strict=False), check=False,
                       vectorize=vectorize).run(feeds)
        assert_same(got, expected, "irtool")
