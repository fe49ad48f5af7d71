"""Stateful operations: ReadValue-3, ReadValue-6, Assign-3, Assign-6.

A *variable* is state kept from one inference to the next, named by ``variable_id``.
``ReadValue`` gives the variable's value; until the variable has a value (the first
inference, or after a reset) it gives its initial value instead: the input, when there
is one, else (ReadValue-6 without input) zeros of ``variable_type`` / ``variable_shape``.
``Assign`` sets the variable for the next inference; its output is its input.

These classes give attributes, inference and the stateless kernel (the first inference
of a fresh session). The runtime keeps the variables between calls (``irtool.runtime
.state``); the validator checks that reads and writes of one id agree
(``irtool.validation.variables``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..ir.graph import Shape
from ..ir.types import ElementType
from .base import REQUIRED, AttributeParseError, Attrs, Op, TensorInfo, register


class _Variable(Op):
    """The attributes every stateful op has: the variable it reads or writes."""

    pure = False  # reads or writes state kept between runs

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.variable_id = self.attr_str("variable_id", REQUIRED)
        if not self.variable_id:
            raise AttributeParseError(f"{self.type}: attribute 'variable_id' is empty")


@register("ReadValue", "opset3")
class ReadValue3(_Variable):
    """ReadValue-3: one input, the variable's initial value (and its type and shape)."""

    def variable_info(self) -> tuple[ElementType | None, Shape | None]:
        """The type and shape the op declares for its variable (None: not declared)."""
        return None, None

    def initial_value(self, inputs: list[np.ndarray]) -> np.ndarray:
        if not inputs:
            raise ValueError("ReadValue-3 needs its initial value input")
        return inputs[0]

    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        et, shape = self.variable_info()
        if inputs:
            given = inputs[0]
            return [TensorInfo(et if et is not None else given.element_type,
                               shape if shape is not None else given.shape)]
        if et is None:
            raise NotImplementedError("ReadValue without input needs variable_type")
        return [TensorInfo(et, shape)]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        return [self.initial_value(inputs)]


@register("ReadValue", "opset6")
class ReadValue6(ReadValue3):
    """ReadValue-6: ``variable_type`` and ``variable_shape`` declared; the initial-value
    input is optional (zeros of the declared, then static, shape without it)."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        declared = self.attr_type("variable_type", "dynamic")
        self.declared_type: ElementType | None = None if declared.kind == "dynamic" else declared
        self.declared_shape: Shape | None = self.attr_shape("variable_shape", "...")

    def variable_info(self) -> tuple[ElementType | None, Shape | None]:
        return self.declared_type, self.declared_shape

    def initial_value(self, inputs: list[np.ndarray]) -> np.ndarray:
        if inputs:
            return inputs[0]
        et, shape = self.declared_type, self.declared_shape
        if et is None or et.dtype is None or shape is None or any(d < 0 for d in shape):
            raise ValueError(f"variable {self.variable_id!r} has no value yet, and no initial "
                             "value input nor a static variable_type/variable_shape to make "
                             "zeros of")
        return np.zeros(shape, dtype=et.dtype)


@register("Assign", "opset3")
class Assign3(_Variable):
    """Assign: the input becomes the variable's value for the next inference."""

    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        return [inputs[0]] if inputs else []

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        return [inputs[0]]


@register("Assign", "opset6")
class Assign6(Assign3):
    """Assign-6: as Assign-3; the variable's type and shape come from its ReadValue."""


STATEFUL_TYPES = frozenset({"ReadValue", "Assign"})
"""Layer types that read or write variables."""
