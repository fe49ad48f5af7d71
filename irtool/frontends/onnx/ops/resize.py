"""Resampling ONNX operators: Resize, Upsample (-> Interpolate-11) and GridSample."""

from __future__ import annotations

from typing import Any

import numpy as np

from ....opset import TensorInfo
from ..context import NodeContext, Value, onnx_op
from ._common import F32, I64, binary, convert, i64, norm_axes, rank_of, shape_of

_MODES = {"nearest": "nearest", "linear": "linear_onnx", "bilinear": "linear_onnx",
          "cubic": "cubic"}
_COORDINATES = {"half_pixel", "pytorch_half_pixel", "asymmetric", "tf_half_pixel_for_nn",
                "align_corners"}
_NEAREST = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}


def _interpolate_attrs(ctx: NodeContext, rank: int, mode: str, coordinates: str,
                       nearest: str, by_sizes: bool) -> dict[str, Any]:
    if mode not in _MODES:
        raise ctx.error(f"mode {mode!r} is not supported")
    if coordinates not in _COORDINATES:
        raise ctx.error(f"coordinate_transformation_mode {coordinates!r} is not supported")
    if nearest not in _NEAREST:
        raise ctx.error(f"nearest_mode {nearest!r} is not supported")
    return {"mode": _MODES[mode], "shape_calculation_mode": "sizes" if by_sizes else "scales",
            "coordinate_transformation_mode": coordinates, "nearest_mode": nearest,
            "antialias": bool(ctx.attr("antialias", 0)), "pads_begin": [0] * rank,
            "pads_end": [0] * rank, "cube_coeff": float(ctx.attr("cubic_coeff_a", -0.75))}


def _legacy(ctx: NodeContext, scales: Value) -> Value:
    """Upsample and Resize-10: output = floor(input * scale), asymmetric coordinates."""
    x = ctx.required_input(0)
    rank = rank_of(ctx, x)
    mode = ctx.attr("mode", "nearest")
    attrs = _interpolate_attrs(ctx, rank, mode, "asymmetric", "floor", False)
    return ctx.op("Interpolate", "opset11", [x, convert(ctx, scales, F32)], attrs,
                  refine=ctx.onnx_types(0))[0]


@onnx_op("Upsample", 1, 7)
def upsample_attr(ctx: NodeContext) -> list[Value | None]:
    scales = ctx.attr("scales")
    if scales is None:  # Upsample-1 names them height_scale/width_scale on 4-D input
        scales = [1.0, 1.0, float(ctx.attr("height_scale", 1.0)),
                  float(ctx.attr("width_scale", 1.0))]
    return [_legacy(ctx, ctx.const(np.asarray(scales, dtype=np.float32)))]


@onnx_op("Upsample", 9, 10)
def upsample(ctx: NodeContext) -> list[Value | None]:
    return [_legacy(ctx, ctx.required_input(1))]


@onnx_op("Resize", 10)
def resize_10(ctx: NodeContext) -> list[Value | None]:
    return [_legacy(ctx, ctx.required_input(1))]


@onnx_op("Resize", 11, 13, 18, 19)
def resize(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    rank = rank_of(ctx, x)
    scales, sizes = ctx.input(2), ctx.input(3)
    if scales is not None and scales.shape is not None and scales.shape[0] == 0:
        scales = None
    if sizes is not None and sizes.shape is not None and sizes.shape[0] == 0:
        sizes = None
    if scales is None and sizes is None:
        raise ctx.error("needs scales or sizes")
    coordinates = ctx.attr("coordinate_transformation_mode", "half_pixel")
    if ctx.attr("exclude_outside", 0):
        raise ctx.error("exclude_outside=1 is not supported")
    axes = ctx.attr("axes")
    axes = norm_axes(ctx, axes, rank) if axes is not None else None
    attrs = _interpolate_attrs(ctx, rank, ctx.attr("mode", "nearest"), coordinates,
                               ctx.attr("nearest_mode", "round_prefer_floor"), sizes is not None)
    if sizes is not None:
        target = convert(ctx, sizes, I64)
        policy = ctx.attr("keep_aspect_ratio_policy", "stretch")
        if policy != "stretch":
            target = _keep_aspect_ratio(ctx, x, target, axes, policy)
        inputs = [x, target]
    else:
        inputs = [x, convert(ctx, scales, F32)]  # type: ignore[arg-type]
    if axes is not None:
        inputs.append(i64(ctx, axes))
    return [ctx.op("Interpolate", "opset11", inputs, attrs, refine=ctx.onnx_types(0))[0]]


def _keep_aspect_ratio(ctx: NodeContext, x: Value, sizes: Value, axes: list[int] | None,
                       policy: str) -> Value:
    """Sizes under keep_aspect_ratio_policy: one scale for all resized axes (the smallest
    or largest ratio of wanted to actual size), output size = round(scale * size)."""
    if policy not in ("not_larger", "not_smaller"):
        raise ctx.error(f"keep_aspect_ratio_policy {policy!r} is not supported")
    rank = rank_of(ctx, x)
    axes = axes if axes is not None else list(range(rank))
    dims = ctx.op("Gather", "opset8", [shape_of(ctx, x), i64(ctx, axes), i64(ctx, 0)],
                   {"batch_dims": 0}, outputs=[TensorInfo(I64, (len(axes),))])[0]
    dims_f = convert(ctx, dims, F32)
    ratios = binary(ctx, "Divide", convert(ctx, sizes, F32), dims_f, m_pythondiv=True)
    reduce = "ReduceMin" if policy == "not_larger" else "ReduceMax"
    scale = ctx.op(reduce, "opset1", [ratios, i64(ctx, [0])], {"keep_dims": True},
                    outputs=[TensorInfo(F32, (1,))])[0]
    scaled = ctx.op("Round", "opset5", [binary(ctx, "Multiply", dims_f, scale)],
                     {"mode": "half_to_even"})[0]
    return convert(ctx, scaled, I64)


_GRID_MODES = {"bilinear": "bilinear", "linear": "bilinear", "nearest": "nearest",
               "bicubic": "bicubic", "cubic": "bicubic"}


@onnx_op("GridSample", 16, 20, 22)
def grid_sample(ctx: NodeContext) -> list[Value | None]:
    x, grid = ctx.required_input(0), ctx.required_input(1)
    if x.rank is not None and x.rank != 4:
        raise ctx.error("only 4-D inputs are supported")
    mode = ctx.attr("mode", "bilinear" if ctx.opset < 20 else "linear")
    padding = ctx.attr("padding_mode", "zeros")
    if mode not in _GRID_MODES or padding not in ("zeros", "border", "reflection"):
        raise ctx.error(f"mode {mode!r} / padding_mode {padding!r} is not supported")
    attrs = {"align_corners": bool(ctx.attr("align_corners", 0)), "mode": _GRID_MODES[mode],
             "padding_mode": padding}
    return [ctx.op("GridSample", "opset9", [x, grid], attrs, refine=ctx.onnx_types(0))[0]]
