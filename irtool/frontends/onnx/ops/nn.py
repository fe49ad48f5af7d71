"""Neural-network ONNX operators: MatMul, Gemm, Conv, ConvTranspose, pooling, normalization,
LRN, Einsum, Dropout, the random generators (RandomUniform, RandomNormal and their -Like
forms; Bernoulli expands to RandomUniformLike), Col2Im, RoiAlign, NonMaxSuppression,
MaxUnpool."""

from __future__ import annotations

from typing import Any

import numpy as np

from ....ir.types import ELEMENT_TYPES, ElementType
from ....opset import TensorInfo
from ..context import NodeContext, Value, onnx_op
from ._common import (
    BOOL,
    I64,
    binary,
    check_size,
    const_of,
    convert,
    dim_of,
    i64,
    norm_axis,
    onnx_type,
    rank_of,
    reshape,
    shape_of,
    to_scalar,
    unsqueeze,
)


@onnx_op("MatMul", 1, 9, 13)
def matmul(ctx: NodeContext) -> list[Value | None]:
    a, b = ctx.required_input(0), ctx.required_input(1)
    return [ctx.op("MatMul", "opset1", [a, b], {"transpose_a": False, "transpose_b": False},
                   refine=ctx.onnx_types(0))[0]]


@onnx_op("Gemm", 1, 6, 7, 9, 11, 13)
def gemm(ctx: NodeContext) -> list[Value | None]:
    """alpha * A' B' + beta * C: MatMul (transposes as attributes), Multiply, Add."""
    a, b, c = ctx.required_input(0), ctx.required_input(1), ctx.input(2)
    alpha, beta = float(ctx.attr("alpha", 1.0)), float(ctx.attr("beta", 1.0))
    mm_attrs = {"transpose_a": bool(ctx.attr("transA", 0)),
                "transpose_b": bool(ctx.attr("transB", 0))}
    if c is not None and beta == 0.0:
        c = None
    if alpha == 1.0 and c is None:
        return [ctx.op("MatMul", "opset1", [a, b], mm_attrs, refine=ctx.onnx_types(0))[0]]
    y = ctx.op("MatMul", "opset1", [a, b], mm_attrs)[0]
    if alpha != 1.0:
        if c is None:
            return [ctx.op("Multiply", "opset1", [y, const_of(ctx, alpha, y)],
                          {"auto_broadcast": "numpy"}, refine=ctx.onnx_types(0))[0]]
        y = binary(ctx, "Multiply", y, const_of(ctx, alpha, y))
    assert c is not None
    if beta != 1.0:
        c = binary(ctx, "Multiply", c, const_of(ctx, beta, c))
    return [ctx.op("Add", "opset1", [y, c], {"auto_broadcast": "numpy"},
                   refine=ctx.onnx_types(0))[0]]


# -- convolutions ----------------------------------------------------------------------------
_AUTO_PAD = {"NOTSET": "explicit", "SAME_UPPER": "same_upper", "SAME_LOWER": "same_lower",
             "VALID": "valid", "": "explicit"}


def _spatial(ctx: NodeContext, x: Value, w: Value | None = None) -> int:
    if x.rank is not None:
        return x.rank - 2
    if w is not None and w.rank is not None:
        return w.rank - 2
    kernel = ctx.attr("kernel_shape")
    if kernel:
        return len(kernel)
    raise ctx.error("the input rank must be known")


def window_attrs(ctx: NodeContext, n: int) -> dict[str, Any]:
    """strides, pads_begin/end, auto_pad and dilations of a convolution or pooling node."""
    pads = [int(p) for p in ctx.attr("pads", [0] * (2 * n))]
    auto_pad = ctx.attr("auto_pad", "NOTSET")
    if auto_pad not in _AUTO_PAD:
        raise ctx.error(f"auto_pad {auto_pad!r} is not supported")
    attrs: dict[str, Any] = {
        "strides": [int(s) for s in ctx.attr("strides", [1] * n)],
        "pads_begin": pads[:n],
        "pads_end": pads[n:],
        "auto_pad": _AUTO_PAD[auto_pad],
        "dilations": [int(d) for d in ctx.attr("dilations", [1] * n)],
    }
    if attrs["auto_pad"] == "valid":
        attrs["pads_begin"] = attrs["pads_end"] = [0] * n
    return attrs


def grouped_weights(ctx: NodeContext, w: Value, group: int) -> Value:
    """Weights [O, I/g, k...] (transposed: [I, O/g, k...]) as [g, O/g, I/g, k...]
    ([g, I/g, O/g, k...]): the first dim splits into groups."""
    if w.shape is None or any(d < 0 for d in w.shape[1:]):
        raise ctx.error("grouped convolution needs weights with static trailing dims")
    return reshape(ctx, w, [group, -1, *w.shape[1:]])


def _add_bias(ctx: NodeContext, y: Value, bias: Value, n: int) -> Value:
    """``y + bias`` with the per-channel bias shaped [1, C, 1, ...] (the node's last op)."""
    shaped = unsqueeze(ctx, bias, [0, *range(2, 2 + n)])
    return ctx.op("Add", "opset1", [y, shaped], {"auto_broadcast": "numpy"},
                  refine=ctx.onnx_types(0))[0]


def _convolution(ctx: NodeContext, op: str, x: Value, w: Value, bias: Value | None,
                 attrs: dict[str, object], n: int) -> list[Value | None]:
    """``op`` (``Convolution``, ``ConvolutionBackpropData``), its ``Group`` form for a
    ``group`` attribute above 1, then the bias if any."""
    group = int(ctx.attr("group", 1))
    weights = w if group == 1 else grouped_weights(ctx, w, group)
    op = op if group == 1 else f"Group{op}"
    if bias is None:
        return [ctx.op(op, "opset1", [x, weights], attrs, refine=ctx.onnx_types(0))[0]]
    y = ctx.op(op, "opset1", [x, weights], attrs)[0]
    return [_add_bias(ctx, y, bias, n)]


@onnx_op("Conv", 1, 11, 22)
def conv(ctx: NodeContext) -> list[Value | None]:
    x, w, bias = ctx.required_input(0), ctx.required_input(1), ctx.input(2)
    n = _spatial(ctx, x, w)
    attrs = window_attrs(ctx, n)
    return _convolution(ctx, "Convolution", x, w, bias, attrs, n)


@onnx_op("ConvTranspose", 1, 11, 22)
def conv_transpose(ctx: NodeContext) -> list[Value | None]:
    x, w, bias = ctx.required_input(0), ctx.required_input(1), ctx.input(2)
    n = _spatial(ctx, x, w)
    attrs = window_attrs(ctx, n)
    output_padding = [int(p) for p in ctx.attr("output_padding", [0] * n)]
    strides, dilations = attrs["strides"], attrs["dilations"]
    kernel = ctx.attr("kernel_shape")
    if kernel is None and w.shape is not None:
        kernel = list(w.shape[2:])
    output_shape = ctx.attr("output_shape")
    auto_pad = ctx.attr("auto_pad", "NOTSET")
    spatial_in = list(x.shape[2:]) if x.shape is not None else None
    if (output_shape is not None or auto_pad in ("SAME_UPPER", "SAME_LOWER")) and \
            spatial_in is not None and all(d >= 0 for d in spatial_in) and kernel is not None:
        # ONNX derives the padding from the wanted output size; make it explicit.
        if output_shape is None:
            output_shape = [d * s for d, s in zip(spatial_in, strides)]
        output_shape = list(output_shape)[-n:]
        begin, end = [], []
        for i in range(n):
            full = strides[i] * (spatial_in[i] - 1) + output_padding[i] + \
                (kernel[i] - 1) * dilations[i] + 1
            total = full - int(output_shape[i])
            if total < 0:  # the output is larger: the extra goes to the end
                output_padding[i] += -total
                total = 0
            if auto_pad == "SAME_UPPER":
                begin.append(total // 2)
            else:
                begin.append(total - total // 2)
            end.append(total - begin[-1])
        attrs.update(pads_begin=begin, pads_end=end, auto_pad="explicit")
    elif output_shape is not None:
        raise ctx.error("output_shape needs static input spatial dims")
    attrs["output_padding"] = output_padding
    return _convolution(ctx, "ConvolutionBackpropData", x, w, bias, attrs, n)


# -- pooling -------------------------------------------------------------------------------
def _pool_window(ctx: NodeContext) -> tuple[Value, int, dict[str, Any]]:
    """The pooled input, its spatial rank and the window attributes (kernel included)."""
    x = ctx.required_input(0)
    n = _spatial(ctx, x)
    attrs = window_attrs(ctx, n)
    attrs["kernel"] = [int(k) for k in ctx.attr("kernel_shape")]
    return x, n, attrs


@onnx_op("AveragePool", 1, 7, 10, 11, 19, 22)
def average_pool(ctx: NodeContext) -> list[Value | None]:
    x, _, attrs = _pool_window(ctx)
    attrs["exclude-pad"] = not bool(ctx.attr("count_include_pad", 0))
    ceil = bool(ctx.attr("ceil_mode", 0))
    if ceil or any(d != 1 for d in attrs["dilations"]):
        # ONNX's ceil mode drops a last window that would start in the right padding:
        # OpenVINO's "ceil_torch" (AvgPool-14 and later).
        attrs["rounding_type"] = "ceil_torch" if ceil else "floor"
        return [ctx.op("AvgPool", "opset16", [x], attrs, refine=ctx.onnx_types(0))[0]]
    del attrs["dilations"]
    attrs["rounding_type"] = "floor"
    return [ctx.op("AvgPool", "opset1", [x], attrs, refine=ctx.onnx_types(0))[0]]


@onnx_op("MaxPool", 1, 8, 10, 11, 12, 22)
def max_pool(ctx: NodeContext) -> list[Value | None]:
    x, n, attrs = _pool_window(ctx)
    # ONNX's ceil mode drops a last window that would start in the right padding: that is
    # "ceil_torch" of MaxPool-14 (MaxPool-8's "ceil" keeps it).
    ceil = bool(ctx.attr("ceil_mode", 0))
    attrs["rounding_type"] = "ceil_torch" if ceil else "floor"
    version = "opset14" if ceil else "opset8"
    attrs["index_element_type"] = I64
    attrs["axis"] = 0
    want_indices = len(ctx.node.output) > 1 and bool(ctx.node.output[1])
    if not want_indices or not ctx.attr("storage_order", 0):
        values, indices = ctx.op("MaxPool", version, [x], attrs, refine=ctx.onnx_types(0, 1))
        return [values, indices if want_indices else None]
    if n != 2:
        raise ctx.error("storage_order=1 is supported for 2-D pooling only")
    values, indices = ctx.op("MaxPool", version, [x], attrs, refine=ctx.onnx_types(0, None))
    # Row-major flat index r over [N, C, H, W] -> column-major within each H x W plane.
    h, w = dim_of(ctx, x, 2, keep_1d=False), dim_of(ctx, x, 3, keep_1d=False)
    plane = binary(ctx, "Multiply", h, w)
    base = binary(ctx, "Multiply", binary(ctx, "Divide", indices, plane, m_pythondiv=True), plane)
    col = binary(ctx, "FloorMod", indices, w)
    row = binary(ctx, "FloorMod", binary(ctx, "Divide", indices, w, m_pythondiv=True), h)
    inner = binary(ctx, "Add", binary(ctx, "Multiply", col, h), row)
    return [values, ctx.op("Add", "opset1", [base, inner], {"auto_broadcast": "numpy"},
                           refine=ctx.onnx_types(1))[0]]


def _global(ctx: NodeContext, ir_type: str) -> Value:
    x = ctx.required_input(0)
    axes = i64(ctx, list(range(2, rank_of(ctx, x))))
    return ctx.op(ir_type, "opset1" if ir_type in ("ReduceMean", "ReduceMax") else "opset4",
                 [x, axes], {"keep_dims": True}, refine=ctx.onnx_types(0))[0]


onnx_op("GlobalAveragePool", 1, 22)(lambda ctx: [_global(ctx, "ReduceMean")])
onnx_op("GlobalMaxPool", 1, 22)(lambda ctx: [_global(ctx, "ReduceMax")])


@onnx_op("GlobalLpPool", 1, 2, 22)
def global_lp_pool(ctx: NodeContext) -> list[Value | None]:
    p = int(ctx.attr("p", 2))
    if p == 1:
        return [_global(ctx, "ReduceL1")]
    if p == 2:
        return [_global(ctx, "ReduceL2")]
    x = ctx.required_input(0)
    axes = i64(ctx, list(range(2, rank_of(ctx, x))))
    powered = binary(ctx, "Power", ctx.op("Abs", "opset1", [x])[0], const_of(ctx, p, x))
    total = ctx.op("ReduceSum", "opset1", [powered, axes], {"keep_dims": True})[0]
    return [ctx.op("Power", "opset1", [total, const_of(ctx, 1.0 / p, x)],
                  {"auto_broadcast": "numpy"}, refine=ctx.onnx_types(0))[0]]


@onnx_op("LpPool", 1, 2, 11, 18, 22)
def lp_pool(ctx: NodeContext) -> list[Value | None]:
    # (sum over the window of |x|^p)^(1/p) = (AvgPool(|x|^p) counting pads * kernel size)^(1/p)
    x = ctx.required_input(0)
    n = _spatial(ctx, x)
    p = float(ctx.attr("p", 2))
    attrs = window_attrs(ctx, n)
    kernel = [int(k) for k in ctx.attr("kernel_shape")]
    attrs["kernel"] = kernel
    attrs["exclude-pad"] = False
    attrs["rounding_type"] = "ceil_torch" if ctx.attr("ceil_mode", 0) else "floor"
    powered = binary(ctx, "Power", ctx.op("Abs", "opset1", [x])[0], const_of(ctx, p, x))
    avg = ctx.op("AvgPool", "opset16", [powered], attrs)[0]
    total = binary(ctx, "Multiply", avg, const_of(ctx, float(np.prod(kernel)), x))
    return [ctx.op("Power", "opset1", [total, const_of(ctx, 1.0 / p, x)],
                  {"auto_broadcast": "numpy"}, refine=ctx.onnx_types(0))[0]]


@onnx_op("MaxUnpool", 9, 11, 22)
def max_unpool(ctx: NodeContext) -> list[Value | None]:
    x, indices, out_shape = ctx.required_input(0), ctx.required_input(1), ctx.input(2)
    n = _spatial(ctx, x)
    if x.shape is None or any(d < 0 for d in x.shape):
        raise ctx.error("needs a static input shape")
    kernel = [int(k) for k in ctx.attr("kernel_shape")]
    strides = [int(s) for s in ctx.attr("strides", [1] * n)]
    pads = [int(p) for p in ctx.attr("pads", [0] * (2 * n))]
    for name, values, want in (("kernel_shape", kernel, n), ("strides", strides, n),
                               ("pads", pads, 2 * n)):
        if len(values) != want:
            raise ctx.error(f"{name} has {len(values)} values; {want} expected for "
                            f"{n} spatial dims")
    # The indices address the unpadded pooling input, whose shape these attributes give;
    # a larger output_shape pads that result at the end of each spatial axis.
    dims = [(x.shape[2 + i] - 1) * strides[i] + kernel[i] - pads[i] - pads[n + i]
            for i in range(n)]
    natural = [*x.shape[:2], *dims]
    if any(d < 0 for d in dims):
        raise ctx.error(f"kernel_shape, strides and pads give the output dims {dims}")
    check_size(ctx, natural, "the unpooled output", x.element_type.bitwidth // 8 or 1)
    zeros = ctx.const(np.zeros(int(np.prod(natural)), dtype=x.element_type.dtype),
                      x.element_type)
    flat = ctx.op("ScatterElementsUpdate", "opset12",
                   [zeros, reshape(ctx, convert(ctx, indices, I64), [-1]), reshape(ctx, x, [-1]),
                    i64(ctx, 0)], {"reduction": "none", "use_init_val": True},
                   outputs=[TensorInfo(x.element_type, (int(np.prod(natural)),))])[0]
    if out_shape is None:
        return [ctx.op("Reshape", "opset1", [flat, i64(ctx, natural)],
                      {"special_zero": False}, refine=ctx.onnx_types(0))[0]]
    unpooled = reshape(ctx, flat, natural)
    extra = binary(ctx, "Subtract", convert(ctx, out_shape, I64), i64(ctx, natural))
    return [ctx.op("Pad", "opset12", [unpooled, i64(ctx, [0] * (n + 2)), extra,
                                          const_of(ctx, 0, x)], {"pad_mode": "constant"},
                                          refine=ctx.onnx_types(0))[0]]


# -- normalization ---------------------------------------------------------------------------
@onnx_op("BatchNormalization", 1, 6, 7, 9, 14, 15)
def batch_norm(ctx: NodeContext) -> list[Value | None]:
    x, scale, bias, mean, var = (ctx.required_input(i) for i in range(5))
    eps = float(ctx.attr("epsilon", 1e-5))
    training = ctx.opset >= 14 and bool(ctx.attr("training_mode", 0))
    if not training:
        y = ctx.op("BatchNormInference", "opset5", [x, scale, bias, mean, var],
                  {"epsilon": eps}, refine=ctx.onnx_types(0))[0]
        return [y] + [None] * (len(ctx.node.output) - 1)
    # Training mode: normalise with the batch statistics, update the running ones.
    momentum = float(ctx.attr("momentum", 0.9))
    rank = rank_of(ctx, x)
    axes = i64(ctx, [0, *range(2, rank)])
    batch_mean = ctx.op("ReduceMean", "opset1", [x, axes], {"keep_dims": False})[0]
    centered = binary(ctx, "Subtract", x, unsqueeze(ctx, batch_mean, [0, *range(2, rank)])
                      if rank > 2 else batch_mean)
    batch_var = ctx.op("ReduceMean", "opset1", [binary(ctx, "Multiply", centered, centered),
                                                 axes], {"keep_dims": False})[0]
    y = ctx.op("BatchNormInference", "opset5", [x, scale, bias, batch_mean, batch_var],
              {"epsilon": eps}, refine=ctx.onnx_types(0))[0]
    outs: list[Value | None] = [y]
    keep = const_of(ctx, momentum, mean)
    fresh = const_of(ctx, 1.0 - momentum, mean)
    for k, (running, batch) in enumerate(((mean, batch_mean), (var, batch_var)), start=1):
        if k < len(ctx.node.output) and ctx.node.output[k]:
            mixed = binary(ctx, "Multiply", running, keep)
            outs.append(ctx.op("Add", "opset1", [mixed, binary(ctx, "Multiply", batch, fresh)],
                              {"auto_broadcast": "numpy"}, refine=ctx.onnx_types(k))[0])
        else:
            outs.append(None)
    return outs[:len(ctx.node.output)]


@onnx_op("InstanceNormalization", 1, 6, 22)
def instance_norm(ctx: NodeContext) -> list[Value | None]:
    x, scale, bias = (ctx.required_input(i) for i in range(3))
    rank = rank_of(ctx, x)
    eps = float(ctx.attr("epsilon", 1e-5))
    normed = ctx.op("MVN", "opset6", [x, i64(ctx, list(range(2, rank)))],
                     {"normalize_variance": True, "eps": eps, "eps_mode": "inside_sqrt"},
                     outputs=[x.info])[0]
    trailing = list(range(1, rank - 1))
    scaled = binary(ctx, "Multiply", normed, unsqueeze(ctx, scale, trailing))
    return [ctx.op("Add", "opset1", [scaled, unsqueeze(ctx, bias, trailing)],
                  {"auto_broadcast": "numpy"}, refine=ctx.onnx_types(0))[0]]


@onnx_op("LRN", 1, 13)
def lrn(ctx: NodeContext) -> list[Value | None]:
    attrs = {"alpha": float(ctx.attr("alpha", 1e-4)), "beta": float(ctx.attr("beta", 0.75)),
             "bias": float(ctx.attr("bias", 1.0)), "size": int(ctx.attr("size"))}
    return [ctx.op("LRN", "opset1", [ctx.required_input(0), i64(ctx, [1])], attrs,
                   refine=ctx.onnx_types(0))[0]]


@onnx_op("LayerNormalization", 17)
def layer_norm(ctx: NodeContext) -> list[Value | None]:
    x, scale, bias = ctx.required_input(0), ctx.required_input(1), ctx.input(2)
    rank = rank_of(ctx, x)
    axis = norm_axis(ctx, int(ctx.attr("axis", -1)), rank)
    eps = float(ctx.attr("epsilon", 1e-5))
    axes = i64(ctx, list(range(axis, rank)))
    outputs = list(ctx.node.output)
    want_stats = any(name for name in outputs[1:])
    if not want_stats:
        normed = ctx.op("MVN", "opset6", [x, axes],
                         {"normalize_variance": True, "eps": eps, "eps_mode": "inside_sqrt"},
                         outputs=[x.info])[0]
        return [_scale_shift(ctx, normed, scale, bias)]
    # The statistics (and the outputs Mean, InvStdDev) have stash_type, f32 by default.
    stash = onnx_type(ctx, int(ctx.attr("stash_type", 1)))
    xs = convert(ctx, x, stash)
    mean = ctx.op("ReduceMean", "opset1", [xs, axes], {"keep_dims": True})[0]
    centered = binary(ctx, "Subtract", xs, mean)
    var = ctx.op("ReduceMean", "opset1", [binary(ctx, "Multiply", centered, centered), axes],
                  {"keep_dims": True})[0]
    std = ctx.op("Sqrt", "opset1", [binary(ctx, "Add", var, const_of(ctx, eps, var))])[0]
    inv = binary(ctx, "Divide", const_of(ctx, 1, std), std, m_pythondiv=True)
    normed = convert(ctx, binary(ctx, "Multiply", centered, inv), x.element_type)
    y = _scale_shift(ctx, normed, scale, bias)
    outs: list[Value | None] = [y]
    if len(outputs) > 1:
        outs.append(ctx.op("Identity", "opset16", [mean], refine=ctx.onnx_types(1))[0]
                    if outputs[1] else None)
    if len(outputs) > 2:
        outs.append(ctx.op("Identity", "opset16", [inv], refine=ctx.onnx_types(2))[0]
                    if outputs[2] else None)
    return outs


def _scale_shift(ctx: NodeContext, y: Value, scale: Value, bias: Value | None) -> Value:
    if bias is None:
        return ctx.op("Multiply", "opset1", [y, scale], {"auto_broadcast": "numpy"},
                      refine=ctx.onnx_types(0))[0]
    y = binary(ctx, "Multiply", y, scale)
    return ctx.op("Add", "opset1", [y, bias], {"auto_broadcast": "numpy"},
                  refine=ctx.onnx_types(0))[0]


@onnx_op("GroupNormalization", 18, 21)
def group_norm(ctx: NodeContext) -> list[Value | None]:
    x, scale, bias = (ctx.required_input(i) for i in range(3))
    groups = int(ctx.attr("num_groups"))
    eps = float(ctx.attr("epsilon", 1e-5))
    if ctx.opset < 21:
        # Opset 18 gives scale and bias per group; OpenVINO wants them per channel.
        channels = x.shape[1] if x.shape is not None else -1
        if channels < 0:
            raise ctx.error("opset-18 GroupNormalization needs a static channel dim")
        per = channels // groups
        index = i64(ctx, [c // per for c in range(channels)])
        scale = ctx.op("Gather", "opset8", [scale, index, i64(ctx, 0)], {"batch_dims": 0},
                        outputs=[TensorInfo(scale.element_type, (channels,))])[0]
        bias = ctx.op("Gather", "opset8", [bias, index, i64(ctx, 0)], {"batch_dims": 0},
                       outputs=[TensorInfo(bias.element_type, (channels,))])[0]
    return [ctx.op("GroupNormalization", "opset12", [x, scale, bias],
                  {"num_groups": groups, "epsilon": eps}, refine=ctx.onnx_types(0))[0]]


@onnx_op("MeanVarianceNormalization", 9, 13)
def mean_variance_norm(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    rank = rank_of(ctx, x)
    axes = [norm_axis(ctx, int(a), rank) for a in ctx.attr("axes", [0, 2, 3])]
    return [ctx.op("MVN", "opset6", [x, i64(ctx, axes)],
                  {"normalize_variance": True, "eps": 1e-9, "eps_mode": "outside_sqrt"},
                  refine=ctx.onnx_types(0))[0]]


@onnx_op("LpNormalization", 1, 22)
def lp_norm(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    axis = norm_axis(ctx, int(ctx.attr("axis", -1)), rank_of(ctx, x))
    p = int(ctx.attr("p", 2))
    if p not in (1, 2):
        raise ctx.error(f"p={p} is not supported (1 or 2)")
    norm = ctx.op(f"ReduceL{p}", "opset4", [x, i64(ctx, [axis])], {"keep_dims": True})[0]
    # A zero norm means an all-zero slice: dividing by the smallest normal number keeps
    # it 0 (ONNX's reference) instead of 0/0.
    if x.element_type.dtype is not None and x.element_type.is_float:
        tiny = const_of(ctx, np.finfo(x.element_type.dtype).tiny, x)
        norm = binary(ctx, "Maximum", norm, tiny)
    return [ctx.op("Divide", "opset1", [x, norm],
                  {"auto_broadcast": "numpy", "m_pythondiv": True}, refine=ctx.onnx_types(0))[0]]


# -- misc ------------------------------------------------------------------------------------
@onnx_op("Einsum", 12, 28)
def einsum(ctx: NodeContext) -> list[Value | None]:
    equation = str(ctx.attr("equation", "")).replace(" ", "")
    values = [v for v in ctx.inputs if v is not None]
    return [ctx.op("Einsum", "opset7", values, {"equation": equation}, refine=ctx.onnx_types(0))[0]]


@onnx_op("Dropout", 1, 6, 7, 10, 12, 13, 22)
def dropout(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    want_mask = len(ctx.node.output) > 1 and bool(ctx.node.output[1])
    mask_type = BOOL if ctx.opset >= 10 else x.element_type
    training = ctx.input(2) if ctx.opset >= 12 else None
    flag = ctx.const_value(training) if training is not None else np.bool_(False)
    ratio_value = ctx.input(1) if ctx.opset >= 12 else None
    ratio = ctx.const_value(ratio_value) if ratio_value is not None else np.float32(0.5)
    # Inference (and opsets < 12, where is_test is a training hint only): an identity.
    if flag is not None and (not bool(flag) or (ratio is not None and not float(ratio))):
        outs: list[Value | None] = [ctx.op("Identity", "opset16", [x], refine=ctx.onnx_types(0))[0]]
        if want_mask:
            one = ctx.const(np.asarray(True)) if mask_type == BOOL else const_of(ctx, 1, x)
            outs.append(ctx.op("Broadcast", "opset3", [one, shape_of(ctx, x)],
                              {"mode": "numpy"}, refine=ctx.onnx_types(1))[0])
        return outs
    return _training_dropout(ctx, x, training, ratio_value, want_mask)  # type: ignore[arg-type]


def _training_dropout(ctx: NodeContext, x: Value, training: Value, ratio: Value | None,
                      want_mask: bool) -> list[Value | None]:
    """Dropout whose training flag or ratio is known only at run time: a random mask
    (keep where uniform >= ratio, scale by 1/(1-ratio)) selected by the flag."""
    f32 = ELEMENT_TYPES["f32"]
    rate = convert(ctx, to_scalar(ctx, ratio), f32) if ratio is not None else \
        const_of(ctx, 0.5, f32)
    noise = ctx.op("RandomUniform", "opset8",
                    [shape_of(ctx, x), const_of(ctx, 0, f32), const_of(ctx, 1, f32)],
                    {"output_type": f32, "global_seed": int(ctx.attr("seed", 0)), "op_seed": 0},
                    outputs=[TensorInfo(f32, x.shape)])[0]
    keep = binary(ctx, "GreaterEqual", noise, rate)
    scale = binary(ctx, "Divide", const_of(ctx, 1, f32),
                   binary(ctx, "Subtract", const_of(ctx, 1, f32), rate), m_pythondiv=True)
    dropped = binary(ctx, "Multiply", binary(ctx, "Multiply", x, convert(ctx, keep,
                                                                         x.element_type)),
                     convert(ctx, scale, x.element_type))
    flag = to_scalar(ctx, training)
    outs: list[Value | None] = [ctx.op("Select", "opset1", [flag, dropped, x],
                                      {"auto_broadcast": "numpy"}, refine=ctx.onnx_types(0))[0]]
    if want_mask:
        outs.append(ctx.op("LogicalOr", "opset1",
                          [ctx.op("LogicalNot", "opset1", [flag])[0], keep],
                          {"auto_broadcast": "numpy"}, refine=ctx.onnx_types(1))[0])
    return outs


# -- random generators ---------------------------------------------------------------
# Lowered as OpenVINO's own ONNX frontend lowers them, seeds included, so that OpenVINO
# gives the same numbers on irtool's IR as on its own conversion, and irtool's runtime the
# same as OpenVINO's CPU plugin (irtool.opset.math_random: a generator per layer that moves
# on with every call). onnxruntime's generator is another: its numbers are never matched.
_NORMAL_SEED_STEP = 10000
"""RandomNormal's second uniform draw takes the seed plus this (as OpenVINO's frontend)."""


def _op_seed(ctx: NodeContext) -> int:
    """RandomUniform's ``op_seed`` for the ONNX float ``seed``: its float32 bits (the
    frontend's choice; with ``global_seed`` 0). No seed: 0, a seed drawn per run."""
    seed = ctx.attr("seed")
    return 0 if seed is None else int(np.float32(seed).view(np.uint32))


def _random_target(ctx: NodeContext, like: bool) -> tuple[Value, ElementType]:
    """The shape (an i64 tensor) and element type of a Random* node's output."""
    if like:
        x = ctx.required_input(0)
        code = ctx.attr("dtype")
        et = onnx_type(ctx, code) if code is not None else x.element_type
        shape = shape_of(ctx, x)
    else:
        dims = [int(d) for d in ctx.attr("shape", [])]
        if any(d < 0 for d in dims):
            raise ctx.error(f"shape {dims} has a negative dim")
        et, shape = onnx_type(ctx, ctx.attr("dtype", 1)), i64(ctx, dims)
    if et.name not in ("f16", "f32", "f64"):
        raise ctx.error(f"random values of {et.name} are not supported (f16, f32, f64)")
    return shape, et


def _uniform(ctx: NodeContext, shape: Value, et: ElementType, low: float, high: float,
             op_seed: int, final: bool = False) -> Value:
    attrs = {"output_type": et, "global_seed": 0, "op_seed": op_seed}
    inputs = [shape, const_of(ctx, low, et), const_of(ctx, high, et)]
    if final:
        return ctx.op("RandomUniform", "opset8", inputs, attrs, refine=ctx.onnx_types(0))[0]
    return ctx.op("RandomUniform", "opset8", inputs, attrs)[0]


@onnx_op("RandomUniform", 1, 22)
@onnx_op("RandomUniformLike", 1, 22)
def random_uniform(ctx: NodeContext) -> list[Value | None]:
    shape, et = _random_target(ctx, ctx.node.op_type.endswith("Like"))
    return [_uniform(ctx, shape, et, float(ctx.attr("low", 0.0)), float(ctx.attr("high", 1.0)),
                     _op_seed(ctx), final=True)]


@onnx_op("RandomNormal", 1, 22)
@onnx_op("RandomNormalLike", 1, 22)
def random_normal(ctx: NodeContext) -> list[Value | None]:
    """Box-Muller over two uniform draws in [tiny, 1): ``scale * sqrt(-2 log u1) *
    cos(2 pi u2) + mean``, op for op as OpenVINO's frontend writes it."""
    shape, et = _random_target(ctx, ctx.node.op_type.endswith("Like"))
    seed = _op_seed(ctx)
    # The smallest normal f32 (OpenVINO's choice, for f64 too), so that log(u1) is finite.
    tiny = float(np.finfo(np.float32 if et.name != "f16" else np.float16).tiny)
    u1 = _uniform(ctx, shape, et, tiny, 1.0, seed)
    u2 = _uniform(ctx, shape, et, tiny, 1.0, seed + _NORMAL_SEED_STEP if seed else 0)
    log_u1 = ctx.op("Log", "opset1", [u1])[0]
    radius = ctx.op("Sqrt", "opset1",
                    [binary(ctx, "Multiply", log_u1, const_of(ctx, -2.0, et))])[0]
    two_pi = np.asarray(2, et.dtype) * np.asarray(np.pi, et.dtype)
    angle = ctx.op("Cos", "opset1", [binary(ctx, "Multiply", const_of(ctx, two_pi, et), u2)])[0]
    scaled = binary(ctx, "Multiply", const_of(ctx, float(ctx.attr("scale", 1.0)), et),
                    binary(ctx, "Multiply", radius, angle))
    mean = const_of(ctx, float(ctx.attr("mean", 0.0)), et)
    return [ctx.op("Add", "opset1", [scaled, mean], {"auto_broadcast": "numpy"},
                   refine=ctx.onnx_types(0))[0]]


@onnx_op("Col2Im", 18)
def col2im(ctx: NodeContext) -> list[Value | None]:
    x, image, block = (ctx.required_input(i) for i in range(3))
    if block.shape is not None and len(block.shape) != 1:
        raise ctx.error(f"block_shape (input 2) has shape {list(block.shape)}; it is 1-D")
    n = block.shape[0] if block.shape is not None and block.shape[0] >= 0 else 2
    pads = [int(p) for p in ctx.attr("pads", [0] * (2 * n))]
    attrs = {"strides": [int(s) for s in ctx.attr("strides", [1] * n)],
             "dilations": [int(d) for d in ctx.attr("dilations", [1] * n)],
             "pads_begin": pads[:n], "pads_end": pads[n:]}
    return [ctx.op("Col2Im", "opset15", [x, convert(ctx, image, I64),
                                             convert(ctx, block, I64)], attrs,
                                             refine=ctx.onnx_types(0))[0]]


@onnx_op("RoiAlign", 10, 16, 22)
def roi_align(ctx: NodeContext) -> list[Value | None]:
    x, rois, batch = (ctx.required_input(i) for i in range(3))
    default = "output_half_pixel" if ctx.opset < 16 else "half_pixel"
    mode = ctx.attr("coordinate_transformation_mode", default)
    aligned = {"output_half_pixel": "asymmetric", "half_pixel": "half_pixel_for_nn"}.get(mode)
    if aligned is None:
        raise ctx.error(f"coordinate_transformation_mode {mode!r} is not supported")
    attrs = {"pooled_h": int(ctx.attr("output_height", 1)),
             "pooled_w": int(ctx.attr("output_width", 1)),
             "sampling_ratio": int(ctx.attr("sampling_ratio", 0)),
             "spatial_scale": float(ctx.attr("spatial_scale", 1.0)),
             "mode": ctx.attr("mode", "avg"), "aligned_mode": aligned}
    return [ctx.op("ROIAlign", "opset9", [x, rois, batch], attrs, refine=ctx.onnx_types(0))[0]]


@onnx_op("NonMaxSuppression", 10, 11)
def non_max_suppression(ctx: NodeContext) -> list[Value | None]:
    boxes, scores = ctx.required_input(0), ctx.required_input(1)
    inputs = [boxes, scores]
    extra = [(2, I64), (3, scores.element_type), (4, scores.element_type)]
    for index, et in extra:
        value = ctx.input(index)
        if value is None:
            value = ctx.const(np.asarray(0), et) if index == 2 else const_of(ctx, 0, et) \
                if index == 3 else None
            if value is None:
                break
        inputs.append(to_scalar(ctx, convert(ctx, value, et)))
    encoding = "center" if ctx.attr("center_point_box", 0) else "corner"
    attrs = {"box_encoding": encoding, "sort_result_descending": False, "output_type": I64}
    selected = ctx.op("NonMaxSuppression", "opset9", inputs, attrs,
                      refine=ctx.onnx_types(0, None, None))[0]
    return [selected]




@onnx_op("DeformConv", 19, 22)
def deform_conv(ctx: NodeContext) -> list[Value | None]:
    x, w, offset = (ctx.required_input(i) for i in range(3))
    bias, mask = ctx.input(3), ctx.input(4)
    n = _spatial(ctx, x, w)
    attrs = window_attrs(ctx, n)
    attrs["group"] = int(ctx.attr("group", 1))
    attrs["deformable_group"] = int(ctx.attr("offset_group", 1))
    # Samples that fall partly outside the input blend with zeros (torchvision's rule).
    attrs["bilinear_interpolation_pad"] = True
    inputs = [x, offset, w] + ([mask] if mask is not None else [])
    if bias is None:
        return [ctx.op("DeformableConvolution", "opset8", inputs, attrs,
                       refine=ctx.onnx_types(0))[0]]
    y = ctx.op("DeformableConvolution", "opset8", inputs, attrs)[0]
    return [_add_bias(ctx, y, bias, n)]
