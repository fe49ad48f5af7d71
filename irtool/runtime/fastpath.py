"""Compile-time specialisation of a few hot kernels.

When the plan compiler knows some inputs of a step are constants, it asks this
module for a faster kernel. A fast kernel never redefines an operation: it
either handles a case whose meaning is beyond doubt (a scalar, in-range Gather
index) or replays what the operation's own kernel did for the same input shape
(the output shape of a reshape-like op), and falls back to the operation's
kernel for everything else. Loop bodies call their kernels once per iteration,
so this is where the per-call parsing of constant axes would hurt most.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..opset import Op

Kernel = Callable[[list[np.ndarray]], list[np.ndarray]]
Specialiser = Callable[[Op, Sequence["np.ndarray | None"]], "Kernel | None"]


def _gather(op: Op, consts: Sequence[np.ndarray | None]) -> Kernel | None:
    """Gather with a constant axis and no batch dims: a scalar in-range index is a plain
    ``data[..., i, ...]`` (copied, as ``np.take`` would)."""
    axis_value = consts[2] if len(consts) > 2 else None
    if axis_value is None or np.size(axis_value) != 1 or getattr(op, "batch_dims", 0) != 0:
        return None
    axis = int(np.ravel(axis_value)[0])
    general = op.compute

    def gather(inputs: list[np.ndarray]) -> list[np.ndarray]:
        data, idx = inputs[0], inputs[1]
        if idx.__class__ is np.ndarray and idx.ndim == 0 and idx.dtype.kind in "iu" \
                and data.__class__ is np.ndarray and -data.ndim <= axis < data.ndim:
            ax = axis + data.ndim if axis < 0 else axis
            i = int(idx)
            n = data.shape[ax]
            if -n <= i < n:
                return [data[(slice(None),) * ax + (i,)].copy()]
        return general(inputs)

    return gather


def _reshape_like(op: Op, consts: Sequence[np.ndarray | None]) -> Kernel | None:
    """Unsqueeze / Squeeze / Reshape with constant second input: the output is input 0
    reshaped to a shape that depends only on input 0's shape. The op's own kernel
    computes it once per input shape; later calls reuse that shape."""
    if len(consts) < 2 or any(c is None for c in consts[1:]):
        return None
    general = op.compute
    shapes: dict[tuple[int, ...], tuple[int, ...]] = {}

    def reshape_like(inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = inputs[0]
        if data.__class__ is np.ndarray:
            shape = shapes.get(data.shape)
            if shape is not None:
                return [data.reshape(shape)]
            out = general(inputs)
            if len(out) == 1 and out[0].__class__ is np.ndarray and out[0].dtype == data.dtype \
                    and out[0].size == data.size and len(shapes) < 64:
                shapes[data.shape] = out[0].shape
            return out
        return general(inputs)

    return reshape_like


FAST_PATHS: dict[str, Specialiser] = {
    "Gather": _gather,
    "Unsqueeze": _reshape_like,
    "Squeeze": _reshape_like,
    "Reshape": _reshape_like,
}


def specialise(layer_type: str, op: Op, consts: Sequence[np.ndarray | None]) -> Kernel:
    """The fastest kernel for ``op`` given which inputs are constants (None: not known)."""
    maker = FAST_PATHS.get(layer_type)
    fast = maker(op, consts) if maker is not None else None
    return fast if fast is not None else op.compute
