"""Element-wise ONNX operators: arithmetic, comparison, logic, unary math, casts, Where,
variadic Min/Max/Sum/Mean, Clip, Mod, Pow, BitShift, bitwise ops, Identity."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx

from ....ir.types import ElementType
from ..context import NodeContext, Value, onnx_op
from ._common import binary, const_of, convert, legacy_broadcast, onnx_type

Translator = Callable[[NodeContext], list[Value | None]]


# -- binary ops --------------------------------------------------------------------------
def _binary(ir_type: str, version: str = "opset1") -> Translator:
    """A numpy-broadcasting binary op; ``broadcast``/``axis`` of opsets < 7 are honoured."""

    def translate(ctx: NodeContext) -> list[Value | None]:
        a, b = ctx.required_input(0), ctx.required_input(1)
        b = legacy_broadcast(ctx, a, b)
        return [ctx.op(ir_type, version, [a, b], {"auto_broadcast": "numpy"},
                       refine=ctx.onnx_types(0))[0]]

    return translate


onnx_op("Add", 1, 6, 7, 13, 14)(_binary("Add"))
onnx_op("Sub", 1, 6, 7, 13, 14)(_binary("Subtract"))
onnx_op("Mul", 1, 6, 7, 13, 14)(_binary("Multiply"))
onnx_op("Equal", 1, 7, 11, 13, 19)(_binary("Equal"))
onnx_op("Greater", 1, 7, 9, 13)(_binary("Greater"))
onnx_op("Less", 1, 7, 9, 13)(_binary("Less"))
onnx_op("GreaterOrEqual", 12, 16)(_binary("GreaterEqual"))
onnx_op("LessOrEqual", 12, 16)(_binary("LessEqual"))
onnx_op("And", 1, 7)(_binary("LogicalAnd"))
onnx_op("Or", 1, 7)(_binary("LogicalOr"))
onnx_op("Xor", 1, 7)(_binary("LogicalXor", "opset2"))
onnx_op("BitwiseAnd", 18)(_binary("BitwiseAnd", "opset13"))
onnx_op("BitwiseOr", 18)(_binary("BitwiseOr", "opset13"))
onnx_op("BitwiseXor", 18)(_binary("BitwiseXor", "opset13"))


@onnx_op("Div", 1, 6, 7, 13, 14)
def div(ctx: NodeContext) -> list[Value | None]:
    a, b = ctx.required_input(0), ctx.required_input(1)
    b = legacy_broadcast(ctx, a, b)
    # ONNX integer division truncates toward zero; OpenVINO's default ("python") floors.
    python_div = not a.element_type.is_integral
    return [ctx.op("Divide", "opset1", [a, b],
                  {"auto_broadcast": "numpy", "m_pythondiv": python_div},
                  refine=ctx.onnx_types(0))[0]]


@onnx_op("Pow", 1, 7, 12, 13, 15)
def pow_(ctx: NodeContext) -> list[Value | None]:
    base, exponent = ctx.required_input(0), ctx.required_input(1)
    exponent = legacy_broadcast(ctx, base, exponent)
    # ONNX allows an exponent of another type; the result has the base's type.
    exponent = convert(ctx, exponent, base.element_type)
    return [ctx.op("Power", "opset1", [base, exponent], {"auto_broadcast": "numpy"},
                   refine=ctx.onnx_types(0))[0]]


@onnx_op("Mod", 10, 13, 28)
def mod(ctx: NodeContext) -> list[Value | None]:
    a, b = ctx.required_input(0), ctx.required_input(1)
    # fmod=1: the sign of the dividend (C fmod) = Mod; fmod=0: of the divisor = FloorMod.
    ir_type = "Mod" if int(ctx.attr("fmod", 0)) else "FloorMod"
    return [ctx.op(ir_type, "opset1", [a, b], {"auto_broadcast": "numpy"},
                   refine=ctx.onnx_types(0))[0]]


@onnx_op("BitShift", 11, 28)
def bit_shift(ctx: NodeContext) -> list[Value | None]:
    x, y = ctx.required_input(0), ctx.required_input(1)
    direction = ctx.attr("direction", "")
    if direction not in ("LEFT", "RIGHT"):
        raise ctx.error(f"direction must be LEFT or RIGHT, not {direction!r}")
    # Shifts by a negative amount or by the bit width or more give the sign fill alone
    # (-1 for a right shift of a negative value, else 0): make that explicit, since
    # OpenVINO leaves such shifts to the hardware.
    width = const_of(ctx, x.element_type.bitwidth, y)
    valid = binary(ctx, "Less", y, width)
    if y.element_type.is_signed:
        valid = binary(ctx, "LogicalAnd", valid,
                       binary(ctx, "GreaterEqual", y, const_of(ctx, 0, y)))
    amount = ctx.op("Select", "opset1", [valid, y, const_of(ctx, 0, y)],
                     {"auto_broadcast": "numpy"})[0]
    op = "BitwiseLeftShift" if direction == "LEFT" else "BitwiseRightShift"
    shifted = binary(ctx, op, x, amount, version="opset15")
    fill = const_of(ctx, 0, x)
    if direction == "RIGHT" and x.element_type.is_signed:
        negative = binary(ctx, "Less", x, const_of(ctx, 0, x))
        fill = ctx.op("Select", "opset1", [negative, const_of(ctx, -1, x), fill],
                       {"auto_broadcast": "numpy"})[0]
    return [ctx.op("Select", "opset1", [valid, shifted, fill], {"auto_broadcast": "numpy"},
                   refine=ctx.onnx_types(0))[0]]


@onnx_op("Where", 9, 16)
def where(ctx: NodeContext) -> list[Value | None]:
    cond, a, b = (ctx.required_input(i) for i in range(3))
    return [ctx.op("Select", "opset1", [cond, a, b], {"auto_broadcast": "numpy"},
                   refine=ctx.onnx_types(0))[0]]


# -- unary ops ---------------------------------------------------------------------------
def _unary(ir_type: str, version: str = "opset1", **attrs: object) -> Translator:
    def translate(ctx: NodeContext) -> list[Value | None]:
        return [ctx.op(ir_type, version, [ctx.required_input(0)], dict(attrs) or None,
                       refine=ctx.onnx_types(0))[0]]

    return translate


_UNARY: list[tuple[str, tuple[int, ...], str, str]] = [
    ("Abs", (1, 6, 13), "Abs", "opset1"),
    ("Neg", (1, 6, 13), "Negative", "opset1"),
    ("Ceil", (1, 6, 13), "Ceiling", "opset1"),
    ("Floor", (1, 6, 13), "Floor", "opset1"),
    ("Exp", (1, 6, 13), "Exp", "opset1"),
    ("Log", (1, 6, 13), "Log", "opset1"),
    ("Sqrt", (1, 6, 13), "Sqrt", "opset1"),
    ("Tanh", (1, 6, 13), "Tanh", "opset1"),
    ("Sigmoid", (1, 6, 13), "Sigmoid", "opset1"),
    ("Relu", (1, 6, 13, 14), "ReLU", "opset1"),
    ("Sign", (9, 13), "Sign", "opset1"),
    ("Erf", (9, 13), "Erf", "opset1"),
    ("Sin", (7, 22), "Sin", "opset1"),
    ("Cos", (7, 22), "Cos", "opset1"),
    ("Tan", (7, 22), "Tan", "opset1"),
    ("Asin", (7, 22), "Asin", "opset1"),
    ("Acos", (7, 22), "Acos", "opset1"),
    ("Atan", (7, 22), "Atan", "opset1"),
    ("Sinh", (9, 22), "Sinh", "opset1"),
    ("Cosh", (9, 22), "Cosh", "opset1"),
    ("Asinh", (9, 22), "Asinh", "opset4"),
    ("Acosh", (9, 22), "Acosh", "opset4"),
    ("Atanh", (9, 22), "Atanh", "opset4"),
    ("Softplus", (1, 22), "SoftPlus", "opset4"),
    ("Softsign", (1, 22), "SoftSign", "opset9"),
    ("HardSwish", (14, 22), "HSwish", "opset4"),
    ("Mish", (18, 22), "Mish", "opset4"),
    ("Not", (1,), "LogicalNot", "opset1"),
    ("BitwiseNot", (18,), "BitwiseNot", "opset13"),
    ("IsNaN", (9, 13, 20), "IsNaN", "opset10"),
]
for _onnx_name, _versions, _ir_type, _ir_version in _UNARY:
    onnx_op(_onnx_name, *_versions)(_unary(_ir_type, _ir_version))

onnx_op("Round", 11, 22)(_unary("Round", "opset5", mode="half_to_even"))


@onnx_op("IsInf", 10, 20)
def is_inf(ctx: NodeContext) -> list[Value | None]:
    attrs = {"detect_negative": bool(ctx.attr("detect_negative", 1)),
             "detect_positive": bool(ctx.attr("detect_positive", 1))}
    return [ctx.op("IsInf", "opset10", [ctx.required_input(0)], attrs, refine=ctx.onnx_types(0))[0]]


@onnx_op("Reciprocal", 1, 6, 13)
def reciprocal(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    return [ctx.op("Divide", "opset1", [const_of(ctx, 1, x), x],
                  {"auto_broadcast": "numpy", "m_pythondiv": True}, refine=ctx.onnx_types(0))[0]]


@onnx_op("Identity", 1, 13, 14, 16, 19, 21, 23, 24, 25)
def identity(ctx: NodeContext) -> list[Value | None]:
    return [ctx.op("Identity", "opset16", [ctx.required_input(0)], refine=ctx.onnx_types(0))[0]]


# -- casts -----------------------------------------------------------------------------
@onnx_op("Cast", 1, 6, 9, 13, 19, 21, 23, 24, 25, 28)
def cast(ctx: NodeContext) -> list[Value | None]:
    to = ctx.attr("to")
    if to is None:
        raise ctx.error("attribute 'to' is required")
    if isinstance(to, str):  # Cast-1 names the type: "FLOAT", "INT64"...
        try:
            to = onnx.TensorProto.DataType.Value(to.upper())
        except ValueError:
            raise ctx.error(f"unknown type {to!r} in 'to'") from None
    return [_cast_to(ctx, ctx.required_input(0), onnx_type(ctx, to))]


@onnx_op("CastLike", 15, 19, 21, 23, 24, 25)
def cast_like(ctx: NodeContext) -> list[Value | None]:
    return [_cast_to(ctx, ctx.required_input(0), ctx.required_input(1).element_type)]


def _cast_to(ctx: NodeContext, x: Value, et: ElementType) -> Value:
    """ONNX's Cast of ``x`` to ``et``. A float becomes a boolean as ``x != 0``: ONNX makes
    everything but +-0 true, NaN too, where IR's Convert (OpenVINO's CPU plugin, and so
    irtool's runtime) makes NaN false."""
    if et.kind == "string" or x.element_type.kind == "string":
        raise ctx.error("casts from or to strings are not supported")
    if et.kind == "bool" and x.element_type.kind == "float":
        return ctx.op("NotEqual", "opset1", [x, const_of(ctx, 0, x)],
                      {"auto_broadcast": "numpy"}, refine=ctx.onnx_types(0))[0]
    return ctx.op("Convert", "opset1", [x], {"destination_type": et.name},
                  refine=ctx.onnx_types(0))[0]


# -- variadic ops --------------------------------------------------------------------------
def _fold(ctx: NodeContext, ir_type: str) -> Value:
    values = [v for v in ctx.inputs if v is not None]
    if not values:
        raise ctx.error("needs at least one input")
    if len(values) == 1:
        return ctx.op("Identity", "opset16", values, refine=ctx.onnx_types(0))[0]
    acc = values[0]
    for i, v in enumerate(values[1:], start=2):
        if i == len(values):
            return ctx.op(ir_type, "opset1", [acc, v], {"auto_broadcast": "numpy"},
                          refine=ctx.onnx_types(0))[0]
        acc = binary(ctx, ir_type, acc, v)
    return acc


onnx_op("Max", 1, 6, 8, 12, 13)(lambda ctx: [_fold(ctx, "Maximum")])
onnx_op("Min", 1, 6, 8, 12, 13)(lambda ctx: [_fold(ctx, "Minimum")])
onnx_op("Sum", 1, 6, 8, 13)(lambda ctx: [_fold(ctx, "Add")])


@onnx_op("Mean", 1, 6, 8, 13)
def mean(ctx: NodeContext) -> list[Value | None]:
    values = [v for v in ctx.inputs if v is not None]
    if not values:
        raise ctx.error("needs at least one input")
    acc = values[0]
    for v in values[1:]:
        acc = binary(ctx, "Add", acc, v)
    count = const_of(ctx, len(values), acc)
    return [ctx.op("Divide", "opset1", [acc, count],
                  {"auto_broadcast": "numpy", "m_pythondiv": True}, refine=ctx.onnx_types(0))[0]]


# -- Clip ------------------------------------------------------------------------------
@onnx_op("Clip", 1, 6)
def clip_attrs(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    lo = float(ctx.attr("min", -np.inf))
    hi = float(ctx.attr("max", np.inf))
    return [_clip(ctx, x, None if np.isneginf(lo) else const_of(ctx, lo, x),
                  None if np.isposinf(hi) else const_of(ctx, hi, x))]


@onnx_op("Clip", 11, 12, 13)
def clip_inputs(ctx: NodeContext) -> list[Value | None]:
    return [_clip(ctx, ctx.required_input(0), ctx.input(1), ctx.input(2))]


def _clip(ctx: NodeContext, x: Value, lo: Value | None, hi: Value | None) -> Value:
    if lo is None and hi is None:
        return ctx.op("Identity", "opset16", [x], refine=ctx.onnx_types(0))[0]
    if lo is not None and hi is None:
        return ctx.op("Maximum", "opset1", [x, lo], {"auto_broadcast": "numpy"},
                      refine=ctx.onnx_types(0))[0]
    if lo is not None:
        x = binary(ctx, "Maximum", x, lo)
    return ctx.op("Minimum", "opset1", [x, hi], {"auto_broadcast": "numpy"},  # type: ignore[list-item]
                  refine=ctx.onnx_types(0))[0]
