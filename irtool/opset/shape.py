"""Shape and layout operations: Reshape, Squeeze, Unsqueeze, Concat, Split, VariadicSplit,
Transpose, Broadcast, Tile, Pad, ShapeOf, Identity, Reverse, ReverseSequence, DepthToSpace,
SpaceToDepth, BatchToSpace, SpaceToBatch, ShuffleChannels, Roll.

The ones the ONNX converter needs for shape propagation (Reshape ... ShapeOf, Identity)
implement ``infer`` on dynamic shapes; it uses constant inputs when they are known and
answers ``-1`` dims (or ``None`` rank) where the output depends on unknown data.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._nn import (
    dim_product,
    dynamic_like,
    ints,
    merge_dim,
    norm_axes,
    norm_axis,
    same,
    scalar_int,
    vector_length,
)
from .base import Attrs, Op, TensorInfo, broadcast_shapes, register

Values = Sequence[np.ndarray | None]


# --------------------------------------------------------------------------- Reshape


@register("Reshape", "opset1")
class Reshape(Op):
    """Reshape-1: ``-1`` takes the remaining size; ``0`` copies the input dim when
    ``special_zero`` is set."""

    batching = "reshape"

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.special_zero = self.attr_bool("special_zero", False)

    def target(self, in_shape: Sequence[int], pattern: Sequence[int]) -> list[int]:
        """The output shape for a static ``in_shape`` and the ``pattern`` input."""
        out = self._resolve(list(in_shape), list(pattern))
        if any(d < 0 for d in out):
            raise ValueError(f"cannot reshape {list(in_shape)} to {list(pattern)}")
        return out

    def _resolve(self, in_shape: list[int], pattern: list[int]) -> list[int]:
        out: list[int] = []
        minus_one = None
        # Dims copied by special_zero cancel against the same input dim, so a dynamic dim
        # copied through does not make the -1 dim unknown.
        copied: set[int] = set()
        for i, d in enumerate(pattern):
            if d == 0 and self.special_zero:
                if i >= len(in_shape):
                    raise ValueError(f"special zero at {i} is beyond the input rank "
                                     f"{len(in_shape)}")
                out.append(in_shape[i])
                copied.add(i)
            elif d == -1:
                if minus_one is not None:
                    raise ValueError("more than one -1 in the Reshape pattern")
                minus_one = i
                out.append(-1)
            elif d < -1:
                raise ValueError(f"invalid Reshape pattern value {d}")
            else:
                out.append(d)
        if minus_one is not None:
            rest_in = [d for i, d in enumerate(in_shape) if i not in copied]
            rest_out = [d for i, d in enumerate(out) if i != minus_one and i not in copied]
            num, den = dim_product(rest_in), dim_product(rest_out)
            if num < 0 or den < 0:
                out[minus_one] = -1
            elif den == 0:
                if num != 0:
                    raise ValueError(f"cannot reshape {in_shape} to {pattern}")
                out[minus_one] = 0
            else:
                if num % den:
                    raise ValueError(f"cannot reshape {in_shape} to {pattern}")
                out[minus_one] = num // den
        return out

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        data, pattern_info = inputs[0], inputs[1]
        pattern = ints(values[1])
        if pattern is None:
            n = vector_length(pattern_info)
            return [same(data, None if n is None else (-1,) * n)]
        if data.shape is None:
            if (self.special_zero and 0 in pattern) or -1 in pattern:
                return [same(data, tuple(-1 if (d == 0 and self.special_zero) or d == -1 else d
                                         for d in pattern))]
            return [same(data, tuple(pattern))]
        out = self._resolve(list(data.shape), pattern)
        if data.is_static:
            total = dim_product(data.shape)
            if dim_product(out) >= 0 and dim_product(out) != total:
                raise ValueError(f"cannot reshape {list(data.shape)} to {pattern}")
        return [same(data, tuple(out))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = np.asarray(inputs[0])
        return [data.reshape(self.target(data.shape, ints(inputs[1])))]  # type: ignore[arg-type]


# --------------------------------------------------------------------------- Squeeze / Unsqueeze


@register("Squeeze", "opset1")
class Squeeze(Op):
    """Squeeze-1: removes the listed size-1 axes; without ``axes``, or with an empty list
    of them, every size-1 axis (the spec: "If the input with indices is empty or not
    provided", a dim that might be 1 makes the output's rank dynamic).

    Like OpenVINO, a listed axis whose size is not 1 is left in place.
    """

    batching = "squeeze"

    allow_axis_skip = False

    def _axes_to_drop(self, shape: Sequence[int], axes: list[int] | None) -> list[int] | None:
        """Axes removed from ``shape``; None when that cannot be known (dynamic dims)."""
        rank = len(shape)
        if not axes:  # none, or an empty list: every size-1 axis
            if any(d < 0 for d in shape):
                return None
            return [i for i, d in enumerate(shape) if d == 1]
        drop = []
        for a in sorted(set(norm_axes(axes, rank))):
            if shape[a] == 1:
                drop.append(a)
            elif shape[a] < 0:
                if self.allow_axis_skip:
                    return None
                drop.append(a)  # must be 1 at run time for the model to be valid
        return drop

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        data = inputs[0]
        if len(inputs) > 1 and values[1] is None:
            # unknown axes: OpenVINO still knows the rank when k axes must all be removed
            # (k == 0: an empty list, every size-1 axis; OpenVINO leaves the rank open)
            k = vector_length(inputs[1])
            if data.shape is None or not k or self.allow_axis_skip or k > len(data.shape):
                return [same(data, None)]
            return [same(data, (-1,) * (len(data.shape) - k))]
        if data.shape is None:
            return [same(data, None)]
        axes = ints(values[1]) if len(inputs) > 1 else None
        drop = self._axes_to_drop(data.shape, axes)
        if drop is None:
            return [same(data, None)]
        return [same(data, tuple(d for i, d in enumerate(data.shape) if i not in drop))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = np.asarray(inputs[0])
        axes = ints(inputs[1]) if len(inputs) > 1 else None
        drop = self._axes_to_drop(data.shape, axes) or []
        return [data.reshape([d for i, d in enumerate(data.shape) if i not in drop])]


@register("Squeeze", "opset15")
class Squeeze15(Squeeze):
    """Squeeze-15: ``allow_axis_skip`` makes the output rank dynamic when a listed axis is
    dynamic (it might not be 1)."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.allow_axis_skip = self.attr_bool("allow_axis_skip", False)


@register("Unsqueeze", "opset1")
class Unsqueeze(Op):
    """Unsqueeze-1: inserts size-1 axes at the listed positions of the output."""

    batching = "unsqueeze"

    @staticmethod
    def _out_shape(shape: Sequence[int], axes: list[int]) -> list[int]:
        rank = len(shape) + len(set(axes))
        wanted = set(norm_axes(axes, rank))
        rank = len(shape) + len(wanted)
        it = iter(shape)
        return [1 if i in wanted else next(it) for i in range(rank)]

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        data = inputs[0]
        axes = ints(values[1])
        if data.shape is None:
            return [same(data, None)]
        if axes is None:
            return [same(data, None)]
        return [same(data, tuple(self._out_shape(data.shape, axes)))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = np.asarray(inputs[0])
        return [data.reshape(self._out_shape(data.shape, ints(inputs[1])))]  # type: ignore[arg-type]


# --------------------------------------------------------------------------- Concat / Split


@register("Concat", "opset1")
class Concat(Op):
    """Concat-1 along ``axis`` (negative counts from the end)."""

    batching = "concat"

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.axis = self.attr_int("axis", 0)

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        ranked = [i.shape for i in inputs if i.shape is not None]
        if not ranked:
            return [same(inputs[0], None)]
        rank = len(ranked[0])
        axis = norm_axis(self.axis, rank)
        out = list(ranked[0])
        out[axis] = 0
        for shape in ranked:
            if len(shape) != rank:
                raise ValueError("Concat inputs have different ranks")
            for i, d in enumerate(shape):
                if i != axis:
                    out[i] = merge_dim(out[i], d)
        total = 0
        for info in inputs:
            d = -1 if info.shape is None else info.shape[axis]
            if d < 0 or total < 0:
                total = -1
            else:
                total += d
        out[axis] = total
        return [same(inputs[0], tuple(out))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        arrays = [np.asarray(a) for a in inputs]
        return [np.concatenate(arrays, axis=self.axis)]


@register("Split", "opset1")
class Split(Op):
    """Split-1: ``num_splits`` equal parts along the axis given by input 1."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.num_splits = self.attr_int("num_splits", 1)

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        data = inputs[0]
        axis = scalar_int(values[1])
        if data.shape is None:
            return [same(data, None)] * self.num_splits
        if axis is None:
            return [dynamic_like(data)] * self.num_splits
        axis = norm_axis(axis, len(data.shape))
        out = list(data.shape)
        if out[axis] >= 0:
            if out[axis] % self.num_splits:
                raise ValueError(f"dimension {out[axis]} does not split into "
                                 f"{self.num_splits} equal parts")
            out[axis] //= self.num_splits
        return [same(data, tuple(out))] * self.num_splits

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = np.asarray(inputs[0])
        axis = norm_axis(scalar_int(inputs[1]), data.ndim)  # type: ignore[arg-type]
        if data.shape[axis] % self.num_splits:
            raise ValueError(f"dimension {data.shape[axis]} does not split into "
                             f"{self.num_splits} equal parts")
        return list(np.split(data, self.num_splits, axis=axis))


@register("VariadicSplit", "opset1")
class VariadicSplit(Op):
    """VariadicSplit-1: parts of the given lengths (one may be -1: the rest)."""

    @staticmethod
    def _lengths(dim: int, lengths: list[int]) -> list[int]:
        if lengths.count(-1) > 1:
            raise ValueError("more than one -1 in split_lengths")
        if -1 in lengths:
            known = sum(v for v in lengths if v != -1)
            lengths = [dim - known if v == -1 else v for v in lengths] if dim >= 0 else \
                [-1 if v == -1 else v for v in lengths]
        if dim >= 0 and sum(lengths) != dim:
            raise ValueError(f"split_lengths {lengths} do not add up to {dim}")
        return lengths

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        data = inputs[0]
        n = vector_length(inputs[2])
        lengths = ints(values[2])
        if lengths is None:
            if n is None:
                raise ValueError("VariadicSplit: the number of outputs is unknown")
            return [dynamic_like(data) if data.shape is not None else same(data, None)] * n
        if data.shape is None:
            return [same(data, None)] * len(lengths)
        axis = scalar_int(values[1])
        if axis is None:
            return [dynamic_like(data)] * len(lengths)
        axis = norm_axis(axis, len(data.shape))
        out = []
        for length in self._lengths(data.shape[axis], lengths):
            shape = list(data.shape)
            shape[axis] = length
            out.append(same(data, tuple(shape)))
        return out

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = np.asarray(inputs[0])
        axis = norm_axis(scalar_int(inputs[1]), data.ndim)  # type: ignore[arg-type]
        lengths = self._lengths(data.shape[axis], ints(inputs[2]))  # type: ignore[arg-type]
        bounds = np.cumsum(lengths)[:-1]
        return list(np.split(data, bounds, axis=axis))


# --------------------------------------------------------------------------- Transpose


@register("Transpose", "opset1")
class Transpose(Op):
    """Transpose-1: an empty ``order`` reverses the axes."""

    batching = "transpose"

    @staticmethod
    def _order(rank: int, order: list[int]) -> list[int]:
        if not order:
            return list(range(rank - 1, -1, -1))
        if len(order) != rank:
            raise ValueError(f"order {order} does not match rank {rank}")
        out = norm_axes(order, rank)
        if sorted(out) != list(range(rank)):
            raise ValueError(f"order {order} is not a permutation")
        return out

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        data = inputs[0]
        order = ints(values[1])
        if data.shape is None:
            # like OpenVINO, a known order (even an empty one) fixes the rank
            return [same(data, None if order is None else (-1,) * len(order))]
        if order is None:
            return [dynamic_like(data)]
        perm = self._order(len(data.shape), order)
        return [same(data, tuple(data.shape[p] for p in perm))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = np.asarray(inputs[0])
        return [np.transpose(data, self._order(data.ndim, ints(inputs[1])))]  # type: ignore[arg-type]


# --------------------------------------------------------------------------- Broadcast / Tile


def _explicit_check(data_shape: Sequence[int], target: Sequence[int], mapping: list[int]) -> None:
    if len(mapping) != len(data_shape):
        raise ValueError(f"axes_mapping {mapping} does not match the data rank "
                         f"{len(data_shape)}")


@register("Broadcast", "opset3")
class Broadcast(Op):
    """Broadcast-3: modes ``numpy`` (to ``target_shape``), ``bidirectional`` (numpy rules
    both ways), ``explicit`` (data axes placed by ``axes_mapping``), ``pdpd``."""

    default_mode = "numpy"

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.mode = self.attr_str("mode", self.default_mode).lower()
        if self.mode == "none":  # Broadcast-1 writes its explicit mode as AutoBroadcast "none"
            self.mode = "explicit"
        self.pdpd_axis = self.attr_int("axis", -1)

    def _out_shape(self, data: Sequence[int], target: list[int],
                   mapping: list[int] | None) -> tuple[int, ...] | None:
        if self.mode == "bidirectional":
            return broadcast_shapes(tuple(data), tuple(target))
        if self.mode == "explicit":
            if mapping is None:
                return tuple(target)
            _explicit_check(data, target, mapping)
            out = list(target)
            for d, a in zip(data, mapping):
                if out[a] < 0 and d > 1:
                    out[a] = d
            return tuple(out)
        # numpy / pdpd: the output is the target shape; a -1 target dim comes from data
        out = list(target)
        offset = len(target) - len(data)
        if self.mode == "pdpd" and self.pdpd_axis != -1:
            offset = self.pdpd_axis
        for i, d in enumerate(data):
            j = i + offset
            if 0 <= j < len(out) and out[j] < 0 and d > 1:
                out[j] = d
        return tuple(out)

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        data = inputs[0]
        target = ints(values[1])
        mapping = ints(values[2]) if len(values) > 2 else None
        if target is None:
            n = vector_length(inputs[1])
            if n is None:
                return [same(data, None)]
            if self.mode == "bidirectional":
                if data.shape is None:
                    return [same(data, None)]
                rank = max(n, len(data.shape))
                # data dims above 1 survive any target dim that broadcasts with them
                dims = [-1] * (rank - len(data.shape)) + [d if d > 1 else -1
                                                          for d in data.shape]
                return [same(data, tuple(dims))]
            return [same(data, (-1,) * n)]
        if data.shape is None:
            if self.mode == "bidirectional":
                return [same(data, None)]
            return [same(data, tuple(target))]
        return [same(data, self._out_shape(data.shape, target, mapping))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = np.asarray(inputs[0])
        target = ints(inputs[1])
        assert target is not None
        if self.mode == "bidirectional":
            shape = np.broadcast_shapes(data.shape, tuple(target))
            return [np.broadcast_to(data, shape).copy()]
        if self.mode == "explicit":
            mapping = ints(inputs[2])
            assert mapping is not None
            _explicit_check(data.shape, target, mapping)
            view = [1] * len(target)
            for d, a in zip(data.shape, mapping):
                view[a] = d
            return [np.broadcast_to(data.reshape(view), target).copy()]
        if self.mode == "pdpd" and self.pdpd_axis != -1:
            view = [1] * len(target)
            view[self.pdpd_axis:self.pdpd_axis + data.ndim] = data.shape
            data = data.reshape(view)
        return [np.broadcast_to(data, target).copy()]


@register("Broadcast", "opset1")
class Broadcast1(Broadcast):
    """Broadcast-1: modes ``numpy``, ``explicit``, ``pdpd`` (no ``bidirectional``)."""


@register("Tile", "opset1")
class Tile(Op):
    """Tile-1: repeats shorter than the rank are padded with leading 1s, and vice versa."""

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        data = inputs[0]
        repeats = ints(values[1])
        if repeats is None:
            n = vector_length(inputs[1])
            if n is None or data.shape is None:
                return [same(data, None)]
            return [same(data, (-1,) * max(n, len(data.shape)))]
        if data.shape is None:
            return [same(data, None)]
        rank = max(len(repeats), len(data.shape))
        shape = [1] * (rank - len(data.shape)) + list(data.shape)
        reps = [1] * (rank - len(repeats)) + repeats
        return [same(data, tuple(d * r if d >= 0 else (0 if r == 0 else -1)
                                 for d, r in zip(shape, reps)))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        repeats = ints(inputs[1])
        if any(r < 0 for r in repeats):  # type: ignore[union-attr]
            raise ValueError(f"negative repeats {repeats}")
        return [np.tile(np.asarray(inputs[0]), repeats)]  # type: ignore[arg-type]


# --------------------------------------------------------------------------- Pad


@register("Pad", "opset1")
class Pad(Op):
    """Pad-1: modes ``constant`` (value from input 3, default 0), ``edge``, ``reflect``,
    ``symmetric``. Negative pads crop (Pad-12 documents it; both versions evaluate it)."""

    _NUMPY_MODE = {"edge": "edge", "reflect": "reflect", "symmetric": "symmetric"}

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.pad_mode = self.attr_str("pad_mode", "constant").lower()
        if self.pad_mode not in ("constant", "edge", "reflect", "symmetric"):
            raise ValueError(f"Pad: unknown pad_mode {self.pad_mode!r}")

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        data = inputs[0]
        begin, end = ints(values[1]), ints(values[2])
        if data.shape is None:
            return [same(data, None)]
        out = []
        for i, d in enumerate(data.shape):
            if d < 0 or begin is None or end is None:
                out.append(-1)
            else:
                b = begin[i] if i < len(begin) else 0
                e = end[i] if i < len(end) else 0
                out.append(max(d + b + e, 0))
        return [same(data, tuple(out))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = np.asarray(inputs[0])
        rank = data.ndim
        begin = (ints(inputs[1]) or []) + [0] * rank
        end = (ints(inputs[2]) or []) + [0] * rank
        widths = [(max(b, 0), max(e, 0)) for b, e in zip(begin[:rank], end[:rank])]
        if any(b or e for b, e in widths):
            if self.pad_mode == "constant":
                value = inputs[3] if len(inputs) > 3 else 0
                fill = np.asarray(value).astype(data.dtype).reshape(())
                out = np.full([d + b + e for d, (b, e) in zip(data.shape, widths)], fill,
                              dtype=data.dtype)
                out[tuple(slice(b, b + d) for d, (b, _) in zip(data.shape, widths))] = data
                data = out
            else:
                data = np.pad(data, widths, mode=self._NUMPY_MODE[self.pad_mode])  # type: ignore[call-overload]
        crops = tuple(slice(-min(b, 0), d + min(e, 0))
                      for d, b, e in zip(data.shape, begin[:rank], end[:rank]))
        return [data[crops]]


@register("Pad", "opset12")
class Pad12(Pad):
    """Pad-12: Pad-1 with negative pads allowed (cropping)."""


# --------------------------------------------------------------------------- ShapeOf / Identity


@register("ShapeOf", "opset1")
class ShapeOf(Op):
    """ShapeOf-1: the input shape as i64."""

    default_type = "i64"

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.output_type = self.attr_type("output_type", self.default_type)
        self._dtype = self.output_type.dtype

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        rank = inputs[0].rank
        return [TensorInfo(self.output_type, (-1 if rank is None else rank,))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        return [np.array(np.shape(inputs[0]), dtype=self._dtype)]


@register("ShapeOf", "opset3")
class ShapeOf3(ShapeOf):
    """ShapeOf-3: ``output_type`` i64 (default) or i32."""


@register("Identity", "opset16")
class Identity(Op):
    """Identity-16: the input unchanged (a copy, so callers may not alias it)."""

    batching = "elementwise"

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        return [inputs[0]]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        return [np.array(inputs[0], copy=True)]


# --------------------------------------------------------------------------- Reverse family


@register("Reverse", "opset1")
class Reverse(Op):
    """Reverse-1: ``mode`` ``index`` (axes listed) or ``mask`` (boolean per axis)."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.mode = self.attr_str("mode", "index").lower()

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = np.asarray(inputs[0])
        if self.mode == "mask":
            axes = [i for i, m in enumerate(np.ravel(inputs[1])) if m]
        else:
            axes = norm_axes(np.ravel(inputs[1]), data.ndim)
        return [np.flip(data, axis=tuple(axes)).copy() if axes else data.copy()]

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        return [inputs[0]]


@register("ReverseSequence", "opset1")
class ReverseSequence(Op):
    """ReverseSequence-1: reverses the first ``seq_lengths[b]`` items of each batch entry."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.batch_axis = self.attr_int("batch_axis", 0)
        self.seq_axis = self.attr_int("seq_axis", 1)

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        return [inputs[0]]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = np.asarray(inputs[0])
        b_ax = norm_axis(self.batch_axis, data.ndim, "batch_axis")
        s_ax = norm_axis(self.seq_axis, data.ndim, "seq_axis")
        lengths = np.ravel(inputs[1]).astype(np.int64)
        moved = np.moveaxis(data, (b_ax, s_ax), (0, 1))
        out = moved.copy()
        for b, n in enumerate(lengths):
            n = int(n)  # type: ignore[assignment]
            if n < 0 or n > moved.shape[1]:
                raise ValueError(f"sequence length {n} is outside [0, {moved.shape[1]}]")
            if n:
                out[b, :n] = moved[b, n - 1::-1]
        return [np.moveaxis(out, (0, 1), (b_ax, s_ax))]


# --------------------------------------------------------------------------- depth/space/batch


def _blocks(block_size: int, k: int) -> list[int]:
    return [block_size] * k


class _BlockRearrange(Op):
    """Moves ``block_size``-sized blocks between the channel and the spatial dims:
    ``to_space`` says which way (channels shrink by ``block_size ** k`` then)."""

    to_space: bool

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.mode = self.attr_str("mode", "blocks_first").lower()
        self.block_size = self.attr_int("block_size", 1)

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        x = inputs[0]
        if x.shape is None:
            return [same(x, None)]
        n, c, *spatial = x.shape
        bs, factor = self.block_size, self.block_size ** len(spatial)
        if self.to_space:
            c_out = c // factor if c >= 0 else -1
            dims = (d * bs if d >= 0 else -1 for d in spatial)
        else:
            c_out = c * factor if c >= 0 else -1
            dims = (d // bs if d >= 0 else -1 for d in spatial)
        return [same(x, (n, c_out, *dims))]


@register("DepthToSpace", "opset1")
class DepthToSpace(_BlockRearrange):
    """DepthToSpace-1: ``blocks_first`` or ``depth_first`` channel layout."""

    to_space = True

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        n, c, *spatial = x.shape
        k = len(spatial)
        bs = self.block_size
        depth = c // bs**k
        if depth * bs**k != c:
            raise ValueError(f"channels {c} are not divisible by block_size^{k}")
        if self.mode == "blocks_first":
            x = x.reshape([n, *_blocks(bs, k), depth, *spatial])
            order = [0, k + 1]
            for i in range(k):
                order += [k + 2 + i, 1 + i]
        else:
            x = x.reshape([n, depth, *_blocks(bs, k), *spatial])
            order = [0, 1]
            for i in range(k):
                order += [k + 2 + i, 2 + i]
        x = x.transpose(order)
        return [x.reshape([n, depth, *(d * bs for d in spatial)])]


@register("SpaceToDepth", "opset1")
class SpaceToDepth(_BlockRearrange):
    """SpaceToDepth-1: the inverse of DepthToSpace."""

    to_space = False

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        n, c, *spatial = x.shape
        k = len(spatial)
        bs = self.block_size
        if any(d % bs for d in spatial):
            raise ValueError(f"spatial dims {spatial} are not divisible by {bs}")
        split = [n, c]
        for d in spatial:
            split += [d // bs, bs]
        x = x.reshape(split)
        blocks = [3 + 2 * i for i in range(k)]
        dims = [2 + 2 * i for i in range(k)]
        order = [0, *blocks, 1, *dims] if self.mode == "blocks_first" else [0, 1, *blocks, *dims]
        x = x.transpose(order)
        return [x.reshape([n, c * bs**k, *(d // bs for d in spatial)])]


@register("BatchToSpace", "opset2")
class BatchToSpace(Op):
    """BatchToSpace-2: inputs data, block_shape, crops_begin, crops_end."""

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        block = ints(inputs[1])
        cb, ce = ints(inputs[2]), ints(inputs[3])
        assert block is not None and cb is not None and ce is not None
        rank = x.ndim
        prod = int(np.prod(block))
        batch = x.shape[0] // prod
        # [b1..bk, batch, d1..dk] -> interleave [batch, d1, b1, d2, b2, ...]
        x = x.reshape([*block[1:], batch, *x.shape[1:]])
        k = rank - 1
        order = [k]
        for i in range(1, rank):
            order += [k + i, i - 1]
        x = x.transpose(order)
        x = x.reshape([batch, *(x.shape[1 + 2 * (i - 1)] * block[i] for i in range(1, rank))])
        crops = tuple(slice(b, x.shape[i] - e) for i, (b, e) in enumerate(zip(cb, ce)))
        return [x[crops].copy()]


@register("SpaceToBatch", "opset2")
class SpaceToBatch(Op):
    """SpaceToBatch-2: inputs data, block_shape, pads_begin, pads_end (zero padding)."""

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        block = ints(inputs[1])
        pb, pe = ints(inputs[2]), ints(inputs[3])
        assert block is not None and pb is not None and pe is not None
        x = np.pad(x, list(zip(pb, pe)))
        rank = x.ndim
        split = [x.shape[0]]
        for i in range(1, rank):
            split += [x.shape[i] // block[i], block[i]]
        x = x.reshape(split)
        # -> [b1..bk, batch, d1..dk]
        order = [2 * i for i in range(1, rank)] + [0] + [2 * i - 1 for i in range(1, rank)]
        x = x.transpose(order)
        prod = int(np.prod(block))
        return [x.reshape([x.shape[rank - 1] * prod,
                           *(x.shape[rank - 1 + i] for i in range(1, rank))])]


@register("ShuffleChannels", "opset1")
class ShuffleChannels(Op):
    """ShuffleChannels-1: splits ``axis`` into ``group`` x rest and swaps the two."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.axis = self.attr_int("axis", 1)
        self.group = self.attr_int("group", 1)

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        return [inputs[0]]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        axis = norm_axis(self.axis, x.ndim)
        shape = x.shape
        x = x.reshape([*shape[:axis], self.group, shape[axis] // self.group, *shape[axis + 1:]])
        return [np.swapaxes(x, axis, axis + 1).reshape(shape)]


@register("Roll", "opset7")
class Roll(Op):
    """Roll-7: inputs data, shift, axes (a scalar shift applies to every axis)."""

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        return [inputs[0]]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        shift = ints(inputs[1]) or []
        axes = norm_axes(np.ravel(inputs[2]), x.ndim)
        if len(shift) == 1 and len(axes) > 1:
            shift = shift * len(axes)
        return [np.roll(x, shift, axis=axes)]
