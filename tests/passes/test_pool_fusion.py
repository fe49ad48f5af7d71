"""Compile-time rewrites of a plan: a bias Add and a ReLU before a MaxPool run after it
(``passes/pool_fusion.py``), and steps on constants alone computed once
(``passes/constant_folding.py``), both in the compile pipeline.

Each case says whether the rewrite applies (the plan's steps) and checks the values
against numpy written out in the graph's own order, so a rewrite applied where it must
not be gives different numbers (padding windows, infinities, a bias varying within a
window, a value read elsewhere) and fails.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from support.ir_builders import Net, info

from irtool.core.errors import ExecutionError
from irtool.ir import Value
from irtool.opset import Op, register
from irtool.runtime import Executor, compile_graph

F32 = np.float32
RNG = np.random.default_rng(5)
POOL = {"kernel": "2,2", "strides": "2,2", "pads_begin": "0,0", "pads_end": "0,0",
        "rounding_type": "floor", "auto_pad": "explicit"}


def pool8(net: Net, x: Value, attrs: dict, out_shape: tuple,
          et: str = "f32") -> tuple[Value, Value]:
    """A MaxPool-8 (values and indices) of ``x``."""
    values, indices = net.builder.op(
        "MaxPool", "opset8", [x], {**attrs, "dilations": "1,1", "index_element_type": "i64",
                                   "axis": "0"},
        outputs=[info(et, out_shape), info("i64", out_shape)])
    return values, indices


def numpy_pool(x: np.ndarray, pads: tuple[int, int] = (0, 0)) -> np.ndarray:
    """2x2 max pool, stride 2, ``pads`` (begin, end) on both spatial axes filled with -inf."""
    if any(pads):
        x = np.pad(x, [(0, 0), (0, 0), pads, pads], constant_values=-np.inf)
    n, c, h, w = x.shape
    return x[:, :, :h // 2 * 2, :w // 2 * 2].reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def bias_relu_pool(bias: np.ndarray, *, pads: tuple[int, int] = (0, 0), et: str = "f32",
                   relu_out: bool = False, indices_out: bool = False,
                   relu: bool = True) -> Net:
    """x [2, 3, 6, 6] -> Add(bias) -> [ReLU] -> MaxPool 2x2 -> Result(s)."""
    net = Net()
    x = net.param("x", et, (2, 3, 6, 6))
    y = net.op("Add", "opset1", [x, net.const(bias)], {"auto_broadcast": "numpy"})
    r = net.op("ReLU", "opset1", [y]) if relu else y
    side = (6 + sum(pads) - 2) // 2 + 1
    attrs = {**POOL, "pads_begin": f"{pads[0]},{pads[0]}", "pads_end": f"{pads[1]},{pads[1]}"}
    values, indices = pool8(net, r, attrs, (2, 3, side, side), et)
    net.result(values, "pooled")
    if relu_out:
        net.result(r, "relu")
    if indices_out:
        net.result(indices, "indices")
    return net


def step_types(net: Net) -> list[str]:
    return [s.layer.type for s in compile_graph(net.graph).steps]


def inputs(et: str = "f32") -> np.ndarray:
    x = RNG.standard_normal((2, 3, 6, 6)).astype(F32)
    x[0, 0, 0, :2] = [np.inf, -np.inf]
    x[1, 2, 3, 3] = np.nan
    return x.astype(et) if et != "f32" else x


def expected(x: np.ndarray, bias: np.ndarray, pads: tuple[int, int] = (0, 0),
             relu: bool = True) -> np.ndarray:
    with np.errstate(all="ignore"):
        y = x + bias
        return numpy_pool(np.maximum(y, 0) if relu else y, pads)


PER_CHANNEL = RNG.standard_normal((1, 3, 1, 1)).astype(F32)


@pytest.mark.parametrize("relu", [True, False])
def test_bias_and_relu_run_after_the_pool(relu: bool) -> None:
    net = bias_relu_pool(PER_CHANNEL, relu=relu)
    assert step_types(net) == ["MaxPool"]
    x = inputs()
    (got,) = Executor(net.model()).run({"x": x}).values()
    np.testing.assert_array_equal(got, expected(x, PER_CHANNEL, relu=relu))


def test_relu_alone_runs_after_the_pool() -> None:
    net = Net()
    x = net.param("x", "f32", (2, 3, 6, 6))
    values, _ = pool8(net, net.op("ReLU", "opset1", [x]), POOL, (2, 3, 3, 3))
    net.result(values)
    assert step_types(net) == ["MaxPool"]
    feed = inputs()
    (got,) = Executor(net.model()).run({"x": feed}).values()
    np.testing.assert_array_equal(got, numpy_pool(np.maximum(feed, 0)))


@pytest.mark.parametrize("case", ["infinite bias", "bias varies in a window", "padded pool",
                                  "relu read elsewhere", "indices read", "integers"])
def test_where_the_order_shows_nothing_moves(case: str) -> None:
    bias, pads, et = PER_CHANNEL, (0, 0), "f32"
    kwargs: dict = {}
    if case == "infinite bias":  # -inf + inf is NaN before the pool, not after
        bias = np.array([np.inf, -np.inf, 1], F32).reshape(1, 3, 1, 1)
    elif case == "bias varies in a window":
        bias = RNG.standard_normal((1, 3, 6, 6)).astype(F32)
    elif case == "padded pool":  # a window of padding alone
        pads = (2, 0)
    elif case == "relu read elsewhere":
        kwargs["relu_out"] = True
    elif case == "indices read":
        kwargs["indices_out"] = True
    else:
        et, bias = "i32", np.array([3, -4, 5], np.int32).reshape(1, 3, 1, 1)
    net = bias_relu_pool(bias, pads=pads, et=et, **kwargs)
    # The ReLU still commutes with the pool when only the bias cannot move.
    moves_relu = case in ("infinite bias", "bias varies in a window")
    assert step_types(net) == (["Add", "MaxPool"] if moves_relu else ["Add", "ReLU", "MaxPool"])
    x = inputs() if et == "f32" else RNG.integers(-9, 9, (2, 3, 6, 6)).astype(np.int32)
    got = Executor(net.model()).run({"x": x})
    want = expected(x, bias, pads)
    np.testing.assert_array_equal(got["pooled"], want.astype(got["pooled"].dtype))
    if case == "relu read elsewhere":
        with np.errstate(invalid="ignore"):
            np.testing.assert_array_equal(got["relu"], np.maximum(x + bias, 0))


def test_steps_on_constants_alone_run_once_when_compiled() -> None:
    """Unsqueeze(Const) is a constant of the plan; the Add that reads it stays a step."""
    net = Net()
    x = net.param("x", "f32", (2, 3))
    b = net.op("Unsqueeze", "opset1", [net.const(np.arange(3, dtype=F32)),
                                       net.const(np.array([0], np.int64))], shape=(1, 3))
    net.result(net.op("Add", "opset1", [x, b], {"auto_broadcast": "numpy"}))
    assert step_types(net) == ["Add"]
    feed = RNG.standard_normal((2, 3)).astype(F32)
    (got,) = Executor(net.model()).run({"x": feed}).values()
    np.testing.assert_array_equal(got, feed + np.arange(3, dtype=F32))


@pytest.mark.parametrize("case", ["random", "multinomial", "large", "declared unlike computed",
                                  "fails"])
def test_steps_on_constants_that_stay_steps(case: str) -> None:
    net = Net()
    if case == "random":  # a new value each run
        y = net.op("RandomUniform", "opset8",
                   [net.const(np.array([4], np.int64)), net.const(np.array(0, F32)),
                    net.const(np.array(1, F32))],
                   {"output_type": "f32", "global_seed": "0", "op_seed": "0"},
                   et="f32", shape=(4,))
    elif case == "multinomial":  # a random draw (Op.pure is false): never folded
        y = net.op("Multinomial", "opset13",
                   [net.const(np.array([[0.2, 0.8]], F32)), net.const(np.array(4, np.int64))],
                   {"convert_type": "i64", "with_replacement": "true", "log_probs": "false",
                    "global_seed": "0", "op_seed": "0"}, et="i64", shape=(1, 4))
    elif case == "large":  # 8 MiB: kept as a step, not held by the plan
        y = net.op("Broadcast", "opset3", [net.const(np.array(1, F32)),
                                           net.const(np.array([2048, 1024], np.int64))],
                   et="f32", shape=(2048, 1024))
    elif case == "declared unlike computed":  # the run's check names the layer
        y = net.op("Convert", "opset1", [net.const(np.ones(2, F32))],
                   {"destination_type": "f32"}, et="i32", shape=(2,), name="conv")
    else:  # Reshape of 6 elements to 4: the run reports it, naming the layer
        y = net.op("Reshape", "opset1", [net.const(np.ones(6, F32)),
                                         net.const(np.array([4], np.int64))],
                   {"special_zero": "false"}, shape=(4,), name="reshape")
    net.result(y)
    assert len(step_types(net)) == 1
    executor = Executor(net.model(), check=False)
    if case in ("random", "multinomial", "large"):
        (got,) = executor.run({}).values()
        assert got.shape == {"random": (4,), "multinomial": (1, 4)}.get(case, (2048, 1024))
        if case == "large":
            assert (got == 1).all()
    else:
        says = ('"conv" (Convert-opset1): computed f32[2] but its output port 1 declares i32[2]'
                if case == "declared unlike computed" else '"reshape" (Reshape-opset1)')
        with pytest.raises(ExecutionError, match=re.escape(says)):
            executor.run({})


@register("CountsItsRuns", "opset1")
class _CountsItsRuns(Op):
    """A user's operation (as ``--extension`` loads one) that answers differently each run."""

    runs = 0

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        type(self).runs += 1
        return [np.asarray(inputs[0]) + np.float32(type(self).runs)]


def test_a_users_op_on_constants_runs_each_time() -> None:
    net = Net()
    net.result(net.op("CountsItsRuns", "opset1", [net.const(np.zeros(2, F32))]))
    executor = Executor(net.model(), check=False)
    first = next(iter(executor.run({}).values()))
    second = next(iter(executor.run({}).values()))
    np.testing.assert_array_equal(second, first + 1)


# --------------------------------------------------------------------------- against onnxruntime

def _onnx_bias_pool(x_shape: tuple, bias: np.ndarray, relu: bool = True):  # type: ignore[no-untyped-def]
    """ONNX: X -> Add(bias) -> [Relu] -> MaxPool 2x2 stride 2 -> Y."""
    from onnx import helper, numpy_helper
    from support.conversion import make_model, vi

    nodes = [helper.make_node("Add", ["X", "B"], ["biased"])]
    pooled_input = "biased"
    if relu:
        nodes.append(helper.make_node("Relu", ["biased"], ["relu"]))
        pooled_input = "relu"
    nodes.append(helper.make_node("MaxPool", [pooled_input], ["Y"], kernel_shape=[2, 2],
                                  strides=[2, 2]))
    out = [max(x, b) for x, b in zip(x_shape[:2], bias.shape[:2])] + \
        [(d - 2) // 2 + 1 for d in x_shape[2:]]
    return make_model(nodes, [vi("X", F32, list(x_shape))], [vi("Y", F32, out)],
                      initializers=[numpy_helper.from_array(bias, "B")])


FUSION_CASES = {
    # x shape, bias shape, moves
    "per channel": ((2, 3, 6, 6), (1, 3, 1, 1), True),
    "bias adds channels": ((1, 1, 4, 4), (1, 3, 1, 1), False),
    "bias adds batch rows": ((1, 3, 4, 4), (2, 3, 1, 1), False),
    "bias adds both": ((1, 1, 4, 4), (2, 3, 1, 1), False),
    "bias varies along H only": ((2, 3, 6, 6), (1, 3, 6, 1), False),
    "bias varies along W only": ((2, 3, 6, 6), (1, 3, 1, 6), False),
}


@pytest.mark.parametrize("case", list(FUSION_CASES))
def test_fusion_against_onnxruntime(case: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The bias moves after the pool only where that gives the same values and shapes:
    a bias that broadcasts the data to more channels or batch rows, or that varies along
    any one spatial axis, stays before it. irtool's default path (convert + run) and
    OpenVINO on irtool's IR give onnxruntime's values."""
    from support.conversion import check_conversion

    x_shape, bias_shape, moves = FUSION_CASES[case]
    bias = RNG.standard_normal(bias_shape).astype(F32)
    model = _onnx_bias_pool(x_shape, bias)
    feeds = {"X": RNG.standard_normal(x_shape).astype(F32)}
    ir = check_conversion(model, feeds, tmp_path)
    steps = [s.layer.type for s in Executor(ir).plan.steps]
    # The ReLU moves whatever the bias does: it commutes with the max alone.
    assert steps == (["MaxPool"] if moves else ["Add", "MaxPool"]), steps

