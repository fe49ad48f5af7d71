"""Fourier transforms: DFT -> DFT-7 / IDFT-7 / RDFT-9 / IRDFT-9, STFT by framing + RDFT.

ONNX carries complex numbers as a trailing dimension of 2 (real inputs may have a
trailing 1); OpenVINO's DFT family uses the same trailing 2 and takes real data
without it. ONNX axes count the trailing dimension, OpenVINO's do not, so a
negative axis moves by one.
"""

from __future__ import annotations

import numpy as np

from ....opset import TensorInfo
from ..context import NodeContext, Value, onnx_op
from ._common import (
    I64,
    binary,
    convert,
    dim_of,
    i64,
    rank_of,
    squeeze,
    to_1d,
    to_scalar,
    unsqueeze,
)


def _complex(ctx: NodeContext, x: Value) -> Value:
    """A real [..., 1] tensor as complex [..., 2] (zero imaginary part)."""
    rank = rank_of(ctx, x)
    zeros = i64(ctx, [0] * rank)
    end = i64(ctx, [0] * (rank - 1) + [1])
    shape = None if x.shape is None else (*x.shape[:-1], 2)
    return ctx.op("Pad", "opset12", [x, zeros, end, ctx.const(np.zeros((), x.element_type.dtype),
                                                               x.element_type)],
                   {"pad_mode": "constant"}, outputs=[TensorInfo(x.element_type, shape)])[0]


def _axis(ctx: NodeContext, rank: int) -> Value:
    """The transform axis as a 1-D i64 tensor in OpenVINO's numbering (non-negative)."""
    if ctx.opset >= 20:
        given = ctx.input(2)
        if given is None:
            return i64(ctx, [rank - 2])
        const = ctx.const_value(given)
        if const is None:
            return ctx.op("FloorMod", "opset1", [to_1d(ctx, convert(ctx, given, I64)),
                                                  i64(ctx, rank)],
                           {"auto_broadcast": "numpy"}, outputs=[TensorInfo(I64, (1,))])[0]
        axis = int(np.ravel(const)[0])
    else:
        axis = int(ctx.attr("axis", 1))
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis <= rank - 2:
        raise ctx.error(f"axis {axis} is out of range for rank {rank}")
    return i64(ctx, [axis])


@onnx_op("DFT", 17, 20)
def dft(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    rank = rank_of(ctx, x)
    if x.shape is None or x.shape[-1] not in (1, 2):
        raise ctx.error("the last dimension must be 1 (real) or 2 (complex)")
    real = x.shape[-1] == 1
    axes = _axis(ctx, rank)
    length = ctx.input(1)
    size = [to_1d(ctx, convert(ctx, length, I64))] if length is not None else []
    inverse = bool(ctx.attr("inverse", 0))
    onesided = bool(ctx.attr("onesided", 0))
    if not inverse and onesided:
        if not real:
            raise ctx.error("onesided DFT needs a real input")
        return [ctx.op("RDFT", "opset9", [squeeze(ctx, x, [rank - 1]), axes, *size],
                       refine=ctx.onnx_types(0))[0]]
    if inverse and onesided:
        # The input is the onesided half of a Hermitian spectrum; the result is real.
        signal = ctx.op("IRDFT", "opset9", [x, axes, *size])[0]
        return [ctx.op("Unsqueeze", "opset1", [signal, i64(ctx, [-1])],
                       refine=ctx.onnx_types(0))[0]]
    data = _complex(ctx, x) if real else x
    return [ctx.op("IDFT" if inverse else "DFT", "opset7", [data, axes, *size],
                   refine=ctx.onnx_types(0))[0]]


@onnx_op("STFT", 17)
def stft(ctx: NodeContext) -> list[Value | None]:
    """Frames of ``frame_length`` every ``frame_step`` samples, windowed, then transformed."""
    signal, step = ctx.required_input(0), ctx.required_input(1)
    window, frame_length = ctx.input(2), ctx.input(3)
    if signal.shape is None or signal.rank != 3 or signal.shape[-1] not in (1, 2):
        raise ctx.error("the signal must be [batch, length, 1 or 2]")
    real = signal.shape[-1] == 1
    if frame_length is not None:
        size = to_scalar(ctx, convert(ctx, frame_length, I64))
    elif window is not None:
        size = dim_of(ctx, window, 0, keep_1d=False)
    else:
        raise ctx.error("needs a window or a frame_length")
    step = to_scalar(ctx, convert(ctx, step, I64))
    # Frame starts 0, step, ... while a whole frame fits; each frame is start + 0..size-1.
    length = dim_of(ctx, signal, 1, keep_1d=False)
    last = binary(ctx, "Add", binary(ctx, "Subtract", length, size), i64(ctx, 1))
    starts = ctx.op("Range", "opset4", [i64(ctx, 0), last, step], {"output_type": I64},
                     outputs=[TensorInfo(I64, (-1,))])[0]
    offsets = ctx.op("Range", "opset4", [i64(ctx, 0), size, i64(ctx, 1)],
                      {"output_type": I64}, outputs=[TensorInfo(I64, (-1,))])[0]
    index = binary(ctx, "Add", unsqueeze(ctx, starts, [1]), unsqueeze(ctx, offsets, [0]))
    data = squeeze(ctx, signal, [2]) if real else signal
    frames = ctx.op("Gather", "opset8", [data, index, i64(ctx, 1)], {"batch_dims": 0})[0]
    if window is not None:
        shaped = window if real else unsqueeze(ctx, window, [1])
        frames = binary(ctx, "Multiply", frames, convert(ctx, shaped, signal.element_type))
    axes = i64(ctx, [2])
    if real and bool(ctx.attr("onesided", 1)):
        return [ctx.op("RDFT", "opset9", [frames, axes], refine=ctx.onnx_types(0))[0]]
    if real:
        frames = _complex(ctx, unsqueeze(ctx, frames, [3]))
    return [ctx.op("DFT", "opset7", [frames, axes], refine=ctx.onnx_types(0))[0]]
