"""The iteration structure of a Loop / TensorIterator, shared by the kernels
(``control_flow``) and the loop code generator (``codegen.loops``).

* What compiling a port map gives: ``Iteration`` (which body Parameter takes which
  outer input, slice, back edge or the iteration number; which body Result feeds
  which output), with ``SlicedInput``, ``ConcatOutput`` and ``ZeroIteration``.
* What the generator gives back: ``Iterate`` (the generated loop) and ``Stacking``.
* The run-time work on the iteration axis: cutting sliced inputs into parts
  (``slice_bounds``, ``slice_parts``), joining the iterations' values
  (``concatenate``, ``stack``), and errors that name the layer and the iteration.

The semantics (bounds, reverse walks, zero iterations) are written down in
``control_flow``'s docstring.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..core.errors import ExecutionError, IRToolError
from ..core.scopes import layer_path
from ..ir.graph import Layer, describe_layer, sliced_range
from .plan import Kernel, Plan


@dataclass(frozen=True)
class SlicedInput:
    """Outer input ``outer`` cut along ``axis`` into parts for body Parameter ``param``."""

    param: int
    outer: int
    axis: int
    start: int
    end: int
    stride: int
    part_size: int
    port_id: int


@dataclass(frozen=True)
class ConcatOutput:
    """An output concatenating body Result ``result`` over iterations along ``axis``."""

    output: int
    result: int
    axis: int
    reverse: bool
    empty_dims: tuple[int, ...] | None  # declared dims (axis -> 0) for zero iterations
    empty_dtype: np.dtype | None
    why_no_empty: str


@dataclass
class ZeroIteration:
    """Where an output without ``axis`` comes from when the body never ran."""

    outer: int | None = None  # take this outer input
    value: np.ndarray | None = None  # or this fixed value
    error: str | None = None


@dataclass
class Iteration:
    """Everything an iterating kernel needs, as index lists over the body plan."""

    body: Plan
    fixed: list[tuple[int, int]] = field(default_factory=list)  # (param, outer input)
    slices: list[SlicedInput] = field(default_factory=list)
    back: list[tuple[int, int]] = field(default_factory=list)  # (param, result)
    current: int | None = None  # param taking the iteration number
    current_dtype: np.dtype = field(default_factory=lambda: np.dtype(np.int64))
    current_shape: tuple[int, ...] = ()
    current_fed_back: bool = False  # a back edge drives it instead of the counter
    condition: int | None = None  # result holding the continue condition
    last: list[tuple[int, int]] = field(default_factory=list)  # (output, result)
    concat: list[ConcatOutput] = field(default_factory=list)
    zero: dict[int, ZeroIteration] = field(default_factory=dict)  # output -> source
    num_outputs: int = 0
    iterate: Iterate | None = None  # the generated iterations (codegen.loops), set last


@dataclass(frozen=True)
class Stacking:
    """Concatenated output fed by ``Unsqueeze(v, axis)``: ``v`` is what was collected."""

    step: int  # the Unsqueeze step (body plan index), for its kernel and error messages
    axis: int
    axes: np.ndarray  # the Unsqueeze's constant second input


@dataclass
class Iterate:
    """A compiled iteration: ``run(outer, parts, lim, cond)`` runs at most ``lim``
    iterations (``parts[k]`` are the parts of sliced input ``k``) and returns the
    iteration count, the final condition, the last values of ``it.last``'s Results and
    the collected values of each concatenated output.

    ``squeezed`` maps sliced inputs (index into ``it.slices``) whose body Parameter only
    feeds ``Squeeze(part, axis)`` to that axis; ``run_squeezed`` is the variant that takes
    those inputs' parts already squeezed (and skips the Squeeze), usable on a run where
    every such axis is the slicing axis.
    """

    run: Callable[[list, list, int, bool], tuple[int, bool, list, list]]
    stacking: dict[int, Stacking]  # concat index -> fusion
    source: str
    squeezed: dict[int, int]
    run_squeezed: Callable[[list, list, int, bool], tuple[int, bool, list, list]] | None


def fail(layer: Layer, scope: str, message: str, line: int | None = None) -> ExecutionError:
    return ExecutionError(message, layer=describe_layer(layer, scope), line=line)


def annotate_iteration(err: ExecutionError, where: str) -> None:
    """Add the loop iteration an error happened in, innermost first: ``(at iteration 2 of
    3/body/5; iteration 0 of 3)``."""
    if err.message.endswith(")") and " (at iteration " in err.message:
        err.message = f"{err.message[:-1]}; {where})"
    else:
        err.message = f"{err.message} (at {where})"
    err.args = (err.format(),)


def slice_bounds(spec: SlicedInput, value: np.ndarray, layer: Layer, scope: str
            ) -> tuple[np.ndarray, int, int, int, int]:
    """``value`` as an array, the normalised axis, the range ``[lo, hi)`` and the part
    count of a sliced input; raises when the range does not fit or split."""
    arr = np.asarray(value)
    axis = spec.axis + arr.ndim if spec.axis < 0 else spec.axis
    if not 0 <= axis < arr.ndim:
        raise fail(layer, scope, f"sliced input on port {spec.port_id}: axis {spec.axis} is out "
                    f"of range for shape {list(arr.shape)}")
    dim = arr.shape[axis]
    lo, hi = sliced_range(dim, spec.start, spec.end, spec.stride)
    if lo < 0 or hi > dim or lo > hi:
        raise fail(layer, scope, f"sliced input on port {spec.port_id}: start={spec.start} "
                    f"end={spec.end} stride={spec.stride} do not fit axis {spec.axis} of "
                    f"length {dim}")
    step, part = abs(spec.stride), spec.part_size
    length = hi - lo
    count = 0 if length < part else (length - part) // step + 1
    if length >= part and (length - part) % step:
        raise fail(layer, scope, f"sliced input on port {spec.port_id}: the range of length "
                    f"{length} does not split into parts of {part} every {step}")
    return arr, axis, lo, hi, count


def slice_parts(spec: SlicedInput, value: np.ndarray, limit: int, layer: Layer, scope: str,
           squeeze: bool = False) -> list[np.ndarray]:
    """The first ``limit`` parts of a sliced input, in iteration order: views
    ``value[..., b:b + part_size, ...]`` (no copies); with ``squeeze`` (part size 1),
    ``value[..., b, ...]``, the part with its slicing axis squeezed away."""
    arr, axis, lo, hi, count = slice_bounds(spec, value, layer, scope)
    count = min(count, limit)
    step, part = abs(spec.stride), spec.part_size
    if part == 1:
        # rows[b] is arr[..., b:b + 1, ...] (squeezed: arr[..., b, ...]): list() makes
        # the views in C.
        rows = np.moveaxis(arr if squeeze else np.expand_dims(arr, axis + 1), axis, 0)
        walk = rows[lo::step] if spec.stride > 0 else rows[hi - 1::-step]
        return list(walk[:count])
    lead = (slice(None),) * axis
    first = lo if spec.stride > 0 else hi - part
    sign = 1 if spec.stride > 0 else -1
    return [arr[(*lead, slice(b, b + part))]
            for b in range(first, first + sign * step * count, sign * step)]


def squeezes_match(it: Iteration, outer: list[np.ndarray], squeezed: dict[int, int]) -> bool:
    """Is every Squeeze axis in ``squeezed`` (sliced input -> axis) its input's slicing
    axis, once both are normalised against the input's rank?"""
    for k, axis in squeezed.items():
        spec = it.slices[k]
        rank = np.ndim(outer[spec.outer])
        sliced = spec.axis + rank if spec.axis < 0 else spec.axis
        if not -rank <= axis < rank or (axis + rank if axis < 0 else axis) != sliced:
            return False
    return True


def concatenate(values: list[np.ndarray], spec: ConcatOutput, layer: Layer,
                 scope: str) -> np.ndarray:
    if spec.reverse:
        values = values[::-1]
    first = np.asarray(values[0])
    if first.ndim == 0:
        if spec.axis not in (0, -1):
            raise fail(layer, scope, f"output port {layer.outputs[spec.output].id}: scalar "
                        f"slices concatenate along axis 0 only, not {spec.axis}")
        return np.stack(values)
    try:  # numpy takes a negative axis as is, and refuses one out of range
        return np.concatenate(values, axis=spec.axis)
    except ValueError as err:  # numpy's AxisError is a ValueError too
        raise fail(layer, scope, f"output port {layer.outputs[spec.output].id}: cannot "
                    f"concatenate the iterations' values along axis {spec.axis}: {err}") from None


def stack(values: list, spec: ConcatOutput, fusion: Stacking, body: Plan, layer: Layer,
          scope: str) -> np.ndarray:
    """The concatenation of ``Unsqueeze(v, fusion.axis)`` over the collected ``values``
    along ``spec.axis`` (reversed when ``spec.reverse``), computed as one ``np.stack``
    when that is provably the same, else exactly as the unfused loop would."""
    rank = np.ndim(values[0]) + 1
    axis = fusion.axis + rank if fusion.axis < 0 else fusion.axis
    cat = spec.axis + rank if spec.axis < 0 else spec.axis
    if 0 <= axis < rank and axis == cat:
        try:
            return np.stack(values[::-1] if spec.reverse else values, axis=axis)
        except ValueError:
            pass  # shapes differ: the general path gives the error (or result) it always did
    kernel: Kernel = body.steps[fusion.step].kernel
    expanded = []
    for i, v in enumerate(values):
        try:
            expanded.append(kernel([v, fusion.axes])[0])
        except IRToolError:
            raise
        except Exception as err:
            error = body._failure(fusion.step, (), err)
            annotate_iteration(error, f"iteration {i} of {layer_path(scope, layer.id)}")  # type: ignore[arg-type]
            raise error from err
    return concatenate(expanded, spec, layer, scope)
