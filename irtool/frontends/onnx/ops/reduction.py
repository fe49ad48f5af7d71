"""Reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare, ArgMax,
ArgMin, TopK, CumSum."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ....ir.types import ELEMENT_TYPES
from ....opset import TensorInfo
from ..context import NodeContext, Value, onnx_op
from ._common import (
    BOOL,
    I64,
    all_axes,
    axis_of,
    binary,
    concat_1d,
    const_of,
    convert,
    dim_of,
    drop_axes,
    i64,
    norm_axes,
    norm_axis,
    rank_of,
    static_count,
    to_1d,
    to_scalar,
)

U8 = ELEMENT_TYPES["u8"]
Translator = Callable[[NodeContext], list[Value | None]]

# Where the ``axes`` attribute became an input, per operator.
_AXES_INPUT_SINCE = {"ReduceSum": 13}
_DEFAULT_AXES_INPUT_SINCE = 18


def _reduction_axes(ctx: NodeContext, data: Value,
                    axes_as_input: bool) -> tuple[Value | None, int | None]:
    """The axes to reduce as an i64 Value and how many there are (None: unknown).

    The Value is None for "no reduction" (empty axes with noop_with_empty_axes=1).
    """
    if axes_as_input:
        axes = ctx.input(1)
        const = ctx.const_value(axes)
        count = static_count(axes)
        empty = axes is None or (const is not None and const.size == 0) or count == 0
        if not empty:
            if const is not None and data.rank is not None:
                return i64(ctx, norm_axes(ctx, const.ravel().tolist(), data.rank)), const.size
            axes = convert(ctx, axes, I64)  # type: ignore[arg-type]
            if count is None and not ctx.attr("noop_with_empty_axes", 0):
                return _empty_means_all(ctx, axes, data), None
            return axes, count
        if ctx.attr("noop_with_empty_axes", 0):
            return None, 0
        return all_axes(ctx, data), data.rank
    axes_attr = ctx.attr("axes")
    if axes_attr:
        if data.rank is not None:
            return i64(ctx, norm_axes(ctx, axes_attr, data.rank)), len(axes_attr)
        return i64(ctx, list(axes_attr)), len(axes_attr)
    return all_axes(ctx, data), data.rank


def _empty_means_all(ctx: NodeContext, axes: Value, data: Value) -> Value:
    """Run-time axes of unknown length: ONNX reduces over every axis when they are empty.

    The first k entries of [axes..., 0..rank-1] with k = len(axes), or rank when that is 0.
    """
    every = all_axes(ctx, data)
    count = ctx.op("ShapeOf", "opset3", [axes], {"output_type": I64},
                    outputs=[TensorInfo(I64, (1,))])[0]
    rank = ctx.op("ShapeOf", "opset3", [every], {"output_type": I64},
                   outputs=[TensorInfo(I64, (1,))])[0]
    empty = convert(ctx, binary(ctx, "Equal", count, i64(ctx, [0])), I64)
    take = binary(ctx, "Add", count, binary(ctx, "Multiply", empty, rank))
    joined = concat_1d(ctx, [axes, every])
    return ctx.op("Slice", "opset8", [joined, i64(ctx, [0]), take, i64(ctx, [1]),
                                       i64(ctx, [0])], outputs=[TensorInfo(I64, (-1,))])[0]


def _reduce_to(ctx: NodeContext, ir_type: str, version: str, data: Value, axes: Value,
               count: int | None, keep: bool, final: bool) -> Value:
    """``ir_type`` over ``axes``; with run-time axes and keepdims=0 the reduced dims are
    dropped by a Reshape so that the output rank stays static."""
    const_axes = ctx.const_value(axes) is not None
    if keep or const_axes or count is None or data.rank is None:
        if final:
            return ctx.op(ir_type, version, [data, axes], {"keep_dims": keep},
                          refine=ctx.onnx_types(0))[0]
        return ctx.op(ir_type, version, [data, axes], {"keep_dims": keep})[0]
    kept = ctx.op(ir_type, version, [data, axes], {"keep_dims": True})[0]
    return drop_axes(ctx, kept, axes, count)


def _reduce(ir_type: str, version: str) -> Translator:
    def translate(ctx: NodeContext) -> list[Value | None]:
        data = ctx.required_input(0)
        since = _AXES_INPUT_SINCE.get(ctx.node.op_type, _DEFAULT_AXES_INPUT_SINCE)
        axes, count = _reduction_axes(ctx, data, ctx.opset >= since)
        if axes is None:
            return [ctx.op("Identity", "opset16", [data], refine=ctx.onnx_types(0))[0]]
        keep = ctx.flag("keepdims", 1)
        if data.element_type == BOOL:
            # Max/Min over booleans (opset 20) run on u8 and convert back.
            reduced = _reduce_to(ctx, ir_type, version, convert(ctx, data, U8), axes, count,
                                 keep, False)
            return [ctx.op("Convert", "opset1", [reduced], {"destination_type": BOOL},
                           refine=ctx.onnx_types(0))[0]]
        return [_reduce_to(ctx, ir_type, version, data, axes, count, keep, True)]

    return translate


_REDUCE_VERSIONS = {
    "ReduceSum": (1, 11, 13),
    "ReduceMean": (1, 11, 13, 18),
    "ReduceMax": (1, 11, 12, 13, 18, 20),
    "ReduceMin": (1, 11, 12, 13, 18, 20),
    "ReduceProd": (1, 11, 13, 18),
    "ReduceL1": (1, 11, 13, 18),
    "ReduceL2": (1, 11, 13, 18),
}
for _name, _versions in _REDUCE_VERSIONS.items():
    onnx_op(_name, *_versions)(_reduce(_name, "opset4" if _name in ("ReduceL1", "ReduceL2")
                                       else "opset1"))


def _composite_reduce(ctx: NodeContext) -> tuple[Value, Value | None, int | None, bool]:
    data = ctx.required_input(0)
    axes, count = _reduction_axes(ctx, data, ctx.opset >= _DEFAULT_AXES_INPUT_SINCE)
    return data, axes, count, ctx.flag("keepdims", 1)


@onnx_op("ReduceLogSum", 1, 11, 13, 18, 28)
def reduce_log_sum(ctx: NodeContext) -> list[Value | None]:
    data, axes, count, keep = _composite_reduce(ctx)
    total = data if axes is None else _reduce_to(ctx, "ReduceSum", "opset1", data, axes, count,
                                                 keep, False)
    return [ctx.op("Log", "opset1", [total], refine=ctx.onnx_types(0))[0]]


@onnx_op("ReduceLogSumExp", 1, 11, 13, 18, 28)
def reduce_log_sum_exp(ctx: NodeContext) -> list[Value | None]:
    data, axes, count, keep = _composite_reduce(ctx)
    if axes is None:
        return [ctx.op("Identity", "opset16", [data], refine=ctx.onnx_types(0))[0]]
    # log(sum(exp(x - m))) + m with m = max(x): no overflow for large inputs.
    peak = ctx.op("ReduceMax", "opset1", [data, axes], {"keep_dims": True})[0]
    shifted = ctx.op("Exp", "opset1", [binary(ctx, "Subtract", data, peak)])[0]
    total = ctx.op("Log", "opset1", [ctx.op("ReduceSum", "opset1", [shifted, axes],
                                              {"keep_dims": True})[0]])[0]
    result = binary(ctx, "Add", total, peak)
    if keep:
        return [ctx.op("Identity", "opset16", [result], refine=ctx.onnx_types(0))[0]]
    if ctx.const_value(axes) is not None or count is None or data.rank is None:
        return [ctx.op("Squeeze", "opset1", [result, axes], refine=ctx.onnx_types(0))[0]]
    return [drop_axes(ctx, result, axes, count)]


@onnx_op("ReduceSumSquare", 1, 11, 13, 18)
def reduce_sum_square(ctx: NodeContext) -> list[Value | None]:
    data, axes, count, keep = _composite_reduce(ctx)
    square = binary(ctx, "Multiply", data, data)
    if axes is None:
        return [ctx.op("Identity", "opset16", [square], refine=ctx.onnx_types(0))[0]]
    return [_reduce_to(ctx, "ReduceSum", "opset1", square, axes, count, keep, True)]


# -- ArgMax / ArgMin -------------------------------------------------------------------------
def _arg(mode: str) -> Translator:
    def translate(ctx: NodeContext) -> list[Value | None]:
        data = ctx.required_input(0)
        keep = ctx.flag("keepdims", 1)
        last = ctx.flag("select_last_index", 0)
        axis = int(ctx.attr("axis", 0))
        # TopK and Squeeze count a negative axis from the end; Reverse needs it resolved.
        axis = norm_axis(ctx, axis, rank_of(ctx, data)) if last else axis_of(ctx, axis, data)
        source = data
        if last:
            # The last extreme is the first one of the reversed tensor.
            source = ctx.op("Reverse", "opset1", [data, i64(ctx, [axis])], {"mode": "index"},
                             outputs=[data.info])[0]
        attrs = {"axis": axis, "mode": mode, "sort": "value", "index_element_type": I64,
                 "stable": True}
        if not last and keep:
            return [ctx.op("TopK", "opset11", [source, i64(ctx, 1)], attrs,
                           refine=ctx.onnx_types(None, 0))[1]]
        index = ctx.op("TopK", "opset11", [source, i64(ctx, 1)], attrs)[1]
        if last:
            top = binary(ctx, "Subtract", dim_of(ctx, data, axis, keep_1d=False), i64(ctx, 1))
            if keep:
                return [ctx.op("Subtract", "opset1", [top, index],
                              {"auto_broadcast": "numpy"}, refine=ctx.onnx_types(0))[0]]
            index = binary(ctx, "Subtract", top, index)
        return [ctx.op("Squeeze", "opset1", [index, i64(ctx, [axis])], refine=ctx.onnx_types(0))[0]]

    return translate


onnx_op("ArgMax", 1, 11, 12, 13)(_arg("max"))
onnx_op("ArgMin", 1, 11, 12, 13)(_arg("min"))


# -- TopK ----------------------------------------------------------------------------------------
@onnx_op("TopK", 1, 10, 11, 24)
def top_k(ctx: NodeContext) -> list[Value | None]:
    data = ctx.required_input(0)
    axis = axis_of(ctx, int(ctx.attr("axis", -1)), data)
    if ctx.opset < 10:
        k = i64(ctx, int(ctx.attr("k")))
    else:
        k = to_scalar(ctx, convert(ctx, ctx.required_input(1), I64))
        const = ctx.const_value(k)
        if const is not None:
            k = i64(ctx, int(np.asarray(const).ravel()[0]))
    largest = ctx.flag("largest", 1)
    # ONNX orders equal values by index; "stable" asks OpenVINO for the same.
    attrs = {"axis": axis, "mode": "max" if largest else "min", "sort": "value",
             "index_element_type": I64, "stable": True}
    values, indices = ctx.op("TopK", "opset11", [data, k], attrs, refine=ctx.onnx_types(0, 1))
    return [values, indices]


# -- CumSum ---------------------------------------------------------------------------------------
@onnx_op("CumSum", 11, 14)
def cum_sum(ctx: NodeContext) -> list[Value | None]:
    data, axis = ctx.required_input(0), ctx.required_input(1)
    axis = to_scalar(ctx, axis)
    attrs = {"exclusive": bool(ctx.attr("exclusive", 0)), "reverse": bool(ctx.attr("reverse", 0))}
    return [ctx.op("CumSum", "opset3", [data, axis], attrs, refine=ctx.onnx_types(0))[0]]


# -- CumProd --------------------------------------------------------------------------------------
@onnx_op("CumProd", 26)
def cum_prod(ctx: NodeContext) -> list[Value | None]:
    """Running product by doubling (a Hillis-Steele scan): after step k every element holds
    the product of the 2**k elements ending at it. Exact for integers and floats alike.

    The scanned axis is moved to the front (a swap, undone at the end) when it is known
    only at run time; the number of doubling steps comes from the largest static dim.
    """
    x, axis_value = ctx.required_input(0), ctx.required_input(1)
    rank = rank_of(ctx, x)
    if x.shape is None or any(d < 0 for d in x.shape):
        raise ctx.error("needs a static input shape")
    known = ctx.const_value(axis_value)
    if known is not None:
        axis = norm_axis(ctx, int(np.ravel(known)[0]), rank)
        data, swap = x, None
    else:
        axis = 0
        swap = _front_swap(ctx, axis_value, rank)
        data = ctx.op("Transpose", "opset1", [x, swap])[0]
    bound = max(x.shape) if known is None else x.shape[axis]
    axis_c = i64(ctx, [axis])
    if ctx.attr("reverse", 0):
        data = ctx.op("Reverse", "opset1", [data, axis_c], {"mode": "index"})[0]
    length = dim_of(ctx, data, axis)
    acc, shift = data, 1
    while shift < bound:
        acc = binary(ctx, "Multiply", acc, _shifted_ones(ctx, acc, axis, shift, length))
        shift *= 2
    if ctx.attr("exclusive", 0):
        acc = _shifted_ones(ctx, acc, axis, 1, length)
    if ctx.attr("reverse", 0):
        acc = ctx.op("Reverse", "opset1", [acc, axis_c], {"mode": "index"})[0]
    if swap is not None:
        acc = ctx.op("Transpose", "opset1", [acc, swap])[0]
    return [ctx.op("Identity", "opset16", [acc], refine=ctx.onnx_types(0))[0]]


def _shifted_ones(ctx: NodeContext, value: Value, axis: int, shift: int,
                  length: Value) -> Value:
    """``value`` moved ``shift`` places along ``axis`` with 1s coming in at the front."""
    padded = ctx.op("Pad", "opset12", [value, i64(ctx, [shift if a == axis else 0
                                                         for a in range(value.rank or 0)]),
                                        i64(ctx, [0] * (value.rank or 0)),
                                        const_of(ctx, 1, value)], {"pad_mode": "constant"})[0]
    return ctx.op("Slice", "opset8", [padded, i64(ctx, [0]), length, i64(ctx, [1]),
                                       i64(ctx, [axis])], outputs=[value.info])[0]


def _front_swap(ctx: NodeContext, axis: Value, rank: int) -> Value:
    """The permutation exchanging axis 0 and the run-time ``axis`` (its own inverse)."""
    index = ctx.op("FloorMod", "opset1", [to_1d(ctx, convert(ctx, axis, I64)),
                                           i64(ctx, rank)], {"auto_broadcast": "numpy"},
                    outputs=[TensorInfo(I64, (1,))])[0]
    positions = concat_1d(ctx, [i64(ctx, [0]), index])
    values = concat_1d(ctx, [index, i64(ctx, [0])])
    return ctx.op("ScatterElementsUpdate", "opset12",
                   [i64(ctx, list(range(rank))), positions, values, i64(ctx, 0)],
                   {"reduction": "none", "use_init_val": True},
                   outputs=[TensorInfo(I64, (rank,))])[0]
