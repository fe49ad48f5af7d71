"""Indexing operations: Gather, GatherElements, GatherND, GatherTree, Slice, StridedSlice,
OneHot, NonZero, Unique, Bucketize, Eye.

Negative indices count from the end of the indexed axis (as in every OpenVINO version
the corpus uses); Gather answers 0 for indices still out of range, as OpenVINO does.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._nn import (
    dynamic_like,
    ints,
    merge_dim,
    norm_axes,
    norm_axis,
    same,
    scalar_int,
    slice_index,
    slice_start,
    vector_length,
)
from .base import Attrs, Op, TensorInfo, register

Values = Sequence[np.ndarray | None]


# --------------------------------------------------------------------------- Gather


@register("Gather", "opset8")
class Gather(Op):
    """Gather-8: ``data`` slices at ``indices`` along ``axis`` (input 2) with ``batch_dims``.

    Negative indices count from the end; indices out of range give zeros.
    """

    batching = "gather"

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.batch_dims = self.attr_int("batch_dims", 0)

    def _dims(self, data_rank: int, idx_rank: int, axis: int) -> tuple[int, int]:
        b = self.batch_dims + idx_rank if self.batch_dims < 0 else self.batch_dims
        axis = norm_axis(axis, data_rank)
        if not 0 <= b <= min(axis, idx_rank):
            raise ValueError(f"batch_dims {self.batch_dims} is invalid for axis {axis} and "
                             f"indices rank {idx_rank}")
        return b, axis

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        data, idx = inputs[0], inputs[1]
        axis = scalar_int(values[2])
        if data.shape is None or idx.shape is None or axis is None:
            if data.shape is not None and idx.shape is not None and self.batch_dims == 0:
                return [same(data, (-1,) * (len(data.shape) + len(idx.shape) - 1))]
            return [same(data, None)]
        b, axis = self._dims(len(data.shape), len(idx.shape), axis)
        batch = [merge_dim(d, i) for d, i in zip(data.shape[:b], idx.shape[:b])]
        out = (*batch, *data.shape[b:axis], *idx.shape[b:], *data.shape[axis + 1:])
        return [same(data, out)]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = np.asarray(inputs[0])
        idx = np.asarray(inputs[1]).astype(np.int64, copy=False)
        b, axis = self._dims(data.ndim, idx.ndim, scalar_int(inputs[2]))  # type: ignore[arg-type]
        n = data.shape[axis]
        idx = np.where(idx < 0, idx + n, idx)
        bad = (idx < 0) | (idx >= n)
        any_bad = bool(bad.any())
        if any_bad:
            idx = np.where(bad, 0, idx)
        if b == 0:
            if n == 0:
                out_shape = (*data.shape[:axis], *idx.shape, *data.shape[axis + 1:])
                return [np.zeros(out_shape, dtype=data.dtype)]
            out = np.take(data, idx, axis=axis)
            if any_bad:
                mask = bad.reshape((1,) * axis + bad.shape + (1,) * (data.ndim - axis - 1))
                out = np.where(mask, np.zeros((), dtype=data.dtype), out)
            return [out]
        batch_shape = data.shape[:b]
        nb = int(np.prod(batch_shape, dtype=np.int64))
        pre = data.shape[b:axis]
        post = data.shape[axis + 1:]
        d = data.reshape(nb, int(np.prod(pre, dtype=np.int64)), n,
                         int(np.prod(post, dtype=np.int64)))
        i_shape = idx.shape[b:]
        ii = idx.reshape(nb, -1)
        bi = np.arange(nb)[:, None]
        # d[bi, :, ii] puts the advanced dims first: [nb, I, pre, post]
        picked = d[bi, :, ii] if n else np.zeros((nb, ii.shape[1], d.shape[1], d.shape[3]),
                                                 dtype=data.dtype)
        if any_bad:
            picked = np.where(bad.reshape(nb, -1)[:, :, None, None], 0, picked).astype(
                data.dtype, copy=False)
        picked = picked.transpose(0, 2, 1, 3)
        return [picked.reshape((*batch_shape, *pre, *i_shape, *post))]


@register("Gather", "opset7")
class Gather7(Gather):
    """Gather-7: Gather-8 semantics for valid indices (``batch_dims`` attribute)."""


@register("Gather", "opset1")
class Gather1(Gather):
    """Gather-1: no ``batch_dims``."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.batch_dims = 0


@register("GatherElements", "opset6")
class GatherElements(Op):
    """GatherElements-6: ``out[i][j]... = data[..., indices[i][j]..., ...]`` along ``axis``."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.axis = self.attr_int("axis", 0)

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        data, idx = inputs[0], inputs[1]
        if idx.shape is None:
            if data.shape is None:
                return [same(data, None)]
            # indices match data on every axis but ``axis``
            axis = norm_axis(self.axis, len(data.shape))
            return [same(data, tuple(-1 if i == axis else d for i, d in enumerate(data.shape)))]
        if data.shape is None:
            return [same(data, idx.shape)]
        axis = norm_axis(self.axis, len(data.shape))
        out = [d if i == axis else merge_dim(d, s)
               for i, (d, s) in enumerate(zip(idx.shape, data.shape))]
        return [same(data, tuple(out))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = np.asarray(inputs[0])
        idx = np.asarray(inputs[1]).astype(np.int64, copy=False)
        axis = norm_axis(self.axis, data.ndim)
        n = data.shape[axis]
        idx = np.where(idx < 0, idx + n, idx)
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise ValueError(f"GatherElements index out of range [0, {n})")
        return [np.take_along_axis(data, idx, axis=axis)]


@register("GatherND", "opset8")
class GatherND(Op):
    """GatherND-8: the last indices dim addresses data after ``batch_dims``; batch dims are
    kept as they are (GatherND-5 flattens them into one)."""

    flatten_batch = False

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.batch_dims = self.attr_int("batch_dims", 0)

    def _batch_out(self, batch: Sequence[int]) -> tuple[int, ...]:
        if self.flatten_batch and self.batch_dims > 0:
            total = 1
            for d in batch:
                if d < 0:
                    return (-1,)
                total *= d
            return (total,)
        return tuple(batch)

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        data, idx = inputs[0], inputs[1]
        if data.shape is None or idx.shape is None or idx.shape[-1] < 0:
            return [same(data, None)]
        b = self.batch_dims
        k = idx.shape[-1]
        batch = [merge_dim(d, i) for d, i in zip(data.shape[:b], idx.shape[:b])]
        out = (*self._batch_out(batch), *idx.shape[b:-1], *data.shape[b + k:])
        return [same(data, out)]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = np.asarray(inputs[0])
        idx = np.asarray(inputs[1]).astype(np.int64, copy=False)
        b = self.batch_dims
        k = idx.shape[-1]
        batch_shape = data.shape[:b]
        nb = int(np.prod(batch_shape, dtype=np.int64))
        d = data.reshape(nb, *data.shape[b:])
        ii = idx.reshape(nb, -1, k)
        dims = np.array(d.shape[1:1 + k], dtype=np.int64)
        ii = np.where(ii < 0, ii + dims, ii)
        if ii.size and ((ii < 0).any() or (ii >= dims).any()):
            raise ValueError("GatherND index out of range")
        bi = np.arange(nb)[:, None]
        picked = d[(bi, *(ii[..., j] for j in range(k)))]  # [nb, M, *rest]
        rest = data.shape[b + k:]
        return [picked.reshape((*self._batch_out(batch_shape), *idx.shape[b:-1], *rest))]


@register("GatherND", "opset5")
class GatherND5(GatherND):
    """GatherND-5: batch dims of the output are flattened into one."""

    flatten_batch = True


@register("GatherTree", "opset1")
class GatherTree(Op):
    """GatherTree-1: beam-search back-tracking (step_ids, parent_idx, max_seq_len, end_token)."""

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        return [inputs[0]]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        step_ids, parents = np.asarray(inputs[0]), np.asarray(inputs[1])
        max_len = np.ravel(inputs[2])
        end_token = np.asarray(inputs[3]).reshape(()).item()
        t_max, batch, beams = step_ids.shape
        out = np.empty_like(step_ids)
        for b in range(batch):
            length = min(int(max_len[b]), t_max)
            out[length:, b, :] = end_token
            for beam in range(beams):
                parent = beam
                for t in range(length - 1, -1, -1):
                    out[t, b, beam] = step_ids[t, b, parent]
                    parent = int(parents[t, b, parent])
                    if parent < 0 or parent >= beams:
                        break
                finished = False
                for t in range(length):
                    if finished:
                        out[t, b, beam] = end_token
                    elif out[t, b, beam] == end_token:
                        finished = True
        return [out]


# --------------------------------------------------------------------------- Slice family


def _slice_len(dim: int, start: int | None, stop: int | None, step: int) -> int:
    """Length of ``slice(start, stop, step)`` on an axis of size ``dim``; for a dynamic
    ``dim`` 0 when the slice is empty whatever the size, else -1."""
    if dim >= 0:
        return len(range(*slice(start, stop, step).indices(dim)))
    if step > 0:
        start = 0 if start is None else start
        if stop is not None and (start >= 0) == (stop >= 0) and stop <= start:
            return 0
    elif start is not None and stop is not None and (start >= 0) == (stop >= 0) \
            and stop >= start:
        return 0
    return -1


def _onnx_slice_len(dim: int, start: int, stop: int, step: int) -> int:
    """``_slice_len`` for Slice-8, whose bounds clamp as ONNX's (``slice_start``): walking
    backwards from a negative start on an axis of unknown size, the start may lie before the
    axis (then the slice begins at its first element) or not, so the length is unknown."""
    if dim < 0 and step < 0 and start < 0:
        return -1
    return _slice_len(dim, slice_start(dim, start, step), stop, step)


@register("Slice", "opset8")
class Slice(Op):
    """Slice-8: ONNX-style slicing (start, stop, step, optional axes), bounds clamped."""

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        data = inputs[0]
        start, stop, step = ints(values[1]), ints(values[2]), ints(values[3])
        axes = ints(values[4]) if len(values) > 4 else None
        if data.shape is None:
            return [same(data, None)]
        rank = len(data.shape)
        n = next((len(v) for v in (start, stop, step) if v is not None), None)
        if n is None:
            n = vector_length(inputs[1])
        if len(inputs) > 4 and axes is None:
            return [dynamic_like(data)]
        axes_list = norm_axes(axes, rank) if axes is not None else list(range(n or 0))
        if n is None:
            return [dynamic_like(data)]
        out = list(data.shape)
        for j, ax in enumerate(axes_list):
            if start is None or stop is None or step is None:
                out[ax] = -1
            else:
                out[ax] = _onnx_slice_len(data.shape[ax], start[j], stop[j], step[j])
        return [same(data, tuple(out))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = np.asarray(inputs[0])
        axes = inputs[4] if len(inputs) > 4 else None
        region = slice_index(data.shape, inputs[1], inputs[2], inputs[3], axes, "Slice")
        return [data[region].copy()]


def _mask(values: list[int], i: int) -> bool:
    return i < len(values) and values[i] != 0


@register("StridedSlice", "opset1")
class StridedSlice(Op):
    """StridedSlice-1: begin/end/strides with begin, end, new_axis, shrink_axis and ellipsis
    masks (a 1 in ``begin_mask``/``end_mask`` ignores that begin/end)."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.begin_mask = self.attr_ints("begin_mask", [])
        self.end_mask = self.attr_ints("end_mask", [])
        self.new_axis_mask = self.attr_ints("new_axis_mask", [])
        self.shrink_axis_mask = self.attr_ints("shrink_axis_mask", [])
        self.ellipsis_mask = self.attr_ints("ellipsis_mask", [])

    def _index(self, begin: list[int], end: list[int], strides: list[int]) -> tuple:
        index: list = []
        seen_ellipsis = False
        for i in range(len(begin)):
            if _mask(self.ellipsis_mask, i) and not seen_ellipsis:
                index.append(Ellipsis)
                seen_ellipsis = True
            elif _mask(self.new_axis_mask, i):
                index.append(None)
            elif _mask(self.shrink_axis_mask, i):
                index.append(begin[i])
            else:
                s = strides[i] if i < len(strides) else 1
                if s == 0:
                    raise ValueError("StridedSlice stride must not be 0")
                index.append(slice(None if _mask(self.begin_mask, i) else begin[i],
                                   None if _mask(self.end_mask, i) else end[i], s))
        return tuple(index)

    def _out_shape(self, shape: Sequence[int], index: tuple,
                   known: bool = True) -> tuple[int, ...]:
        """The result shape of ``index`` on a possibly dynamic ``shape``; with ``known``
        False the slice bounds are placeholders and sliced dims come out -1."""
        n_real = sum(1 for x in index if x is not None and x is not Ellipsis)
        out: list[int] = []
        axis = 0
        for x in index:
            if x is None:
                out.append(1)
            elif x is Ellipsis:
                fill = len(shape) - n_real
                out.extend(shape[axis:axis + fill])
                axis += fill
            elif axis >= len(shape):
                raise ValueError("StridedSlice indexes beyond the input rank")
            elif isinstance(x, int):
                if known and shape[axis] >= 0 and not -shape[axis] <= x < shape[axis]:
                    raise ValueError(f"StridedSlice shrink index {x} out of range")
                axis += 1
            else:
                d = shape[axis]
                out.append(_slice_len(d, x.start, x.stop, x.step) if known else -1)
                axis += 1
        out.extend(shape[axis:])
        return tuple(out)

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        data = inputs[0]
        begin, end = ints(values[1]), ints(values[2])
        strides = ints(values[3]) if len(values) > 3 else []
        n = next((len(v) for v in (begin, end) if v is not None), None)
        if n is None:
            n = vector_length(inputs[1])
        if data.shape is None or n is None:
            return [same(data, None)]
        known = begin is not None and end is not None and strides is not None
        index = self._index(begin or [0] * n, end or [0] * n, strides or [1] * n)
        return [same(data, self._out_shape(data.shape, index, known))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = np.asarray(inputs[0])
        begin, end = ints(inputs[1]), ints(inputs[2])
        strides = ints(inputs[3]) if len(inputs) > 3 else []
        index = self._index(begin, end, strides)  # type: ignore[arg-type]
        for x, d in zip([x for x in index if x is not None and x is not Ellipsis], data.shape):
            if isinstance(x, int) and not -d <= x < d:
                raise ValueError(f"StridedSlice shrink index {x} out of range")
        return [np.array(data[index], copy=True)]


# --------------------------------------------------------------------------- OneHot


@register("OneHot", "opset1")
class OneHot(Op):
    """OneHot-1: ``depth`` classes on a new ``axis``; indices outside ``[0, depth)`` (negative
    ones included) give rows of ``off_value``."""

    normalize_negative = False

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.axis = self.attr_int("axis", -1)

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        idx, on = inputs[0], inputs[2]
        depth = scalar_int(values[1])
        if idx.shape is None:
            return [same(on, None)]
        rank = len(idx.shape) + 1
        axis = norm_axis(self.axis, rank)
        out = list(idx.shape)
        out.insert(axis, -1 if depth is None else depth)
        return [same(on, tuple(out))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        idx = np.asarray(inputs[0])
        depth = scalar_int(inputs[1])
        assert depth is not None
        on, off = np.asarray(inputs[2]), np.asarray(inputs[3])
        axis = norm_axis(self.axis, idx.ndim + 1)
        if idx.dtype.kind == "f":
            idx = np.trunc(idx)
        idx = idx.astype(np.int64)
        if self.normalize_negative:
            idx = np.where(idx < 0, idx + depth, idx)
        classes = np.arange(depth, dtype=np.int64).reshape(
            (depth,) + (1,) * (idx.ndim - axis))
        hot = np.expand_dims(idx, axis) == classes
        out = np.where(hot, on.reshape(()), off.reshape(())).astype(on.dtype, copy=False)
        return [out]


@register("OneHot", "opset16")
class OneHot16(OneHot):
    """OneHot-16: ``negative_indices_mode`` ``ignore_negative`` (default) or ``normalize``."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        mode = self.attr_str("negative_indices_mode", "ignore_negative").lower()
        self.normalize_negative = mode == "normalize"


# --------------------------------------------------------------------------- NonZero / Unique


@register("NonZero", "opset3")
class NonZero(Op):
    """NonZero-3: ``[rank, count]`` coordinates of the non-zero elements in row-major order."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.output_type = self.attr_type("output_type", "i64")
        self._dtype = self.output_type.dtype

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        rank = inputs[0].rank
        if values[0] is not None:
            return [TensorInfo(self.output_type, self.compute([values[0]])[0].shape)]
        return [TensorInfo(self.output_type, (-1 if rank is None else rank, -1))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = np.asarray(inputs[0])
        if data.ndim == 0:
            return [np.zeros((0, int(data != 0)), dtype=self._dtype)]
        return [np.array(np.nonzero(data), dtype=self._dtype).reshape(data.ndim, -1)]


@register("Unique", "opset10")
class Unique(Op):
    """Unique-10: unique elements (or slices along ``axis``), first-occurrence indices,
    the inverse mapping and counts; ``sorted`` orders them ascending, else by first
    occurrence."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.sorted = self.attr_bool("sorted", True)
        self.index_type = self.attr_type("index_element_type", "i64")
        self.count_type = self.attr_type("count_element_type", "i64")

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        data = inputs[0]
        axis = scalar_int(values[1]) if len(values) > 1 else None
        if len(inputs) > 1 and axis is not None and data.shape is not None:
            ax = norm_axis(axis, len(data.shape))
            shape = tuple(-1 if i == ax else d for i, d in enumerate(data.shape))
            n_in = data.shape[ax]
        elif len(inputs) > 1:
            shape, n_in = None, -1
        else:
            shape = (-1,)
            n_in = -1 if not data.is_static else int(np.prod(data.shape, dtype=np.int64))  # type: ignore[arg-type]
        return [same(data, shape), TensorInfo(self.index_type, (-1,)),
                TensorInfo(self.index_type, (n_in,)), TensorInfo(self.count_type, (-1,))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = np.asarray(inputs[0])
        if len(inputs) > 1:
            axis = norm_axis(scalar_int(inputs[1]), data.ndim)  # type: ignore[arg-type]
            moved = np.moveaxis(data, axis, 0)
            flat = moved.reshape(moved.shape[0], -1)
            uniq, first, inverse, counts = np.unique(flat, axis=0, return_index=True,
                                                     return_inverse=True, return_counts=True)
        else:
            axis = None
            flat = data.reshape(-1)  # type: ignore[assignment]
            uniq, first, inverse, counts = np.unique(flat, return_index=True,
                                                     return_inverse=True, return_counts=True)
        inverse = np.ravel(inverse)
        if not self.sorted:
            order = np.argsort(first, kind="stable")
            rank = np.empty_like(order)
            rank[order] = np.arange(order.size)
            uniq, first, counts = uniq[order], first[order], counts[order]
            inverse = rank[inverse]
        if axis is not None:
            uniq = np.moveaxis(uniq.reshape((uniq.shape[0], *moved.shape[1:])), 0, axis)
        it, ct = self.index_type.dtype, self.count_type.dtype
        return [np.ascontiguousarray(uniq), first.astype(it), inverse.astype(it),
                counts.astype(ct)]


# --------------------------------------------------------------------------- Bucketize / Eye


@register("Bucketize", "opset3")
class Bucketize(Op):
    """Bucketize-3: bucket index of each element; ``with_right_bound`` makes buckets
    ``(left, right]``, else ``[left, right)``."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.output_type = self.attr_type("output_type", "i64")
        self.side = "left" if self.attr_bool("with_right_bound", True) else "right"

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        return [TensorInfo(self.output_type, inputs[0].shape)]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        buckets = np.ravel(inputs[1])
        out = np.searchsorted(buckets, np.asarray(inputs[0]), side=self.side)  # type: ignore[call-overload]
        return [np.asarray(out, dtype=self.output_type.dtype)]


@register("Eye", "opset9")
class Eye(Op):
    """Eye-9: ``[*batch_shape, rows, cols]`` with ones on the ``diagonal_index`` diagonal."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.output_type = self.attr_type("output_type", "f32")

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        rows, cols = scalar_int(values[0]), scalar_int(values[1])
        dims = (-1 if rows is None else rows, -1 if cols is None else cols)
        if len(inputs) > 3:
            batch = ints(values[3])
            if batch is None:
                n = vector_length(inputs[3])
                if n is None:
                    return [TensorInfo(self.output_type, None)]
                return [TensorInfo(self.output_type, (-1,) * n + dims)]
            return [TensorInfo(self.output_type, (*batch, *dims))]
        return [TensorInfo(self.output_type, dims)]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        rows, cols = scalar_int(inputs[0]), scalar_int(inputs[1])
        k = scalar_int(inputs[2])
        eye = np.eye(rows, cols, k=k, dtype=self.output_type.dtype)  # type: ignore[arg-type]
        if len(inputs) > 3:
            batch = ints(inputs[3]) or []
            eye = np.broadcast_to(eye, (*batch, rows, cols)).copy()  # type: ignore[arg-type]
        return [eye]
