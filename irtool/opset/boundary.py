"""Graph boundary operations: Parameter, Const, Result.

The runtime feeds Parameters and reads Results itself and materialises Consts
at compile time; these classes give them attribute parsing and inference.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .base import REQUIRED, Op, TensorInfo, register


@register("Parameter", "opset1")
class Parameter(Op):
    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        return [TensorInfo(self.attr_type("element_type", REQUIRED), self.attr_shape("shape", ""))]


@register("Const", "opset1")
class Const(Op):
    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        return [TensorInfo(self.attr_type("element_type", REQUIRED), self.attr_shape("shape", ""))]


@register("Result", "opset1")
class Result(Op):
    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        return []

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        return []
