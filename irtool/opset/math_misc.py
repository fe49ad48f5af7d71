"""Miscellaneous arithmetic: MatMul, TopK, CumSum, Einsum, Range, FakeQuantize.

The Fourier transforms live in ``math_fft`` and the random generators in
``math_random``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from ..ir.graph import Shape
from ..ir.types import ElementType
from ._common import (
    const_scalar,
    normalize_axis,
    numpy_dtype,
    parse_broadcast,
    pdpd_align,
)
from .base import REQUIRED, NumpyCall, Op, TensorInfo, broadcast_shapes, register


def _half_to_f32(x: np.ndarray) -> np.ndarray:
    """Half-precision floats are multiplied in f32 (OpenVINO's CPU accumulates so)."""
    return x.astype(np.float32) if x.dtype.kind == "f" and x.dtype.itemsize < 4 else x


# ---------------------------------------------------------------------------
# MatMul


def matmul_shape(a: Shape | None, b: Shape | None, transpose_a: bool,
                 transpose_b: bool) -> Shape | None:
    """Output shape of MatMul on possibly dynamic shapes (-1 dims, None rank).

    1-D operands are promoted (A to [1, K], B to [K, 1]) and the added dim removed
    afterwards; transposes apply to the two innermost dims of operands of rank >= 2.
    """
    if a is None or b is None:
        return None
    a, b = list(a), list(b)  # type: ignore[assignment]
    if not a or not b:
        raise ValueError("MatMul: inputs must have rank >= 1")
    a_vec, b_vec = len(a) == 1, len(b) == 1
    if a_vec:
        a = [1, *a]  # type: ignore[assignment]
    elif transpose_a:
        a[-2], a[-1] = a[-1], a[-2]  # type: ignore[index]
    if b_vec:
        b = [*b, 1]  # type: ignore[assignment]
    elif transpose_b:
        b[-2], b[-1] = b[-1], b[-2]  # type: ignore[index]
    k_a, k_b = a[-1], b[-2]
    if k_a >= 0 and k_b >= 0 and k_a != k_b:
        raise ValueError(f"MatMul: inner dimensions {k_a} and {k_b} differ")
    batch = broadcast_shapes(tuple(a[:-2]), tuple(b[:-2]))
    out = [*batch, a[-2], b[-1]]  # type: ignore[misc]
    if b_vec:
        out.pop(-1)
    if a_vec:
        out.pop(-2 if not b_vec else -1)
    return tuple(out)


def _swapped(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2) if x.ndim >= 2 else x


# MatMul's transposes as one numpy call each (a view: matmul reads a transposed operand
# with BLAS's own transpose flag, without copying it).
_MATMULS: dict[tuple[bool, bool], Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    (False, False): np.matmul,
    (True, False): lambda a, b: np.matmul(_swapped(a), b),
    (False, True): lambda a, b: np.matmul(a, _swapped(b)),
    (True, True): lambda a, b: np.matmul(_swapped(a), _swapped(b)),
}


@register("MatMul", "opset1")
class MatMul(Op):
    """Batched matrix product with numpy broadcasting of batch dims and optional
    transposes (``transpose_a``/``transpose_b``, default false) of the inner two dims."""

    batching = "matmul"

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.transpose_a = self.attr_bool("transpose_a", False)
        self.transpose_b = self.attr_bool("transpose_b", False)

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        a, b = np.asarray(inputs[0]), np.asarray(inputs[1])
        dtype = a.dtype
        if self.transpose_a and a.ndim >= 2:
            a = np.swapaxes(a, -1, -2)
        if self.transpose_b and b.ndim >= 2:
            b = np.swapaxes(b, -1, -2)
        out = np.matmul(_half_to_f32(a), _half_to_f32(b))
        return [np.asarray(out, dtype=dtype)]

    def numpy_call(self) -> NumpyCall | None:
        # compute() = matmul(a, b) in a's dtype; half floats are widened first.
        if type(self).compute is not MatMul.compute:
            return None
        func = _MATMULS[self.transpose_a, self.transpose_b]
        return NumpyCall(func, 2, half_floats=False, matmul=True)

    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        shape = matmul_shape(inputs[0].shape, inputs[1].shape, self.transpose_a,
                             self.transpose_b)
        return [TensorInfo(inputs[0].element_type, shape)]


# ---------------------------------------------------------------------------
# TopK


def _descending_stable(x: np.ndarray, axis: int) -> np.ndarray:
    """Indices sorting ``x`` descending along ``axis``, ties in ascending index order."""
    n = x.shape[axis]
    rev = np.flip(x, axis=axis)
    order = np.argsort(rev, axis=axis, kind="stable")
    return (n - 1) - np.flip(order, axis=axis)


class _TopKBase(Op):
    """TopK: the ``k`` largest (``mode`` max) or smallest (min) elements along ``axis``.

    ``sort``: ``value`` orders the result by value, ``index`` by position, ``none``
    (order unspecified) is treated as ``value``. Equal values keep their original order,
    which is what ``stable`` (TopK-11) asks for and what OpenVINO's CPU does anyway.
    Outputs: values, and indices of ``index_element_type`` (default i32).
    """

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.axis = self.attr_int("axis", REQUIRED)
        self.mode = self.attr_str("mode", REQUIRED).lower()
        self.sort = self.attr_str("sort", REQUIRED).lower()
        if self.mode not in ("max", "min"):
            raise ValueError(f"TopK: mode={self.mode!r} is not max or min")
        if self.sort not in ("value", "index", "none"):
            raise ValueError(f"TopK: sort={self.sort!r} is not value, index or none")
        self.index_type: ElementType = self.attr_type("index_element_type", "i32")
        self.index_dtype = numpy_dtype(self.index_type, "TopK")

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        k = int(np.asarray(inputs[1]).reshape(-1)[0])
        if k < 0:
            raise ValueError(f"TopK: k={k} is negative")
        axis = normalize_axis(self.axis, x.ndim)
        if k > x.shape[axis]:
            # OpenVINO's CPU plugin rejects this too (shape inference would say k).
            raise ValueError(f"TopK: k={k} exceeds the axis dimension {x.shape[axis]}")
        if self.mode == "max":
            order = _descending_stable(x, axis)
        else:
            order = np.argsort(x, axis=axis, kind="stable")
        idx = np.take(order, np.arange(k), axis=axis)
        if self.sort == "index":
            idx = np.sort(idx, axis=axis)
        values = np.take_along_axis(x, idx, axis=axis)
        return [values, idx.astype(self.index_dtype)]

    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        shape = inputs[0].shape
        if shape is not None:
            axis = normalize_axis(self.axis, len(shape))
            k = const_scalar(values[1]) if len(values) > 1 else None
            # A known k is the dim, even beyond the input's (as OpenVINO infers it).
            new = -1 if k is None else int(k)
            shape = (*shape[:axis], new, *shape[axis + 1:])
        return [TensorInfo(inputs[0].element_type, shape), TensorInfo(self.index_type, shape)]


@register("TopK", "opset1")
class TopK1(_TopKBase):
    """TopK-1."""


@register("TopK", "opset3")
class TopK3(_TopKBase):
    """TopK-3: as TopK-1, with more index and k types allowed."""


@register("TopK", "opset11")
class TopK11(_TopKBase):
    """TopK-11: adds ``stable`` (default false); ties keep their order either way."""

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.stable = self.attr_bool("stable", False)


# ---------------------------------------------------------------------------
# CumSum


@register("CumSum", "opset3")
class CumSum(Op):
    """Cumulative sum along the scalar ``axis`` input (default 0); ``exclusive`` leaves
    out the element itself, ``reverse`` sums from the end."""

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.exclusive = self.attr_bool("exclusive", False)
        self.reverse = self.attr_bool("reverse", False)

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        axis = int(np.asarray(inputs[1]).reshape(-1)[0]) if len(inputs) > 1 else 0
        axis = normalize_axis(axis, x.ndim)
        work = np.flip(x, axis) if self.reverse else x
        out = np.cumsum(work, axis=axis, dtype=x.dtype)
        if self.exclusive:
            out = out - work
        if self.reverse:
            out = np.flip(out, axis)
        return [np.ascontiguousarray(out) if out.ndim else np.asarray(out)]

    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        return [TensorInfo(inputs[0].element_type, inputs[0].shape)]


# ---------------------------------------------------------------------------
# Einsum


@register("Einsum", "opset7")
class Einsum(Op):
    """Einstein summation per ``equation`` (``...`` allowed) over any number of inputs."""

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.equation = self.attr_str("equation", REQUIRED).replace(" ", "")

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        dtype = np.asarray(inputs[0]).dtype
        args = [_half_to_f32(np.asarray(v)) for v in inputs]
        return [np.asarray(np.einsum(self.equation, *args), dtype=dtype)]


# ---------------------------------------------------------------------------
# Range


class _RangeBase(Op):
    """start + i * step for i in [0, max(ceil((stop - start) / step), 0)).

    Integer outputs truncate start, stop and step toward zero first (as a Convert
    to the output type would).
    """

    step_allows_zero = True

    def output_type(self, inputs: Sequence[TensorInfo]) -> ElementType:
        raise NotImplementedError

    def _count(self, start: float, stop: float, step: float, integral: bool) -> int:
        if integral:
            start, stop, step = math.trunc(start), math.trunc(stop), math.trunc(step)
        if step == 0:
            if not self.step_allows_zero:
                raise ValueError("Range: step must not be zero")
            return 0
        if (step > 0 and start >= stop) or (step < 0 and start <= stop):
            return 0
        return math.ceil(abs(stop - start) / abs(step))

    def _run(self, inputs: list[np.ndarray], dtype: np.dtype) -> np.ndarray:
        start, stop, step = (np.asarray(v).reshape(-1)[0].item() for v in inputs[:3])
        for name, v in (("start", start), ("stop", stop), ("step", step)):
            if not math.isfinite(v):
                raise ValueError(f"Range: {name} is {v}")
        integral = dtype.kind in "iu"
        if integral and any(isinstance(v, float) and not v.is_integer()
                            for v in (start, stop, step)):
            # Fractional inputs, integer output: OpenVINO's CPU counts and steps in
            # float and rounds each value to nearest-even (its shape inference would
            # truncate the inputs first instead, and usually say something else).
            count = self._count(start, stop, step, False)
            values = np.float32(start) + np.arange(count, dtype=np.float32) * np.float32(step)
            return np.rint(values).astype(dtype)
        count = self._count(start, stop, step, integral)
        if integral:
            first = np.asarray(math.trunc(start)).astype(dtype)
            delta = np.asarray(math.trunc(step)).astype(dtype)
            return first + np.arange(count, dtype=dtype) * delta
        first = np.asarray(start, dtype=dtype)
        delta = np.asarray(step, dtype=dtype)
        return (first + np.arange(count, dtype=dtype) * delta).astype(dtype, copy=False)

    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        et = self.output_type(inputs)
        known = [const_scalar(v) if v is not None else None for v in values[:3]]
        if any(v is None for v in known):
            return [TensorInfo(et, (-1,))]
        start, stop, step = (float(v) for v in known)  # type: ignore[arg-type]
        return [TensorInfo(et, (self._count(start, stop, step, et.is_integral),))]


@register("Range", "opset1")
class Range1(_RangeBase):
    """Range-1: the output has the inputs' element type; step must not be zero."""

    step_allows_zero = False

    def output_type(self, inputs: Sequence[TensorInfo]) -> ElementType:
        return inputs[0].element_type

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        return [self._run(inputs, np.asarray(inputs[0]).dtype)]


@register("Range", "opset4")
class Range4(_RangeBase):
    """Range-4: ``output_type`` names the result type; the inputs may differ from it."""

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.out_type: ElementType = self.attr_type("output_type", REQUIRED)
        self.dtype = numpy_dtype(self.out_type, "Range")

    def output_type(self, inputs: Sequence[TensorInfo]) -> ElementType:
        return self.out_type

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        return [self._run(inputs, self.dtype)]


# ---------------------------------------------------------------------------
# FakeQuantize


@register("FakeQuantize", "opset1")
class FakeQuantize(Op):
    """Quantise to ``levels`` steps between input_low/high, then map to output_low/high.

    x <= min(il, ih) -> ol; x > max(il, ih) -> oh; else
    round((x - il) / (ih - il) * (levels - 1)) / (levels - 1) * (oh - ol) + ol,
    rounding half to even.
    """

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.levels = self.attr_int("levels", REQUIRED)
        self.auto_broadcast = parse_broadcast(self.type, self.attr_str("auto_broadcast", "numpy"))

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        lims = [np.asarray(v) for v in inputs[1:5]]
        if self.auto_broadcast == "pdpd":
            lims = [pdpd_align(v, x.ndim, -1) for v in lims]
        w = _half_to_f32(x)
        il, ih, ol, oh = (v.astype(w.dtype, copy=False) for v in lims)
        steps = w.dtype.type(self.levels - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.rint((w - il) / (ih - il) * steps) / steps * (oh - ol) + ol
        out = np.where(w <= np.minimum(il, ih), ol, np.where(w > np.maximum(il, ih), oh, q))
        return [np.asarray(out, dtype=x.dtype)]

    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        shape = inputs[0].shape
        if self.auto_broadcast == "numpy":
            shape = broadcast_shapes(*(i.shape for i in inputs[:5]))
        return [TensorInfo(inputs[0].element_type, shape)]
