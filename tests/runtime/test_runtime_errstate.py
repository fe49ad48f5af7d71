"""Floating-point errors in a run: NaN and inf as onnxruntime computes them, no numpy
warning, and numpy's error settings left as the caller had them.

The kernels no longer enter ``np.errstate`` per call (the ``Executor`` turns warnings
off once per run), and Divide, Power, Mod and FloorMod on floats are now inlined numpy
calls; these cases pin both against onnxruntime.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from support.conversion import make_model, run_onnxruntime, vi
from support.ir_builders import Net

import irtool
from irtool.runtime import compile_graph

F32 = np.float32
SPECIAL = np.array([-1.0, 0.0, 1e30, -1e30, 2.0, np.nan, np.inf, -np.inf], F32)


def _binary(op: str, dtype: object, **attrs: int):  # type: ignore[no-untyped-def]
    from onnx import helper

    node = helper.make_node(op, ["a", "b"], ["y"], **attrs)
    return make_model([node], [vi("a", dtype, [8]), vi("b", dtype, [8])], [vi("y", dtype, [8])])


def _unary(op: str, size: int = 8):  # type: ignore[no-untyped-def]
    from onnx import helper

    node = helper.make_node(op, ["a"], ["y"])
    return make_model([node], [vi("a", F32, [size])], [vi("y", F32, [size])])


CASES = [
    ("Log", _unary("Log"), {"a": SPECIAL}),
    ("Exp", _unary("Exp"), {"a": SPECIAL * F32(100)}),
    ("Sqrt", _unary("Sqrt"), {"a": SPECIAL}),
    ("Div f32", _binary("Div", F32), {"a": SPECIAL, "b": np.array([0, 0, 1e-30, 0, -0.0, 1,
                                                                    np.inf, 2], F32)}),
    ("Pow f32", _binary("Pow", F32), {"a": SPECIAL, "b": np.array([0.5, -1, 2, 3, 1e3, 2,
                                                                    -1, 0.5], F32)}),
    ("Mod fmod f32", _binary("Mod", F32, fmod=1), {"a": SPECIAL, "b": np.array(
        [0, 2, 3, 0, 1.5, 1, 1, 1], F32)}),
    ("Mod int32", _binary("Mod", np.int32), {"a": np.arange(-4, 4, dtype=np.int32),
                                             "b": np.array([3, -3, 2, 5, 1, 2, 3, 7], np.int32)}),
    ("Div int32", _binary("Div", np.int32), {"a": np.arange(-4, 4, dtype=np.int32),
                                             "b": np.array([3, -3, 2, 5, 1, 2, 3, 7], np.int32)}),
]


@pytest.mark.parametrize("label,model,feeds", CASES, ids=[c[0] for c in CASES])
def test_floating_point_errors_match_onnxruntime_without_warnings(label: str, model,  # type: ignore[no-untyped-def]
                                                                   feeds: dict) -> None:
    want = run_onnxruntime(model, feeds)["y"]
    ir = irtool.convert(model)
    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any RuntimeWarning from a kernel fails the test
        got = irtool.run(ir, feeds)["y"]
    assert np.geterr() == before, "a run must leave numpy's error settings as they were"
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True, err_msg=label)


def test_sigmoid_far_out_is_exact_without_warnings() -> None:
    """exp(-x) overflows to inf for x < -88.7 and gives 0; against float64 numpy (which
    onnxruntime is not: its approximation is 0 from about -18 down)."""
    x = np.array([-1e4, -104, -100, -88.5, -87, -20, 0, 30, 1e4, np.nan, -np.inf, np.inf], F32)
    with np.errstate(over="ignore"):  # exp(1e4) in float64 too
        want = (1 / (1 + np.exp(-x.astype(np.float64)))).astype(F32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = irtool.run(irtool.convert(_unary("Sigmoid", 12)), {"a": x})["y"]
    # atol: below x = -88.7 sigmoid is subnormal in f32 (3.8e-44 at -100); it comes out 0
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-40, equal_nan=True)


def test_a_run_under_a_raising_errstate_still_computes_inf_and_nan() -> None:
    """The caller's ``np.errstate(all="raise")`` does not reach the kernels."""
    model = _unary("Log")
    want = run_onnxruntime(model, {"a": SPECIAL})["y"]
    with np.errstate(all="raise"):
        got = irtool.run(irtool.convert(model), {"a": SPECIAL})["y"]
        assert np.geterr()["divide"] == "raise"
    np.testing.assert_allclose(got, want, equal_nan=True)


@pytest.mark.parametrize("op_type", ["Divide", "Power", "Mod", "FloorMod"])
def test_float_divide_power_and_mods_are_inlined(op_type: str) -> None:
    net = Net()
    a, b = net.param("a", "f32", (4,)), net.param("b", "f32", (4,))
    net.result(net.op(op_type, "opset1", [a, b], {"auto_broadcast": "numpy"}))
    plan = compile_graph(net.graph)
    assert plan.steps[0].inlined is not None
    x, y = np.array([7, -7, 1, 0], F32), np.array([2, 2, -0.5, 3], F32)
    want = {"Divide": x / y, "Power": x ** y, "Mod": np.fmod(x, y), "FloorMod": np.mod(x, y)}
    with np.errstate(all="ignore"):  # Power of a negative base: NaN, as numpy gives
        got = plan.execute([x, y])[0]
    np.testing.assert_array_equal(got, want[op_type][()])


def test_integer_divide_is_not_inlined() -> None:
    """Integer Divide truncates (not numpy's floor), so it keeps its kernel."""
    net = Net()
    a, b = net.param("a", "i32", (4,)), net.param("b", "i32", (4,))
    net.result(net.op("Divide", "opset1", [a, b], {"auto_broadcast": "numpy"}))
    plan = compile_graph(net.graph)
    assert plan.steps[0].inlined is None
    got = plan.execute([np.array([7, -7, 7, -7], np.int32), np.array([2, 2, -2, -2], np.int32)])
    np.testing.assert_array_equal(got[0], [3, -3, -3, 3])
