"""Activation functions: ReLU and friends, PReLU, Clamp, SoftMax and LogSoftmax.

Unary activations reuse ``UnaryElementwise``: the output keeps the input's
type and shape. Where OpenVINO writes a type name other than the class name
(``ReLU``, ``PReLU``, ``SoftMax``), both spellings are registered, since hand
written IR and OpenVINO's own reader accept either.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ._common import erf, normalize_axis
from .base import Op, TensorInfo, register
from .elementwise import HALF_TYPES, UnaryElementwise


def _sigmoid(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    # 1 / (1 + exp(-x)) in four passes over one buffer (``out``, which may be x itself,
    # or a new one). exp(-x) overflows to inf below x = -88.7 (f32), which gives the
    # right 0: a run has numpy's overflow warning off (see Executor). NaN passes through.
    if out is None:  # for a 0-d x numpy would return a scalar, which takes no out=
        out = np.empty_like(x)
    t = np.negative(x, out=out)
    np.exp(t, out=t)
    t += 1
    # 1 / t: numpy's divide by a scalar one is vectorised, its reciprocal is not (twice
    # as slow here); the results are the same bits.
    np.divide(x.dtype.type(1), t, out=t)
    return t


_ROW = 16384
_ZERO_ROWS: dict[np.dtype, np.ndarray] = {}


def _relu(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """max(x, 0) (NaN stays NaN). numpy's maximum of an array and a scalar runs about 3x
    slower than of two arrays, so a contiguous x is taken in rows of ``_ROW`` against a
    shared row of zeros, the rest against a slice of it."""
    if out is None:
        out = np.empty_like(x) if x.flags.c_contiguous else None
    if out is None or not (x.flags.c_contiguous and out.flags.c_contiguous) \
            or x.dtype.kind not in "iuf":
        return np.maximum(x, x.dtype.type(0), out=out)
    zeros = _ZERO_ROWS.get(x.dtype)
    if zeros is None:
        zeros = _ZERO_ROWS[x.dtype] = np.zeros(_ROW, x.dtype)
        zeros.flags.writeable = False
    flat, dest = x.reshape(-1), out.reshape(-1)
    bulk = flat.size - flat.size % _ROW
    if bulk:
        np.maximum(flat[:bulk].reshape(-1, _ROW), zeros, out=dest[:bulk].reshape(-1, _ROW))
    np.maximum(flat[bulk:], zeros[:flat.size - bulk], out=dest[bulk:])
    return out


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(x.dtype.type(0), x)


def _first(value: np.ndarray, dtype: np.dtype) -> np.generic:
    """The single value of a scalar-like input (alpha, beta, lambda) in ``dtype``."""
    return np.asarray(value, dtype=dtype).reshape(-1)[0]


@register("Relu", "opset1")
@register("ReLU", "opset1")
class Relu(UnaryElementwise):
    numpy_function = True
    writes_out = True
    float_only = False

    fn = staticmethod(_relu)


@register("Sigmoid", "opset1")
class Sigmoid(UnaryElementwise):
    numpy_function = True
    writes_out = True
    fn = staticmethod(_sigmoid)


@register("Tanh", "opset1")
class Tanh(UnaryElementwise):
    fn = staticmethod(np.tanh)


@register("Elu", "opset1")
class Elu(UnaryElementwise):
    """x for x > 0, else alpha * (exp(x) - 1)."""

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.alpha = self.attr_float("alpha", 1.0)

    def fn(self, x: np.ndarray) -> np.ndarray:  # type: ignore[override, unused-ignore]
        alpha = x.dtype.type(self.alpha)
        with np.errstate(over="ignore"):
            return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


class _GeluBase(UnaryElementwise):
    """0.5 x (1 + erf(x / sqrt 2)), or its tanh approximation when ``tanh_mode``."""

    tanh_mode = False

    def fn(self, x: np.ndarray) -> np.ndarray:  # type: ignore[override, unused-ignore]
        x64 = x.astype(np.float64)
        if self.tanh_mode:
            inner = np.sqrt(2 / np.pi) * (x64 + 0.044715 * x64 ** 3)
            return 0.5 * x64 * (1 + np.tanh(inner))
        return 0.5 * x64 * (1 + erf(x64 / np.sqrt(2)))


@register("Gelu", "opset2")
class Gelu(_GeluBase):
    """Gelu-2: always the exact (erf) form."""


@register("Gelu", "opset7")
class Gelu7(_GeluBase):
    """Gelu-7: ``approximation_mode`` ``ERF`` (default) or ``TANH``."""

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        mode = self.attr_str("approximation_mode", "ERF").upper()
        if mode not in ("ERF", "TANH"):
            raise ValueError(f"Gelu: approximation_mode={mode!r} is not ERF or TANH")
        self.tanh_mode = mode == "TANH"


@register("HSwish", "opset4")
class HSwish(UnaryElementwise):
    numpy_function = True
    @staticmethod
    def fn(x: np.ndarray) -> np.ndarray:
        # x * clip(x + 3, 0, 6) / 6 in one buffer (np.clip is maximum then minimum, and
        # its Python wrapper costs more than the arithmetic on small tensors).
        t = x.dtype.type
        y = np.add(x, t(3))
        np.maximum(y, t(0), out=y)
        np.minimum(y, t(6), out=y)
        np.multiply(x, y, out=y)
        np.divide(y, t(6), out=y)
        return y


@register("HSigmoid", "opset5")
class HSigmoid(UnaryElementwise):
    numpy_function = True
    @staticmethod
    def fn(x: np.ndarray) -> np.ndarray:
        t = x.dtype.type
        y = np.add(x, t(3))
        np.maximum(y, t(0), out=y)
        np.minimum(y, t(6), out=y)
        np.divide(y, t(6), out=y)
        return y


@register("SoftPlus", "opset4")
class SoftPlus(UnaryElementwise):
    """log(1 + exp(x)), computed without overflow."""

    numpy_function = True
    fn = staticmethod(_softplus)


@register("SoftSign", "opset9")
class SoftSign(UnaryElementwise):
    numpy_function = True
    @staticmethod
    def fn(x: np.ndarray) -> np.ndarray:
        return x / (1 + np.abs(x))


@register("Mish", "opset4")
class Mish(UnaryElementwise):
    numpy_function = True
    @staticmethod
    def fn(x: np.ndarray) -> np.ndarray:
        return x * np.tanh(_softplus(x))


def _work(x: np.ndarray) -> np.ndarray:
    """Half-precision data is computed in f32 (and rounded once at the end)."""
    return x.astype(np.float32) if x.dtype in HALF_TYPES else x


class _ParamActivation(Op):
    """An activation of input 0 with scalar parameters in further inputs; keeps type/shape."""

    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        return [TensorInfo(inputs[0].element_type, inputs[0].shape)]

    @staticmethod
    def _two_scalars(inputs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, Any, Any]:
        """The input as given and as computed on (``_work``), and inputs 1 and 2 as
        scalars of that working type."""
        x0 = np.asarray(inputs[0])
        x = _work(x0)
        return x0, x, _first(inputs[1], x.dtype), _first(inputs[2], x.dtype)


@register("Swish", "opset4")
class Swish(_ParamActivation):
    """x * sigmoid(beta * x); ``beta`` is an optional scalar input (default 1)."""

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x0 = np.asarray(inputs[0])
        x = _work(x0)
        beta = _first(inputs[1], x.dtype) if len(inputs) > 1 else x.dtype.type(1)
        return [np.asarray(x * _sigmoid(beta * x), dtype=x0.dtype)]


@register("Selu", "opset1")
class Selu(_ParamActivation):
    """lambda * (x if x > 0 else alpha * (exp(x) - 1)); alpha, lambda are inputs 1, 2."""

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x0, x, alpha, lam = self._two_scalars(inputs)
        with np.errstate(over="ignore"):
            out = lam * np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))
        return [np.asarray(out, dtype=x0.dtype)]


@register("HardSigmoid", "opset1")
class HardSigmoid(_ParamActivation):
    """max(0, min(1, alpha * x + beta)); alpha and beta are scalar inputs 1, 2."""

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x0, x, alpha, beta = self._two_scalars(inputs)
        t = x.dtype.type
        return [np.asarray(np.clip(alpha * x + beta, t(0), t(1)), dtype=x0.dtype)]


@register("PRelu", "opset1")
@register("PReLU", "opset1")
class PRelu(_ParamActivation):
    """x < 0 ? x * slope : x. A 1-D slope as long as the channel dim (axis 1, or axis 0
    of a 1-D input) applies per channel; any other slope broadcasts numpy-style."""

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        slope = np.asarray(inputs[1])
        channel = 1 if x.ndim > 1 else 0
        if slope.size == 1:  # one slope for all: the output has the data's shape (a 0-d one too)
            slope = slope.reshape(())
        elif slope.ndim == 1 and x.ndim > 0 and x.shape[channel] == slope.shape[0]:
            shape = [1] * x.ndim
            shape[channel] = slope.shape[0]
            slope = slope.reshape(shape)
        out = np.where(x < 0, x * slope, x)
        return [np.asarray(out, dtype=x.dtype)]

    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        return [TensorInfo(inputs[0].element_type, inputs[0].shape)]


@register("Clamp", "opset1")
class Clamp(UnaryElementwise):
    """Clip to [min, max]; for integers min rounds up and max rounds down."""

    numpy_function = True
    float_only = False

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.min = self.attr_float("min", -np.inf)
        self.max = self.attr_float("max", np.inf)

    def fn(self, x: np.ndarray) -> np.ndarray:  # type: ignore[override, unused-ignore]
        if x.dtype.kind in "iu":
            info = np.iinfo(x.dtype)
            lo = int(max(np.ceil(self.min), info.min))
            hi = int(min(np.floor(self.max), info.max))
            return np.clip(x, x.dtype.type(lo), x.dtype.type(hi))
        return np.clip(x, x.dtype.type(self.min), x.dtype.type(self.max))


class _SoftmaxBase(Op):
    """Shared by SoftMax and LogSoftmax: ``axis`` (default 1) over which to normalise."""

    batching = "softmax"
    fresh_outputs = True  # compute() makes its result

    allow_negative_axis = True
    log = False

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.axis = self.attr_int("axis", 1)
        if self.axis < 0 and not self.allow_negative_axis:
            raise ValueError(f"{self.type}: axis={self.axis} must not be negative")

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x0 = np.asarray(inputs[0])
        x = _work(x0)
        axis = normalize_axis(self.axis, x.ndim)
        if x.dtype.kind != "f":
            x = x.astype(np.float64)  # as exp would compute it, cast back below
        # Three passes over one new buffer (shift, exp, scale) besides the two reductions.
        t = np.subtract(x, np.max(x, axis=axis, keepdims=True))
        if self.log:
            t -= np.log(np.sum(np.exp(t), axis=axis, keepdims=True))
        else:
            np.exp(t, out=t)
            t /= np.sum(t, axis=axis, keepdims=True)
        return [np.asarray(t, dtype=x0.dtype)]

    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        if inputs[0].shape is not None:
            normalize_axis(self.axis, len(inputs[0].shape))
        return [TensorInfo(inputs[0].element_type, inputs[0].shape)]


@register("Softmax", "opset1")
@register("SoftMax", "opset1")
class Softmax(_SoftmaxBase):
    """SoftMax-1: ``axis`` must be non-negative."""

    allow_negative_axis = False


@register("Softmax", "opset8")
@register("SoftMax", "opset8")
class Softmax8(_SoftmaxBase):
    """SoftMax-8: ``axis`` in [-rank, rank)."""


@register("LogSoftmax", "opset5")
class LogSoftmax(_SoftmaxBase):
    log = True
