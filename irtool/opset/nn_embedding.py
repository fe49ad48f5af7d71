"""Embedding bags: EmbeddingBagOffsetsSum-3, EmbeddingBagPackedSum-3, EmbeddingSegmentsSum-3,
EmbeddingBagOffsets-15 and EmbeddingBagPacked-15 (``reduction`` sum or mean).

An empty bag takes the row ``default_index`` when one is given (and >= 0), else zeros.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._nn import float_dtype_for, same, scalar_int
from .base import Attrs, Op, TensorInfo, register

Values = Sequence[np.ndarray | None]


def _bag(table: np.ndarray, rows: np.ndarray, weights: np.ndarray | None, default: int | None,
         mean: bool, acc: np.dtype) -> np.ndarray:
    """One output row: the (weighted) sum or mean of ``table[rows]``."""
    if rows.size == 0:
        if default is not None and default >= 0:
            return table[default].astype(acc)
        return np.zeros(table.shape[1:], dtype=acc)
    picked = table[rows].astype(acc)
    if weights is not None:
        picked = picked * weights.astype(acc).reshape((-1,) + (1,) * (picked.ndim - 1))
    total = picked.sum(axis=0)
    return total / rows.size if mean else total


class _Reduction(Op):
    mean = False

    def _with_reduction(self) -> None:
        self.mean = self.attr_str("reduction", "sum").lower() == "mean"


@register("EmbeddingBagOffsets", "opset15")
class EmbeddingBagOffsets(_Reduction):
    """EmbeddingBagOffsets-15: table, indices [K], offsets [B], default_index, weights [K]."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self._with_reduction()

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        table, offsets = inputs[0], inputs[2]
        bags = offsets.shape[0] if offsets.shape else -1
        if table.shape is None:
            return [same(table, None)]
        return [same(table, (bags, *table.shape[1:]))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        table = np.asarray(inputs[0])
        indices = np.ravel(inputs[1]).astype(np.int64)
        offsets = np.ravel(inputs[2]).astype(np.int64)
        default = scalar_int(inputs[3]) if len(inputs) > 3 and np.size(inputs[3]) else None
        weights = np.ravel(inputs[4]) if len(inputs) > 4 else None
        acc = float_dtype_for(table.dtype) if table.dtype.kind == "f" else table.dtype
        ends = [*offsets[1:], indices.size]
        rows = [_bag(table, indices[s:e], None if weights is None else weights[s:e], default,
                     self.mean, acc) for s, e in zip(offsets, ends)]
        out = np.stack(rows) if rows else np.zeros((0, *table.shape[1:]), dtype=acc)
        return [out.astype(table.dtype)]


@register("EmbeddingBagOffsetsSum", "opset3")
class EmbeddingBagOffsetsSum(EmbeddingBagOffsets):
    """EmbeddingBagOffsetsSum-3: EmbeddingBagOffsets with sum."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.mean = False


@register("EmbeddingBagPacked", "opset15")
class EmbeddingBagPacked(_Reduction):
    """EmbeddingBagPacked-15: table, indices [B, L], optional weights [B, L]."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self._with_reduction()

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        table, idx = inputs[0], inputs[1]
        bags = idx.shape[0] if idx.shape else -1
        if table.shape is None:
            return [same(table, None)]
        return [same(table, (bags, *table.shape[1:]))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        table = np.asarray(inputs[0])
        indices = np.asarray(inputs[1]).astype(np.int64)
        weights = np.asarray(inputs[2]) if len(inputs) > 2 else None
        acc = float_dtype_for(table.dtype) if table.dtype.kind == "f" else table.dtype
        rows = [_bag(table, indices[b], None if weights is None else weights[b], None,
                     self.mean, acc) for b in range(indices.shape[0])]
        out = np.stack(rows) if rows else np.zeros((0, *table.shape[1:]), dtype=acc)
        return [out.astype(table.dtype)]


@register("EmbeddingBagPackedSum", "opset3")
class EmbeddingBagPackedSum(EmbeddingBagPacked):
    """EmbeddingBagPackedSum-3: EmbeddingBagPacked with sum."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.mean = False


@register("EmbeddingSegmentsSum", "opset3")
class EmbeddingSegmentsSum(Op):
    """EmbeddingSegmentsSum-3: table, indices [K], segment_ids [K], num_segments,
    default_index, weights [K]."""

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        table = inputs[0]
        n = scalar_int(values[3])
        if table.shape is None:
            return [same(table, None)]
        return [same(table, (-1 if n is None else n, *table.shape[1:]))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        table = np.asarray(inputs[0])
        indices = np.ravel(inputs[1]).astype(np.int64)
        segments = np.ravel(inputs[2]).astype(np.int64)
        num = scalar_int(inputs[3])
        assert num is not None
        default = scalar_int(inputs[4]) if len(inputs) > 4 and np.size(inputs[4]) else None
        weights = np.ravel(inputs[5]) if len(inputs) > 5 else None
        acc = float_dtype_for(table.dtype) if table.dtype.kind == "f" else table.dtype
        out = np.zeros((num, *table.shape[1:]), dtype=acc)
        for s in range(num):
            sel = segments == s
            out[s] = _bag(table, indices[sel], None if weights is None else weights[sel],
                          default, False, acc)
        return [out.astype(table.dtype)]
