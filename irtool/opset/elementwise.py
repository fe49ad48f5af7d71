"""Elementwise operations: binary arithmetic, comparison, logical and bitwise ops, and
unary math.

Two small base classes carry the shared machinery (broadcast modes, output type,
inference); each registered op is its own class with a one-line kernel ``fn``,
so any op can be subclassed. Output dtypes follow OpenVINO: arithmetic keeps the
input type, comparisons and logical ops give ``boolean``.

Kernels do not enter ``np.errstate`` per call: log(-1), x / 0 and overflow give NaN and
inf as in OpenVINO, and the ``Executor`` runs every plan with numpy's floating-point
warnings off (once per run). Code calling ``compute`` itself sets its own errstate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from ..ir.types import ELEMENT_TYPES
from ._common import broadcast_output_shape, erf, parse_broadcast, pdpd_align
from .base import NumpyCall, Op, TensorInfo, register

BOOLEAN = ELEMENT_TYPES["boolean"]
# 16-bit floats (f16, and bf16 when ml_dtypes is present): math runs in f32 for them.
HALF_TYPES = frozenset(t.dtype for t in ELEMENT_TYPES.values()
                       if t.kind == "float" and t.bitwidth == 16 and t.dtype is not None)


# ---------------------------------------------------------------------------
# Binary


class BinaryElementwise(Op):
    """Two inputs of one element type, broadcast per ``auto_broadcast``; ``fn`` does the math.

    ``bool_result`` ops (comparisons, logical ops) produce ``boolean``; the others
    produce the element type of their first input.
    """

    batching = "elementwise"

    bool_result: ClassVar[bool] = False
    broadcast_default: ClassVar[str] = "numpy"

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.auto_broadcast = parse_broadcast(
            self.type, self.attr_str("auto_broadcast", self.broadcast_default))
        self.axis = self.attr_int("axis", -1)

    fn: ClassVar[Callable[..., Any]]
    """The math: ``fn(a, b)`` (a numpy ufunc, or a function like one)."""

    def _operands(self, inputs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        a, b = inputs[0], inputs[1]
        if self.auto_broadcast == "numpy":
            return a, b
        a, b = np.asarray(a), np.asarray(b)
        if self.auto_broadcast == "pdpd":
            return a, pdpd_align(b, a.ndim, self.axis)
        if a.shape != b.shape:
            raise ValueError(f"shapes {a.shape} and {b.shape} differ and auto_broadcast is none")
        return a, b

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        a, b = self._operands(inputs)
        out = np.asarray(self.fn(a, b))
        if self.bool_result:
            return [out if out.dtype == np.bool_ else out.astype(np.bool_)]
        dtype = np.asarray(a).dtype
        return [out if out.dtype == dtype else out.astype(dtype)]

    def numpy_call(self) -> NumpyCall | None:
        # compute() = fn(a, b) cast to a's dtype (or bool): a no-op for same-dtype inputs.
        # A subclass with its own compute() is not that.
        if type(self).compute is not BinaryElementwise.compute \
                or self.auto_broadcast != "numpy" or not isinstance(self.fn, np.ufunc):
            return None
        return NumpyCall(self.fn, 2, self.bool_result, writes_out=True)

    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        shape = broadcast_output_shape(self.auto_broadcast, self.axis,
                                       inputs[0].shape, inputs[1].shape)
        et = BOOLEAN if self.bool_result else inputs[0].element_type
        return [TensorInfo(et, shape)]


def _is_int(a: np.ndarray) -> bool:
    return np.asarray(a).dtype.kind in "iu"


@register("Add", "opset1")
class Add(BinaryElementwise):
    fn = staticmethod(np.add)


@register("Subtract", "opset1")
class Subtract(BinaryElementwise):
    fn = staticmethod(np.subtract)


@register("Multiply", "opset1")
class Multiply(BinaryElementwise):
    fn = staticmethod(np.multiply)


@register("Divide", "opset1")
class Divide(BinaryElementwise):
    """Integer division truncates toward zero.

    The spec says ``m_pythondiv`` (default true) floors instead, but OpenVINO's CPU
    plugin truncates whatever the attribute says (ONNX ``Div`` tests, e.g.
    test_div_int32_trunc, pass there only because of that), and irtool reproduces
    what OpenVINO computes. The attribute is parsed and kept for writers.
    """

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.python_division = self.attr_bool("m_pythondiv", True)

    @staticmethod
    def fn(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if not _is_int(a):
            return np.true_divide(a, b)
        a, b = np.asarray(a), np.asarray(b)
        quot = np.floor_divide(a, b)
        if a.dtype.kind == "u":
            return quot
        rem = np.remainder(a, b)
        # floor -> trunc: add one where the exact quotient is negative and inexact.
        return quot + ((rem != 0) & ((a < 0) != (b < 0)))

    def numpy_call(self) -> NumpyCall | None:
        # Floats: compute() is true_divide, cast to a's dtype (a no-op for same dtypes).
        if type(self).compute is not BinaryElementwise.compute or self.auto_broadcast != "numpy":
            return None
        return NumpyCall(np.true_divide, 2, floats_only=True, writes_out=True)


@register("Power", "opset1")
class Power(BinaryElementwise):
    """Integers: exact for non-negative exponents, else std::pow in double then truncated."""

    @staticmethod
    def fn(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if _is_int(a):
            if np.all(np.asarray(b) >= 0):
                return np.power(a, b)
            return np.trunc(np.power(np.asarray(a, np.float64), np.asarray(b, np.float64)))
        return np.power(a, b)

    def numpy_call(self) -> NumpyCall | None:
        # Floats: compute() is np.power (integers check their exponents first).
        if type(self).compute is not BinaryElementwise.compute or self.auto_broadcast != "numpy":
            return None
        return NumpyCall(np.power, 2, floats_only=True, writes_out=True)


@register("Maximum", "opset1")
class Maximum(BinaryElementwise):
    fn = staticmethod(np.maximum)


@register("Minimum", "opset1")
class Minimum(BinaryElementwise):
    fn = staticmethod(np.minimum)


@register("SquaredDifference", "opset1")
class SquaredDifference(BinaryElementwise):
    @staticmethod
    def fn(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        d = np.subtract(a, b)
        return np.multiply(d, d)


@register("FloorMod", "opset1")
class FloorMod(BinaryElementwise):
    """x - y * floor(x / y): the result takes the divisor's sign (numpy ``mod``)."""

    fn = staticmethod(np.mod)


@register("Mod", "opset1")
class Mod(BinaryElementwise):
    """x - y * trunc(x / y): the result takes the dividend's sign (C ``fmod``)."""

    fn = staticmethod(np.fmod)


class Comparison(BinaryElementwise):
    bool_result = True


@register("Equal", "opset1")
class Equal(Comparison):
    fn = staticmethod(np.equal)


@register("NotEqual", "opset1")
class NotEqual(Comparison):
    fn = staticmethod(np.not_equal)


@register("Less", "opset1")
class Less(Comparison):
    fn = staticmethod(np.less)


@register("LessEqual", "opset1")
class LessEqual(Comparison):
    fn = staticmethod(np.less_equal)


@register("Greater", "opset1")
class Greater(Comparison):
    fn = staticmethod(np.greater)


@register("GreaterEqual", "opset1")
class GreaterEqual(Comparison):
    fn = staticmethod(np.greater_equal)


@register("LogicalAnd", "opset1")
class LogicalAnd(Comparison):
    fn = staticmethod(np.logical_and)


@register("LogicalOr", "opset1")
class LogicalOr(Comparison):
    fn = staticmethod(np.logical_or)


# OpenVINO writes LogicalXor-1 with version "opset2" (its type info says so).
@register("LogicalXor", "opset1", "opset2")
class LogicalXor(Comparison):
    fn = staticmethod(np.logical_xor)


@register("BitwiseAnd", "opset13")
class BitwiseAnd(BinaryElementwise):
    fn = staticmethod(np.bitwise_and)


@register("BitwiseOr", "opset13")
class BitwiseOr(BinaryElementwise):
    fn = staticmethod(np.bitwise_or)


@register("BitwiseXor", "opset13")
class BitwiseXor(BinaryElementwise):
    fn = staticmethod(np.bitwise_xor)


@register("BitwiseLeftShift", "opset15")
class BitwiseLeftShift(BinaryElementwise):
    fn = staticmethod(np.left_shift)


@register("BitwiseRightShift", "opset15")
class BitwiseRightShift(BinaryElementwise):
    fn = staticmethod(np.right_shift)


# ---------------------------------------------------------------------------
# Unary


class UnaryElementwise(Op):
    """One input, same shape out; ``fn`` maps the array.

    ``float_only`` functions (exp, sin, ...) applied to integers run in float64 and are
    rounded back to the input type, as OpenVINO's reference kernels do.
    """

    batching = "elementwise"

    bool_result: ClassVar[bool] = False
    float_only: ClassVar[bool] = True
    numpy_function: ClassVar[bool] = False
    """Set on a class (not inherited) whose ``fn`` is not a numpy ufunc but, like one,
    returns a new array of a dtype that depends on the input's dtype only."""
    writes_out: ClassVar[bool] = False
    """Set on a ``numpy_function`` class whose ``fn`` also takes ``out=`` as a ufunc does."""

    fn: ClassVar[Callable[..., Any]]
    """The math: ``fn(x)`` (a numpy ufunc, or a function like one)."""

    def numpy_call(self) -> NumpyCall | None:
        # compute() = fn(x) cast to x's dtype, except integer or 16-bit float input to a
        # float-only function (computed in a wider type).
        cls = type(self)
        if cls.compute is not UnaryElementwise.compute or not (
                isinstance(self.fn, np.ufunc) or cls.__dict__.get("numpy_function", False)):
            return None
        ufunc = isinstance(self.fn, np.ufunc)
        return NumpyCall(self.fn, 1, self.bool_result, floats_only=self.float_only,
                         half_floats=not self.float_only,
                         writes_out=ufunc or cls.__dict__.get("writes_out", False))

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        if self.bool_result:
            return [np.asarray(self.fn(x), dtype=np.bool_)]
        if self.float_only and x.dtype.kind in "iub":
            out = np.rint(self.fn(x.astype(np.float64)))
            return [out.astype(x.dtype)]
        if self.float_only and x.dtype in HALF_TYPES:
            # Half precision: compute in f32 and round once, as OpenVINO's CPU does.
            return [np.asarray(self.fn(x.astype(np.float32))).astype(x.dtype)]
        out = np.asarray(self.fn(x))
        return [out if out.dtype == x.dtype else out.astype(x.dtype)]

    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        et = BOOLEAN if self.bool_result else inputs[0].element_type
        return [TensorInfo(et, inputs[0].shape)]


def _unary(name: str, version: str, func: Callable[[np.ndarray], np.ndarray],
           float_only: bool = True) -> type[UnaryElementwise]:
    """A registered ``UnaryElementwise`` subclass named ``name`` applying ``func``."""
    cls = type(name, (UnaryElementwise,), {
        "fn": staticmethod(func),
        "float_only": float_only,
        "__doc__": f"OpenVINO {name}: elementwise {getattr(func, '__name__', name)}.",
        "__module__": __name__,
    })
    return register(name, version)(cls)


def _erf(x: np.ndarray) -> np.ndarray:
    return erf(x).astype(x.dtype, copy=False)


Abs = _unary("Abs", "opset1", np.abs, float_only=False)
Negative = _unary("Negative", "opset1", np.negative, float_only=False)
Sign = _unary("Sign", "opset1", np.sign, float_only=False)
Exp = _unary("Exp", "opset1", np.exp)
Log = _unary("Log", "opset1", np.log)
Sqrt = _unary("Sqrt", "opset1", np.sqrt)
Floor = _unary("Floor", "opset1", np.floor, float_only=False)
Ceiling = _unary("Ceiling", "opset1", np.ceil, float_only=False)
Sin = _unary("Sin", "opset1", np.sin)
Cos = _unary("Cos", "opset1", np.cos)
Tan = _unary("Tan", "opset1", np.tan)
Asin = _unary("Asin", "opset1", np.arcsin)
Acos = _unary("Acos", "opset1", np.arccos)
Atan = _unary("Atan", "opset1", np.arctan)
Sinh = _unary("Sinh", "opset1", np.sinh)
Cosh = _unary("Cosh", "opset1", np.cosh)
# Asinh/Acosh/Atanh-3 are written with version "opset4" (their type info says so).
Asinh = _unary("Asinh", "opset4", np.arcsinh)
Acosh = _unary("Acosh", "opset4", np.arccosh)
Atanh = _unary("Atanh", "opset4", np.arctanh)
Erf = _unary("Erf", "opset1", _erf)


@register("LogicalNot", "opset1")
class LogicalNot(UnaryElementwise):
    bool_result = True
    fn = staticmethod(np.logical_not)


@register("BitwiseNot", "opset13")
class BitwiseNot(UnaryElementwise):
    float_only = False
    fn = staticmethod(np.invert)


@register("Round", "opset5")
class Round(UnaryElementwise):
    """``mode``: ``half_to_even`` (default) or ``half_away_from_zero``; integers pass through."""

    float_only = False

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.mode = self.attr_str("mode", "half_to_even").lower()
        if self.mode not in ("half_to_even", "half_away_from_zero"):
            raise ValueError(f"Round: mode={self.mode!r} is not half_to_even or "
                             "half_away_from_zero")

    def fn(self, x: np.ndarray) -> np.ndarray:  # type: ignore[override, unused-ignore]
        if x.dtype.kind in "iub":
            return x
        if self.mode == "half_to_even":
            return np.rint(x)
        return np.copysign(np.floor(np.abs(x) + x.dtype.type(0.5)), x)


@register("IsNaN", "opset10")
class IsNaN(UnaryElementwise):
    bool_result = True
    fn = staticmethod(np.isnan)


@register("IsFinite", "opset10")
class IsFinite(UnaryElementwise):
    bool_result = True
    fn = staticmethod(np.isfinite)


@register("IsInf", "opset10")
class IsInf(UnaryElementwise):
    """``detect_negative`` / ``detect_positive`` (both default true) pick which infinities."""

    bool_result = True

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.negative = self.attr_bool("detect_negative", True)
        self.positive = self.attr_bool("detect_positive", True)

    def fn(self, x: np.ndarray) -> np.ndarray:  # type: ignore[override, unused-ignore]
        if self.negative and self.positive:
            return np.isinf(x)
        if self.negative:
            return np.isneginf(x)
        if self.positive:
            return np.isposinf(x)
        return np.zeros(x.shape, dtype=np.bool_)
