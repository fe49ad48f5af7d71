"""Indexing ONNX operators: Gather, GatherElements, GatherND, Scatter, ScatterElements,
ScatterND, NonZero, OneHot, Trilu, Compress, Unique, ReverseSequence, EyeLike."""

from __future__ import annotations

import numpy as np

from ....opset import TensorInfo
from ..context import NodeContext, Value, onnx_op
from ._common import (
    FOLD_LIMIT,
    I64,
    axis_of,
    binary,
    const_of,
    convert,
    dim_of,
    i64,
    norm_axis,
    onnx_type,
    rank_of,
    reshape,
    shape_of,
    squeeze,
    to_scalar,
    unsqueeze,
)


@onnx_op("Gather", 1, 11, 13)
def gather(ctx: NodeContext) -> list[Value | None]:
    data, indices = ctx.required_input(0), ctx.required_input(1)
    axis = axis_of(ctx, int(ctx.attr("axis", 0)), data)
    return [ctx.op("Gather", "opset8", [data, indices, i64(ctx, axis)], {"batch_dims": 0},
                   refine=ctx.onnx_types(0))[0]]


def _known_non_negative(ctx: NodeContext, indices: Value) -> bool:
    const = ctx.const_value(indices)
    return const is not None and bool((const >= 0).all())


def _non_negative(ctx: NodeContext, indices: Value, data: Value, axis: int) -> Value:
    """Indices with negative entries wrapped by the axis length (dropped when provably >= 0)."""
    if _known_non_negative(ctx, indices):
        return indices
    dim = convert(ctx, dim_of(ctx, data, axis, keep_1d=False), indices.element_type)
    negative = binary(ctx, "Less", indices, const_of(ctx, 0, indices))
    return ctx.op("Select", "opset1", [negative, binary(ctx, "Add", indices, dim), indices],
                   {"auto_broadcast": "numpy"}, outputs=[indices.info])[0]


@onnx_op("GatherElements", 11, 13)
def gather_elements(ctx: NodeContext) -> list[Value | None]:
    data, indices = ctx.required_input(0), ctx.required_input(1)
    axis = int(ctx.attr("axis", 0))
    # The rank matters only for a negative axis, and then only to wrap negative indices.
    axis = axis_of(ctx, axis, data) if axis >= 0 or _known_non_negative(ctx, indices) else \
        norm_axis(ctx, axis, rank_of(ctx, data))
    indices = _non_negative(ctx, indices, data, axis)
    return [ctx.op("GatherElements", "opset6", [data, indices], {"axis": axis},
                   refine=ctx.onnx_types(0))[0]]


@onnx_op("GatherND", 11, 12, 13)
def gather_nd(ctx: NodeContext) -> list[Value | None]:
    data, indices = ctx.required_input(0), ctx.required_input(1)
    return [ctx.op("GatherND", "opset8", [data, indices],
                  {"batch_dims": int(ctx.attr("batch_dims", 0))}, refine=ctx.onnx_types(0))[0]]


_REDUCTIONS = {"none": "none", "add": "sum", "mul": "prod", "max": "max", "min": "min"}


def _reduction(ctx: NodeContext) -> str:
    name = ctx.attr("reduction", "none")
    if name not in _REDUCTIONS:
        raise ctx.error(f"reduction {name!r} is not supported")
    return _REDUCTIONS[name]


@onnx_op("ScatterElements", 11, 13, 16, 18)
@onnx_op("Scatter", 9, 11)
def scatter_elements(ctx: NodeContext) -> list[Value | None]:
    data, indices, updates = (ctx.required_input(i) for i in range(3))
    axis = axis_of(ctx, int(ctx.attr("axis", 0)), data)
    return [ctx.op("ScatterElementsUpdate", "opset12", [data, indices, updates,
                                                            i64(ctx, axis)],
                  {"reduction": _reduction(ctx), "use_init_val": True},
                  refine=ctx.onnx_types(0))[0]]


@onnx_op("ScatterND", 11, 13, 16, 18)
def scatter_nd(ctx: NodeContext) -> list[Value | None]:
    data, indices, updates = (ctx.required_input(i) for i in range(3))
    return [ctx.op("ScatterNDUpdate", "opset15", [data, indices, updates],
                  {"reduction": _reduction(ctx)}, refine=ctx.onnx_types(0))[0]]


@onnx_op("NonZero", 9, 13)
def non_zero(ctx: NodeContext) -> list[Value | None]:
    return [ctx.op("NonZero", "opset3", [ctx.required_input(0)], {"output_type": I64},
                   refine=ctx.onnx_types(0))[0]]


@onnx_op("OneHot", 9, 11, 28)
def one_hot(ctx: NodeContext) -> list[Value | None]:
    indices, depth, values = (ctx.required_input(i) for i in range(3))
    if not indices.element_type.is_integral:
        indices = convert(ctx, indices, I64)
    depth = to_scalar(ctx, convert(ctx, depth, I64))
    const = ctx.const_value(values)
    if const is not None:
        off = ctx.const(np.asarray(const.ravel()[0]), values.element_type)
        on = ctx.const(np.asarray(const.ravel()[1]), values.element_type)
    else:
        halves = ctx.op("Split", "opset1", [values, i64(ctx, 0)], {"num_splits": 2},
                        outputs=[TensorInfo(values.element_type, (1,))] * 2)
        off, on = (squeeze(ctx, h, [0]) for h in halves)
    axis = int(ctx.attr("axis", -1))
    if indices.rank is not None:
        axis = norm_axis(ctx, axis, indices.rank + 1)
    # ONNX counts negative indices from the end (index + depth).
    return [ctx.op("OneHot", "opset16", [indices, depth, on, off],
                  {"axis": axis, "negative_indices_mode": "normalize"},
                  refine=ctx.onnx_types(0))[0]]


@onnx_op("Trilu", 14)
def trilu(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    rank = rank_of(ctx, x)
    if rank < 2:
        raise ctx.error("the input must have rank >= 2")
    upper = bool(ctx.attr("upper", 1))
    k_value = ctx.input(1)
    k_const = ctx.const_value(k_value) if k_value is not None else np.int64(0)
    zero = const_of(ctx, 0, x)
    rows_n, cols_n = (x.shape[-2], x.shape[-1]) if x.shape is not None else (-1, -1)
    if k_const is not None and 0 <= rows_n * cols_n <= FOLD_LIMIT and rows_n >= 0:
        k = int(np.asarray(k_const).ravel()[0])
        ones = np.ones((rows_n, cols_n), dtype=bool)
        mask = np.triu(ones, k) if upper else np.tril(ones, k)
        return [ctx.op("Select", "opset1", [ctx.const(mask), x, zero],
                      {"auto_broadcast": "numpy"}, refine=ctx.onnx_types(0))[0]]
    # Row index r and column index c: keep c - r >= k (upper) or c - r <= k (lower).
    rows = ctx.op("Range", "opset4", [i64(ctx, 0), dim_of(ctx, x, rank - 2, keep_1d=False),
                                       i64(ctx, 1)], {"output_type": I64},
                   outputs=[TensorInfo(I64, (rows_n,))])[0]
    cols = ctx.op("Range", "opset4", [i64(ctx, 0), dim_of(ctx, x, rank - 1, keep_1d=False),
                                       i64(ctx, 1)], {"output_type": I64},
                   outputs=[TensorInfo(I64, (cols_n,))])[0]
    shifted = unsqueeze(ctx, rows, [1])
    if k_value is not None:
        shifted = binary(ctx, "Add", shifted, to_scalar(ctx, convert(ctx, k_value, I64)))
    mask = binary(ctx, "GreaterEqual" if upper else "LessEqual", cols, shifted)  # type: ignore[assignment]
    return [ctx.op("Select", "opset1", [mask, x, zero], {"auto_broadcast": "numpy"},  # type: ignore[list-item]
                   refine=ctx.onnx_types(0))[0]]


@onnx_op("Compress", 9, 11, 28)
def compress(ctx: NodeContext) -> list[Value | None]:
    x, condition = ctx.required_input(0), ctx.required_input(1)
    positions = ctx.op("NonZero", "opset3", [condition], {"output_type": I64},
                        outputs=[TensorInfo(I64, (1, -1))])[0]
    positions = squeeze(ctx, positions, [0])
    if ctx.has_attr("axis"):
        axis = norm_axis(ctx, int(ctx.attr("axis")), rank_of(ctx, x))
    else:
        x, axis = reshape(ctx, x, [-1]), 0
    return [ctx.op("Gather", "opset8", [x, positions, i64(ctx, axis)], {"batch_dims": 0},
                   refine=ctx.onnx_types(0))[0]]


@onnx_op("Unique", 11, 28)
def unique(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    inputs = [x]
    if ctx.has_attr("axis"):
        inputs.append(i64(ctx, norm_axis(ctx, int(ctx.attr("axis")), rank_of(ctx, x))))
    attrs = {"sorted": ctx.flag("sorted", 1), "index_element_type": I64,
             "count_element_type": I64}
    n = len(ctx.node.output)
    outs = ctx.op("Unique", "opset10", inputs, attrs,
                  refine=ctx.onnx_types(*[i if i < n else None for i in range(4)]))
    return list(outs[:n])


@onnx_op("ReverseSequence", 10, 28)
def reverse_sequence(ctx: NodeContext) -> list[Value | None]:
    x, lengths = ctx.required_input(0), ctx.required_input(1)
    rank = rank_of(ctx, x)
    attrs = {"batch_axis": norm_axis(ctx, int(ctx.attr("batch_axis", 1)), rank),
             "seq_axis": norm_axis(ctx, int(ctx.attr("time_axis", 0)), rank)}
    return [ctx.op("ReverseSequence", "opset1", [x, convert(ctx, lengths, I64)], attrs,
                   refine=ctx.onnx_types(0))[0]]


@onnx_op("EyeLike", 9, 22)
def eye_like(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    et = onnx_type(ctx, ctx.attr("dtype")) if ctx.has_attr("dtype") else x.element_type
    k = int(ctx.attr("k", 0))
    if x.shape is not None and len(x.shape) == 2 and all(d >= 0 for d in x.shape) \
            and x.shape[0] * x.shape[1] <= FOLD_LIMIT:
        return [ctx.const(np.eye(x.shape[0], x.shape[1], k, dtype=et.dtype), et)]
    rows = dim_of(ctx, x, 0, keep_1d=False)
    cols = dim_of(ctx, x, 1, keep_1d=False)
    return [ctx.op("Eye", "opset9", [rows, cols, i64(ctx, k)], {"output_type": et},
                   refine=ctx.onnx_types(0))[0]]


@onnx_op("TensorScatter", 24)
def tensor_scatter(ctx: NodeContext) -> list[Value | None]:
    """Write ``update`` into ``past_cache`` along ``axis`` from each batch row's write index
    (``ScatterElementsUpdate`` with indices index[b] + 0..seq-1, modulo the cache length in
    circular mode)."""
    cache, update, where = ctx.required_input(0), ctx.required_input(1), ctx.input(2)
    rank = rank_of(ctx, cache)
    axis = norm_axis(ctx, int(ctx.attr("axis", -2)), rank)
    if axis == 0:
        raise ctx.error("axis cannot be the batch axis")
    mode = ctx.attr("mode", "linear")
    if mode not in ("linear", "circular"):
        raise ctx.error(f"mode {mode!r} is not supported")
    steps = ctx.op("Range", "opset4", [i64(ctx, 0), dim_of(ctx, update, axis, keep_1d=False),
                                        i64(ctx, 1)], {"output_type": I64},
                    outputs=[TensorInfo(I64, (update.shape[axis] if update.shape else -1,))])[0]
    index = unsqueeze(ctx, steps, [a for a in range(rank) if a != axis])
    if where is not None:
        start = unsqueeze(ctx, convert(ctx, where, I64), list(range(1, rank)))
        index = binary(ctx, "Add", index, start)
    if mode == "circular":
        index = binary(ctx, "FloorMod", index, dim_of(ctx, cache, axis, keep_1d=False))
    index = ctx.op("Broadcast", "opset3", [index, shape_of(ctx, update)],
                    {"mode": "bidirectional"}, outputs=[TensorInfo(I64, update.shape)])[0]
    return [ctx.op("ScatterElementsUpdate", "opset12", [cache, index, update,
                                                            i64(ctx, axis)],
                  {"reduction": "none", "use_init_val": True}, refine=ctx.onnx_types(0))[0]]
