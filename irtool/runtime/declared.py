"""What a layer's output ports declare, checked against what the runtime computed.

An IR says the element type and shape of every value; the runtime computes values
with numpy. When the two differ (an IR whose ports say f32 where its operation
makes f64, or a kernel of irtool's that is wrong), a run must not quietly return
numbers of another type or shape: it stops with an error naming the layer. The
check costs one pass over a plan's values per run: generated plans run it once at
the end, loops on their first iteration only (the types of a loop body's values do
not change between iterations; the validator checks back edges for that).

A port states nothing checkable when its element type is dynamic, has no numpy
dtype of its own (u1, u4, i4, nf4... are computed one element per byte), or is a
string; or when it lists no dims (IR writes a scalar and a dynamic rank alike).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

import numpy as np

from ..core.errors import ExecutionError
from ..ir.graph import Layer, Port, mismatch, port_dims, port_dtype, shape_text
from ..ir.types import from_numpy


def _type_name(dtype: np.dtype) -> str:
    try:
        return from_numpy(dtype).name
    except KeyError:
        return str(dtype)


def _text(dtype: Any, dims: Sequence[int] | None) -> str:
    return f"{dtype}{shape_text(dims)}" if dims is not None else f"{dtype}"  # type: ignore[arg-type]


def _expectation(dtype: np.dtype | None, dims: tuple[int, ...] | None) -> tuple[Any, ...]:
    if dims is None:
        return dtype, None, None, None
    axes = [i for i, d in enumerate(dims) if d >= 0]
    if not axes:
        return dtype, len(dims), None, None
    # itemgetter of one axis gives the dim itself, of several a tuple
    return dtype, len(dims), itemgetter(*axes), (dims[axes[0]] if len(axes) == 1
                                                 else tuple(dims[i] for i in axes))


class Verifier:
    """Checks the outputs of chosen steps of a plan against their layers' ports.

    ``checks`` lists ``(slot, layer, port, dtype, dims)`` for every output that
    declares something; ``__call__`` takes the values of those slots, in that order.
    """

    def __init__(self, steps: Sequence[tuple[Layer, Sequence[int]]], scope: str,
                 describe: Callable[[Layer, str], str]) -> None:
        self.scope, self.describe = scope, describe
        self.checks: list[tuple[int, Layer, Port, np.dtype | None, tuple[int, ...] | None]] = []
        for layer, outputs in steps:
            for slot, port in zip(outputs, layer.outputs):
                dtype, dims = port_dtype(port), port_dims(port)
                if dtype is not None or dims is not None:
                    self.checks.append((slot, layer, port, dtype, dims))

        # Per check, what a passing value has, in the form cheapest to test on every run:
        # (dtype or None, rank or None, a getter of the dims declared static, their values).
        self._expect = [_expectation(dtype, dims) for *_, dtype, dims in self.checks]

    @property
    def slots(self) -> list[int]:
        return [c[0] for c in self.checks]

    def __call__(self, values: Sequence[Any], start: int = 0) -> None:
        """Check ``values`` against ``checks[start:start + len(values)]``."""
        expect = self._expect
        for k, value in enumerate(values, start):
            dtype, ndim, static, want = expect[k]
            try:
                if (dtype is None or value.dtype is dtype or value.dtype == dtype) and \
                        (ndim is None or (value.ndim == ndim
                                          and (static is None or static(value.shape) == want))):
                    continue
            except AttributeError:  # not an array: the full check says what it is
                pass
            _, layer, port, dtype, dims = self.checks[k]
            if mismatch(value, dtype, dims) is not None:
                self.fail(layer, port, value, dtype, dims)

    def fail(self, layer: Layer, port: Port, value: Any, dtype: np.dtype | None,
             dims: tuple[int, ...] | None) -> None:
        got = (_text(_type_name(value.dtype), value.shape) if hasattr(value, "shape")
               else type(value).__name__)
        declared = _text(port.precision.name if port.precision is not None else "?",
                         port.dims)
        raise ExecutionError(f"computed {got} but its output port {port.id} declares "
                             f"{declared}", layer=self.describe(layer, self.scope))
