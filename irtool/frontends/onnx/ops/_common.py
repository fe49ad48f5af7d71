"""Helpers shared by the translator modules: constants, axes, shapes, final ops.

The small structural ops (ShapeOf, Convert, Unsqueeze, Squeeze, Reshape to a
constant shape) are added with output types computed here, so that translators
do not depend on every kernel's inference for plumbing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ....ir.types import ELEMENT_TYPES, ElementType
from ....opset import TensorInfo
from ..context import NodeContext, Value
from ..tensor_types import ONNX_TO_ELEMENT_TYPE

I64 = ELEMENT_TYPES["i64"]
I32 = ELEMENT_TYPES["i32"]
F32 = ELEMENT_TYPES["f32"]
BOOL = ELEMENT_TYPES["boolean"]

INT64_MAX = np.iinfo(np.int64).max

FOLD_LIMIT = 1 << 22
"""Elements a translator may fold into a Const from static dims; above it the run-time form
is emitted, so that a declared dim of 2**40 asks for no memory at conversion."""

MAX_CONST_BYTES = 1 << 30
"""The largest Const a translator makes from attributes or dims (a weight in the file is
not limited: its bytes are there already)."""


def check_size(ctx: NodeContext, shape: Sequence[int], what: str, itemsize: int = 8) -> None:
    """Refuse, before anything is allocated, a Const of ``shape`` over ``MAX_CONST_BYTES``."""
    size = int(np.prod([max(int(d), 0) for d in shape], dtype=object)) * itemsize
    if size > MAX_CONST_BYTES:
        raise ctx.error(f"{what} of shape {list(shape)} would take {size / 2**30:.3g} GiB "
                        f"(at most {MAX_CONST_BYTES >> 30} GiB are made)")


# -- constants ------------------------------------------------------------------------
def i64(ctx: NodeContext, values: Any) -> Value:
    """An i64 Const (a scalar for a Python int, 1-D for a list)."""
    return ctx.const(np.asarray(values, dtype=np.int64), I64)


def const_of(ctx: NodeContext, value: Any, like: Value | ElementType) -> Value:
    """A Const holding ``value`` in the element type of ``like``."""
    et = like if isinstance(like, ElementType) else like.element_type
    if et.dtype is None:
        raise ctx.error(f"element type {et.name} has no numpy equivalent for a constant")
    return ctx.const(np.asarray(value).astype(et.dtype), et)


def onnx_type(ctx: NodeContext, code: int) -> ElementType:
    """The element type of an ONNX ``TensorProto`` data type code."""
    et = ONNX_TO_ELEMENT_TYPE.get(int(code))
    if et is None:
        import onnx

        name = onnx.TensorProto.DataType.Name(int(code)) if int(code) in \
            onnx.TensorProto.DataType.values() else str(code)
        raise ctx.error(f"element type {name} is not supported")
    return et


# -- ranks and axes --------------------------------------------------------------------
def rank_of(ctx: NodeContext, value: Value) -> int:
    if value.rank is None:
        raise ctx.error("the input rank must be known")
    return value.rank


def norm_axis(ctx: NodeContext, axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        raise ctx.error(f"axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def axis_of(ctx: NodeContext, axis: int, value: Value) -> int:
    """``axis`` of ``value``, normalised when its rank is known; when it is not, as given,
    for an IR op that counts a negative axis from the end itself (translators ask for the
    rank only where they use it)."""
    return axis if value.rank is None else norm_axis(ctx, axis, value.rank)


def norm_axes(ctx: NodeContext, axes: Sequence[int], rank: int) -> list[int]:
    return [norm_axis(ctx, int(a), rank) for a in axes]


# -- structural ops with known output types ----------------------------------------------
def shape_of(ctx: NodeContext, value: Value) -> Value:
    """``ShapeOf-3`` (i64) of ``value``."""
    return ctx.op("ShapeOf", "opset3", [value], {"output_type": "i64"},
                   outputs=[TensorInfo(I64, (value.rank if value.rank is not None else -1,))])[0]


def dim_of(ctx: NodeContext, value: Value, axis: int, keep_1d: bool = True) -> Value:
    """Dimension ``axis`` of ``value`` as an i64 tensor ([1] or scalar); a Const when static."""
    if value.shape is not None and value.shape[axis] >= 0:
        d = value.shape[axis]
        return i64(ctx, [d] if keep_1d else d)
    idx = i64(ctx, [axis] if keep_1d else axis)
    return ctx.op("Gather", "opset8", [shape_of(ctx, value), idx, i64(ctx, 0)],
                   {"batch_dims": 0}, outputs=[TensorInfo(I64, (1,) if keep_1d else ())])[0]


def convert(ctx: NodeContext, value: Value, et: ElementType) -> Value:
    """``Convert-1`` to ``et`` (the value itself when it already has that type)."""
    if value.element_type == et:
        return value
    return ctx.op("Convert", "opset1", [value], {"destination_type": et.name},
                   outputs=[TensorInfo(et, value.shape)])[0]


def unsqueeze(ctx: NodeContext, value: Value, axes: Sequence[int]) -> Value:
    """``Unsqueeze-1`` with constant ``axes`` (may be negative: of the output rank)."""
    shape = None
    if value.shape is not None:
        out_rank = len(value.shape) + len(axes)
        norm = sorted(a + out_rank if a < 0 else a for a in axes)
        dims = list(value.shape)
        for a in norm:
            dims.insert(a, 1)
        shape = tuple(dims)
    return ctx.op("Unsqueeze", "opset1", [value, i64(ctx, list(axes))],
                   outputs=[TensorInfo(value.element_type, shape)])[0]


def squeeze(ctx: NodeContext, value: Value, axes: Sequence[int]) -> Value:
    """``Squeeze-1`` of constant ``axes`` (dims that must be 1)."""
    shape = None
    if value.shape is not None:
        rank = len(value.shape)
        drop = {a + rank if a < 0 else a for a in axes}
        shape = tuple(d for i, d in enumerate(value.shape) if i not in drop)
    return ctx.op("Squeeze", "opset1", [value, i64(ctx, list(axes))],
                   outputs=[TensorInfo(value.element_type, shape)])[0]


def to_scalar(ctx: NodeContext, value: Value) -> Value:
    """A 1-element 1-D tensor as a scalar (scalars pass unchanged)."""
    if value.rank == 0:
        return value
    if value.rank == 1:
        return squeeze(ctx, value, [0])
    return ctx.op("Reshape", "opset1", [value, i64(ctx, [])], {"special_zero": False},
                   outputs=[TensorInfo(value.element_type, ())])[0]


def to_1d(ctx: NodeContext, value: Value) -> Value:
    """A scalar as a 1-element 1-D tensor (1-D tensors pass unchanged)."""
    if value.rank == 1:
        return value
    return ctx.op("Reshape", "opset1", [value, i64(ctx, [-1])], {"special_zero": False},
                   outputs=[TensorInfo(value.element_type, (-1,) if value.rank is None else
                                       (int(np.prod(value.shape)) if value.shape is not None
                                        and all(d >= 0 for d in value.shape) else -1,))])[0]


def reshape(ctx: NodeContext, value: Value, shape: Sequence[int] | Value,
            special_zero: bool = False) -> Value:
    """``Reshape-1`` to a constant shape list or a shape tensor."""
    if isinstance(shape, Value):
        return ctx.op("Reshape", "opset1", [value, shape], {"special_zero": special_zero})[0]
    dims = [int(d) for d in shape]
    out = _reshape_dims(value.shape, dims, special_zero)
    return ctx.op("Reshape", "opset1", [value, i64(ctx, dims)], {"special_zero": special_zero},
                   outputs=[TensorInfo(value.element_type, out)])[0]


def _reshape_dims(src: tuple[int, ...] | None, dims: list[int],
                  special_zero: bool) -> tuple[int, ...]:
    out = list(dims)
    if special_zero and src is not None:
        out = [src[i] if d == 0 and i < len(src) else d for i, d in enumerate(out)]
    if -1 in out and src is not None and all(d >= 0 for d in src):
        known = int(np.prod([d for d in out if d != -1]))
        total = int(np.prod(src))
        if known > 0 and out.count(-1) == 1:
            out[out.index(-1)] = total // known
    return tuple(-1 if (special_zero and d == 0 and src is None) else d for d in out)


def concat_1d(ctx: NodeContext, parts: Sequence[Value]) -> Value:
    """Concatenate 1-D i64 tensors."""
    if len(parts) == 1:
        return parts[0]
    sizes = [p.shape[0] if p.shape is not None and p.rank == 1 else -1 for p in parts]
    total = sum(sizes) if all(s >= 0 for s in sizes) else -1
    return ctx.op("Concat", "opset1", list(parts), {"axis": 0},
                   outputs=[TensorInfo(parts[0].element_type, (total,))])[0]


def binary(ctx: NodeContext, type: str, a: Value, b: Value, version: str = "opset1",
           **attrs: Any) -> Value:
    """An element-wise binary op with numpy broadcasting (intermediate value)."""
    attrs.setdefault("auto_broadcast", "numpy")
    return ctx.op(type, version, [a, b], attrs)[0]


def legacy_broadcast(ctx: NodeContext, a: Value, b: Value) -> Value:
    """Align B to A for the ``broadcast``/``axis`` attributes of ops before opset 7.

    With ``broadcast=1`` and an ``axis``, B's dims line up with A's starting at
    ``axis``: trailing 1s are appended to B so numpy broadcasting does the rest.
    """
    if not ctx.attr("broadcast", 0) or not ctx.has_attr("axis"):
        return b
    ra, rb = rank_of(ctx, a), rank_of(ctx, b)
    axis = norm_axis(ctx, int(ctx.attr("axis")), ra)
    extra = ra - axis - rb
    if extra <= 0:
        return b
    return unsqueeze(ctx, b, list(range(rb, rb + extra)))


def flatten_2d(ctx: NodeContext, value: Value, axis: int) -> Value:
    """``value`` reshaped to ``[prod(dims[:axis]), prod(dims[axis:])]`` (ONNX Flatten).

    The rank is needed only for a negative ``axis``: otherwise the run-time shape's
    first ``axis`` dims give the first dimension."""
    if value.rank is None and axis >= 0:
        return reshape(ctx, value, [1, -1]) if axis == 0 else _flatten_at(ctx, value, axis)
    rank = rank_of(ctx, value)
    axis = norm_axis(ctx, axis, rank + 1) if axis != rank else rank
    shape = value.shape
    if shape is not None and all(d >= 0 for d in shape):
        return reshape(ctx, value, [int(np.prod(shape[:axis])), int(np.prod(shape[axis:]))])
    if axis == 0:
        return reshape(ctx, value, [1, -1])
    if axis == rank:
        return reshape(ctx, value, [-1, 1])
    if shape is not None and all(d >= 0 for d in shape[axis:]):
        return reshape(ctx, value, [-1, int(np.prod(shape[axis:]))])
    if shape is not None and all(d >= 0 for d in shape[:axis]):
        return reshape(ctx, value, [int(np.prod(shape[:axis])), -1])
    return _flatten_at(ctx, value, axis)


def _flatten_at(ctx: NodeContext, value: Value, axis: int) -> Value:
    """``flatten_2d`` from the run-time shape: its first ``axis`` dims multiplied."""
    dims = shape_of(ctx, value)
    head = ctx.op("Slice", "opset8", [dims, i64(ctx, [0]), i64(ctx, [axis]), i64(ctx, [1]),
                                       i64(ctx, [0])], outputs=[TensorInfo(I64, (axis,))])[0]
    first = ctx.op("ReduceProd", "opset1", [head, i64(ctx, [0])], {"keep_dims": True},
                    outputs=[TensorInfo(I64, (1,))])[0]
    target = concat_1d(ctx, [first, i64(ctx, [-1])])
    out_shape = (-1, -1)
    return ctx.op("Reshape", "opset1", [value, target], {"special_zero": False},
                   outputs=[TensorInfo(value.element_type, out_shape)])[0]


def all_axes(ctx: NodeContext, value: Value) -> Value:
    """A 1-D i64 tensor of every axis of ``value`` (a Const when the rank is known)."""
    if value.rank is not None:
        return i64(ctx, list(range(value.rank)))
    rank = ctx.op("ShapeOf", "opset3", [shape_of(ctx, value)], {"output_type": "i64"},
                   outputs=[TensorInfo(I64, (1,))])[0]
    return ctx.op("Range", "opset4", [i64(ctx, 0), to_scalar(ctx, rank), i64(ctx, 1)],
                   {"output_type": "i64"}, outputs=[TensorInfo(I64, (-1,))])[0]


# -- static ranks under run-time axes ------------------------------------------------------
# OpenVINO's CPU plugin refuses dynamic ranks, and Squeeze/Unsqueeze/Reduce* with axes
# computed at run time have one. When the number of axes is known the output rank is too;
# these helpers build the output shape explicitly and Reshape to it.
def _axis_mask(ctx: NodeContext, axes: Value, rank: int) -> Value:
    """i64 [rank]: 1 at each (possibly negative) axis in ``axes``, 0 elsewhere."""
    axes = convert(ctx, axes, I64)
    count = axes.shape[0] if axes.shape is not None and axes.rank == 1 else -1
    norm = ctx.op("FloorMod", "opset1", [axes, i64(ctx, rank)], {"auto_broadcast": "numpy"},
                   outputs=[TensorInfo(I64, (count,))])[0]
    ones = ctx.op("Broadcast", "opset3", [i64(ctx, 1), shape_of(ctx, norm)], {"mode": "numpy"},
                   outputs=[TensorInfo(I64, (count,))])[0]
    return ctx.op("ScatterElementsUpdate", "opset12",
                   [i64(ctx, [0] * rank), norm, ones, i64(ctx, 0)],
                   {"reduction": "none", "use_init_val": True},
                   outputs=[TensorInfo(I64, (rank,))])[0]


def _positions(ctx: NodeContext, flags: Value, count: int) -> Value:
    """Ascending positions of the ``count`` entries equal to 1 in a 0/1 i64 vector."""
    _, index = ctx.op("TopK", "opset11", [flags, i64(ctx, count)],
                      {"axis": 0, "mode": "max", "sort": "index", "index_element_type": I64,
                       "stable": True},
                      outputs=[TensorInfo(I64, (count,)), TensorInfo(I64, (count,))])
    return index


def drop_axes(ctx: NodeContext, value: Value, axes: Value, count: int) -> Value:
    """Remove ``count`` unit dims listed by a run-time ``axes`` tensor, keeping a static rank."""
    rank = rank_of(ctx, value)
    out_rank = rank - count
    if out_rank == 0:
        return reshape(ctx, value, [])
    keep = ctx.op("Subtract", "opset1", [i64(ctx, 1), _axis_mask(ctx, axes, rank)],
                   {"auto_broadcast": "numpy"}, outputs=[TensorInfo(I64, (rank,))])[0]
    dims = ctx.op("Gather", "opset8", [shape_of(ctx, value), _positions(ctx, keep, out_rank),
                                        i64(ctx, 0)], {"batch_dims": 0},
                   outputs=[TensorInfo(I64, (out_rank,))])[0]
    return ctx.op("Reshape", "opset1", [value, dims], {"special_zero": False},
                   outputs=[TensorInfo(value.element_type, (-1,) * out_rank)])[0]


def insert_axes(ctx: NodeContext, value: Value, axes: Value, count: int) -> Value:
    """Insert ``count`` unit dims at run-time ``axes`` (of the output), keeping a static rank."""
    rank = rank_of(ctx, value)
    out_rank = rank + count
    if rank == 0:
        return reshape(ctx, value, [1] * out_rank)
    keep = ctx.op("Subtract", "opset1", [i64(ctx, 1), _axis_mask(ctx, axes, out_rank)],
                   {"auto_broadcast": "numpy"}, outputs=[TensorInfo(I64, (out_rank,))])[0]
    dims = ctx.op("ScatterElementsUpdate", "opset12",
                   [i64(ctx, [1] * out_rank), _positions(ctx, keep, rank), shape_of(ctx, value),
                    i64(ctx, 0)], {"reduction": "none", "use_init_val": True},
                   outputs=[TensorInfo(I64, (out_rank,))])[0]
    return ctx.op("Reshape", "opset1", [value, dims], {"special_zero": False},
                   outputs=[TensorInfo(value.element_type, (-1,) * out_rank)])[0]


def static_count(value: Value | None) -> int | None:
    """The length of a 1-D tensor when its shape says it, else None."""
    if value is None or value.shape is None or value.rank != 1 or value.shape[0] < 0:
        return None
    return value.shape[0]
