"""Helpers shared by the shape, indexing and NN operation modules.

Nothing here registers an op. The helpers deal with the three recurring chores:
normalising axes, reading small integer vectors from constant inputs, and
working with partly dynamic shapes (``-1`` dims, ``None`` rank) in ``infer``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..ir.graph import Shape
from ..ir.types import ElementType, element_type
from .base import TensorInfo

I64 = element_type("i64")
I32 = element_type("i32")


def norm_axis(axis: int, rank: int, what: str = "axis") -> int:
    """``axis`` in ``[-rank, rank)`` as a non-negative axis; ``ValueError`` when outside."""
    if not -rank <= axis < rank:
        raise ValueError(f"{what} {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def norm_axes(axes: Sequence[int] | np.ndarray, rank: int, what: str = "axis") -> list[int]:
    """Each of ``axes`` normalised with :func:`norm_axis`."""
    return [norm_axis(int(a), rank, what) for a in np.ravel(axes)]


def ints(value: np.ndarray | Sequence[int] | None) -> list[int] | None:
    """A constant input as a flat list of Python ints (None stays None)."""
    if value is None:
        return None
    return [int(v) for v in np.ravel(value)]


def slice_index(shape: Sequence[int], start: np.ndarray, stop: np.ndarray, step: np.ndarray,
                axes: np.ndarray | None, op: str) -> tuple[slice, ...]:
    """The numpy index of a Slice-8 region of data of ``shape``: ``start``/``stop``/``step``
    per entry of ``axes`` (the leading axes when ``axes`` is None), every other axis whole.
    Bounds are clamped as ONNX and OpenVINO clamp them (``slice_start``)."""
    starts, stops, steps = ints(start), ints(stop), ints(step)
    assert starts is not None and stops is not None and steps is not None
    rank = len(shape)
    on = norm_axes(axes, rank) if axes is not None else range(len(starts))
    index = [slice(None)] * rank
    for a, b, e, s in zip(on, starts, stops, steps):
        if s == 0:
            raise ValueError(f"{op} step must not be 0")
        index[a] = slice(slice_start(shape[a], b, s), e, s)
    return tuple(index)


def slice_start(dim: int, start: int, step: int) -> int:
    """``start`` as Python's slice must get it to take ONNX's and OpenVINO's Slice: walking
    backwards from a start before the axis begins at its first element (Python's slice
    would take nothing); every other bound is clamped alike."""
    return 0 if step < 0 and dim >= 0 and start < -dim else start


def scalar_int(value: np.ndarray | None) -> int | None:
    """A constant scalar (or one-element) input as an int (None stays None)."""
    if value is None:
        return None
    flat = np.ravel(value)
    if flat.size != 1:
        raise ValueError(f"expected one value, got {flat.size}")
    return int(flat[0])


def same(info: TensorInfo, shape: Shape | None) -> TensorInfo:
    """A ``TensorInfo`` with ``info``'s element type and ``shape``."""
    return TensorInfo(info.element_type, None if shape is None else tuple(shape))


def vector_length(info: TensorInfo) -> int | None:
    """The static length of a 1-D (or scalar: 1) input, or None when unknown."""
    if info.shape is None:
        return None
    if len(info.shape) == 0:
        return 1
    if len(info.shape) == 1 and info.shape[0] >= 0:
        return info.shape[0]
    return None


def dim_product(dims: Sequence[int]) -> int:
    """Product of dims; -1 when any is dynamic."""
    out = 1
    for d in dims:
        if d < 0:
            return -1
        out *= d
    return out


def merge_dim(a: int, b: int) -> int:
    """Two dims that must be equal (a -1 takes the other's value)."""
    if a < 0:
        return b
    if b >= 0 and a != b:
        raise ValueError(f"dimensions {a} and {b} do not match")
    return a


def dynamic_like(info: TensorInfo) -> TensorInfo:
    """Same rank as ``info``, every dim dynamic."""
    return same(info, None if info.shape is None else (-1,) * len(info.shape))


def out_type(name: str) -> ElementType:
    """The element type named by an ``output_type``-style attribute (i32/i64)."""
    return element_type(name)


def as_index_dtype(et: ElementType) -> np.dtype:
    """numpy dtype of an index element type (i32/i64)."""
    assert et.dtype is not None
    return et.dtype


def window_view(x: np.ndarray, kernel: Sequence[int], strides: Sequence[int],
                dilations: Sequence[int], out: Sequence[int]) -> np.ndarray:
    """A read-only strided view ``[N, C, *out, *kernel]`` of the padded ``x [N, C, *spatial]``.

    Element ``[n, c, o..., k...]`` is ``x[n, c, o*stride + k*dilation ...]``; the caller
    sizes ``x`` (by padding) so every window fits.
    """
    x = np.ascontiguousarray(x)
    s = x.strides
    spatial = s[2:]
    shape = (*x.shape[:2], *out, *kernel)
    strides = (*s[:2], *(st * sd for st, sd in zip(strides, spatial)),
               *(dl * sd for dl, sd in zip(dilations, spatial)))
    return np.lib.stride_tricks.as_strided(x, shape=shape, strides=strides, writeable=False)


def auto_pads(auto_pad: str, in_dims: Sequence[int], kernel: Sequence[int],
              strides: Sequence[int], dilations: Sequence[int],
              pads_begin: Sequence[int], pads_end: Sequence[int]
              ) -> tuple[list[int], list[int]]:
    """Pads per OpenVINO's ``auto_pad`` rule (explicit/notset keep the given pads).

    ``same_upper`` puts the odd extra pad at the end, ``same_lower`` at the start;
    ``valid`` pads nothing. Dynamic input dims get zero padding (unknown).
    """
    mode = auto_pad.lower()
    rank = len(in_dims)
    if mode == "valid":
        return [0] * rank, [0] * rank
    if mode not in ("same_upper", "same_lower"):
        begin = list(pads_begin) or [0] * rank
        end = list(pads_end) or [0] * rank
        return begin, end
    begin, end = [], []
    for d, k, s, dl in zip(in_dims, kernel, strides, dilations):
        if d < 0:
            begin.append(0)
            end.append(0)
            continue
        eff = (k - 1) * dl + 1
        out = -(-d // s)
        total = max((out - 1) * s + eff - d, 0)
        small = total // 2
        if mode == "same_upper":
            begin.append(small)
            end.append(total - small)
        else:
            begin.append(total - small)
            end.append(small)
    return begin, end


def float_dtype_for(dtype: np.dtype) -> np.dtype:
    """The dtype to accumulate a kernel in: float32 for half types, else the dtype itself."""
    kind = dtype.kind
    if kind == "f":  # the common case first: dtype.name is a slow property
        return _F32 if dtype.itemsize < 4 else dtype
    if kind == "V" or dtype.name == "bfloat16":
        return _F32
    return dtype


_F32 = np.dtype(np.float32)
