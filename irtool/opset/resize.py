"""Interpolate (1, 4, 11): nearest, linear, linear_onnx, cubic, bilinear_pillow, bicubic_pillow.

Every mode is separable, so the kernel resizes one axis at a time with a weight
matrix ``[out, in]`` (or an index vector for nearest). Source coordinates are
computed in float32 like OpenVINO's reference, so rounding ties land the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ._nn import ints, norm_axes, same
from .base import Attrs, Op, TensorInfo, register

Values = Sequence[np.ndarray | None]
F32 = np.float32
EPSILON = F32(1e-5)


# --------------------------------------------------------------------------- coordinates


def _source_coords(mode: str, out_len: int, in_len: int, scale: np.float32) -> np.ndarray:
    """Float32 source coordinate of each output index along one axis."""
    x = np.arange(out_len, dtype=F32)
    if scale == F32(1) or out_len == in_len:
        return x
    half = F32(0.5)
    if mode == "half_pixel":
        return (x + half) / scale - half
    if mode == "pytorch_half_pixel":
        if out_len > 1:
            return (x + half) / scale - half
        return np.zeros_like(x)
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_half_pixel_for_nn":
        return (x + half) / scale
    if mode == "align_corners":
        if out_len == 1:
            return np.zeros_like(x)
        return x * F32(in_len - 1) / F32(out_len - 1)
    raise ValueError(f"unknown coordinate_transformation_mode {mode!r}")


def _nearest_index(mode: str, coords: np.ndarray, downsample: bool) -> np.ndarray:
    """Integer source index per OpenVINO's ``nearest_mode``."""
    if mode == "round_prefer_floor":
        trunc = np.trunc(coords)
        tie = coords == trunc + F32(0.5)
        rounded = np.where(coords >= 0, np.floor(coords + F32(0.5)), np.ceil(coords - F32(0.5)))
        return np.where(tie, np.floor(coords), rounded).astype(np.int64)
    if mode == "round_prefer_ceil":
        return np.where(coords >= 0, np.floor(coords + F32(0.5)),
                        np.ceil(coords - F32(0.5))).astype(np.int64)
    if mode == "floor":
        return np.floor(coords).astype(np.int64)
    if mode == "ceil":
        return np.ceil(coords).astype(np.int64)
    if mode == "simple":
        return (np.ceil(coords) if downsample else np.trunc(coords)).astype(np.int64)
    raise ValueError(f"unknown nearest_mode {mode!r}")


def _round_half_away(x: np.ndarray) -> np.ndarray:
    return np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5))


def _cubic_coeffs(s: np.ndarray, a: float) -> np.ndarray:
    """The four cubic convolution weights for fractional offsets ``s`` (float32)."""
    a = F32(a)  # type: ignore[assignment]
    s = np.abs(s).astype(F32)
    one, two = F32(1), F32(2)
    c0 = ((a * (s + one) - F32(5) * a) * (s + one) + F32(8) * a) * (s + one) - F32(4) * a
    c1 = ((a + two) * s - (a + F32(3))) * s * s + one
    t = one - s
    c2 = ((a + two) * t - (a + F32(3))) * t * t + one
    u = two - s
    c3 = ((a * u - F32(5) * a) * u + F32(8) * a) * u - F32(4) * a
    return np.stack([c0, c1, c2, c3], axis=-1)


def _pil_weights(in_len: int, out_len: int, support: float,
                 fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Pillow's resampling coefficients as an ``[out, in]`` matrix (float64)."""
    scale = in_len / out_len
    filterscale = max(scale, 1.0)
    support = support * filterscale
    w = np.zeros((out_len, in_len))
    for xx in range(out_len):
        center = (xx + 0.5) * scale
        xmin = max(int(center - support + 0.5), 0)
        xmax = min(int(center + support + 0.5), in_len)
        xs = np.arange(xmin, xmax)
        k = fn((xs - center + 0.5) / filterscale)
        total = k.sum()
        if total != 0:
            k = k / total
        w[xx, xmin:xmax] = k
    return w


def _bilinear_filter(x: np.ndarray) -> np.ndarray:
    x = np.abs(x)
    return np.where(x < 1.0, 1.0 - x, 0.0)


def _bicubic_filter(a: float) -> Callable[[np.ndarray], np.ndarray]:
    def fn(x: np.ndarray) -> np.ndarray:
        x = np.abs(x)
        near = ((a + 2.0) * x - (a + 3.0)) * x * x + 1
        far = (((x - 5) * x + 8) * x - 4) * a
        return np.where(x < 1.0, near, np.where(x < 2.0, far, 0.0))
    return fn


# --------------------------------------------------------------------------- the op


class _InterpolateBase(Op):
    """Interpolate-4/11 attributes and the separable kernel."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.mode = self.attr_str("mode", "nearest").lower()
        self.shape_mode = self.attr_str("shape_calculation_mode", "sizes").lower()
        self.coord_mode = self.attr_str("coordinate_transformation_mode", "half_pixel").lower()
        self.nearest_mode = self.attr_str("nearest_mode", "round_prefer_floor").lower()
        self.antialias = self.attr_bool("antialias", False)
        self.pads_begin = self.attr_ints("pads_begin", [])
        self.pads_end = self.attr_ints("pads_end", [])
        self.cube_coeff = self.attr_float("cube_coeff", -0.75)

    # Subclasses say where sizes, scales and axes come from.
    def _inputs(self, inputs: Sequence[np.ndarray | None], rank: int
                ) -> tuple[list[int] | None, np.ndarray | None, list[int] | None]:
        raise NotImplementedError

    def _padded(self, shape: Sequence[int]) -> list[int]:
        rank = len(shape)
        pb = (self.pads_begin + [0] * rank)[:rank]
        pe = (self.pads_end + [0] * rank)[:rank]
        return [d + b + e if d >= 0 else -1 for d, b, e in zip(shape, pb, pe)]

    def _plan(self, in_shape: Sequence[int], sizes: list[int] | None,
              scales: np.ndarray | None, axes: list[int]
              ) -> tuple[list[int], list[np.float32]]:
        """Output shape and the float32 scale of each axis in ``axes``."""
        padded = self._padded(in_shape)
        out = list(padded)
        axis_scales: list[np.float32] = []
        for i, a in enumerate(axes):
            if self.shape_mode == "sizes":
                assert sizes is not None
                out[a] = sizes[i]
                axis_scales.append(F32(out[a]) / F32(padded[a]) if padded[a] > 0 else F32(1))
            else:
                assert scales is not None
                s = F32(scales[i])
                out[a] = int(np.floor(F32(padded[a]) * s + EPSILON)) if padded[a] >= 0 else -1
                axis_scales.append(s)
        return out, axis_scales

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        x = inputs[0]
        if x.shape is None:
            return [same(x, None)]
        rank = len(x.shape)
        sizes, scales, axes = self._inputs(values, rank)
        if axes is None:
            return [same(x, tuple(-1 for _ in x.shape))]
        if (self.shape_mode == "sizes" and sizes is None) or (
                self.shape_mode == "scales" and scales is None):
            padded = self._padded(x.shape)
            return [same(x, tuple(-1 if i in axes else d for i, d in enumerate(padded)))]
        out, _ = self._plan(x.shape, sizes, scales, axes)
        return [same(x, tuple(out))]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        sizes, scales, axes = self._inputs(inputs, x.ndim)
        assert axes is not None
        out_shape, axis_scales = self._plan(x.shape, sizes, scales, axes)
        pb = (self.pads_begin + [0] * x.ndim)[:x.ndim]
        pe = (self.pads_end + [0] * x.ndim)[:x.ndim]
        if any(pb) or any(pe):
            x = np.pad(x, list(zip(pb, pe)))
        return [self._resize(x, out_shape, axes, axis_scales)]

    def _resize(self, x: np.ndarray, out_shape: list[int], axes: list[int],
                scales: list[np.float32]) -> np.ndarray:
        dtype = x.dtype
        integral = dtype.kind in "iub"
        mode = self.mode
        if mode == "nearest":
            # OpenVINO applies the coordinate rule to every axis (scale 1 elsewhere)
            for a, s in zip(axes, scales):
                coords = _source_coords(self.coord_mode, out_shape[a], x.shape[a], s)
                idx = _nearest_index(self.nearest_mode, coords, bool(s < F32(1)))
                x = np.take(x, np.clip(idx, 0, x.shape[a] - 1), axis=a)
            return x
        if mode in ("bilinear_pillow", "bicubic_pillow"):
            return self._pillow(x, out_shape, axes)
        if mode == "linear" and x.ndim < 5:
            # OpenVINO's CPU plugin runs "linear" on inputs below rank 5 as linear_onnx (which
            # ignores antialias); the two agree everywhere else
            mode = "linear_onnx"
        acc = np.float64
        y = x.astype(acc)
        downsample = any(s < F32(1) for s in scales)
        for a, s in zip(axes, scales):
            weights = self._weights(mode, out_shape[a], x.shape[a], s, downsample)
            y = np.moveaxis(np.tensordot(weights, np.moveaxis(y, a, 0), axes=(1, 0)), 0, a)
        if integral:
            y = _round_half_away(y) if mode == "linear" else np.trunc(y)
            info = np.iinfo(dtype) if dtype.kind in "iu" else None
            if info is not None:
                y = np.clip(y, info.min, info.max)
        return y.astype(dtype)

    def _weights(self, mode: str, out_len: int, in_len: int, scale: np.float32,
                 downsample: bool) -> np.ndarray:
        """The ``[out, in]`` weight matrix of one axis."""
        coords = _source_coords(self.coord_mode, out_len, in_len, scale)
        w = np.zeros((out_len, in_len))
        rows = np.arange(out_len)
        if mode == "linear_onnx":
            c = np.clip(coords, F32(0), F32(in_len - 1))
            i1 = np.minimum(c.astype(np.int64), in_len - 1)
            i2 = np.minimum(i1 + 1, in_len - 1)
            d1 = np.abs(c - i1.astype(F32))
            d2 = np.abs(c - i2.astype(F32))
            same_pt = i1 == i2
            d1 = np.where(same_pt, F32(0.5), d1)
            d2 = np.where(same_pt, F32(0.5), d2)
            np.add.at(w, (rows, i1), d2)
            np.add.at(w, (rows, i2), d1)
            return w
        if mode == "cubic":
            base = np.floor(coords).astype(np.int64)
            coeff = _cubic_coeffs(coords - base.astype(F32), self.cube_coeff)
            for k in range(4):
                np.add.at(w, (rows, np.clip(base + k - 1, 0, in_len - 1)), coeff[:, k])
            return w
        if mode == "linear":
            aa = self.antialias and downsample
            a = float(scale) if aa else 1.0
            r = 2 if scale > F32(1) else int(np.ceil(2.0 / a))
            centre = _round_half_away(coords).astype(np.int64)
            for off in range(-r, r + 1):
                idx = centre + off
                ok = (idx >= 0) & (idx < in_len)
                dz = coords.astype(np.float64) - idx
                tri = np.maximum(0.0, 1.0 - np.abs(a * dz)) * a
                np.add.at(w, (rows[ok], idx[ok]), tri[ok])
            total = w.sum(axis=1, keepdims=True)
            return np.divide(w, total, out=np.zeros_like(w), where=total != 0)
        raise ValueError(f"unknown Interpolate mode {mode!r}")

    def _pillow(self, x: np.ndarray, out_shape: list[int], axes: list[int]) -> np.ndarray:
        if len(axes) != 2:
            raise ValueError("pillow modes interpolate exactly two axes")
        if self.mode == "bilinear_pillow":
            fn, support = _bilinear_filter, 1.0
        else:
            # Pillow's bicubic constant; OpenVINO's CPU plugin ignores cube_coeff here too
            fn, support = _bicubic_filter(-0.5), 2.0  # type: ignore[assignment]
        dtype = x.dtype
        integral = dtype.kind in "iu"

        def store(v: np.ndarray) -> np.ndarray:
            if integral:
                info = np.iinfo(dtype)
                return np.clip(_round_half_away(v), info.min, info.max).astype(dtype)
            return v.astype(dtype)

        h_ax, w_ax = axes
        y = x
        # horizontal (second axis) first, then vertical, storing in the data type between
        for a in (w_ax, h_ax):
            if out_shape[a] == y.shape[a]:
                continue
            weights = _pil_weights(y.shape[a], out_shape[a], support, fn)
            z = np.tensordot(weights, np.moveaxis(y.astype(np.float64), a, 0), axes=(1, 0))
            y = store(np.moveaxis(z, 0, a))
        return y


@register("Interpolate", "opset11")
class Interpolate11(_InterpolateBase):
    """Interpolate-11: inputs data, scales_or_sizes, optional axes."""

    def _inputs(self, inputs: Sequence[np.ndarray | None], rank: int
                ) -> tuple[list[int] | None, np.ndarray | None, list[int] | None]:
        axes = norm_axes(inputs[2], rank) if len(inputs) > 2 and inputs[2] is not None else (
            None if len(inputs) > 2 else list(range(rank)))
        value = inputs[1]
        if self.shape_mode == "sizes":
            return ints(value), None, axes
        return None, None if value is None else np.ravel(value).astype(F32), axes


@register("Interpolate", "opset4")
class Interpolate4(_InterpolateBase):
    """Interpolate-4: inputs data, sizes, scales, optional axes."""

    def _inputs(self, inputs: Sequence[np.ndarray | None], rank: int
                ) -> tuple[list[int] | None, np.ndarray | None, list[int] | None]:
        axes = norm_axes(inputs[3], rank) if len(inputs) > 3 and inputs[3] is not None else (
            None if len(inputs) > 3 else list(range(rank)))
        scales = None if inputs[2] is None else np.ravel(inputs[2]).astype(F32)
        return ints(inputs[1]), scales, axes


@register("Interpolate", "opset1")
class Interpolate1(_InterpolateBase):
    """Interpolate-1: attributes axes, mode, align_corners, antialias, pads; input 1 holds the
    sizes of ``axes``. Evaluated as Interpolate-4 the way OpenVINO converts it."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.axes = self.attr_ints("axes", [])
        self.align_corners = self.attr_bool("align_corners", False)
        self.shape_mode = "sizes"
        self.nearest_mode = "simple"
        self.cube_coeff = -0.75
        self.v0_mode = self.mode

    def _inputs(self, inputs: Sequence[np.ndarray | None], rank: int
                ) -> tuple[list[int] | None, np.ndarray | None, list[int] | None]:
        return ints(inputs[1]), None, norm_axes(self.axes, rank)

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        rank = np.ndim(inputs[0])
        mode = self.v0_mode
        if mode == "linear":
            mode = "linear_onnx" if rank < 5 else "linear"
        self.mode = mode
        self.coord_mode = "asymmetric"
        no_pads = not any(self.pads_begin) and not any(self.pads_end)
        if self.align_corners:
            self.coord_mode = "align_corners"
        elif mode in ("linear_onnx", "linear") and no_pads and not (
                rank == 4 and sorted(norm_axes(self.axes, rank)) == [2, 3]):
            self.coord_mode = "half_pixel"
        return super().compute(inputs)
