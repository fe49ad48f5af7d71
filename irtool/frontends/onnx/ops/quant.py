"""Quantization ONNX operators: QuantizeLinear, DequantizeLinear, MatMulInteger,
ConvInteger, QLinearMatMul, QLinearConv (8-bit and 16/32-bit integer types)."""

from __future__ import annotations

import numpy as np

from ....ir.types import ELEMENT_TYPES, ElementType
from ..context import NodeContext, Value, onnx_op
from ._common import F32, I32, binary, convert, i64, norm_axis, onnx_type, rank_of, unsqueeze
from .nn import grouped_weights, window_attrs

_U8 = ELEMENT_TYPES["u8"]


def _per_axis(ctx: NodeContext, param: Value, x: Value, axis_default: int = 1) -> Value:
    """A scale or zero point aligned with ``x`` for numpy broadcasting.

    Scalars (or 1-element tensors) apply everywhere; a 1-D parameter runs along ``axis``;
    with ``block_size`` each entry covers that many consecutive positions of ``axis``.
    """
    rank = rank_of(ctx, x)
    if param.rank == 0 or (param.shape is not None and int(np.prod(param.shape)) == 1
                           and not ctx.attr("block_size", 0)):
        return param
    axis = norm_axis(ctx, int(ctx.attr("axis", axis_default)), rank)
    block = int(ctx.attr("block_size", 0))
    if block:
        if x.shape is None or x.shape[axis] < 0:
            raise ctx.error("blocked quantization needs a static size on the quantized axis")
        index = i64(ctx, [i // block for i in range(x.shape[axis])])
        return ctx.op("Gather", "opset8", [param, index, i64(ctx, axis)], {"batch_dims": 0})[0]
    if param.rank == 1 and rank > 1:
        trailing = rank - axis - 1
        if trailing:
            return unsqueeze(ctx, param, list(range(1, 1 + trailing)))
    return param


def _range_of(ctx: NodeContext, et: ElementType) -> tuple[float, float]:
    """The saturation range of a quantized type (float8: its largest finite magnitude)."""
    if et.is_float and et.bitwidth == 8 and et.dtype is not None:
        import ml_dtypes

        top = float(ml_dtypes.finfo(et.dtype).max)
        return -top, top
    if not et.is_integral or et.bitwidth not in (4, 8, 16, 32):
        raise ctx.error(f"quantizing to {et.name} is not supported")
    if et.bitwidth == 4:
        return (-8.0, 7.0) if et.kind == "int" else (0.0, 15.0)
    info = np.iinfo(et.dtype)
    return float(info.min), float(info.max)


@onnx_op("QuantizeLinear", 10, 13, 19, 21, 23, 24, 25, 28)
def quantize_linear(ctx: NodeContext) -> list[Value | None]:
    x, scale, zero = ctx.required_input(0), ctx.required_input(1), ctx.input(2)
    if zero is not None:
        out_type = zero.element_type
    elif ctx.attr("output_dtype"):
        out_type = onnx_type(ctx, ctx.attr("output_dtype"))
    else:
        out_type = _U8
    lo, hi = _range_of(ctx, out_type)
    work = x.element_type if x.element_type.is_float else F32
    xf = convert(ctx, x, work)
    q = binary(ctx, "Divide", xf, convert(ctx, _per_axis(ctx, scale, x), work),
               m_pythondiv=True)
    if out_type.is_integral:
        # Integers: round half to even before the zero point and saturation.
        q = ctx.op("Round", "opset5", [q], {"mode": "half_to_even"})[0]
    if zero is not None:
        q = binary(ctx, "Add", q, convert(ctx, _per_axis(ctx, zero, x), work))
    if out_type.is_integral or ctx.attr("saturate", 1):
        q = ctx.op("Clamp", "opset1", [q], {"min": lo, "max": hi})[0]
    return [ctx.op("Convert", "opset1", [q], {"destination_type": out_type},
                   refine=ctx.onnx_types(0))[0]]


@onnx_op("DequantizeLinear", 10, 13, 19, 21, 23, 24, 25, 28)
def dequantize_linear(ctx: NodeContext) -> list[Value | None]:
    x, scale, zero = ctx.required_input(0), ctx.required_input(1), ctx.input(2)
    if x.element_type.kind not in ("int", "uint", "float"):
        raise ctx.error(f"dequantizing {x.element_type.name} is not supported")
    out_type = onnx_type(ctx, ctx.attr("output_dtype")) if ctx.attr("output_dtype") else \
        scale.element_type
    work = F32 if scale.element_type != ELEMENT_TYPES["f64"] else scale.element_type
    xf = convert(ctx, x, work)
    if zero is not None:
        xf = binary(ctx, "Subtract", xf, convert(ctx, _per_axis(ctx, zero, x), work))
    y = binary(ctx, "Multiply", xf, convert(ctx, _per_axis(ctx, scale, x), work))
    return [ctx.op("Convert", "opset1", [y], {"destination_type": out_type},
                   refine=ctx.onnx_types(0))[0]]


def _centered(ctx: NodeContext, value: Value, zero: Value | None,
              align: int | None = None) -> Value:
    """``value - zero`` in i32; ``align`` appends trailing unit dims to the zero point."""
    v = convert(ctx, value, I32)
    if zero is None:
        return v
    z = convert(ctx, zero, I32)
    if align and z.rank == 1:
        z = unsqueeze(ctx, z, list(range(1, 1 + align)))
    return binary(ctx, "Subtract", v, z)


@onnx_op("MatMulInteger", 10)
def matmul_integer(ctx: NodeContext) -> list[Value | None]:
    a, b = ctx.required_input(0), ctx.required_input(1)
    a_zero, b_zero = ctx.input(2), ctx.input(3)
    # A's zero point is per row (the second-last axis); B's per column (the last).
    lhs = _centered(ctx, a, a_zero, align=1)
    rhs = _centered(ctx, b, b_zero)
    return [ctx.op("MatMul", "opset1", [lhs, rhs],
                  {"transpose_a": False, "transpose_b": False}, refine=ctx.onnx_types(0))[0]]


def _integer_conv(ctx: NodeContext, x: Value, w: Value, x_zero: Value | None,
                  w_zero: Value | None) -> Value:
    """Convolution of zero-point-corrected integers, computed exactly in f32 then in i32."""
    n = rank_of(ctx, x) - 2
    xi = _centered(ctx, x, x_zero)
    wi = _centered(ctx, w, w_zero, align=n + 1)
    attrs = window_attrs(ctx, n)
    group = int(ctx.attr("group", 1))
    xf, wf = convert(ctx, xi, F32), convert(ctx, wi, F32)
    if group == 1:
        y = ctx.op("Convolution", "opset1", [xf, wf], attrs)[0]
    else:
        y = ctx.op("GroupConvolution", "opset1", [xf, grouped_weights(ctx, wf, group)],
                    attrs)[0]
    return y


@onnx_op("ConvInteger", 10)
def conv_integer(ctx: NodeContext) -> list[Value | None]:
    x, w = ctx.required_input(0), ctx.required_input(1)
    y = _integer_conv(ctx, x, w, ctx.input(2), ctx.input(3))
    return [ctx.op("Convert", "opset1", [y], {"destination_type": I32},
                   refine=ctx.onnx_types(0))[0]]


def _requantize(ctx: NodeContext, acc: Value, multiplier: Value, zero: Value | None,
                out_type: ElementType) -> Value:
    lo, hi = _range_of(ctx, out_type)
    scaled = binary(ctx, "Multiply", convert(ctx, acc, F32), convert(ctx, multiplier, F32))
    q = ctx.op("Round", "opset5", [scaled], {"mode": "half_to_even"})[0]
    if zero is not None:
        q = binary(ctx, "Add", q, convert(ctx, zero, F32))
    q = ctx.op("Clamp", "opset1", [q], {"min": lo, "max": hi})[0]
    return ctx.op("Convert", "opset1", [q], {"destination_type": out_type},
                  refine=ctx.onnx_types(0))[0]


@onnx_op("QLinearMatMul", 10, 21)
def qlinear_matmul(ctx: NodeContext) -> list[Value | None]:
    a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero = (
        ctx.input(i) for i in range(8))
    if a is None or b is None or a_scale is None or b_scale is None or y_scale is None:
        raise ctx.error("a, b and the scales are required")
    lhs = _centered(ctx, a, a_zero, align=1)
    rhs = _centered(ctx, b, b_zero)
    # The integer product is exact in f32 for 8-bit inputs and moderate depths.
    acc = ctx.op("MatMul", "opset1", [convert(ctx, lhs, F32), convert(ctx, rhs, F32)],
                  {"transpose_a": False, "transpose_b": False})[0]
    a_s = convert(ctx, a_scale, F32)
    if a_s.rank == 1 and (a_s.shape is None or a_s.shape[0] != 1):
        a_s = unsqueeze(ctx, a_s, [1])
    multiplier = binary(ctx, "Divide", binary(ctx, "Multiply", a_s, convert(ctx, b_scale, F32)),
                        convert(ctx, y_scale, F32), m_pythondiv=True)
    out_type = y_zero.element_type if y_zero is not None else _U8
    return [_requantize(ctx, acc, multiplier, y_zero, out_type)]


@onnx_op("QLinearConv", 10)
def qlinear_conv(ctx: NodeContext) -> list[Value | None]:
    x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero = (
        ctx.input(i) for i in range(8))
    bias = ctx.input(8)
    if x is None or w is None or x_scale is None or w_scale is None or y_scale is None:
        raise ctx.error("x, w and the scales are required")
    n = rank_of(ctx, x) - 2
    acc = _integer_conv(ctx, x, w, x_zero, w_zero)
    if bias is not None:
        acc = binary(ctx, "Add", acc, unsqueeze(ctx, convert(ctx, bias, F32),
                                                [0, *range(2, 2 + n)]))
    w_s = convert(ctx, w_scale, F32)
    if w_s.rank == 1 and (w_s.shape is None or w_s.shape[0] != 1):
        w_s = unsqueeze(ctx, w_s, [0, *range(2, 2 + n)])
    multiplier = binary(ctx, "Divide", binary(ctx, "Multiply", convert(ctx, x_scale, F32), w_s),
                        convert(ctx, y_scale, F32), m_pythondiv=True)
    out_type = y_zero.element_type if y_zero is not None else _U8
    return [_requantize(ctx, acc, multiplier, y_zero, out_type)]


