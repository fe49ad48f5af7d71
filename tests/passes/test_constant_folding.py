"""Constant folding (``irtool.passes.constant_folding``): what the plan folds and what it
leaves a step, and ``constant_value``, the ONNX frontend's evaluator of constants and
static shapes. Expected values are numpy's, written out by hand."""

from __future__ import annotations

import re

import numpy as np
import pytest
from support.ir_builders import Net

from irtool.core.errors import ExecutionError
from irtool.ir import Value
from irtool.passes.constant_folding import FOLDED_BYTES, FRONTEND_LIMIT, constant_value
from irtool.runtime import Executor

F32 = np.float32


def _steps(net: Net, **options: bool) -> list[str]:
    return [step.layer.type for step in Executor(net.model(), check=False, **options).plan.steps]


def _bias_net() -> tuple[Net, np.ndarray]:
    """x [2, 3] + Unsqueeze(Convert(c: f16 [3]), [0]) -> y."""
    net = Net()
    x = net.param("x", "f32", (2, 3))
    c = np.array([1.5, -2.0, 0.25], np.float16)
    wide = net.op("Convert", "opset1", [net.const(c)], {"destination_type": "f32"}, et="f32")
    row = net.op("Unsqueeze", "opset1", [wide, net.const(np.array([0], np.int64))], shape=(1, 3))
    net.result(net.op("Add", "opset1", [x, row], {"auto_broadcast": "numpy"}), "y")
    return net, c.astype(F32)


def test_steps_on_constants_fold_only_when_optimising() -> None:
    """The Convert and the Unsqueeze of the bias are constants of the optimised plan (two
    steps folded, counted); with ``optimize=False`` they stay steps. Values alike."""
    net, bias = _bias_net()
    assert _steps(net) == ["Add"]
    assert Executor(net.model()).optimizations.get("folded constant steps") == 2
    assert _steps(net, optimize=False) == ["Convert", "Unsqueeze", "Add"]
    x = np.arange(6, dtype=F32).reshape(2, 3)
    for optimize in (True, False):
        got = Executor(net.model(), optimize=optimize).run({"x": x})["y"]
        np.testing.assert_array_equal(got, x + bias)


def test_a_step_with_a_run_time_input_stays() -> None:
    """Squeeze of a constant [1, 3, 1] by axes given at run time: not folded (its kernel
    alone would squeeze every axis of 1); squeezing axis 0 gives [3, 1]."""
    net = Net()
    axes = net.param("axes", "i64", (1,))
    data = np.arange(3, dtype=F32).reshape(1, 3, 1)
    net.result(net.op("Squeeze", "opset1", [net.const(data), axes], shape=(3, 1)), "y")
    assert _steps(net) == ["Squeeze"]
    got = Executor(net.model()).run({"axes": np.array([0], np.int64)})["y"]
    np.testing.assert_array_equal(got, data.reshape(3, 1))


def test_a_step_with_a_run_time_input_between_constants_stays() -> None:
    """Pad of a constant with pads_begin given at run time and constant pads_end and pad
    value: a step (its constants alone, shifted into other inputs' places, would pad
    otherwise); numpy's pad by hand."""
    net = Net()
    begin = net.param("begin", "i64", (1,))
    data = np.arange(3, dtype=F32)
    net.result(net.op("Pad", "opset1", [net.const(data), begin,
                                        net.const(np.array([2], np.int64)),
                                        net.const(np.float32(9))],
                      {"pad_mode": "constant"}, shape=(-1,)), "y")
    assert _steps(net) == ["Pad"]
    got = Executor(net.model(), check=False).run({"begin": np.array([1], np.int64)})["y"]
    np.testing.assert_array_equal(got, np.pad(data, (1, 2), constant_values=9))


def test_a_result_of_the_folding_limit_is_folded() -> None:
    """A Broadcast of one float to exactly FOLDED_BYTES is folded; one element more stays
    a step."""
    for extra, folded in ((0, True), (1, False)):
        net = Net()
        count = FOLDED_BYTES // 4 + extra
        shape = net.const(np.array([count], np.int64))
        net.result(net.op("Broadcast", "opset3", [net.const(np.array(2.0, F32)), shape],
                          shape=(count,)), "y")
        assert _steps(net) == ([] if folded else ["Broadcast"])


def test_a_fold_unlike_its_declared_shape_stays_a_step() -> None:
    """An Unsqueeze declared [3, 1] that computes [1, 3] is not folded: the run's check
    names the layer."""
    net = Net()
    net.result(net.op("Unsqueeze", "opset1", [net.const(np.zeros(3, F32)),
                                              net.const(np.array([0], np.int64))],
                      shape=(3, 1), name="unsq"))
    assert _steps(net) == ["Unsqueeze"]
    with pytest.raises(ExecutionError, match=re.escape('"unsq" (Unsqueeze-opset1)')):
        Executor(net.model(), check=False).run({})


# --------------------------------------------------------------------------- constant_value

def _chain_of_adds(count: int) -> tuple[Net, Value]:
    """c + c + ... : ``count`` Adds on one Const (``count + 1`` layers to evaluate)."""
    net = Net()
    c = net.const(np.array([1.0], F32))
    v = c
    for _ in range(count):
        v = net.op("Add", "opset1", [v, c], {"auto_broadcast": "numpy"})
    return net, v


def test_constant_value_evaluates_up_to_its_limit() -> None:
    """FRONTEND_LIMIT layers are evaluated (c + 63 times c is 64), one more is not."""
    net, v = _chain_of_adds(FRONTEND_LIMIT - 1)
    np.testing.assert_array_equal(constant_value(net.graph, v), np.array([FRONTEND_LIMIT], F32))
    net, v = _chain_of_adds(FRONTEND_LIMIT)
    assert constant_value(net.graph, v) is None


def test_constant_value_of_a_value_read_twice_and_of_a_parameter() -> None:
    """``c * c`` (one Const read twice) is 9; anything a Parameter feeds is unknown."""
    net = Net()
    c = net.const(np.array([3], np.int64))
    square = net.op("Multiply", "opset1", [c, c], {"auto_broadcast": "numpy"})
    np.testing.assert_array_equal(constant_value(net.graph, square), [9])
    p = net.param("p", "i64", (1,))
    assert constant_value(net.graph, net.op("Add", "opset1", [c, p],
                                            {"auto_broadcast": "numpy"})) is None


@pytest.mark.parametrize("dims, output_type, dtype", [
    ((2, 3), "i64", np.int64), ((2, 3), "i32", np.int32), ((0, 3), "i64", np.int64),
    ((4,), None, np.int64)])
def test_constant_value_of_a_static_shape(dims: tuple, output_type: str | None,
                                          dtype: type) -> None:
    """ShapeOf of a Parameter declared static is its dims, in the output type asked for
    (ShapeOf-1: i64); a dim of 0 is static too."""
    net = Net()
    x = net.param("x", "f32", dims)
    if output_type is None:
        shape = net.op("ShapeOf", "opset1", [x], et="i64", shape=(len(dims),))
    else:
        shape = net.op("ShapeOf", "opset3", [x], {"output_type": output_type},
                       et=output_type, shape=(len(dims),))
    got = constant_value(net.graph, shape)
    assert got is not None and got.dtype == dtype and got.tolist() == list(dims)
