"""Activation-like ONNX operators: Elu, Selu, LeakyRelu, PRelu, HardSigmoid, Gelu, Celu,
ThresholdedRelu, Shrink, Swish, Softmax, LogSoftmax, Hardmax."""

from __future__ import annotations

from ..context import NodeContext, Value, onnx_op
from ._common import (
    I64,
    axis_of,
    binary,
    const_of,
    convert,
    dim_of,
    flatten_2d,
    i64,
    norm_axis,
    rank_of,
    shape_of,
    squeeze,
    unsqueeze,
)


@onnx_op("Elu", 1, 6, 22)
def elu(ctx: NodeContext) -> list[Value | None]:
    alpha = float(ctx.attr("alpha", 1.0))
    return [ctx.op("Elu", "opset1", [ctx.required_input(0)], {"alpha": alpha},
                   refine=ctx.onnx_types(0))[0]]


@onnx_op("Selu", 1, 6, 22)
def selu(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    alpha = const_of(ctx, [ctx.attr("alpha", 1.67326319217681884765625)], x)
    gamma = const_of(ctx, [ctx.attr("gamma", 1.05070102214813232421875)], x)
    return [ctx.op("Selu", "opset1", [x, alpha, gamma], refine=ctx.onnx_types(0))[0]]


@onnx_op("HardSigmoid", 1, 6, 22)
def hard_sigmoid(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    alpha = const_of(ctx, ctx.attr("alpha", 0.2), x)
    beta = const_of(ctx, ctx.attr("beta", 0.5), x)
    return [ctx.op("HardSigmoid", "opset1", [x, alpha, beta], refine=ctx.onnx_types(0))[0]]


@onnx_op("LeakyRelu", 1, 6, 16)
def leaky_relu(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    slope = const_of(ctx, [ctx.attr("alpha", 0.01)], x)
    return [ctx.op("PReLU", "opset1", [x, slope], refine=ctx.onnx_types(0))[0]]


@onnx_op("PRelu", 1, 6, 7, 9, 16)
def prelu(ctx: NodeContext) -> list[Value | None]:
    x, slope = ctx.required_input(0), ctx.required_input(1)
    # ONNX broadcasts the slope numpy-style (right-aligned); OpenVINO's PReLU reads a
    # 1-D slope as per-channel (axis 1). Leading 1s make the numpy meaning explicit.
    if x.rank is not None and slope.rank is not None and 0 < slope.rank < x.rank:
        size = slope.shape[0] if slope.shape else -1
        if slope.rank > 1 or size != 1:
            slope = unsqueeze(ctx, slope, list(range(x.rank - slope.rank)))
    return [ctx.op("PReLU", "opset1", [x, slope], refine=ctx.onnx_types(0))[0]]


@onnx_op("ThresholdedRelu", 10, 22)
def thresholded_relu(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    mask = binary(ctx, "Greater", x, const_of(ctx, ctx.attr("alpha", 1.0), x))
    return [ctx.op("Multiply", "opset1", [x, convert(ctx, mask, x.element_type)],
                  {"auto_broadcast": "numpy"}, refine=ctx.onnx_types(0))[0]]


@onnx_op("Gelu", 20)
def gelu(ctx: NodeContext) -> list[Value | None]:
    approximate = ctx.attr("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise ctx.error(f"approximate must be none or tanh, not {approximate!r}")
    mode = "erf" if approximate == "none" else "tanh"
    return [ctx.op("Gelu", "opset7", [ctx.required_input(0)], {"approximation_mode": mode},
                   refine=ctx.onnx_types(0))[0]]


@onnx_op("Celu", 12, 28)
def celu(ctx: NodeContext) -> list[Value | None]:
    # max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
    x = ctx.required_input(0)
    alpha = const_of(ctx, ctx.attr("alpha", 1.0), x)
    zero = const_of(ctx, 0, x)
    scaled = binary(ctx, "Divide", x, alpha)
    expm1 = binary(ctx, "Subtract", ctx.op("Exp", "opset1", [scaled])[0], const_of(ctx, 1, x))
    neg = binary(ctx, "Minimum", zero, binary(ctx, "Multiply", alpha, expm1))
    pos = binary(ctx, "Maximum", zero, x)
    return [ctx.op("Add", "opset1", [pos, neg], {"auto_broadcast": "numpy"},
                   refine=ctx.onnx_types(0))[0]]


@onnx_op("Shrink", 9)
def shrink(ctx: NodeContext) -> list[Value | None]:
    # x < -lambd: x + bias; x > lambd: x - bias; else 0
    x = ctx.required_input(0)
    lambd, bias = float(ctx.attr("lambd", 0.5)), float(ctx.attr("bias", 0.0))
    zero = const_of(ctx, 0, x)
    below = binary(ctx, "Less", x, const_of(ctx, -lambd, x))
    above = binary(ctx, "Greater", x, const_of(ctx, lambd, x))
    up = ctx.op("Select", "opset1", [below, binary(ctx, "Add", x, const_of(ctx, bias, x)),
                                      zero], {"auto_broadcast": "numpy"})[0]
    return [ctx.op("Select", "opset1",
                  [above, binary(ctx, "Subtract", x, const_of(ctx, bias, x)), up],
                  {"auto_broadcast": "numpy"}, refine=ctx.onnx_types(0))[0]]


@onnx_op("Swish", 24)
def swish(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    beta = const_of(ctx, ctx.attr("alpha", 1.0), x)
    return [ctx.op("Swish", "opset4", [x, beta], refine=ctx.onnx_types(0))[0]]


# -- softmax family ----------------------------------------------------------------------
def _softmax(ctx: NodeContext, ir_type: str, version: str, legacy: bool) -> Value:
    x = ctx.required_input(0)
    if not legacy:
        axis = axis_of(ctx, int(ctx.attr("axis", -1)), x)
        return ctx.op(ir_type, version, [x], {"axis": axis}, refine=ctx.onnx_types(0))[0]
    rank = rank_of(ctx, x)
    # Before opset 13 the input is coerced to 2-D at ``axis`` and the op runs on dim 1.
    axis = norm_axis(ctx, int(ctx.attr("axis", 1)), rank) if rank else 0
    if axis == rank - 1:
        return ctx.op(ir_type, version, [x], {"axis": axis}, refine=ctx.onnx_types(0))[0]
    out = ctx.op(ir_type, version, [flatten_2d(ctx, x, axis)], {"axis": 1})[0]
    return _restore_shape(ctx, out, x)


def _restore_shape(ctx: NodeContext, value: Value, like: Value) -> Value:
    """``value`` reshaped back to the shape of ``like`` (the node's final op)."""
    target = i64(ctx, list(like.shape)) if like.info.is_static else shape_of(ctx, like)  # type: ignore[arg-type]
    return ctx.op("Reshape", "opset1", [value, target], {"special_zero": False},
                  refine=ctx.onnx_types(0))[0]


onnx_op("Softmax", 1, 11)(lambda ctx: [_softmax(ctx, "SoftMax", "opset8", True)])
onnx_op("Softmax", 13)(lambda ctx: [_softmax(ctx, "SoftMax", "opset8", False)])
onnx_op("LogSoftmax", 1, 11)(lambda ctx: [_softmax(ctx, "LogSoftmax", "opset5", True)])
onnx_op("LogSoftmax", 13)(lambda ctx: [_softmax(ctx, "LogSoftmax", "opset5", False)])


def _hardmax(ctx: NodeContext, legacy: bool) -> Value:
    x = ctx.required_input(0)
    rank = rank_of(ctx, x)
    axis = norm_axis(ctx, int(ctx.attr("axis", 1 if legacy else -1)), rank)
    data = x
    if legacy and axis != rank - 1:
        data = flatten_2d(ctx, x, axis)
        axis = 1
    depth = dim_of(ctx, data, axis, keep_1d=False)
    # TopK with stable sorting returns the first of equal maxima, as ONNX asks.
    _, index = ctx.op("TopK", "opset11", [data, i64(ctx, 1)],
                      {"axis": axis, "mode": "max", "sort": "value", "index_element_type": I64,
                       "stable": True})
    index = squeeze(ctx, index, [axis])
    on, off = const_of(ctx, 1, x), const_of(ctx, 0, x)
    attrs = {"axis": axis}
    if data is x:
        return ctx.op("OneHot", "opset1", [index, depth, on, off], attrs,
                      refine=ctx.onnx_types(0))[0]
    return _restore_shape(ctx, ctx.op("OneHot", "opset1", [index, depth, on, off], attrs)[0], x)


onnx_op("Hardmax", 1, 11)(lambda ctx: [_hardmax(ctx, True)])
onnx_op("Hardmax", 13)(lambda ctx: [_hardmax(ctx, False)])
