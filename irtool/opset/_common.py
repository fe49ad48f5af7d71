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


# W. J. Cody's rational Chebyshev approximations of erf and erfc ("Rational Chebyshev
# approximations for the error function", Math. Comp. 23 (1969) 631-637; the coefficients of
# netlib's specfun CALERF): erf on |x| <= 0.46875, erfc(x) e^(x^2) on (0.46875, 4], and
# erfc(x) e^(x^2) x as a rational in 1/x^2 beyond; about 1e-16 relative in float64.
_ERF_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
          3.20937758913846947e03, 1.85777706184603153e-1)
_ERF_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
          2.84423683343917062e03)
_ERF_C = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
          2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03,
          2.05107837782607147e03, 1.23033935479799725e03, 2.15311535474403846e-8)
_ERF_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
          1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
          3.43936767414372164e03, 1.23033935480374942e03)
_ERF_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
          1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2)
_ERF_Q = (2.56852019228982242e00, 1.87295284992346047e00, 5.27905102951428412e-1,
          6.05183413124413191e-2, 2.33520497626869185e-3)
_ONE_OVER_SQRT_PI = 5.6418958354775628695e-1


def _rational(t: np.ndarray, num: Sequence[float], den: Sequence[float], lead: float
              ) -> np.ndarray:
    """``(lead t^n + num[0] t^(n-1) + ... + num[-1]) / (t^n + den[0] t^(n-1) + ... +
    den[-1])`` by Horner's rule, as CALERF evaluates it."""
    top = lead * t
    bottom = t.copy()
    for a, b in zip(num[:-1], den[:-1]):
        top += a
        top *= t
        bottom += b
        bottom *= t
    top += num[-1]
    bottom += den[-1]
    top /= bottom
    return top


def _erfc_tail(y: np.ndarray, scaled: np.ndarray) -> np.ndarray:
    """erfc(y) from ``scaled`` = erfc(y) e^(y^2): e^(-y^2) split as CALERF does (y^2 of a
    y rounded to 1/16, then the rest), so the rounding of y^2 is not magnified."""
    head = np.trunc(y * 16.0) / 16.0
    rest = (y - head) * (y + head)
    return np.exp(-head * head) * np.exp(-rest) * scaled


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, elementwise, computed in float64 (numpy has none built in), by
    W. J. Cody's rational approximations (about 1e-16 relative): each element is a fixed
    number of operations, where a series needs more terms the larger ``|x|`` is."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    y = np.abs(x)
    near = y <= 0.46875
    if near.any():
        t = y[near] ** 2
        out[near] = x[near] * _rational(t, _ERF_A[:4], _ERF_B, _ERF_A[4])
    middle = (y > 0.46875) & (y <= 4.0)
    if middle.any():
        ym = y[middle]
        erfc = _erfc_tail(ym, _rational(ym, _ERF_C[:8], _ERF_D, _ERF_C[8]))
        out[middle] = np.copysign((0.5 - erfc) + 0.5, x[middle])
    far = y > 4.0
    if far.any():
        yf = y[far]
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            t = 1.0 / (yf * yf)
            scaled = (_ONE_OVER_SQRT_PI - t * _rational(t, _ERF_P[:5], _ERF_Q, _ERF_P[5])) / yf
            erfc = np.where(np.isfinite(yf), _erfc_tail(yf, scaled), 0.0)
        out[far] = np.copysign((0.5 - erfc) + 0.5, x[far])
    out[np.isnan(x)] = np.nan
    return out
