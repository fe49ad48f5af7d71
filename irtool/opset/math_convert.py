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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..ir.types import ElementType
from .base import REQUIRED, Op, TensorInfo, register
from .math_util import broadcast_output_shape, numpy_dtype, parse_broadcast, pdpd_align

_I32_MIN = np.iinfo(np.int32).min
_I32_MAX = np.iinfo(np.int32).max


def convert_array(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``x`` converted to ``dtype`` with OpenVINO's rules (see the module docstring)."""
    x = np.asarray(x)
    if x.dtype == dtype:
        return x
    src, dst = x.dtype.kind, dtype.kind
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

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.destination: ElementType = self.attr_type("destination_type", REQUIRED)
        # Types numpy cannot hold (u1, nf4, ...) still parse; only running them fails.
        self.dtype = self.destination.dtype

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
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

