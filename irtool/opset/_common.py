"""Helpers shared by the arithmetic op modules: axes, broadcasting modes, erf, dtypes.

Nothing here registers an op.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ..ir.graph import Shape
from ..ir.types import ElementType
from .base import AttributeParseError, broadcast_shapes

BROADCAST_MODES = ("numpy", "none", "pdpd")


def parse_broadcast(op_type: str, text: str) -> str:
    """The ``auto_broadcast`` attribute, lower-cased and checked (``explicit`` means ``none``)."""
    mode = text.strip().lower()
    if mode == "explicit":
        mode = "none"
    if mode not in BROADCAST_MODES:
        raise AttributeParseError(f"{op_type}: auto_broadcast={text!r} is not one of "
                                  f"{', '.join(BROADCAST_MODES)}")
    return mode


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    """``axis`` in ``[-rank, rank)`` made non-negative; ValueError outside."""
    if not -rank <= axis < max(rank, 1):
        raise ValueError(f"{what} {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def normalize_axes(axes: Iterable[int], rank: int, what: str = "axis") -> tuple[int, ...]:
    """Each axis made non-negative (see ``normalize_axis``), in the order given."""
    return tuple(normalize_axis(int(a), rank, what) for a in axes)


def pdpd_align(b: np.ndarray, rank_a: int, axis: int) -> np.ndarray:
    """PDPD broadcasting: view ``b`` with ``rank_a`` dims, its own dims starting at ``axis``.

    ``axis == -1`` aligns ``b`` to the trailing dims of ``a``. Trailing 1s of ``b``
    are dropped first, as the PDPD rule does.
    """
    shape = list(b.shape)
    if axis == -1:
        axis = rank_a - len(shape)
    while len(shape) > 0 and shape[-1] == 1 and axis + len(shape) > rank_a:
        shape.pop()
    if axis < 0 or axis + len(shape) > rank_a:
        raise ValueError(f"pdpd broadcast: shape {b.shape} does not fit rank {rank_a} at "
                         f"axis {axis}")
    return b.reshape([1] * axis + shape + [1] * (rank_a - axis - len(shape)))


def pdpd_shape(a: Shape | None, b: Shape | None, axis: int) -> Shape | None:
    """Output shape of PDPD broadcasting: always ``a``'s shape (``b`` must fit into it)."""
    del b, axis  # only ``a`` decides the shape; mismatches surface in the kernel
    return a


def merge_shapes(*shapes: Shape | None) -> Shape | None:
    """Shapes that must be equal (``auto_broadcast="none"``): static dims win over -1."""
    known = [s for s in shapes if s is not None]
    if not known:
        return None
    rank = len(known[0])
    if any(len(s) != rank for s in known):
        raise ValueError(f"shapes {shapes} differ in rank and broadcasting is off")
    out = []
    for dims in zip(*known):
        static = {d for d in dims if d >= 0}
        if len(static) > 1:
            raise ValueError(f"shapes {shapes} differ and broadcasting is off")
        out.append(static.pop() if static else -1)
    return tuple(out)


def broadcast_output_shape(mode: str, axis: int, *shapes: Shape | None) -> Shape | None:
    """Output shape of an elementwise op under ``mode`` (``numpy``, ``none``, ``pdpd``)."""
    if mode == "numpy":
        return broadcast_shapes(*shapes)
    if mode == "none":
        return merge_shapes(*shapes)
    return pdpd_shape(shapes[0], shapes[1], axis)


def reduce_shape(shape: Shape | None, axes: Sequence[int] | None, keep_dims: bool) -> Shape | None:
    """Shape after reducing ``axes`` (None = unknown axes) of ``shape``."""
    if shape is None:
        return None
    rank = len(shape)
    if axes is None:
        # Unknown axes: with keep_dims the rank survives, every dim unknown (as in OpenVINO).
        return (-1,) * rank if keep_dims else None
    axes_set = set(normalize_axes(axes, rank))
    if keep_dims:
        return tuple(1 if i in axes_set else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes_set)


def const_ints(value: np.ndarray | None) -> list[int] | None:
    """A known integer input as a flat list, or None when unknown."""
    if value is None:
        return None
    return [int(v) for v in np.asarray(value).reshape(-1)]


def const_scalar(value: np.ndarray | None) -> float | int | None:
    """A known single-element input as a Python number, or None."""
    if value is None:
        return None
    arr = np.asarray(value).reshape(-1)
    if arr.size != 1:
        raise ValueError(f"expected a single value, got {arr.size}")
    return arr[0].item()


def numpy_dtype(et: ElementType, what: str) -> np.dtype:
    """The numpy dtype of ``et``; ValueError for types numpy cannot hold."""
    if et.dtype is None:
        raise ValueError(f"{what}: element type {et.name} has no numpy representation")
    return et.dtype


_TWO_OVER_SQRT_PI = 2.0 / np.sqrt(np.pi)


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, elementwise, computed in float64 (numpy has none built in).

    ``|x| < 3``: the all-positive series erf(x) = 2/sqrt(pi) e^(-x^2) sum 2^n x^(2n+1)/(2n+1)!!,
    which has no cancellation. ``|x| >= 3``: the asymptotic series of erfc, whose
    smallest term there is below 1e-4 of erfc(3) ~ 2e-5, so the error stays below 1e-9.
    """
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    ax = np.abs(x)
    small = ax < 3.0
    if small.any():
        xs = x[small]
        x2 = xs * xs
        term = xs.copy()
        total = xs.copy()
        for n in range(1, 200):
            term = term * (2.0 * x2 / (2 * n + 1))
            total += term
            if np.all(np.abs(term) <= 1e-17 * np.abs(total)):
                break
        out[small] = _TWO_OVER_SQRT_PI * np.exp(-x2) * total
    big = ~small
    if big.any():
        xb = ax[big]
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            inv2 = 1.0 / (2.0 * xb * xb)
            series = np.ones_like(xb)
            term = np.ones_like(xb)
            for n in range(1, 9):
                term = -term * (2 * n - 1) * inv2
                series += term
            erfc = np.exp(-xb * xb) / (xb * np.sqrt(np.pi)) * series
            val = 1.0 - np.where(np.isfinite(xb), erfc, 0.0)
        out[big] = np.copysign(val, x[big])
    out[np.isnan(x)] = np.nan
    return out
