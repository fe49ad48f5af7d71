"""Helpers of the ai.onnx.ml translators (``ml``, ``ml_trees``, ``ml_svm``): attributes,
rows of features, and onnxruntime's score transforms and label choices in IR ops.

The transforms follow onnxruntime's CPU kernels (``core/providers/cpu/ml/ml_common.h``),
which is what models from skl2onnx and onnxmltools are checked against: PROBIT uses
its closed-form approximation of erfinv, SOFTMAX_ZERO leaves zero scores out of the sum,
and a binary classifier's one score becomes two columns in one of its fixed ways.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....opset import TensorInfo
from ..context import NodeContext, Value
from ._common import BOOL, F32, I64, binary, convert, i64, rank_of, unsqueeze

ML = "ai.onnx.ml"
F64 = np.float64


def floats(ctx: NodeContext, name: str, dtype: Any = np.float32) -> np.ndarray | None:
    """A float list attribute, or its ``<name>_as_tensor`` form; None when neither is given."""
    tensor = ctx.attr(f"{name}_as_tensor")
    if tensor is not None:
        return np.asarray(tensor, dtype=dtype).ravel()
    value = ctx.attr(name)
    return None if value is None else np.asarray(value, dtype=dtype)


def ints(ctx: NodeContext, name: str) -> np.ndarray | None:
    value = ctx.attr(name)
    return None if value is None else np.asarray(value, dtype=np.int64)


def text(ctx: NodeContext, name: str, default: str) -> str:
    value = ctx.attr(name, default)
    return value.decode() if isinstance(value, bytes) else str(value)


def rows(ctx: NodeContext, x: Value) -> Value:
    """``x`` as a 2-D [N, C] tensor: onnxruntime reads a 1-D input as one row."""
    rank = rank_of(ctx, x)
    if rank == 1:
        return unsqueeze(ctx, x, [0])
    if rank != 2:
        raise ctx.error(f"the input must be 1-D or 2-D (it has rank {rank})")
    return x


def f32_rows(ctx: NodeContext, x: Value) -> Value:
    """``rows`` converted to f32, the type onnxruntime computes these operators in."""
    return convert(ctx, rows(ctx, x), F32)


def width(ctx: NodeContext, x: Value) -> int:
    """The static number of features (columns) of the 2-D ``x``."""
    if x.shape is None or x.shape[-1] < 0:
        raise ctx.error("the number of input features must be known")
    return int(x.shape[-1])


def unary(ctx: NodeContext, type: str, x: Value, version: str = "opset1") -> Value:
    """A one-input op whose output has ``x``'s type, or (IsNaN) its shape in boolean."""
    et = BOOL if type == "IsNaN" else x.element_type
    return ctx.op(type, version, [x], outputs=[TensorInfo(et, x.shape)])[0]


def const_like(ctx: NodeContext, value: Any, like: Value) -> Value:
    dtype = like.element_type.dtype
    return ctx.const(np.asarray(value, dtype=dtype), like.element_type)


def select(ctx: NodeContext, cond: Value, a: Value, b: Value) -> Value:
    return ctx.op("Select", "opset1", [cond, a, b], {"auto_broadcast": "numpy"})[0]


def reduce(ctx: NodeContext, type: str, x: Value, axis: int, keep: bool) -> Value:
    return ctx.op(type, "opset1", [x, i64(ctx, [axis])], {"keep_dims": keep})[0]


def concat(ctx: NodeContext, parts: list[Value], axis: int) -> Value:
    if len(parts) == 1:
        return parts[0]
    return ctx.op("Concat", "opset1", parts, {"axis": axis})[0]


# -- transforms -------------------------------------------------------------------------
def logistic(ctx: NodeContext, s: Value) -> Value:
    return unary(ctx, "Sigmoid", s)


def probit(ctx: NodeContext, s: Value) -> Value:
    """``sqrt(2) * erfinv(2 s - 1)`` with onnxruntime's approximation of erfinv."""
    c = lambda v: const_like(ctx, v, s)  # noqa: E731
    x = binary(ctx, "Subtract", binary(ctx, "Multiply", s, c(2.0)), c(1.0))
    sign = select(ctx, binary(ctx, "Less", x, c(0.0)), c(-1.0), c(1.0))
    one_minus = binary(ctx, "Multiply", binary(ctx, "Subtract", c(1.0), x),
                       binary(ctx, "Add", c(1.0), x))
    log = unary(ctx, "Log", one_minus)
    v = binary(ctx, "Add", c(2 / (3.14159 * 0.147)), binary(ctx, "Multiply", c(0.5), log))
    v2 = binary(ctx, "Multiply", c(1 / 0.147), log)
    root = unary(ctx, "Sqrt", binary(ctx, "Subtract", binary(ctx, "Multiply", v, v), v2))
    v3 = binary(ctx, "Subtract", root, v)
    erfinv = binary(ctx, "Multiply", sign, unary(ctx, "Sqrt", v3))
    return binary(ctx, "Multiply", c(1.41421356), erfinv)


def softmax(ctx: NodeContext, s: Value) -> Value:
    return ctx.op("Softmax", "opset8", [s], {"axis": -1}, outputs=[s.info])[0]


def softmax_zero(ctx: NodeContext, s: Value) -> Value:
    """Softmax over the scores that are not (nearly) zero; zero scores stay ~0."""
    top = reduce(ctx, "ReduceMax", s, -1, True)
    nonzero = binary(ctx, "Greater", unary(ctx, "Abs", s), const_like(ctx, 1e-7, s))
    exp = unary(ctx, "Exp", binary(ctx, "Subtract", s, top))
    scaled = binary(ctx, "Multiply", s, unary(ctx, "Exp", unary(ctx, "Negative", top)))
    values = select(ctx, nonzero, exp, scaled)
    total = reduce(ctx, "ReduceSum", select(ctx, nonzero, exp, const_like(ctx, 0.0, s)), -1,
                   True)
    return binary(ctx, "Divide", values, total)


def transform(ctx: NodeContext, s: Value, post: str) -> Value:
    """``post`` applied to scores of two or more columns (``write_scores``)."""
    if post == "NONE":
        return s
    if post == "LOGISTIC":
        return logistic(ctx, s)
    if post == "SOFTMAX":
        return softmax(ctx, s)
    if post == "SOFTMAX_ZERO":
        return softmax_zero(ctx, s)
    if post == "PROBIT":
        return probit(ctx, s)
    raise ctx.error(f"unknown post_transform {post!r}")


def post_transform(ctx: NodeContext) -> str:
    """The ``post_transform`` attribute: a string, or (TreeEnsemble) its number."""
    value = ctx.attr("post_transform", "NONE")
    if isinstance(value, int):
        names = ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")
        if not 0 <= value < len(names):
            raise ctx.error(f"unknown post_transform {value}")
        return names[value]
    return str(value)


def second_class(ctx: NodeContext, s: Value, how: str, post: str) -> Value:
    """A one-column score [N, 1] as onnxruntime writes a binary classifier's scores:
    ``how`` is "complement" ([1 - s, s]), "negate" ([-s, s], or the logistic of both
    under LOGISTIC) or "none" (s alone; PROBIT still applies)."""
    if post == "PROBIT":
        return probit(ctx, s)
    if how == "complement":
        return concat(ctx, [binary(ctx, "Subtract", const_like(ctx, 1.0, s), s), s], 1)
    if how == "negate":
        neg = unary(ctx, "Negative", s)
        if post == "LOGISTIC":
            return concat(ctx, [logistic(ctx, neg), logistic(ctx, s)], 1)
        return concat(ctx, [neg, s], 1)
    return s


# -- labels -----------------------------------------------------------------------------
def argmax_first(ctx: NodeContext, s: Value, count: int, valid: Value | None = None) -> Value:
    """The index of the first largest score of each row of ``s`` [N, count], i64 [N];
    ``valid`` [N, count] (bool) leaves columns out (onnxruntime's classes without a score)."""
    if valid is not None:
        low = const_like(ctx, -np.inf, s)
        s = select(ctx, valid, s, low)
    top = reduce(ctx, "ReduceMax", s, -1, True)
    hit = binary(ctx, "Equal", s, top)
    if valid is not None:
        hit = binary(ctx, "LogicalAnd", hit, valid)
    positions = select(ctx, hit, i64(ctx, np.arange(count)), i64(ctx, count))
    first = reduce(ctx, "ReduceMin", positions, -1, False)
    # No valid column (cannot happen for well-formed models): index 0, like a label default.
    return select(ctx, binary(ctx, "Less", first, i64(ctx, count)), first, i64(ctx, 0))


def label_const(ctx: NodeContext, labels: list[Any] | np.ndarray) -> Value:
    """Class labels as a Const (i64, or strings)."""
    array = np.asarray(labels)
    if array.dtype.kind in "USO":
        from ....ir.types import ELEMENT_TYPES

        return ctx.const(np.asarray(array, dtype=object), ELEMENT_TYPES["string"])
    return ctx.const(array.astype(np.int64), I64)


def take(ctx: NodeContext, table: Value, index: Value) -> Value:
    """``table[index]`` along axis 0."""
    return ctx.op("Gather", "opset8", [table, index, i64(ctx, 0)], {"batch_dims": 0})[0]


def class_labels(ctx: NodeContext) -> list[Any]:
    """``classlabels_strings`` or ``classlabels_int64s``/``classlabels_ints``."""
    strings = ctx.attr("classlabels_strings")
    if strings:
        return list(strings)
    for name in ("classlabels_int64s", "classlabels_ints"):
        value = ctx.attr(name)
        if value:
            return [int(v) for v in value]
    return []


def bool_info(shape: tuple[int, ...] | None) -> TensorInfo:
    return TensorInfo(BOOL, shape)
