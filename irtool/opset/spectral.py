"""Discrete Fourier transforms: DFT-7, IDFT-7, RDFT-9, IRDFT-9.

Complex tensors are real tensors with a trailing dimension of 2 (real, imag).
``axes`` (input 1) index the data dims without that trailing 2; negative axes
count from the end of those. ``signal_size`` (optional input 2, one entry per
axis, -1 = keep) crops or zero-pads each transformed axis at its end. Inverse
transforms are normalised by 1/N; forward ones are not.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._common import const_ints, normalize_axes
from .base import Op, TensorInfo, register


def _as_complex(x: np.ndarray) -> np.ndarray:
    if x.ndim < 1 or x.shape[-1] != 2:
        raise ValueError(f"complex input must end in a dimension of 2, got shape {x.shape}")
    return x[..., 0].astype(np.float64) + 1j * x[..., 1].astype(np.float64)


def _as_pairs(z: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return np.stack([z.real, z.imag], axis=-1).astype(dtype)


def _resize(z: np.ndarray, axes: Sequence[int], sizes: Sequence[int]) -> np.ndarray:
    """Crop or zero-pad ``z`` at the end of each axis to the given size (-1: keep)."""
    for axis, size in zip(axes, sizes):
        if size < 0 or size == z.shape[axis]:
            continue
        if size < z.shape[axis]:
            z = np.take(z, np.arange(size), axis=axis)
        else:
            pad = [(0, 0)] * z.ndim
            pad[axis] = (0, size - z.shape[axis])
            z = np.pad(z, pad)
    return z


class _FFTBase(Op):
    """Shared argument handling: complex input flag, axes and signal sizes."""

    complex_input = True

    def _axes_sizes(self, inputs: list[np.ndarray], rank: int) -> tuple[list[int], list[int]]:
        axes = list(normalize_axes(np.asarray(inputs[1]).reshape(-1).tolist(), rank))
        if len(set(axes)) != len(axes):
            raise ValueError(f"{self.type}: repeated axes {axes}")
        if len(inputs) > 2:
            sizes = [int(s) for s in np.asarray(inputs[2]).reshape(-1)]
            if len(sizes) != len(axes):
                raise ValueError(f"{self.type}: {len(sizes)} signal sizes for {len(axes)} axes")
        else:
            sizes = [-1] * len(axes)
        return axes, sizes

    def _signal_rank(self, inputs: Sequence[TensorInfo]) -> int | None:
        shape = inputs[0].shape
        if shape is None:
            return None
        return len(shape) - 1 if self.complex_input else len(shape)

    def out_dims(self, dims: list[int], axes: list[int], sizes: list[int]) -> list[int]:
        """Output signal dims (without a trailing 2) for input signal dims ``dims``."""
        out = list(dims)
        for axis, size in zip(axes, sizes):
            if size >= 0:
                out[axis] = size
        return out

    complex_output = True

    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        et = inputs[0].element_type
        rank = self._signal_rank(inputs)
        if rank is None:
            return [TensorInfo(et, None)]
        dims = list(inputs[0].shape[:rank])  # type: ignore[index]
        axes_v = const_ints(values[1])
        sizes_v = const_ints(values[2]) if len(values) > 2 else None
        if axes_v is None or (len(values) > 2 and sizes_v is None):
            if axes_v is None:
                out = [-1] * rank
            else:
                axes = list(normalize_axes(axes_v, rank))
                out = [-1 if i in axes else d for i, d in enumerate(dims)]
        else:
            axes = list(normalize_axes(axes_v, rank))
            out = self.out_dims(dims, axes, sizes_v or [-1] * len(axes))
        shape = (*out, 2) if self.complex_output else tuple(out)
        return [TensorInfo(et, shape)]


class _ComplexDFT(_FFTBase):
    """Complex-to-complex transform; ``inverse`` picks IDFT."""

    inverse = False

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        z = _as_complex(x)
        axes, sizes = self._axes_sizes(inputs, z.ndim)
        z = _resize(z, axes, sizes)
        z = np.fft.ifftn(z, axes=axes) if self.inverse else np.fft.fftn(z, axes=axes)
        return [_as_pairs(z, x.dtype)]


@register("DFT", "opset7")
class DFT(_ComplexDFT):
    """Forward complex DFT over ``axes``, unnormalised."""


@register("IDFT", "opset7")
class IDFT(_ComplexDFT):
    """Inverse complex DFT over ``axes``, normalised by 1/N."""

    inverse = True


@register("RDFT", "opset9")
class RDFT(_FFTBase):
    """Forward DFT of real data; the last of ``axes`` keeps only N/2 + 1 (one-sided)
    entries. The output gains a trailing dimension of 2."""

    complex_input = False

    def out_dims(self, dims: list[int], axes: list[int], sizes: list[int]) -> list[int]:
        out = super().out_dims(dims, axes, sizes)
        last = axes[-1]
        if out[last] >= 0:
            out[last] = out[last] // 2 + 1
        return out

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        axes, sizes = self._axes_sizes(inputs, x.ndim)
        z = _resize(x.astype(np.float64), axes, sizes)
        return [_as_pairs(np.fft.rfftn(z, axes=axes), x.dtype)]


@register("IRDFT", "opset9")
class IRDFT(_FFTBase):
    """Inverse of RDFT: one-sided complex input, real output; the last of ``axes`` gets
    2 * (N - 1) entries unless ``signal_size`` says otherwise. Normalised by 1/N."""

    complex_output = False

    def out_dims(self, dims: list[int], axes: list[int], sizes: list[int]) -> list[int]:
        out = super().out_dims(dims, axes, sizes)
        last = axes[-1]
        if sizes[-1] < 0 and dims[last] >= 0:
            out[last] = 2 * (dims[last] - 1)
        return out

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        z = _as_complex(x)
        axes, sizes = self._axes_sizes(inputs, z.ndim)
        last = axes[-1]
        n_last = sizes[-1] if sizes[-1] >= 0 else 2 * (z.shape[last] - 1)
        # The other axes are cropped/padded as complex data first; the last one is
        # sized by irfftn, which reads n_last // 2 + 1 input entries.
        z = _resize(z, axes[:-1], sizes[:-1])
        s = [z.shape[a] for a in axes[:-1]] + [n_last]
        return [np.fft.irfftn(z, s=s, axes=axes).astype(x.dtype)]
