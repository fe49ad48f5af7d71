"""ai.onnx.ml operators lowered to standard IR ops (so OpenVINO runs them too): Scaler,
Normalizer, Binarizer, Imputer, ArrayFeatureExtractor, FeatureVectorizer, OneHotEncoder,
LabelEncoder, CategoryMapper, LinearRegressor, LinearClassifier; ZipMap and
DictVectorizer, which take or give maps, are refused with what to do instead.

Semantics are onnxruntime's CPU kernels'; trees are in ``ml_trees``, SVMs in ``ml_svm``.
Lookups (LabelEncoder, CategoryMapper, OneHotEncoder) compare each value with every key
at once (``Equal`` against a constant row) and gather the answer, so they stay
vectorised over the batch.
"""

from __future__ import annotations

import math

import numpy as np

from ....ir.types import ELEMENT_TYPES, from_numpy
from ..context import NodeContext, Value, onnx_op
from ._common import F32, I64, binary, convert, i64, rank_of, reshape, unsqueeze
from ._ml import (
    ML,
    class_labels,
    concat,
    const_like,
    f32_rows,
    floats,
    label_const,
    logistic,
    reduce,
    rows,
    second_class,
    select,
    take,
    text,
    transform,
    unary,
    width,
)

STRING = ELEMENT_TYPES["string"]


@onnx_op("Scaler", 1, domain=ML)
def scaler(ctx: NodeContext) -> list[Value | None]:
    x = convert(ctx, ctx.required_input(0), F32)
    offset = floats(ctx, "offset")
    scale = floats(ctx, "scale")
    y = x
    if offset is not None and offset.size:
        y = binary(ctx, "Subtract", y, ctx.const(offset, F32))
    if scale is not None and scale.size:
        y = binary(ctx, "Multiply", y, ctx.const(scale, F32))
    return [y]


@onnx_op("Normalizer", 1, domain=ML)
def normalizer(ctx: NodeContext) -> list[Value | None]:
    x = f32_rows(ctx, ctx.required_input(0))
    norm = text(ctx, "norm", "MAX")
    if norm == "MAX":
        denom = reduce(ctx, "ReduceMax", x, -1, True)
    elif norm == "L1":
        denom = reduce(ctx, "ReduceSum", unary(ctx, "Abs", x), -1, True)
    elif norm == "L2":
        denom = unary(ctx, "Sqrt", reduce(ctx, "ReduceSum", binary(ctx, "Multiply", x, x),
                                          -1, True))
    else:
        raise ctx.error(f"unknown norm {norm!r} (MAX, L1 or L2)")
    return [binary(ctx, "Divide", x, denom)]


@onnx_op("Binarizer", 1, domain=ML)
def binarizer(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    above = binary(ctx, "Greater", x, const_like(ctx, float(ctx.attr("threshold", 0.0)), x))
    return [convert(ctx, above, x.element_type)]


@onnx_op("Imputer", 1, domain=ML)
def imputer(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    if x.element_type.kind == "float":
        imputed = floats(ctx, "imputed_value_floats")
        replaced = float(ctx.attr("replaced_value_float", 0.0))
        mask = (unary(ctx, "IsNaN", x, "opset10") if math.isnan(replaced)
                else binary(ctx, "Equal", x, const_like(ctx, replaced, x)))
    else:
        imputed = ctx.attr("imputed_value_int64s")
        replaced_int = int(ctx.attr("replaced_value_int64", 0))
        mask = binary(ctx, "Equal", x, const_like(ctx, replaced_int, x))
    if imputed is None or not len(imputed):
        raise ctx.error("imputed values are missing")
    return [select(ctx, mask, const_like(ctx, np.asarray(imputed), x), x)]


@onnx_op("ArrayFeatureExtractor", 1, domain=ML)
def array_feature_extractor(ctx: NodeContext) -> list[Value | None]:
    x, indices = ctx.required_input(0), ctx.required_input(1)
    if rank_of(ctx, x) <= 2:  # a 1-D input is one row: the output is [1, k]
        x = rows(ctx, x)
    flat = reshape(ctx, convert(ctx, indices, I64), [-1])
    axis = rank_of(ctx, x) - 1
    return [ctx.op("Gather", "opset8", [x, flat, i64(ctx, axis)], {"batch_dims": 0})[0]]


@onnx_op("FeatureVectorizer", 1, domain=ML)
def feature_vectorizer(ctx: NodeContext) -> list[Value | None]:
    dims = [int(d) for d in ctx.attr("inputdimensions", [])]
    inputs = [v for v in ctx.inputs if v is not None]
    if len(dims) != len(inputs):
        raise ctx.error(f"{len(inputs)} inputs but {len(dims)} inputdimensions")
    parts = []
    for value, dim in zip(inputs, dims):
        x = f32_rows(ctx, value)
        have = width(ctx, x)
        if have > dim:  # onnxruntime copies the first ``dim`` features
            x = ctx.op("Gather", "opset8", [x, i64(ctx, list(range(dim))), i64(ctx, 1)],
                        {"batch_dims": 0})[0]
        elif have < dim:  # and pads with zeros
            zeros = binary(ctx, "Multiply", ctx.op("Gather", "opset8", [
                x, i64(ctx, [0] * (dim - have)), i64(ctx, 1)], {"batch_dims": 0})[0],
                ctx.const(np.float32(0), F32))
            x = concat(ctx, [x, zeros], 1)
        parts.append(x)
    return [concat(ctx, parts, 1)]


# -- lookups ----------------------------------------------------------------------------
def lookup(ctx: NodeContext, x: Value, keys: np.ndarray, values: np.ndarray,
           default: object) -> Value:
    """``values[i]`` where ``x == keys[i]`` (the first such i), else ``default``: one
    Equal against all keys, the first hit's position, one Gather."""
    if x.element_type == STRING or keys.dtype.kind in "USO":
        key_const = ctx.const(np.asarray(keys, dtype=object), STRING)
    else:
        keys = keys.astype(x.element_type.dtype)
        key_const = ctx.const(keys, x.element_type)
    count = len(keys)
    if count == 0:
        raise ctx.error("the mapping has no keys")
    wide = unsqueeze(ctx, x, [-1])
    hit = binary(ctx, "Equal", wide, key_const)
    if keys.dtype.kind == "f" and np.isnan(keys).any():  # a NaN key maps NaN inputs
        nan_key = ctx.const(np.isnan(keys), ELEMENT_TYPES["boolean"])
        hit = binary(ctx, "LogicalOr", hit,
                     binary(ctx, "LogicalAnd", unary(ctx, "IsNaN", wide, "opset10"), nan_key))
    positions = select(ctx, hit, i64(ctx, np.arange(count)), i64(ctx, count))
    first = reduce(ctx, "ReduceMin", positions, -1, False)
    if values.dtype.kind in "USO":
        table = label_const(ctx, [*values.tolist(), default])
    else:
        array = np.append(values, np.asarray(default, dtype=values.dtype))
        table = ctx.const(array, from_numpy(array.dtype))
    return take(ctx, table, first)


def _tensor_or_list(ctx: NodeContext, stem: str) -> np.ndarray | None:
    """A LabelEncoder key/value attribute in any of its spellings."""
    tensor = ctx.attr(f"{stem}_tensor")
    if tensor is not None:
        return np.asarray(tensor).ravel()
    for suffix, dtype in (("floats", np.float32), ("int64s", np.int64), ("strings", object)):
        value = ctx.attr(f"{stem}_{suffix}")
        if value is not None:
            return np.asarray(value, dtype=dtype)
    return None


@onnx_op("LabelEncoder", 1, 2, 4, domain=ML)
def label_encoder(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    if ctx.opset < 2:
        classes = np.asarray(ctx.attr("classes_strings", []), dtype=object)
        if x.element_type == STRING:  # string -> its position
            return [lookup(ctx, x, classes, np.arange(len(classes), dtype=np.int64),
                           int(ctx.attr("default_int64", -1)))]
        return [lookup(ctx, x, np.arange(len(classes), dtype=np.int64), classes,
                       text(ctx, "default_string", "_Unused"))]
    keys = _tensor_or_list(ctx, "keys")
    values = _tensor_or_list(ctx, "values")
    if keys is None or values is None or len(keys) != len(values):
        raise ctx.error("keys and values must be given, of equal length")
    default_tensor = ctx.attr("default_tensor")
    if default_tensor is not None:
        default = np.asarray(default_tensor).ravel()[0]
    elif values.dtype == object:
        default = text(ctx, "default_string", "_Unused")
    elif values.dtype.kind == "f":
        default = float(ctx.attr("default_float", -0.0))
    else:
        default = int(ctx.attr("default_int64", -1))
    return [lookup(ctx, x, keys, values, default)]


@onnx_op("CategoryMapper", 1, domain=ML)
def category_mapper(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    strings = np.asarray(ctx.attr("cats_strings", []), dtype=object)
    numbers = np.asarray(ctx.attr("cats_int64s", []), dtype=np.int64)
    if x.element_type == STRING:
        return [lookup(ctx, x, strings, numbers, int(ctx.attr("default_int64", -1)))]
    return [lookup(ctx, x, numbers, strings, text(ctx, "default_string", "_Unused"))]


@onnx_op("OneHotEncoder", 1, domain=ML)
def one_hot_encoder(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    strings = ctx.attr("cats_strings")
    if strings:
        cats = ctx.const(np.asarray(strings, dtype=object), STRING)
    else:
        numbers = ctx.attr("cats_int64s")
        if not numbers:
            raise ctx.error("cats_int64s or cats_strings must be given")
        # onnxruntime casts float inputs to int64 (towards zero) before comparing
        x = convert(ctx, x, I64)
        cats = i64(ctx, list(numbers))
    hit = binary(ctx, "Equal", unsqueeze(ctx, x, [-1]), cats)
    return [convert(ctx, hit, F32)]


# -- linear models ----------------------------------------------------------------------
def _linear(ctx: NodeContext, x: Value, targets: int) -> Value:
    """``x @ coefficients.T + intercepts`` [N, targets] in f32."""
    x = f32_rows(ctx, x)
    features = width(ctx, x)
    coefficients = floats(ctx, "coefficients")
    if coefficients is None or coefficients.size != targets * features:
        raise ctx.error(f"{0 if coefficients is None else coefficients.size} coefficients "
                        f"for {targets} targets of {features} features")
    weights = ctx.const(coefficients.reshape(targets, features).T.copy(), F32)
    scores = ctx.op("MatMul", "opset1", [x, weights],
                     {"transpose_a": False, "transpose_b": False})[0]
    intercepts = floats(ctx, "intercepts")
    if intercepts is not None and intercepts.size:
        scores = binary(ctx, "Add", scores, ctx.const(intercepts, F32))
    return scores


@onnx_op("LinearRegressor", 1, domain=ML)
def linear_regressor(ctx: NodeContext) -> list[Value | None]:
    targets = int(ctx.attr("targets", 1))
    scores = _linear(ctx, ctx.required_input(0), targets)
    post = text(ctx, "post_transform", "NONE")
    if targets == 1:  # onnxruntime applies only PROBIT to a single target
        return [second_class(ctx, scores, "none", post)]
    return [transform(ctx, scores, post)]


@onnx_op("LinearClassifier", 1, domain=ML)
def linear_classifier(ctx: NodeContext) -> list[Value | None]:
    intercepts = floats(ctx, "intercepts")
    classes = 0 if intercepts is None else int(intercepts.size)
    if classes == 0:
        raise ctx.error("intercepts must be given (one per class)")
    scores = _linear(ctx, ctx.required_input(0), classes)
    labels = class_labels(ctx)
    post = text(ctx, "post_transform", "NONE")
    if classes == 1:
        two = len(labels) == 2
        strings = bool(ctx.attr("classlabels_strings"))
        positive = labels[1] if two else ("1" if strings else 1)
        negative = labels[0] if two else ("0" if strings else 0)
        above = binary(ctx, "Greater", reshape(ctx, scores, [-1]),
                       ctx.const(np.float32(0), F32))
        label = take(ctx, label_const(ctx, [negative, positive]), convert(ctx, above, I64))
        if post == "PROBIT" and two:
            raise ctx.error("PROBIT on a one-score classifier with two labels: onnxruntime "
                            "leaves half of the scores unwritten")
        if two and post == "LOGISTIC":  # onnxruntime: [1 - logistic(s), logistic(s)]
            return [label, second_class(ctx, logistic(ctx, scores), "complement", "NONE")]
        return [label, second_class(ctx, scores, "complement" if two else "none", post)]
    if len(labels) != classes:
        raise ctx.error(f"{len(labels)} class labels for {classes} classes")
    from ._ml import argmax_first

    label = take(ctx, label_const(ctx, labels), argmax_first(ctx, scores, classes))
    return [label, transform(ctx, scores, post)]


# -- operators on maps ------------------------------------------------------------------
_MAPS = {
    "ZipMap": "it turns class scores into a sequence of maps, which an IR cannot hold; "
              "export the classifier without it (skl2onnx: options={id(model): "
              "{'zipmap': False}}; onnxmltools: zipmap=False)",
    "DictVectorizer": "it takes a map, which an IR cannot hold; vectorise the features "
                      "before the model and feed the model a tensor",
    "CastMap": "it takes a map, which an IR cannot hold",
}


def refuse_map_ops(ctx: NodeContext) -> list[Value | None]:
    raise ctx.error(_MAPS[ctx.node.op_type])


for _name in _MAPS:
    onnx_op(_name, 1, domain=ML)(refuse_map_ops)


def map_advice(op_type: str) -> str | None:
    """Why an ai.onnx.ml operator on maps cannot convert and what to do instead."""
    return _MAPS.get(op_type)
