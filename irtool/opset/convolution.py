"""Convolutions: Convolution, GroupConvolution, ConvolutionBackpropData,
GroupConvolutionBackpropData, DeformableConvolution (1 and 8).

Layouts are OpenVINO's: data ``[N, C, *spatial]``; filters ``[O, C, *k]``
(grouped: ``[G, O/G, C/G, *k]``); backprop filters ``[C_in, C_out, *k]`` (grouped:
``[G, C_in/G, C_out/G, *k]``). Kernels accumulate in at least float32 (float64 for
f64) and return the input dtype.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence

import numpy as np

from ._nn import auto_pads, float_dtype_for, ints, same, window_view
from .base import Attrs, Op, TensorInfo, register

Values = Sequence[np.ndarray | None]


def _acc_dtype(dtype: np.dtype) -> np.dtype:
    if dtype.kind in "iub":
        return np.dtype(np.int64)
    return float_dtype_for(dtype)


class _ConvAttrs(Op):
    """Attributes shared by every convolution: strides, dilations, pads, auto_pad."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.strides = self.attr_ints("strides", [])
        self.dilations = self.attr_ints("dilations", [])
        self.pads_begin = self.attr_ints("pads_begin", [])
        self.pads_end = self.attr_ints("pads_end", [])
        self.auto_pad = self.attr_str("auto_pad", "explicit").lower()

    def _geometry(self, spatial: Sequence[int], kernel: Sequence[int]
                  ) -> tuple[list[int], list[int], list[int], list[int]]:
        rank = len(spatial)
        strides = self.strides or [1] * rank
        dilations = self.dilations or [1] * rank
        begin, end = auto_pads(self.auto_pad, spatial, kernel, strides, dilations,
                               self.pads_begin, self.pads_end)
        return strides, dilations, begin, end


def conv_out_dim(d: int, k: int, s: int, dl: int, pb: int, pe: int) -> int:
    """Output size of one convolution axis (-1 when the input size is unknown)."""
    if d < 0 or k < 0:
        return -1
    return (d + pb + pe - ((k - 1) * dl + 1)) // s + 1


def convolve(x: np.ndarray, w: np.ndarray, strides: Sequence[int], dilations: Sequence[int],
             begin: Sequence[int], end: Sequence[int], groups: int = 1) -> np.ndarray:
    """N-d cross-correlation of ``x [N, C, *s]`` with ``w [O, C/groups, *k]``."""
    acc = _acc_dtype(np.result_type(x.dtype, w.dtype))
    x = x.astype(acc, copy=False)
    w = w.astype(acc, copy=False)
    rank = x.ndim - 2
    kernel = w.shape[2:]
    if all(st == 1 for st in strides) and min(begin, default=0) >= 0 \
            and min(end, default=0) >= 0 and math.prod(kernel) > 1:
        return _convolve_unit_stride(x, w, dilations, begin, end, groups)
    pad = [(0, 0), (0, 0)]
    crop = [slice(None), slice(None)]
    for b, e in zip(begin, end):
        pad.append((max(b, 0), max(e, 0)))
    if any(p != (0, 0) for p in pad):
        # A zeroed scratch buffer with x copied in (np.pad makes several passes).
        padded = scratch("padded", [d + b + e for d, (b, e) in zip(x.shape, pad)], x.dtype)
        padded.fill(0)
        padded[tuple(slice(b, b + d) for d, (b, _) in zip(x.shape, pad))] = x
        x = padded
    if any(b < 0 or e < 0 for b, e in zip(begin, end)):
        for i, (b, e) in enumerate(zip(begin, end)):
            d = x.shape[2 + i]
            crop.append(slice(-min(b, 0), d + min(e, 0)))
        x = x[tuple(crop)]
    out = [conv_out_dim(d, k, s, dl, 0, 0)
           for d, k, s, dl in zip(x.shape[2:], kernel, strides, dilations)]
    n, c = x.shape[:2]
    o = w.shape[0]
    if any(v <= 0 for v in out):
        return np.zeros((n, o, *(max(v, 0) for v in out)), dtype=acc)
    win = window_view(x, kernel, strides, dilations, out)  # [N, C, *out, *k]
    cg = c // groups
    # im2col + GEMM: columns [N, C/G * K, P] (one copy of the windows), then one matmul
    # per group whose result already has the [N, O, P] layout.
    k_size = math.prod(kernel)
    p_size = math.prod(out)
    order = (0, 1, *range(2 + rank, 2 + 2 * rank), *range(2, 2 + rank))
    # A 1x1 kernel at stride 1 reads x as it is: its columns are a view, no copy.
    pointwise = k_size == 1 and all(st == 1 for st in strides)
    y = np.empty((n, o, p_size), dtype=acc)
    windows = win.transpose(order)
    if pointwise:
        _grouped_matmul(w, windows.reshape(n, groups, cg * k_size, p_size), y, groups)
        return y.reshape(n, o, *out)
    _columns_times(w, lambda start, count: windows[start:start + count], y, groups)
    return y.reshape(n, o, *out)


def _convolve_unit_stride(x: np.ndarray, w: np.ndarray, dilations: Sequence[int],
                          begin: Sequence[int], end: Sequence[int], groups: int) -> np.ndarray:
    """``convolve`` at stride 1, with pads of 0 or more: im2col over the flattened padded
    input. Output position ``p`` (on the padded grid) of kernel offset ``k`` reads the
    padded input at flat index ``p + offset(k)``, so each row of the columns is one
    contiguous run of the padded input (the window view's rows are runs of one output
    row only). The output is computed on the padded grid's width and cropped (a view):
    the positions dropped are the only ones whose reads run past a row's end."""
    n, c = x.shape[:2]
    o = w.shape[0]
    kernel = w.shape[2:]
    padded = [d + b + e for d, b, e in zip(x.shape[2:], begin, end)]
    out = [p - (k - 1) * dl for p, k, dl in zip(padded, kernel, dilations)]
    if any(v <= 0 for v in out):
        return np.zeros((n, o, *(max(v, 0) for v in out)), dtype=x.dtype)
    # elements between neighbours along each spatial axis of the padded input
    step = [math.prod(padded[i + 1:]) for i in range(len(padded))]
    per_channel = step[0] * padded[0]
    length = out[0] * step[0]  # output positions on the padded grid
    reach = sum((k - 1) * dl * st for k, dl, st in zip(kernel, dilations, step))
    slack = max(reach + length - per_channel, 0)  # the last channel's reads past its end
    flat = scratch("padded", [n * c * per_channel + slack], x.dtype)
    flat.fill(0)
    image = flat[:n * c * per_channel].reshape(n, c, *padded)
    image[(slice(None), slice(None), *(slice(b, b + d) for b, d in zip(begin, x.shape[2:])))] \
        = x
    item = flat.itemsize
    y = np.empty((n, o, length), dtype=x.dtype)

    def runs(start: int, count: int) -> np.ndarray:  # images start.. as [count, C, *k, P]
        return np.lib.stride_tricks.as_strided(
            flat[start * c * per_channel:], (count, c, *kernel, length),
            (c * per_channel * item, per_channel * item,
             *(dl * st * item for dl, st in zip(dilations, step)), item), writeable=False)

    _columns_times(w, runs, y, groups)
    wide = y.reshape(n, o, out[0], *padded[1:])
    return wide[(slice(None), slice(None), slice(None), *(slice(0, v) for v in out[1:]))]


def _columns_times(w: np.ndarray, windows: Callable[[int, int], np.ndarray], y: np.ndarray,
                   groups: int) -> None:
    """``y [N, O, P]`` = the filters times the im2col columns of each image, which
    ``windows(start, count)`` gives for images ``start..start+count`` as a view
    ``[count, C, *k, P]``. The columns are copied a few images at a time, as many as fit in
    COLUMNS_BYTES, so that the matmul reads them again while they are in the core's cache
    (each image's product is the same matmul whatever the chunks)."""
    n, p = y.shape[0], y.shape[2]
    shape = windows(0, 1).shape[1:]
    per_image = math.prod(shape) * y.itemsize
    batch = max(1, min(n, COLUMNS_BYTES // per_image)) if COLUMNS_BYTES else n
    cols = scratch("columns", (batch, *shape), y.dtype)
    for start in range(0, n, batch):
        count = min(batch, n - start)
        part = cols[:count]
        np.copyto(part, windows(start, count))
        _grouped_matmul(w, part.reshape(count, groups, -1, p), y[start:start + count], groups)


def _grouped_matmul(w: np.ndarray, cols: np.ndarray, y: np.ndarray, groups: int) -> None:
    """``y [N, O, P]`` = each group's filters ``[O/G, C/G * K]`` times its columns
    (``cols [N, G, C/G * K, P]``), as one numpy matmul over the ``(N, G)`` stack: the same
    product per group as a loop over the groups would make, without the loop (a
    depthwise layer of a MobileNet has hundreds of groups of one row each)."""
    n, o, p = y.shape
    og = o // groups
    np.matmul(w.reshape(groups, og, cols.shape[2]), cols, out=y.reshape(n, groups, og, p))


COLUMNS_BYTES = 1 << 20
"""Bytes of im2col columns ``convolve`` makes at a time (0: all at once)."""

_SCRATCH = threading.local()
SCRATCH_LIMIT = 64 << 20
"""Bytes up to which a temporary of ``convolve`` reuses its thread's scratch buffer."""


def scratch(name: str, shape: Sequence[int], dtype: np.dtype) -> np.ndarray:
    """An uninitialised array for a temporary that never leaves ``convolve`` (the padded
    input, the columns): a view of this thread's buffer ``name``, kept between calls and
    grown as needed. A new multi-MB array each call costs about as much in page faults
    as the copy into it (the allocator hands large blocks back to the system)."""
    dtype = np.dtype(dtype)
    size = math.prod(shape)
    nbytes = size * dtype.itemsize
    if nbytes > SCRATCH_LIMIT:
        return np.empty(shape, dtype)
    buf = getattr(_SCRATCH, name, None)
    if buf is None or buf.nbytes < nbytes:
        buf = np.empty(nbytes, np.uint8)
        setattr(_SCRATCH, name, buf)
    return buf[:nbytes].view(dtype).reshape(shape)


def _cast_back(y: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return np.asarray(y).astype(dtype, copy=False)


@register("Convolution", "opset1")
class Convolution(_ConvAttrs):
    """Convolution-1."""

    groups_in_filter = False
    fresh_outputs = True  # convolve() makes its result

    def _split_filter(self, w: np.ndarray) -> tuple[np.ndarray, int]:
        if not self.groups_in_filter:
            return w, 1
        g = w.shape[0]
        return w.reshape((g * w.shape[1], *w.shape[2:])), g

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        x, w = inputs[0], inputs[1]
        if x.shape is None:
            if w.shape is None:
                return [same(x, None)]
            rank = len(w.shape) - (1 if self.groups_in_filter else 0)
            return [same(x, (-1,) * rank)]
        spatial = x.shape[2:]
        if w.shape is None:
            return [same(x, (x.shape[0], -1, *(-1 for _ in spatial)))]
        if self.groups_in_filter:
            g = w.shape[0]
            o = -1 if g < 0 or w.shape[1] < 0 else g * w.shape[1]
            kernel = w.shape[3:]
        else:
            o = w.shape[0]
            kernel = w.shape[2:]
        strides, dil, pb, pe = self._geometry(spatial, kernel)
        out = [conv_out_dim(d, k, s, dl, b, e)
               for d, k, s, dl, b, e in zip(spatial, kernel, strides, dil, pb, pe)]
        return [same(x, (x.shape[0], o, *out))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x, w = np.asarray(inputs[0]), np.asarray(inputs[1])
        wf, groups = self._split_filter(w)
        strides, dil, pb, pe = self._geometry(x.shape[2:], wf.shape[2:])
        y = convolve(x, wf, strides, dil, pb, pe, groups)
        return [_cast_back(y, x.dtype)]


@register("GroupConvolution", "opset1")
class GroupConvolution(Convolution):
    """GroupConvolution-1: filters ``[G, O/G, C/G, *k]``."""

    groups_in_filter = True


# --------------------------------------------------------------------------- transposed


class _BackpropBase(_ConvAttrs):
    """ConvolutionBackpropData-1 (``grouped`` False) and GroupConvolutionBackpropData-1."""

    grouped = False

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.output_padding = self.attr_ints("output_padding", [])

    def _filter_dims(self, w_shape: Sequence[int]) -> tuple[int, int, list[int]]:
        """(groups, output channels, kernel) from the filter shape."""
        if self.grouped:
            g = w_shape[0]
            c_out = -1 if g < 0 or w_shape[2] < 0 else g * w_shape[2]
            return g, c_out, list(w_shape[3:])
        return 1, w_shape[1], list(w_shape[2:])

    def _pads(self, spatial: Sequence[int], kernel: Sequence[int],
              out_shape: list[int] | None) -> tuple[list[int], list[int], list[int], list[int],
                                                  list[int], list[int]]:
        """strides, dilations, output_padding, pads_begin, pads_end, output spatial dims."""
        rank = len(spatial)
        strides = self.strides or [1] * rank
        dil = self.dilations or [1] * rank
        opad = self.output_padding or [0] * rank
        mode = self.auto_pad
        full = [(d - 1) * s + (k - 1) * dl + 1 + op if d >= 0 and k >= 0 else -1
                for d, s, k, dl, op in zip(spatial, strides, kernel, dil, opad)]
        if out_shape is not None:
            begin, end = [], []
            for f, o in zip(full, out_shape):
                total = f - o if f >= 0 else 0
                if mode == "same_upper":
                    begin.append(total // 2)
                    end.append(total - total // 2)
                elif mode == "same_lower":
                    begin.append(total - total // 2)
                    end.append(total // 2)
                elif mode == "valid":
                    begin.append(0)
                    end.append(max(total, 0))
                else:  # explicit pads are ignored in favour of the output shape
                    begin.append(total // 2 if total > 0 else 0)
                    end.append(total - begin[-1])
            return strides, dil, opad, begin, end, list(out_shape)
        if mode == "valid":
            begin, end = [0] * rank, [0] * rank
        else:  # same_* needs output_shape to mean anything; OpenVINO uses the pads then
            begin = self.pads_begin or [0] * rank
            end = self.pads_end or [0] * rank
        out = [f - b - e if f >= 0 else -1 for f, b, e in zip(full, begin, end)]
        return strides, dil, opad, begin, end, out

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        x, w = inputs[0], inputs[1]
        if x.shape is None or w.shape is None:
            return [same(x, None)]
        _, c_out, kernel = self._filter_dims(w.shape)
        out_shape = None
        if len(inputs) > 2:
            out_shape = ints(values[2])
            if out_shape is None:
                return [same(x, (x.shape[0], c_out, *(-1 for _ in x.shape[2:])))]
        *_, out = self._pads(x.shape[2:], kernel, out_shape)
        return [same(x, (x.shape[0], c_out, *out))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x, w = np.asarray(inputs[0]), np.asarray(inputs[1])
        groups, c_out, kernel = self._filter_dims(w.shape)
        out_shape = ints(inputs[2]) if len(inputs) > 2 else None
        strides, dil, opad, begin, _, out = self._pads(x.shape[2:], kernel, out_shape)
        acc = _acc_dtype(np.result_type(x.dtype, w.dtype))
        xa = x.astype(acc, copy=False)
        wa = w.astype(acc, copy=False)
        if not self.grouped:
            wa = wa.reshape((1, *wa.shape))
        n = x.shape[0]
        rank = x.ndim - 2
        full = [(d - 1) * s + (k - 1) * dl + 1 + op
                for d, s, k, dl, op in zip(x.shape[2:], strides, kernel, dil, opad)]
        # the buffer also covers negative pads (which extend the output)
        lo = [max(-b, 0) for b in begin]
        hi = [max(b + o - f, 0) for b, o, f in zip(begin, out, full)]
        buf = np.zeros((n, c_out, *(f + a + c for f, a, c in zip(full, lo, hi))), dtype=acc)
        cg_in = x.shape[1] // groups
        cg_out = c_out // groups
        letters = "defghijk"[:rank]
        for g in range(groups):
            xg = xa[:, g * cg_in:(g + 1) * cg_in]
            wg = wa[g]  # [C_in/G, C_out/G, *k]
            for kidx in np.ndindex(*kernel):
                contrib = np.einsum(f"nc{letters},co->no{letters}", xg, wg[(..., *kidx)])
                region = tuple(slice(a + k * dl, a + k * dl + (d - 1) * s + 1, s)
                               for a, k, dl, d, s in zip(lo, kidx, dil, x.shape[2:], strides))
                buf[(slice(None), slice(g * cg_out, (g + 1) * cg_out), *region)] += contrib
        crop = tuple(slice(a + b, a + b + o) for a, b, o in zip(lo, begin, out))
        y = buf[(slice(None), slice(None), *crop)]
        return [_cast_back(y, x.dtype)]


@register("ConvolutionBackpropData", "opset1")
class ConvolutionBackpropData(_BackpropBase):
    """ConvolutionBackpropData-1 (transposed convolution); optional ``output_shape`` input."""


@register("GroupConvolutionBackpropData", "opset1")
class GroupConvolutionBackpropData(_BackpropBase):
    """GroupConvolutionBackpropData-1: filters ``[G, C_in/G, C_out/G, *k]``."""

    grouped = True


# --------------------------------------------------------------------------- deformable


def _bilinear(plane: np.ndarray, y: np.ndarray, x: np.ndarray, pad: bool) -> np.ndarray:
    """Bilinear samples of ``plane [C, H, W]`` at float coords ``y, x`` (same shape), as
    OpenVINO's DeformableConvolution does it.

    With ``pad`` (``bilinear_interpolation_pad``) points in (-1, size) are sampled and
    neighbours outside the plane count as 0; without it only points in [0, size) are
    sampled and neighbours are clamped to the plane.
    """
    h, w = plane.shape[-2:]
    if pad:
        inside = (y > -1) & (y < h) & (x > -1) & (x < w)
        y0 = np.floor(y).astype(np.int64)
        x0 = np.floor(x).astype(np.int64)
        y1, x1 = y0 + 1, x0 + 1
    else:
        inside = (y >= 0) & (y < h) & (x >= 0) & (x < w)
        y0 = np.maximum(np.floor(y), 0).astype(np.int64)
        x0 = np.maximum(np.floor(x), 0).astype(np.int64)
        y1 = np.minimum(np.ceil(y), h - 1).astype(np.int64)
        x1 = np.minimum(np.ceil(x), w - 1).astype(np.int64)
    ly, lx = y - y0, x - x0
    out = np.zeros((plane.shape[0], *y.shape), dtype=plane.dtype)
    for yy, wy in ((y0, 1 - ly), (y1, ly)):
        for xx, wx in ((x0, 1 - lx), (x1, lx)):
            ok = inside & (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
            vals = plane[:, np.clip(yy, 0, h - 1), np.clip(xx, 0, w - 1)]
            out += np.where(ok, wy * wx, 0) * vals
    return out


@register("DeformableConvolution", "opset8")
class DeformableConvolution(_ConvAttrs):
    """DeformableConvolution-8 (2-D): inputs data, offsets, filters and an optional mask."""

    has_mask_input = True

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.group = self.attr_int("group", 1)
        self.deformable_group = self.attr_int("deformable_group", 1)
        self.bilinear_pad = self.attr_bool("bilinear_interpolation_pad", False)

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        x, w = inputs[0], inputs[2]
        if x.shape is None or w.shape is None:
            return [same(x, None)]
        strides, dil, pb, pe = self._geometry(x.shape[2:], w.shape[2:])
        out = [conv_out_dim(d, k, s, dl, b, e)
               for d, k, s, dl, b, e in zip(x.shape[2:], w.shape[2:], strides, dil, pb, pe)]
        return [same(x, (x.shape[0], w.shape[0], *out))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        offsets = np.asarray(inputs[1])
        w = np.asarray(inputs[2])
        mask = np.asarray(inputs[3]) if len(inputs) > 3 and self.has_mask_input else None
        acc = float_dtype_for(x.dtype)
        n, c, h, wd = x.shape
        o, cg, kh, kw = w.shape
        strides, dil, pb, _ = self._geometry((h, wd), (kh, kw))
        oh, ow = offsets.shape[2:]
        dg = self.deformable_group
        cdg = c // dg
        xs = x.astype(acc)
        cols = np.zeros((n, c, kh * kw, oh, ow), dtype=acc)
        base_y = (np.arange(oh) * strides[0] - pb[0])[:, None]
        base_x = (np.arange(ow) * strides[1] - pb[1])[None, :]
        off = offsets.astype(acc).reshape(n, dg, kh * kw, 2, oh, ow)
        msk = None if mask is None else mask.astype(acc).reshape(n, dg, kh * kw, oh, ow)
        for b in range(n):
            for g in range(dg):
                plane = xs[b, g * cdg:(g + 1) * cdg]
                for k in range(kh * kw):
                    ki, kj = divmod(k, kw)
                    y = base_y + ki * dil[0] + off[b, g, k, 0]
                    xx = base_x + kj * dil[1] + off[b, g, k, 1]
                    y, xx = np.broadcast_arrays(y, xx)
                    val = _bilinear(plane, y, xx, self.bilinear_pad)
                    if msk is not None:
                        val = val * msk[b, g, k]
                    cols[b, g * cdg:(g + 1) * cdg, k] = val
        groups = self.group
        og = o // groups
        outs = []
        for g in range(groups):
            wg = w[g * og:(g + 1) * og].astype(acc).reshape(og, cg * kh * kw)
            cg_cols = cols[:, g * cg:(g + 1) * cg].reshape(n, cg * kh * kw, oh * ow)
            outs.append(np.einsum("ok,nkp->nop", wg, cg_cols).reshape(n, og, oh, ow))
        return [np.concatenate(outs, axis=1).astype(x.dtype)]


@register("DeformableConvolution", "opset1")
class DeformableConvolution1(DeformableConvolution):
    """DeformableConvolution-1: no mask input, no ``bilinear_interpolation_pad``."""

    has_mask_input = False

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.bilinear_pad = False
