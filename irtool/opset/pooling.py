"""Pooling: MaxPool (1, 8, 14), AvgPool (1, 14, 16), AdaptiveAvgPool-8, AdaptiveMaxPool-8.

Windows that reach into padding (or, with ceil rounding, past it) ignore those
positions for max; for average they count towards the divisor only when
``exclude-pad`` is false and the layer has padding, as in OpenVINO's reference.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._nn import auto_pads, float_dtype_for, ints, norm_axis, same, window_view
from .base import Attrs, Op, TensorInfo, register

Values = Sequence[np.ndarray | None]


def pool_out_dim(d: int, k: int, s: int, dl: int, pb: int, pe: int, rounding: str) -> int:
    """Output size of one pooled axis for ``rounding`` floor/ceil/ceil_torch (-1: unknown)."""
    if d < 0:
        return -1
    eff = (k - 1) * dl + 1
    span = d + pb + pe - eff
    if rounding == "floor":
        return span // s + 1
    out = -(-span // s) + 1
    if rounding == "ceil_torch" and (out - 1) * s >= d + pb:
        out -= 1
    return out


class _Pool(Op):
    """Attributes of MaxPool/AvgPool and the window arithmetic both share."""

    has_dilations = False
    roundings = ("floor", "ceil")

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.kernel = self.attr_ints("kernel", [])
        self.strides = self.attr_ints("strides", [])
        self.pads_begin = self.attr_ints("pads_begin", [])
        self.pads_end = self.attr_ints("pads_end", [])
        self.dilations = self.attr_ints("dilations", []) if self.has_dilations else []
        self.auto_pad = self.attr_str("auto_pad", "explicit").lower()
        self.rounding = self.attr_str("rounding_type", "floor").lower()
        if self.rounding not in self.roundings:
            raise ValueError(f"{self.type}: rounding_type {self.rounding!r} is not supported "
                             f"by {self.type}-{self.version}")

    def _geometry(self, spatial: Sequence[int]
                  ) -> tuple[list[int], list[int], list[int], list[int], list[int]]:
        """strides, dilations, pads_begin, pads_end, output dims."""
        rank = len(spatial)
        strides = self.strides or [1] * rank
        dil = self.dilations or [1] * rank
        pb, pe = auto_pads(self.auto_pad, spatial, self.kernel, strides, dil,
                           self.pads_begin, self.pads_end)
        rounding = self.rounding
        if self.auto_pad in ("same_upper", "same_lower", "valid"):
            rounding = "floor" if self.auto_pad == "valid" else "ceil"
            if self.auto_pad != "valid":
                out = [-(-d // s) if d >= 0 else -1 for d, s in zip(spatial, strides)]
                return strides, dil, pb, pe, out
        out = [pool_out_dim(d, k, s, dl, b, e, rounding)
               for d, k, s, dl, b, e in zip(spatial, self.kernel, strides, dil, pb, pe)]
        return strides, dil, pb, pe, out

    def _windows(self, x: np.ndarray, fill: object
                 ) -> tuple[np.ndarray, np.ndarray, list[int], list[int]]:
        """The window view ``[N, C, *out, *k]`` of ``x`` padded with ``fill``, a matching
        in-bounds mask view ``[*out, *k]``, and the pads_begin and output dims."""
        strides, dil, pb, _, out = self._geometry(x.shape[2:])
        need = [(o - 1) * s + (k - 1) * dl + 1 if o > 0 else 0
                for o, s, k, dl in zip(out, strides, self.kernel, dil)]
        lo = [max(b, 0) for b in pb]
        hi = [max(n - d - b, 0) for n, d, b in zip(need, x.shape[2:], lo)]
        padded = np.pad(x, [(0, 0), (0, 0), *zip(lo, hi)], constant_values=fill)  # type: ignore[call-overload]
        inside = np.pad(np.ones(x.shape[2:], dtype=bool), list(zip(lo, hi)))
        outp = [max(o, 0) for o in out]
        view = window_view(padded, self.kernel, strides, dil, outp)
        mask = window_view(inside[None, None], self.kernel, strides, dil, outp)[0, 0]
        return view, mask, lo, outp

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        x = inputs[0]
        if x.shape is None:
            return [same(x, None)] * self.num_outputs(x)
        *_, out = self._geometry(x.shape[2:])
        return self._infos(x, (*x.shape[:2], *out))

    def num_outputs(self, x: TensorInfo) -> int:
        return 1

    def _infos(self, x: TensorInfo, shape: tuple[int, ...]) -> list[TensorInfo]:
        return [same(x, shape)]


def _lowest(dtype: np.dtype) -> object:
    if dtype.kind == "f":
        return -np.inf
    if dtype.kind == "b":
        return False
    return np.iinfo(dtype).min


@register("MaxPool", "opset1")
class MaxPool(_Pool):
    """MaxPool-1: one output, no dilations."""

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        return [self._max_values(np.asarray(inputs[0]))]

    def _padded(self, x: np.ndarray) -> tuple[np.ndarray, list[int], list[int], list[int]]:
        """``x`` padded with the lowest value so every window fits (``x`` itself when no
        window reaches outside it), and strides, dilations, output dims."""
        strides, dil, pb, _, out = self._geometry(x.shape[2:])
        out = [max(o, 0) for o in out]
        need = [(o - 1) * s + (k - 1) * dl + 1 if o > 0 else 0
                for o, s, k, dl in zip(out, strides, self.kernel, dil)]
        lo = [max(b, 0) for b in pb]
        hi = [max(n - d - b, 0) for n, d, b in zip(need, x.shape[2:], lo)]
        if any(lo) or any(hi):
            x = np.pad(x, [(0, 0), (0, 0), *zip(lo, hi)],  # type: ignore[call-overload]
                       constant_values=_lowest(x.dtype))
        return x, strides, dil, out

    def _max_values(self, x: np.ndarray) -> np.ndarray:
        """The maxima, one spatial axis at a time: along each axis, the strided slices of
        the kernel offsets folded in with ``np.maximum`` (no window copy; NaN wins, as with
        argmax). Reducing the outer axes first keeps their passes on contiguous rows, and
        each later axis works on data already shrunk by the earlier ones."""
        padded, strides, dil, out = self._padded(x)
        result = padded
        fresh = False  # is ``result`` an array of our own (not a view of the input)?
        for d, (k, dl, o, s) in enumerate(zip(self.kernel, dil, out, strides)):
            lead = (slice(None),) * (2 + d)
            parts = [result[(*lead, slice(j * dl, j * dl + (o - 1) * s + 1, s) if o > 0
                             else slice(0, 0))] for j in range(k)]
            if len(parts) == 1:
                result = parts[0]
                continue
            result = np.maximum(parts[0], parts[1])
            fresh = True
            for part in parts[2:]:
                np.maximum(result, part, out=result)
        return result if fresh else result.copy()

    def _max(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[int], list[int]]:
        """Values and the flat in-window index of each maximum (for the indices output)."""
        view, _, lo, out = self._windows(x, _lowest(x.dtype))
        rank = x.ndim - 2
        flat = view.reshape((*view.shape[:2 + rank], -1))
        arg = np.argmax(flat, axis=-1)
        values = np.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
        return values.astype(x.dtype, copy=False), arg, lo, out


@register("MaxPool", "opset8")
class MaxPool8(MaxPool):
    """MaxPool-8: dilations and a second output with the flat input index of each maximum,
    counted from ``axis``."""

    has_dilations = True

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.index_type = self.attr_type("index_element_type", "i64")
        self.axis = self.attr_int("axis", 0)

    def num_outputs(self, x: TensorInfo) -> int:
        return 2

    def _infos(self, x: TensorInfo, shape: tuple[int, ...]) -> list[TensorInfo]:
        return [same(x, shape), TensorInfo(self.index_type, shape)]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        if 1 in self.unused_outputs:  # nothing reads the indices: do not compute them
            values = self._max_values(x)
            return [values, np.empty(values.shape, dtype=self.index_type.dtype)]
        values, arg, lo, out = self._max(x)
        rank = x.ndim - 2
        strides, dil, *_ = self._geometry(x.shape[2:])
        k_coords = np.unravel_index(arg, self.kernel)
        spatial = x.shape[2:]
        flat = np.zeros(arg.shape, dtype=np.int64)
        for i in range(rank):
            o = np.arange(out[i]).reshape((-1,) + (1,) * (rank - 1 - i))
            pos = o * strides[i] + k_coords[i] * dil[i] - lo[i]
            pos = np.clip(pos, 0, spatial[i] - 1)
            flat = flat * spatial[i] + pos
        n, c = x.shape[:2]
        size = int(np.prod(spatial, dtype=np.int64))
        axis = norm_axis(self.axis, x.ndim)
        if axis == 0:
            flat = flat + (np.arange(n)[:, None] * c + np.arange(c)[None, :]).reshape(
                (n, c) + (1,) * rank) * size
        elif axis == 1:
            flat = flat + np.arange(c).reshape((1, c) + (1,) * rank) * size
        return [values, flat.astype(self.index_type.dtype)]


@register("MaxPool", "opset14")
class MaxPool14(MaxPool8):
    """MaxPool-14: adds ``rounding_type="ceil_torch"``."""

    roundings = ("floor", "ceil", "ceil_torch")  # type: ignore[assignment]


@register("AvgPool", "opset1")
class AvgPool(_Pool):
    """AvgPool-1 (attribute ``exclude-pad``)."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.exclude_pad = self.attr_bool("exclude-pad", False)

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        acc = float_dtype_for(x.dtype) if x.dtype.kind == "f" else np.dtype(np.float64)
        view, mask, _, out = self._windows(x.astype(acc, copy=False), 0)
        rank = x.ndim - 2
        k_axes = tuple(range(2 + rank, 2 + 2 * rank))
        total = view.sum(axis=k_axes)
        _, _, pb, pe, _ = self._geometry(x.shape[2:])
        padded = any(pb) or any(pe)
        if self.exclude_pad or not padded:
            count = mask.sum(axis=tuple(range(rank, 2 * rank)))
        else:
            count = np.full(out, int(np.prod(self.kernel)))
        with np.errstate(invalid="ignore", divide="ignore"):
            y = np.where(count > 0, total / np.maximum(count, 1), 0)
        if x.dtype.kind in "iu":
            y = np.rint(y) if x.dtype.itemsize == 1 else np.trunc(y)
        return [y.astype(x.dtype)]


@register("AvgPool", "opset14")
class AvgPool14(AvgPool):
    """AvgPool-14: adds ``rounding_type="ceil_torch"``."""

    roundings = ("floor", "ceil", "ceil_torch")  # type: ignore[assignment]


@register("AvgPool", "opset16")
class AvgPool16(AvgPool14):
    """AvgPool-16: adds ``dilations``."""

    has_dilations = True


# --------------------------------------------------------------------------- adaptive


def _bins(size: int, out: int) -> list[tuple[int, int]]:
    return [((i * size) // out, -(-((i + 1) * size) // out)) for i in range(out)]


class _Adaptive(Op):
    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        x = inputs[0]
        target = ints(values[1])
        if x.shape is None:
            return self._infos(x, None)
        lead = len(x.shape) - (len(target) if target is not None else len(x.shape) - 2)
        dims = tuple(target) if target is not None else (-1,) * (len(x.shape) - 2)
        return self._infos(x, (*x.shape[:lead], *dims))

    def _infos(self, x: TensorInfo, shape: tuple[int, ...] | None) -> list[TensorInfo]:
        return [same(x, shape)]

    @staticmethod
    def _regions(spatial: Sequence[int], target: Sequence[int]):
        per_axis = [_bins(d, o) for d, o in zip(spatial, target)]
        for idx in np.ndindex(*target):
            yield idx, tuple(slice(*per_axis[a][i]) for a, i in enumerate(idx))


@register("AdaptiveAvgPool", "opset8")
class AdaptiveAvgPool(_Adaptive):
    """AdaptiveAvgPool-8: bin ``i`` spans ``[floor(i*D/O), ceil((i+1)*D/O))``."""

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        target = ints(inputs[1])
        assert target is not None
        lead = x.ndim - len(target)
        out = np.empty((*x.shape[:lead], *target), dtype=x.dtype)
        acc = float_dtype_for(x.dtype)
        axes = tuple(range(lead, x.ndim))
        for idx, region in self._regions(x.shape[lead:], target):
            out[(..., *idx)] = x[(..., *region)].astype(acc).mean(axis=axes)
        return [out]


@register("AdaptiveMaxPool", "opset8")
class AdaptiveMaxPool(_Adaptive):
    """AdaptiveMaxPool-8: values and the flat spatial index of each maximum."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.index_type = self.attr_type("index_element_type", "i64")

    def _infos(self, x: TensorInfo, shape: tuple[int, ...] | None) -> list[TensorInfo]:
        return [same(x, shape), TensorInfo(self.index_type, shape)]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        target = ints(inputs[1])
        assert target is not None
        lead = x.ndim - len(target)
        spatial = x.shape[lead:]
        out = np.empty((*x.shape[:lead], *target), dtype=x.dtype)
        index = np.empty(out.shape, dtype=self.index_type.dtype)
        for idx, region in self._regions(spatial, target):
            block = x[(..., *region)]
            flat = block.reshape((*x.shape[:lead], -1))
            arg = np.argmax(flat, axis=-1)
            out[(..., *idx)] = np.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
            local = np.unravel_index(arg, block.shape[lead:])
            pos = np.zeros(arg.shape, dtype=np.int64)
            for a, sl in enumerate(region):
                pos = pos * spatial[a] + local[a] + sl.start
            index[(..., *idx)] = pos
        return [out, index]
