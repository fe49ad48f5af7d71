"""Normalisations: MVN (-1 as opset2, -6), NormalizeL2, BatchNormInference (-1, -5),
GroupNormalization and LRN.

All keep the data input's type and shape (``_SameAsData.infer``). Statistics of
half-precision inputs are computed in f32, as OpenVINO's CPU plugin does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ._common import normalize_axes
from .base import REQUIRED, Op, TensorInfo, register


def _work(x: np.ndarray) -> np.ndarray:
    """``x`` in a dtype fit for statistics: f16/bf16 go to f32, integers to f64."""
    if x.dtype.kind == "f" and x.dtype.itemsize >= 4:
        return x
    return x.astype(np.float32 if x.dtype.kind == "f" else np.float64)


class _SameAsData(Op):
    """Output 0 has the type and shape of input ``data_index``."""

    data_index = 0

    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        data = inputs[self.data_index]
        return [TensorInfo(data.element_type, data.shape)]


def _mvn(x: np.ndarray, axes: tuple[int, ...], normalize_variance: bool, eps: float,
         inside_sqrt: bool) -> np.ndarray:
    w = _work(x)
    centered = w - np.mean(w, axis=axes, keepdims=True)
    if normalize_variance:
        var = np.mean(centered * centered, axis=axes, keepdims=True)
        eps_t = w.dtype.type(eps)
        denom = np.sqrt(var + eps_t) if inside_sqrt else np.sqrt(var) + eps_t
        if centered.__class__ is np.ndarray:
            np.divide(centered, denom, out=centered)  # its own buffer: w - mean made it
        else:
            centered = centered / denom
    return centered.astype(x.dtype, copy=False)


@register("MVN", "opset2")
class MVN1(_SameAsData):
    """MVN-1: statistics over ``reduction_axes`` if given, else over all dims from 1
    (``across_channels``) or from 2; ``eps`` is added inside the square root."""

    fresh_outputs = True  # _mvn makes its result

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.across_channels = self.attr_bool("across_channels", False)
        self.normalize_variance = self.attr_bool("normalize_variance", True)
        self.eps = self.attr_float("eps", REQUIRED)
        self.reduction_axes = self.attr_ints("reduction_axes", None)

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        if self.reduction_axes:
            axes = normalize_axes(self.reduction_axes, x.ndim)
        else:
            axes = tuple(range(1 if self.across_channels else 2, x.ndim))
        return [_mvn(x, axes, self.normalize_variance, self.eps, True)]


@register("MVN", "opset6")
class MVN6(_SameAsData):
    """MVN-6: axes from input 1; ``eps_mode`` ``inside_sqrt`` or ``outside_sqrt``."""

    fresh_outputs = True  # _mvn makes its result

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.normalize_variance = self.attr_bool("normalize_variance", REQUIRED)
        self.eps = self.attr_float("eps", REQUIRED)
        mode = self.attr_str("eps_mode", REQUIRED).lower()
        if mode not in ("inside_sqrt", "outside_sqrt"):
            raise ValueError(f"MVN: eps_mode={mode!r} is not inside_sqrt or outside_sqrt")
        self.inside_sqrt = mode == "inside_sqrt"

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        axes = tuple(sorted(set(normalize_axes(np.asarray(inputs[1]).reshape(-1).tolist(),
                                               x.ndim))))
        return [_mvn(x, axes, self.normalize_variance, self.eps, self.inside_sqrt)]


@register("NormalizeL2", "opset1")
class NormalizeL2(_SameAsData):
    """x / sqrt(sum(x^2) + eps) (``eps_mode`` add) or / sqrt(max(sum(x^2), eps)) (max),
    the sum over the axes of input 1 (empty axes: each element on its own)."""

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.eps = self.attr_float("eps", REQUIRED)
        mode = self.attr_str("eps_mode", REQUIRED).lower()
        if mode not in ("add", "max"):
            raise ValueError(f"NormalizeL2: eps_mode={mode!r} is not add or max")
        self.add = mode == "add"

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        w = _work(x)
        axes = tuple(sorted(set(normalize_axes(np.asarray(inputs[1]).reshape(-1).tolist(),
                                               x.ndim))))
        sq = np.sum(w * w, axis=axes, keepdims=True) if axes else w * w
        eps = w.dtype.type(self.eps)
        denom = np.sqrt(sq + eps) if self.add else np.sqrt(np.maximum(sq, eps))
        return [(w / denom).astype(x.dtype, copy=False)]


def _batch_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, mean: np.ndarray,
                var: np.ndarray, eps: float) -> np.ndarray:
    w = _work(x)
    shape = [1] * x.ndim
    if x.ndim > 1:
        shape[1] = -1
    else:
        shape[0] = -1

    def per_channel(v: np.ndarray) -> np.ndarray:
        return np.asarray(v, dtype=w.dtype).reshape(shape)

    scale = per_channel(gamma) / np.sqrt(per_channel(var) + w.dtype.type(eps))
    out = (w - per_channel(mean)) * scale + per_channel(beta)
    return out.astype(x.dtype, copy=False)


@register("BatchNormInference", "opset1")
class BatchNormInference1(_SameAsData):
    """BatchNormInference-1: inputs gamma, beta, data, mean, variance (data is input 2)."""

    data_index = 2

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.epsilon = self.attr_float("epsilon", REQUIRED)

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        gamma, beta, x, mean, var = inputs
        return [_batch_norm(np.asarray(x), gamma, beta, mean, var, self.epsilon)]


@register("BatchNormInference", "opset5")
class BatchNormInference5(_SameAsData):
    """BatchNormInference-5: inputs data, gamma, beta, mean, variance; channels on axis 1."""

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.epsilon = self.attr_float("epsilon", REQUIRED)

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x, gamma, beta, mean, var = inputs
        return [_batch_norm(np.asarray(x), gamma, beta, mean, var, self.epsilon)]


@register("GroupNormalization", "opset12")
class GroupNormalization(_SameAsData):
    """Normalise each of ``num_groups`` channel groups of [N, C, ...] data, then apply the
    per-channel ``scale`` and ``bias`` (inputs 1, 2)."""

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.num_groups = self.attr_int("num_groups", REQUIRED)
        self.epsilon = self.attr_float("epsilon", REQUIRED)

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        w = _work(x)
        n, c = x.shape[0], x.shape[1]
        if self.num_groups <= 0 or c % self.num_groups:
            raise ValueError(f"GroupNormalization: {c} channels do not split into "
                             f"{self.num_groups} groups")
        grouped = w.reshape(n, self.num_groups, -1)
        mean = grouped.mean(axis=2, keepdims=True)
        var = np.square(grouped - mean).mean(axis=2, keepdims=True)
        normed = ((grouped - mean) / np.sqrt(var + w.dtype.type(self.epsilon))).reshape(x.shape)
        shape = [1, c] + [1] * (x.ndim - 2)
        scale = np.asarray(inputs[1], dtype=w.dtype).reshape(shape)
        bias = np.asarray(inputs[2], dtype=w.dtype).reshape(shape)
        return [(normed * scale + bias).astype(x.dtype, copy=False)]


@register("LRN", "opset1")
class LRN(_SameAsData):
    """x / (bias + alpha / size^len(axes) * sum of x^2 over the window)^beta, the window
    spanning (size - 1) / 2 elements each side along every axis of input 1."""

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.alpha = self.attr_float("alpha", REQUIRED)
        self.beta = self.attr_float("beta", REQUIRED)
        self.bias = self.attr_float("bias", REQUIRED)
        self.size = self.attr_int("size", REQUIRED)

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        w = _work(x)
        axes = sorted(set(normalize_axes(np.asarray(inputs[1]).reshape(-1).tolist(), x.ndim)))
        half = (self.size - 1) // 2
        window = w * w
        for axis in axes:
            # Sliding-window sum along one axis via a zero-padded cumulative sum.
            n = x.shape[axis]
            pad = [(0, 0)] * x.ndim
            pad[axis] = (1, 0)
            csum = np.pad(np.cumsum(window, axis=axis), pad)
            idx = np.arange(n)
            hi = np.minimum(idx + half + 1, n)
            lo = np.maximum(idx - half, 0)
            window = np.take(csum, hi, axis=axis) - np.take(csum, lo, axis=axis)
        scale = self.alpha / float(self.size) ** len(axes)
        out = w / np.power(w.dtype.type(self.bias) + w.dtype.type(scale) * window,
                           w.dtype.type(self.beta))
        return [out.astype(x.dtype, copy=False)]
