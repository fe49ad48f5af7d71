"""The loop rewrites of ``irtool/runtime/loopgen.py`` must not change any result.

Each test builds IR whose body has the pattern a rewrite targets (stacked
Unsqueeze outputs, Gather by the iteration number, sliced inputs feeding a
Squeeze), asserts that the rewrite is in effect, and checks irtool's outputs
against a hand-written numpy loop and OpenVINO on the same IR: zero iterations,
negative axes, reversed outputs, early stops and the cases where the rewrite
must fall back included.
"""

from __future__ import annotations

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
from irtool.errors import ExecutionError
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


def stacking_loop(unsqueeze_axis: int, concat_axis: int, identity: bool = False,
                  stride: int = 1) -> irtool.Model:
    """acc <- tanh(acc * 1.5 + 0.25) (shape 2x3), carried; every iteration's acc goes
    through Unsqueeze(., unsqueeze_axis) (after an Identity copy when ``identity``) to an
    output concatenated along ``concat_axis``."""
    body = Net()
    acc = body.param("acc_in", "f32", (2, 3))
    scaled = body.op("Multiply", "opset1", [acc, body.const(F32(1.5))],
                     {"auto_broadcast": "numpy"})
    nxt = body.op("Tanh", "opset1", [body.op("Add", "opset1", [scaled, body.const(F32(0.25))],
                                             {"auto_broadcast": "numpy"})])
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


def test_gathered_row_that_leaves_the_loop_is_a_copy() -> None:
    x = X3.copy()
    out = Executor(gather_loop(X3.shape, 0)).run(feeds(2, X=x))
    np.testing.assert_array_equal(out["row"], X3[1])
    assert not np.shares_memory(out["row"], x)
    out["row"][...] = 5
    np.testing.assert_array_equal(x, X3)


# ---------------------------------------------------------------------------
# Sliced inputs: parts cut once per run; Squeeze of a part folded into the cut


def squeeze_scan(x_shape: tuple, axis: int, squeeze_axis: int | None, ti: bool = True,
                 **slice_attrs: int) -> irtool.Model:
    """Scan-like: s <- s + Squeeze(part, squeeze_axis) (the part itself without a
    Squeeze); scans tanh(s) through Unsqueeze(., 0)."""
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
    row = part if squeeze_axis is None else body.op(
        "Squeeze", "opset1", [part, body.const(np.array([squeeze_axis], np.int64))],
        shape=row_shape)
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


@pytest.mark.parametrize("trip", [0, 3, 4100])
def test_scan_of_the_iteration_number(trip: int) -> None:
    """The iteration number, stacked through Unsqueeze: the counter must exist although
    no remaining step reads it (past the first counter block too)."""
    body = Net()
    i = body.param("i", "i64", ())
    r_scan = body.result(unsqueeze(body, i, 0))
    net = Net()
    lp = counted_loop(net, body)
    lp.current_iteration(i)
    lp.execution_condition(true_result(body))
    lp.output(r_scan, info("i64", (-1,)), names=["scan"], axis=0)
    model = finish(net, lp)
    assert iteration(model).stacking
    check(model, feeds(trip), {"scan": np.arange(trip, dtype=np.int64)}, openvino=trip < 100)
