"""Reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2 and ReduceLogicalAnd/Or.

Input 1 holds the axes (any integer type, negative allowed, may be empty: no
reduction, which is the identity except for L1/L2, giving |x|). ``keep_dims``
(default false) keeps reduced axes as size 1. The output keeps the input type.
Reducing an empty set gives what OpenVINO's CPU plugin gives when the axes are a
runtime input: sum/mean/L1/L2 0, prod 1, min +inf and max -inf (integers: the
type's extremes). (With constant axes the CPU gives the finite float extremes.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np

from ._common import const_ints, normalize_axes, reduce_shape
from .base import Op, TensorInfo, register


class Reduction(Op):
    """Base class: parses ``keep_dims``; ``reduce(x, axes)`` does the math with keepdims."""

    batching = "reduce"

    logical: ClassVar[bool] = False

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.keep_dims = self.attr_bool("keep_dims", False)

    def reduce(self, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
        raise NotImplementedError

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        axes = normalize_axes(np.asarray(inputs[1]).reshape(-1).tolist(), x.ndim)
        # No axes reduces nothing, elementwise: the identity, or |x| for L1 and L2.
        out = self.reduce(x, tuple(sorted(set(axes))))
        if not self.keep_dims:
            out = np.squeeze(out, axis=axes)
        return [np.asarray(out, dtype=x.dtype)]

    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        axes = const_ints(values[1]) if len(values) > 1 else None
        shape = inputs[0].shape
        if axes is None and shape is not None and not self.keep_dims and inputs[1].shape == ():
            # Unknown scalar axis: one dim goes, which one is unknown. A 1-D axes input
            # may repeat an axis, so OpenVINO gives up on the rank there.
            return [TensorInfo(inputs[0].element_type, (-1,) * (len(shape) - 1))]
        return [TensorInfo(inputs[0].element_type, reduce_shape(shape, axes, self.keep_dims))]


def _acc(x: np.ndarray) -> np.dtype:
    """Accumulation dtype: half-precision floats sum in f32 (as OpenVINO's CPU does)."""
    return np.dtype(np.float32) if x.dtype.kind == "f" and x.dtype.itemsize < 4 else x.dtype


def _empty_fill(x: np.ndarray, axes: tuple[int, ...], value: float | int) -> np.ndarray:
    shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    return np.full(shape, value, dtype=x.dtype)


def _extreme(x: np.ndarray, biggest: bool) -> float | int | bool:
    if x.dtype.kind == "b":
        return biggest
    if x.dtype.kind in "iu":
        info = np.iinfo(x.dtype)
        return info.max if biggest else info.min
    return np.inf if biggest else -np.inf


@register("ReduceSum", "opset1")
class ReduceSum(Reduction):
    def reduce(self, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
        return np.sum(x, axis=axes, keepdims=True, dtype=_acc(x))


@register("ReduceProd", "opset1")
class ReduceProd(Reduction):
    def reduce(self, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
        return np.prod(x, axis=axes, keepdims=True, dtype=_acc(x))


@register("ReduceMean", "opset1")
class ReduceMean(Reduction):
    """Integer means divide the integer sum and truncate, as OpenVINO does."""

    def reduce(self, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
        count = 1
        for a in axes:
            count *= x.shape[a]
        if count == 0:
            return _empty_fill(x, axes, 0)
        if x.dtype.kind in "iu":
            total = np.sum(x, axis=axes, keepdims=True, dtype=np.int64 if x.dtype.kind == "i"
                           else np.uint64)
            quot = np.abs(total) // count  # truncation toward zero
            return np.where(total < 0, -quot, quot)
        return np.mean(x, axis=axes, keepdims=True, dtype=_acc(x))


@register("ReduceMax", "opset1")
class ReduceMax(Reduction):
    def reduce(self, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
        return np.max(x, axis=axes, keepdims=True, initial=_extreme(x, False))


@register("ReduceMin", "opset1")
class ReduceMin(Reduction):
    def reduce(self, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
        return np.min(x, axis=axes, keepdims=True, initial=_extreme(x, True))


@register("ReduceL1", "opset4")
class ReduceL1(Reduction):
    def reduce(self, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
        return np.sum(np.abs(x), axis=axes, keepdims=True, dtype=_acc(x))


@register("ReduceL2", "opset4")
class ReduceL2(Reduction):
    """sqrt(sum(x^2)); integer results are truncated."""

    def reduce(self, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
        if x.dtype.kind in "iu":
            sq = np.sum(np.square(x.astype(np.float64)), axis=axes, keepdims=True)
            return np.trunc(np.sqrt(sq))
        return np.sqrt(np.sum(np.square(x, dtype=_acc(x)), axis=axes, keepdims=True))


@register("ReduceLogicalAnd", "opset1")
class ReduceLogicalAnd(Reduction):
    def reduce(self, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
        return np.all(x, axis=axes, keepdims=True)


@register("ReduceLogicalOr", "opset1")
class ReduceLogicalOr(Reduction):
    def reduce(self, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
        return np.any(x, axis=axes, keepdims=True)
