"""Type conversion and selection: Convert, ConvertLike, Select.

Float -> integer conversion follows OpenVINO's CPU plugin, which is what irtool
reproduces: values are truncated toward zero through int32 (even for 64-bit
targets); NaN, infinities and values outside the int32 range become INT32_MIN (what
x86 ``cvttps2dq`` yields), and the result then wraps into the destination type (so
300.7 -> u8 gives 44, as in C) or is sign-extended. f64 sources saturate to the
int32 range instead, and f16 infinities count as +-65504. (Out-of-range results are
undefined in the spec; these are what OpenVINO computes.) Integer
-> integer conversion wraps modulo 2^N (the spec's C++ rule). Float -> boolean is
``x != 0`` with NaN giving false.

To the low-precision floats, again as OpenVINO's CPU plugin: f32 -> f8e4m3/f8e5m2
rounds to f16 first and then to f8 (double rounding); f8e8m0 rounds the exponent half
to even (``to_f8e8m0_codes``); f4e2m1 saturates, NaN included, at 6; nf4 takes the
nearest of its 16 values (``to_nf4``; irtool holds nf4 as those values in float32).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..ir.types import ELEMENT_TYPES, NF4_VALUES, ElementType
from ._common import broadcast_output_shape, numpy_dtype, parse_broadcast, pdpd_align
from .base import REQUIRED, Op, TensorInfo, register

_F8E8M0 = ELEMENT_TYPES["f8e8m0"].dtype
_F4E2M1 = ELEMENT_TYPES["f4e2m1"].dtype
_F8 = tuple(t for t in (ELEMENT_TYPES["f8e4m3"].dtype, ELEMENT_TYPES["f8e5m2"].dtype) if t)
_I32_MIN = np.iinfo(np.int32).min
_I32_MAX = np.iinfo(np.int32).max


def to_f8e8m0_codes(x: np.ndarray) -> np.ndarray:
    """The f8e8m0 codes (a power of two, ``2**(code - 127)``) OpenVINO converts floats to:
    the exponent rounded half to even on the mantissa, subnormals to code 0 (2^-127) or 1,
    zero and negatives to 0, overflow and infinity saturating to 254, NaN to 255."""
    x = np.asarray(x, dtype=np.float32)
    bits = x.view(np.uint32)
    exponent = (bits >> 23) & 0xFF
    mantissa = bits & 0x7FFFFF
    half = np.uint32(0x400000)
    up = (mantissa > half) | ((mantissa == half) & (exponent & 1 == 1))
    codes = np.where(exponent == 0, mantissa > np.uint32(0x600000), exponent + up)
    codes = np.minimum(codes, 254).astype(np.uint8)
    codes = np.where(x > 0, codes, np.uint8(0))
    return np.where(np.isnan(x), np.uint8(255), codes).astype(np.uint8)


def to_nf4(x: np.ndarray) -> np.ndarray:
    """Floats rounded to the nearest nf4 value (irtool holds nf4 as those float32 values)."""
    x = np.asarray(x, dtype=np.float32)
    midpoints = (NF4_VALUES[1:] + NF4_VALUES[:-1]) / 2
    codes = np.searchsorted(midpoints, x, side="left")
    # NaN compares false with every midpoint in OpenVINO's quantizer: code 0.
    return NF4_VALUES[np.where(np.isnan(x), 0, codes)]


def convert_array(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``x`` converted to ``dtype`` with OpenVINO's rules (see the module docstring)."""
    x = np.asarray(x)
    if x.dtype == dtype:
        return x
    src, dst = x.dtype.kind, dtype.kind
    if dtype == _F8E8M0 and _F8E8M0 is not None:
        return to_f8e8m0_codes(x.astype(np.float32)).view(dtype)
    if dtype in _F8 and src == "f" and x.dtype.itemsize > 2:
        # OpenVINO's CPU plugin rounds f32 to f16 first, then to f8: a value just off a
        # midpoint of f8 can land on it and round to even (0.29678 -> 0.3125 in f8e4m3).
        with np.errstate(all="ignore"):
            return x.astype(np.float16).astype(dtype)
    if dtype == _F4E2M1 and _F4E2M1 is not None:
        with np.errstate(all="ignore"):
            out = x.astype(np.float32).astype(dtype)
        # OpenVINO's f4e2m1 has no NaN: it saturates.
        return np.where(np.isnan(x), np.asarray(6.0, dtype=dtype), out).astype(dtype)
    if dst == "b":
        if src == "f":
            return (x != 0) & ~np.isnan(x)
        if src in "iub":
            return x != 0
        return x.astype(dtype)
    if src == "f" and dst in "iu" and x.dtype.type.__module__ == "numpy":
        with np.errstate(invalid="ignore"):
            t = np.trunc(x.astype(np.float64))
            if x.dtype == np.float64:
                # f64 sources saturate to the int32 range (NaN still gives INT32_MIN).
                t = np.clip(t, _I32_MIN, _I32_MAX)
            elif x.dtype == np.float16:
                # f16 infinities become the largest finite f16 first.
                t = np.clip(t, -65504.0, 65504.0)
            wide = np.where((t >= _I32_MIN) & (t <= _I32_MAX), t, _I32_MIN)
        return wide.astype(np.int64).astype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        return x.astype(dtype)


@register("Convert", "opset1")
class Convert(Op):
    """Elementwise conversion to ``destination_type`` (required)."""

    batching = "elementwise"

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.destination: ElementType = self.attr_type("destination_type", REQUIRED)
        # Types numpy cannot hold (u1, nf4, ...) still parse; only running them fails.
        self.dtype = self.destination.dtype

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        if self.destination.name == "nf4":
            return [to_nf4(inputs[0])]
        return [convert_array(inputs[0], numpy_dtype(self.destination, "Convert")
                              if self.dtype is None else self.dtype)]

    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        return [TensorInfo(self.destination, inputs[0].shape)]


@register("ConvertLike", "opset1")
class ConvertLike(Op):
    """Converts input 0 to the element type of input 1 (whose values are unused)."""

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        return [convert_array(inputs[0], np.asarray(inputs[1]).dtype)]

    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        return [TensorInfo(inputs[1].element_type, inputs[0].shape)]


@register("Select", "opset1")
class Select(Op):
    """``cond ? then : else`` elementwise; ``auto_broadcast`` numpy (default), none or pdpd."""

    batching = "elementwise"

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.auto_broadcast = parse_broadcast(self.type, self.attr_str("auto_broadcast", "numpy"))

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        cond, then, other = (np.asarray(v) for v in inputs)
        if self.auto_broadcast == "pdpd":
            # PDPD: else aligns to then's trailing dims, cond aligns to the result's.
            other = pdpd_align(other, then.ndim, -1)
            cond = pdpd_align(cond, then.ndim, -1)
        elif self.auto_broadcast == "none" and not (cond.shape == then.shape == other.shape):
            raise ValueError(f"shapes {cond.shape}, {then.shape}, {other.shape} differ and "
                             "auto_broadcast is none")
        out = np.where(cond.astype(np.bool_, copy=False), then, other)
        return [out if out.dtype == then.dtype else out.astype(then.dtype)]

    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        if self.auto_broadcast == "pdpd":
            shape = inputs[1].shape
        else:
            shape = broadcast_output_shape(self.auto_broadcast, -1, inputs[0].shape,
                                           inputs[1].shape, inputs[2].shape)
        return [TensorInfo(inputs[1].element_type, shape)]

