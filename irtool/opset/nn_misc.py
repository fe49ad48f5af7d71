"""Other NN layers: ScaledDotProductAttention-13, GridSample-9, Col2Im-15,
ExtractImagePatches-3, SearchSorted-15.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ._nn import auto_pads, float_dtype_for, ints, same
from .base import Attrs, Op, TensorInfo, register

Values = Sequence[np.ndarray | None]


# --------------------------------------------------------------------------- attention


@register("ScaledDotProductAttention", "opset13")
class ScaledDotProductAttention(Op):
    """ScaledDotProductAttention-13: ``softmax(Q K^T * scale + bias) V``.

    ``bias`` is the causal upper triangle of -inf when ``causal``, else ``attention_mask``
    (boolean: False means -inf; numeric: added). A 6th ``sink`` input joins the softmax
    and is dropped after it.
    """

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.causal = self.attr_bool("causal", False)

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        q, v = inputs[0], inputs[2]
        if q.shape is None or v.shape is None:
            return [same(q, None)]
        batch = q.shape[:-1]
        return [same(q, (*batch, v.shape[-1]))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        q = np.asarray(inputs[0])
        dtype = q.dtype
        acc = float_dtype_for(dtype)
        q = q.astype(acc)
        k = np.asarray(inputs[1]).astype(acc)
        v = np.asarray(inputs[2]).astype(acc)
        if len(inputs) > 4 and inputs[4] is not None:
            scale = np.asarray(inputs[4]).astype(acc).reshape(())
        else:
            scale = acc.type(1.0) / np.sqrt(acc.type(q.shape[-1]))
        w = np.matmul(q, np.swapaxes(k, -1, -2)) * scale
        length, source = q.shape[-2], k.shape[-2]
        if self.causal:
            w = w + np.triu(np.full((length, source), -np.inf, dtype=acc), k=1)
        elif len(inputs) > 3 and inputs[3] is not None:
            mask = np.asarray(inputs[3])
            if mask.dtype == np.bool_:
                w = w + np.where(mask, acc.type(0), acc.type(-np.inf))
            else:
                w = w + mask.astype(acc)
        sink = np.asarray(inputs[5]).astype(acc) if len(inputs) > 5 else None
        if sink is not None:
            sink = np.broadcast_to(sink, (*w.shape[:-1], sink.shape[-1]))
            w = np.concatenate([w, sink], axis=-1)
        peak = np.max(w, axis=-1, keepdims=True)
        peak = np.where(np.isfinite(peak), peak, 0)
        e = np.exp(w - peak)
        p = e / np.sum(e, axis=-1, keepdims=True)
        if sink is not None:
            p = p[..., :source]
        return [np.matmul(p, v).astype(dtype)]


# --------------------------------------------------------------------------- GridSample


def _cubic(r: np.ndarray, a: float = -0.75) -> list[np.ndarray]:
    return [((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
            ((a + 2) * r - (a + 3)) * r * r + 1,
            ((a + 2) * (1 - r) - (a + 3)) * (1 - r) * (1 - r) + 1,
            ((a * (2 - r) - 5 * a) * (2 - r) + 8 * a) * (2 - r) - 4 * a]


@register("GridSample", "opset9")
class GridSample(Op):
    """GridSample-9 on ``[N, C, H, W]`` with a ``[N, Ho, Wo, 2]`` grid of (x, y) in [-1, 1].

    Padding applies to integer sample positions, as in OpenVINO's reference: zeros,
    border (clamp) or reflection.
    """

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.align_corners = self.attr_bool("align_corners", False)
        self.mode = self.attr_str("mode", "bilinear").lower()
        self.padding_mode = self.attr_str("padding_mode", "zeros").lower()

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        x, g = inputs[0], inputs[1]
        n = x.shape[0] if x.shape is not None else -1
        c = x.shape[1] if x.shape is not None else -1
        hw = tuple(g.shape[1:3]) if g.shape is not None else (-1, -1)
        return [same(x, (n, c, *hw))]

    def _denorm(self, v: np.ndarray, size: int) -> np.ndarray:
        if self.align_corners:
            return (v + 1) * (size - 1) / 2
        return ((v + 1) * size - 1) / 2

    def _fetch(self, data: np.ndarray, yi: np.ndarray, xi: np.ndarray
               ) -> np.ndarray:
        """``data [N, C, H, W]`` at integer positions ``yi, xi [N, Ho, Wo]`` -> [N, C, Ho, Wo]."""
        n, _, h, w = data.shape
        valid = None
        if self.padding_mode == "zeros":
            valid = (yi >= 0) & (yi < h) & (xi >= 0) & (xi < w)
            yc, xc = np.clip(yi, 0, h - 1), np.clip(xi, 0, w - 1)
        elif self.padding_mode == "border":
            yc, xc = np.clip(yi, 0, h - 1), np.clip(xi, 0, w - 1)
        elif self.align_corners:
            yc, xc = _reflect_align(yi, h), _reflect_align(xi, w)
        else:
            yc, xc = _reflect_noalign(yi, h), _reflect_noalign(xi, w)
        bi = np.arange(n)[:, None, None]
        out = data[bi, :, yc, xc]  # [N, Ho, Wo, C]
        if valid is not None:
            out = np.where(valid[..., None], out, 0)
        return np.moveaxis(out, -1, 1)

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = np.asarray(inputs[0])
        grid = np.asarray(inputs[1])
        dtype = data.dtype
        acc = float_dtype_for(dtype) if dtype.kind == "f" else np.dtype(np.float64)
        d = data.astype(acc)
        g = grid.astype(float_dtype_for(grid.dtype))
        h, w = data.shape[2:]
        yd = self._denorm(g[..., 1], h)
        xd = self._denorm(g[..., 0], w)
        if self.mode == "nearest":
            out = self._fetch(d, np.rint(yd).astype(np.int64), np.rint(xd).astype(np.int64))
        elif self.mode == "bilinear":
            y0, x0 = np.floor(yd), np.floor(xd)
            dy, dx = (yd - y0)[:, None], (xd - x0)[:, None]
            y0i, x0i = y0.astype(np.int64), x0.astype(np.int64)
            q0 = (1 - dx) * self._fetch(d, y0i, x0i) + dx * self._fetch(d, y0i, x0i + 1)
            q1 = (1 - dx) * self._fetch(d, y0i + 1, x0i) + dx * self._fetch(d, y0i + 1, x0i + 1)
            out = dy * q1 + (1 - dy) * q0
        elif self.mode == "bicubic":
            y0, x0 = np.floor(yd), np.floor(xd)
            cy = _cubic((yd - y0)[:, None])
            cx = _cubic((xd - x0)[:, None])
            y0i, x0i = y0.astype(np.int64) - 1, x0.astype(np.int64) - 1
            out = 0  # type: ignore[assignment]
            for j in range(4):
                row = 0
                for i in range(4):
                    row = row + cx[i] * self._fetch(d, y0i + j, x0i + i)
                out = out + cy[j] * row
        else:
            raise ValueError(f"GridSample: unknown mode {self.mode!r}")
        out = np.asarray(out)
        if dtype.kind in "iu":
            out = np.rint(out)
        return [out.astype(dtype)]


def _reflect_noalign(v: np.ndarray, size: int) -> np.ndarray:
    two = 2 * size
    v = np.mod(v, two)
    return np.where(v >= size, two - 1 - v, v)


def _reflect_align(v: np.ndarray, size: int) -> np.ndarray:
    period = 1 if size == 1 else 2 * (size - 1)
    v = np.abs(v) % period
    return np.where(v >= size, period - v, v)


# --------------------------------------------------------------------------- Col2Im


@register("Col2Im", "opset15")
class Col2Im(Op):
    """Col2Im-15: sums sliding blocks ``[N, C*kh*kw, L]`` back into ``[N, C, H, W]``."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.strides = self.attr_ints("strides", [1, 1])
        self.dilations = self.attr_ints("dilations", [1, 1])
        self.pads_begin = self.attr_ints("pads_begin", [0, 0])
        self.pads_end = self.attr_ints("pads_end", [0, 0])

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        x = inputs[0]
        size, kernel = ints(values[1]), ints(values[2])
        hw = tuple(size) if size is not None else (-1, -1)
        if x.shape is None:
            return [same(x, None)]
        batched = len(x.shape) == 3
        cols = x.shape[-2]
        c = cols // (kernel[0] * kernel[1]) if kernel is not None and cols >= 0 else -1
        return [same(x, ((x.shape[0], c) if batched else (c,)) + hw)]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        unbatched = x.ndim == 2
        if unbatched:
            x = x[None]
        out_h, out_w = ints(inputs[1])  # type: ignore[misc]
        kh, kw = ints(inputs[2])  # type: ignore[misc]
        sh, sw = self.strides
        dh, dw = self.dilations
        (pt, pl), (pb, pr) = self.pads_begin, self.pads_end
        n = x.shape[0]
        c = x.shape[1] // (kh * kw)
        blocks_h = (out_h + pt + pb - (dh * (kh - 1) + 1)) // sh + 1
        blocks_w = (out_w + pl + pr - (dw * (kw - 1) + 1)) // sw + 1
        cols = x.reshape(n, c, kh, kw, blocks_h, blocks_w)
        acc = float_dtype_for(x.dtype) if x.dtype.kind == "f" else np.dtype(np.int64)
        buf = np.zeros((n, c, out_h + pt + pb, out_w + pl + pr), dtype=acc)
        for i in range(kh):
            for j in range(kw):
                buf[:, :, i * dh:i * dh + (blocks_h - 1) * sh + 1:sh,
                    j * dw:j * dw + (blocks_w - 1) * sw + 1:sw] += cols[:, :, i, j]
        out = buf[:, :, pt:pt + out_h, pl:pl + out_w].astype(x.dtype)
        return [out[0] if unbatched else out]


# --------------------------------------------------------------------------- patches / search


@register("ExtractImagePatches", "opset3")
class ExtractImagePatches(Op):
    """ExtractImagePatches-3: ``[N, C, H, W]`` -> ``[N, kh*kw*C, out_h, out_w]``, each
    output depth ordered (row, column, channel) like TensorFlow; padding is zeros."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.sizes = self.attr_ints("sizes", [1, 1])
        self.strides = self.attr_ints("strides", [1, 1])
        self.rates = self.attr_ints("rates", [1, 1])
        self.auto_pad = self.attr_str("auto_pad", "valid").lower()

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        x = inputs[0]
        if x.shape is None:
            return [same(x, (-1, -1, -1, -1))]
        n, c, h, w = x.shape
        depth = c * self.sizes[0] * self.sizes[1] if c >= 0 else -1
        # each output dim depends only on its own input dim
        dims = [self._geometry(d, d)[1][i] if d >= 0 else -1 for i, d in enumerate((h, w))]
        return [same(x, (n, depth, *dims))]

    def _geometry(self, h: int, w: int) -> tuple[list[int], list[int]]:
        begin, _ = auto_pads(self.auto_pad, (h, w), self.sizes, self.strides, self.rates,
                             [0, 0], [0, 0])
        out = []
        for d, k, s, r in zip((h, w), self.sizes, self.strides, self.rates):
            eff = (k - 1) * r + 1
            if self.auto_pad == "valid":
                out.append(max((d - eff) // s + 1, 0))
            else:
                out.append(-(-d // s))
        return begin, out

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        n, c, h, w = x.shape
        (pt, pl), (oh, ow) = self._geometry(h, w)
        kh, kw = self.sizes
        sh, sw = self.strides
        rh, rw = self.rates
        out = np.zeros((n, kh, kw, c, oh, ow), dtype=x.dtype)
        ys = np.arange(oh) * sh - pt
        xs = np.arange(ow) * sw - pl
        for i in range(kh):
            yy = ys + i * rh
            vy = (yy >= 0) & (yy < h)
            for j in range(kw):
                xx = xs + j * rw
                vx = (xx >= 0) & (xx < w)
                block = x[:, :, np.clip(yy, 0, h - 1)][:, :, :, np.clip(xx, 0, w - 1)]
                mask = vy[:, None] & vx[None, :]
                out[:, i, j] = np.where(mask, block, 0)
        return [out.reshape(n, kh * kw * c, oh, ow)]


@register("SearchSorted", "opset15")
class SearchSorted(Op):
    """SearchSorted-15: insertion indices of ``values`` into ``sorted_sequence`` (per row when
    both have the same leading dims); ``right_mode`` picks the right insertion point."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.side = "right" if self.attr_bool("right_mode", False) else "left"
        self.output_type = self.attr_type("output_type", "i64")

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        return [TensorInfo(self.output_type, inputs[1].shape)]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        seq, vals = np.asarray(inputs[0]), np.asarray(inputs[1])
        search: Callable = np.searchsorted
        if seq.ndim == 1:
            out = search(seq, vals, side=self.side)
        else:
            flat_seq = seq.reshape(-1, seq.shape[-1])
            flat_vals = vals.reshape(flat_seq.shape[0], -1)
            out = np.stack([search(s, v, side=self.side)
                            for s, v in zip(flat_seq, flat_vals)]).reshape(vals.shape)
        return [np.asarray(out, dtype=self.output_type.dtype)]
