"""The flat plan: generated execution, errors naming the layer, compile-time fast paths."""

from __future__ import annotations

import numpy as np
import openvino as ov
import pytest
from openvino import opset8
from support.ir_builders import F32, Net, info

from irtool.core.errors import ExecutionError
from irtool.opset import make_op
from irtool.runtime import Executor, compile_graph
from irtool.runtime.fastpath import specialise


def chain_model() -> Net:
    """y = (x + 1) * x, z = Split(y) into two halves."""
    net = Net()
    x = net.param("x", "f32", (4,))
    plus = net.op("Add", "opset1", [x, net.const(F32(1))], {"auto_broadcast": "numpy"},
                  name="plus")
    y = net.op("Multiply", "opset1", [plus, x], {"auto_broadcast": "numpy"}, name="y")
    net.result(y)
    halves = net.builder.op("Split", "opset1", [y, net.const(np.int64(0))], {"num_splits": "2"},
                            outputs=[info("f32", (2,))] * 2, output_names=[["z0"], ["z1"]])
    for half in halves:
        net.result(half)
    return net


def test_plan_runs_single_and_multi_output_steps() -> None:
    ex = Executor(chain_model().model())
    x = np.array([1, 2, 3, 4], F32)
    out = ex.run({"x": x})
    y = (x + 1) * x
    assert list(out) == ["y", "z0", "z1"]
    np.testing.assert_array_equal(out["y"], y)
    np.testing.assert_array_equal(out["z0"], y[:2])
    np.testing.assert_array_equal(out["z1"], y[2:])
    np.testing.assert_array_equal(ex.run([x * 2])["y"], (x * 2 + 1) * x * 2)  # reusable


def test_kernel_failure_names_the_layer() -> None:
    net = chain_model()
    plan = compile_graph(net.graph)
    with pytest.raises(ExecutionError) as info:
        plan.execute([np.zeros(3, F32)])  # the Split into 2 fails on 3 elements
    msg = str(info.value)
    assert "(Split-opset1)" in msg
    assert info.value.__cause__ is not None  # the kernel's own exception is kept


def test_names_from_the_ir_stay_inside_the_comments() -> None:
    """A layer name with a line break (and code after it) is escaped in the comment that
    names the layer on each generated line: the code is only what irtool generated."""
    net = Net()
    x = net.param("x", "f32", (2,))
    net.result(net.op("Negative", "opset1", [x], name='n\nraise SystemExit("injected")'))
    plan = compile_graph(net.graph)
    lines = plan.execute.source.splitlines()
    assert not any(line.lstrip().startswith("raise SystemExit") for line in lines)
    comment = '# 1 "n\\nraise SystemExit("injected")" (Negative-opset1)'
    assert sum(line.endswith(comment) for line in lines) == 4, lines  # guard, if, else, call
    np.testing.assert_array_equal(plan.execute([np.array([1, -2], F32)])[0], [-1, 2])


def test_wrong_number_of_plan_inputs() -> None:
    plan = compile_graph(chain_model().graph, "3/body")
    with pytest.raises(ExecutionError, match="takes 1 inputs, got 2"):
        plan.execute([np.zeros(4, F32), np.zeros(4, F32)])


def test_unsupported_operation_is_named_at_compile_time() -> None:
    net = Net()
    x = net.param("x", "f32", (2,))
    net.result(net.op("NoSuchOp", "opset1", [x], name="mystery"))
    with pytest.raises(ExecutionError, match=r'"mystery" \(NoSuchOp-opset1\).*not supported'):
        Executor(net.model())


def test_refresh_after_changing_steps() -> None:
    plan = compile_graph(chain_model().graph)
    x = np.array([1, 2, 3, 4], F32)
    plan.steps[0].kernel = lambda ins: [ins[0] - ins[1]]  # Add becomes Subtract
    plan.refresh()
    np.testing.assert_array_equal(plan.execute([x])[0], (x - 1) * x)


# -- fast paths: each must agree with the operation's own kernel and with hand numpy ----


def gather_by_hand(data: np.ndarray, idx: np.ndarray, axis: int) -> np.ndarray:
    """Gather from the spec: negative indices count from the end; an index outside
    [-n, n) gives zeros (Gather-8; OpenVINO's CPU plugin does the same for 1 and 7)."""
    axis %= data.ndim
    n = data.shape[axis]
    idx = np.asarray(idx, np.int64)
    inside = (idx >= -n) & (idx < n)
    out = np.take(data, np.where(inside, idx, 0), axis=axis)
    mask = inside.reshape((1,) * axis + idx.shape + (1,) * (data.ndim - axis - 1))
    return np.where(mask, out, np.zeros((), data.dtype)).astype(data.dtype)


def test_gather_by_hand_agrees_with_openvino() -> None:
    """The hand reference itself, on OpenVINO's CPU plugin (out-of-range indices too)."""
    data = np.arange(12, dtype=F32).reshape(3, 4)
    idx = np.array([[1, -1, 4], [-5, 0, 3]], np.int64)
    for axis in (0, 1, -1):
        p = opset8.parameter([2, 3], np.int64)
        node = opset8.gather(opset8.constant(data), p, opset8.constant(np.int64(axis)))
        compiled = ov.Core().compile_model(ov.Model([node.output(0)], [p]), "CPU")
        np.testing.assert_array_equal(compiled([idx])[0], gather_by_hand(data, idx, axis))


@pytest.mark.parametrize("version", ["opset1", "opset7", "opset8"])
@pytest.mark.parametrize("axis", [0, 1, -1, -2])
def test_gather_fast_path_matches_the_kernel(version: str, axis: int) -> None:
    data = np.arange(12, dtype=F32).reshape(3, 4)
    op = make_op("Gather", version, {"batch_dims": "0"} if version != "opset1" else {})
    fast = specialise("Gather", op, [None, None, np.array(axis)])
    assert fast is not op.compute
    n = data.shape[axis]
    for idx in [np.array(0), np.array(n - 1), np.array(-1), np.array(-n), np.array(n),
                np.array(-n - 1), np.array(1, np.int32), np.array([0, 2]), np.array([[1]])]:
        args = [data, idx, np.array(axis)]
        want = op.compute(args)[0]
        got = fast(args)[0]
        assert got.shape == want.shape and got.dtype == want.dtype, idx
        np.testing.assert_array_equal(got, want)
        by_hand = gather_by_hand(data, idx, axis)
        assert got.shape == by_hand.shape and got.dtype == by_hand.dtype, idx
        np.testing.assert_array_equal(got, by_hand)


def test_gather_fast_path_returns_a_copy() -> None:
    data = np.arange(6, dtype=F32).reshape(2, 3)
    op = make_op("Gather", "opset8", {"batch_dims": "0"})
    out = specialise("Gather", op, [None, None, np.array(0)])([data, np.array(1), np.array(0)])
    out[0][0] = 99
    assert data[1, 0] == 3


def test_gather_without_constant_axis_or_with_batch_dims_is_not_specialised() -> None:
    op = make_op("Gather", "opset8", {"batch_dims": "0"})
    assert specialise("Gather", op, [None, None, None]) == op.compute
    op = make_op("Gather", "opset8", {"batch_dims": "1"})
    assert specialise("Gather", op, [None, None, np.array(1)]) == op.compute


# (op, version, constant input, attributes, {input shape: output shape} worked out by hand
# from the specs).
RESHAPE_LIKE = [
    ("Unsqueeze", "opset1", np.array([0, -1]), {},
     {(3, 1, 2): (1, 3, 1, 2, 1), (5, 1, 4): (1, 5, 1, 4, 1)}),
    ("Squeeze", "opset1", np.array([1]), {}, {(3, 1, 2): (3, 2), (5, 1, 4): (5, 4)}),
    ("Reshape", "opset1", np.array([0, -1]), {"special_zero": "true"},
     {(3, 1, 2): (3, 2), (5, 1, 4): (5, 4)}),
    ("Reshape", "opset1", np.array([-1]), {"special_zero": "false"},
     {(3, 1, 2): (6,), (5, 1, 4): (20,)}),
]


@pytest.mark.parametrize("op_type,version,const,attrs,shapes", RESHAPE_LIKE)
def test_reshape_like_fast_paths_match_the_kernel(op_type: str, version: str, const: np.ndarray,
                                                  attrs: dict, shapes: dict) -> None:
    op = make_op(op_type, version, attrs)
    fast = specialise(op_type, op, [None, const])
    for shape in [(3, 1, 2), (5, 1, 4), (3, 1, 2)]:  # the repeat comes from the cache
        data = np.arange(np.prod(shape), dtype=F32).reshape(shape)
        want = op.compute([data, const])[0]
        got = fast([data, const])[0]
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        # By hand: the same elements in the same (C) order, in the spec's output shape.
        assert got.shape == shapes[shape] and got.dtype == F32
        np.testing.assert_array_equal(got, data.reshape(shapes[shape]))


def test_reshape_like_fast_path_still_reports_errors() -> None:
    """A shape the kernel rejects is never cached: every call reaches the kernel again."""
    op = make_op("Reshape", "opset1", {"special_zero": "false"})
    const = np.array([5])
    fast = specialise("Reshape", op, [None, const])
    for _ in range(2):
        with pytest.raises(ValueError):
            op.compute([np.zeros(6, F32), const])
        with pytest.raises(ValueError):
            fast([np.zeros(6, F32), const])
    assert fast([np.zeros(5, F32), const])[0].shape == (5,)
