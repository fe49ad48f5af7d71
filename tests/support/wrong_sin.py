"""An irtool extension with a deliberately wrong kernel, for tests of ``irtool reduce``.

``Sin`` of ``opset16`` (an opset OpenVINO has, so OpenVINO reads such a layer as its own
``Sin``): irtool computes ``sin(x) + 1`` wherever ``x > 0.5``, so irtool and OpenVINO
disagree exactly on the layers of this type and version, and only where their input is
above 0.5. Load it with ``--extension`` (or ``irtool.load_extension``) in a process of its
own: it stays registered for the rest of the process.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from irtool.opset import Op, TensorInfo, register


@register("Sin", "opset16")
class WrongSin(Op):
    """``sin(x) + (x > 0.5)``: wrong on purpose."""

    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        return [inputs[0]]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        x = inputs[0]
        return [(np.sin(x) + (x > 0.5)).astype(x.dtype)]
