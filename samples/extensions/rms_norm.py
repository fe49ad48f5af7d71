"""A user-defined operation for irtool: ``RMSNorm`` in the opset ``extension``.

    y = x / sqrt(mean(x**2 over the last axis) + epsilon) * scale

``x`` is any float tensor, ``scale`` broadcasts against it (usually ``[hidden]``), and
the attribute ``epsilon`` (default 1e-6) keeps the root away from zero. A layer of this op
in an IR reads::

    <layer id="3" name="norm" type="RMSNorm" version="extension">
        <data epsilon="1e-05" />
        ...

Load it with ``irtool run|validate|check|inspect --extension samples/extensions/rms_norm.py``
or, from Python, ``irtool.load_extension("samples/extensions/rms_norm.py")``. One class
holds everything: the type and opset it is registered under, its attributes (parsed once,
from the strings the IR holds), type and shape inference, and the numpy kernel.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from irtool.opset import Attrs, Op, TensorInfo, register


@register("RMSNorm", "extension")
class RMSNorm(Op):
    """``x / sqrt(mean(x**2, axis=-1) + epsilon) * scale``; inputs ``x``, ``scale``."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.epsilon = self.attr_float("epsilon", 1e-6)

    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        # The output is the input's type and shape, dynamic dimensions included.
        return [inputs[0]]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x, scale = inputs
        wide = x.astype(np.float64)  # accumulate in f64, answer in the input's type
        rms = np.sqrt(np.mean(wide * wide, axis=-1, keepdims=True) + self.epsilon)
        return [(wide / rms * scale).astype(x.dtype)]
