"""Scatter operations: ScatterUpdate, ScatterElementsUpdate, ScatterNDUpdate, SliceScatter.

Updates are applied in row-major order of the indices, so with duplicate indices the
last update wins (no reduction) or all of them reduce, as in OpenVINO's reference.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._nn import norm_axis, scalar_int, slice_index
from .base import Attrs, Op, TensorInfo, register

Values = Sequence[np.ndarray | None]


def _normalize(idx: np.ndarray, dim: int | np.ndarray) -> np.ndarray:
    idx = np.asarray(idx).astype(np.int64, copy=False)
    idx = np.where(idx < 0, idx + dim, idx)
    if idx.size and ((idx < 0).any() or (idx >= dim).any()):
        raise ValueError("scatter index out of range")
    return idx


class _SameAsData(Op):
    """Output = input 0's type and shape."""

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        return [inputs[0]]


def _reduce_at(out: np.ndarray, where: tuple, updates: np.ndarray, reduction: str) -> None:
    """Apply ``reduction`` of ``updates`` into ``out[where]`` element by element."""
    if out.dtype == np.bool_:
        fn = {"sum": np.logical_or, "prod": np.logical_and, "max": np.logical_or,
              "min": np.logical_and, "sub": np.logical_xor}[reduction]
    else:
        fn = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,  # type: ignore[assignment]
              "sub": np.subtract}[reduction]
    fn.at(out, where, updates)


@register("ScatterUpdate", "opset3")
class ScatterUpdate(_SameAsData):
    """ScatterUpdate-3: whole slices of ``data`` along ``axis`` (input 3) replaced."""

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = np.asarray(inputs[0])
        axis = norm_axis(scalar_int(inputs[3]), data.ndim)  # type: ignore[arg-type]
        idx = _normalize(inputs[1], data.shape[axis]).reshape(-1)
        upd = np.asarray(inputs[2]).astype(data.dtype, copy=False)
        upd = upd.reshape((*data.shape[:axis], idx.size, *data.shape[axis + 1:]))
        out = data.copy()
        moved = np.moveaxis(out, axis, 0)
        moved[idx] = np.moveaxis(upd, axis, 0)
        return [out]


@register("ScatterElementsUpdate", "opset12")
class ScatterElementsUpdate(_SameAsData):
    """ScatterElementsUpdate-12: ``reduction`` none/sum/prod/min/max/mean, ``use_init_val``.

    Integer means round toward zero, as OpenVINO's CPU plugin does.
    """

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.reduction = self.attr_str("reduction", "none").lower()
        self.use_init_val = self.attr_bool("use_init_val", True)

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = np.asarray(inputs[0])
        indices = np.asarray(inputs[1])
        upd = np.asarray(inputs[2]).astype(data.dtype, copy=False)
        axis = norm_axis(scalar_int(inputs[3]), data.ndim)  # type: ignore[arg-type]
        idx = _normalize(indices, data.shape[axis])
        grids = list(np.indices(idx.shape, sparse=True))  # type: ignore[var-annotated]
        grids[axis] = idx
        where = tuple(np.broadcast_arrays(*grids))
        out = data.copy()
        if self.reduction == "none":
            out[where] = upd
            return [out]
        red = "sum" if self.reduction == "mean" else self.reduction
        if not self.use_init_val:
            neutral = {"sum": 0, "prod": 1}.get(red)
            if neutral is None:
                info = np.iinfo(data.dtype) if data.dtype.kind in "iu" else (
                    np.finfo(data.dtype) if data.dtype.kind == "f" else None)
                if info is None:
                    neutral = red == "min"
                else:
                    neutral = info.min if red == "max" else info.max
            out[where] = neutral
        _reduce_at(out, where, upd, red)
        if self.reduction == "mean":
            counts = np.zeros(data.shape, dtype=np.int64)
            np.add.at(counts, where, 1)
            touched = counts > 0
            n = counts + int(self.use_init_val)
            if data.dtype.kind in "iu":
                mean = np.trunc(out.astype(np.float64) / np.maximum(n, 1))
            else:
                mean = out / np.maximum(n, 1)
            out = np.where(touched, mean, out).astype(data.dtype)
        return [out]


@register("ScatterElementsUpdate", "opset3")
class ScatterElementsUpdate3(ScatterElementsUpdate):
    """ScatterElementsUpdate-3: no reduction."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.reduction = "none"
        self.use_init_val = True


@register("ScatterNDUpdate", "opset15")
class ScatterNDUpdate(_SameAsData):
    """ScatterNDUpdate-15: ``reduction`` none/sum/sub/prod/min/max."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.reduction = self.attr_str("reduction", "none").lower()

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = np.asarray(inputs[0])
        indices = np.asarray(inputs[1])
        k = indices.shape[-1]
        dims = np.array(data.shape[:k], dtype=np.int64)
        idx = _normalize(indices, dims).reshape(-1, k)
        upd = np.asarray(inputs[2]).astype(data.dtype, copy=False)
        upd = upd.reshape((idx.shape[0], *data.shape[k:]))
        where = tuple(idx[:, j] for j in range(k))
        out = data.copy()
        if self.reduction == "none":
            for i in range(idx.shape[0]):  # sequential: the last duplicate wins
                out[tuple(int(v) for v in idx[i])] = upd[i]
            return [out]
        _reduce_at(out, where, upd, self.reduction)
        return [out]


@register("ScatterNDUpdate", "opset4")
class ScatterNDUpdate3(ScatterNDUpdate):
    """ScatterNDUpdate-3 (OpenVINO writes it as ``opset4``, where it first appeared): no
    reduction."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.reduction = "none"


@register("SliceScatter", "opset15")
class SliceScatter(_SameAsData):
    """SliceScatter-15: ``data`` with the Slice-8 region (start, stop, step, axes) replaced
    by ``updates``."""

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = np.asarray(inputs[0])
        axes = inputs[5] if len(inputs) > 5 else None
        out = data.copy()
        region = slice_index(data.shape, inputs[2], inputs[3], inputs[4], axes, "SliceScatter")
        out[region] = np.asarray(inputs[1]).astype(data.dtype, copy=False)
        return [out]
