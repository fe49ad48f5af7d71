"""State kept between runs: variables (ReadValue/Assign) and random generators, the
kernels that use it and the store they share.

A compiled plan has one ``Variables`` store (in its ``RunOptions``); its ReadValue and
Assign kernels read and write it. One run sees one *binding*: the values the variables had
before the run (``values``) and what the run's Assigns write (``written``). As in
OpenVINO, every ReadValue of a run reads the value from before the run, whatever order
the Assigns run in, and the writes take effect only when the run ends without error
(``Variables.run``), so a failed step leaves the session's state as it was.

A RandomUniform kernel keeps its generator's position in the binding too (``draws``,
by layer path): each execution, every loop iteration included, moves it on, and the
session keeps where it ended (``irtool.opset.math_random`` says why and how far). A
stateless run starts every generator afresh.

Several sessions may share one plan (the plan cache): each brings its own values, and a
lock makes their runs take turns, since the binding lives on the store.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..core.errors import ExecutionError
from ..core.scopes import layer_path
from ..ir.graph import Layer, Shape, describe_layer
from ..ir.types import ElementType
from ..opset import make_op
from ..opset.math_random import RandomUniform
from ..opset.variables import ReadValue3
from .plan import CONTROL_FLOW, Kernel, RunOptions


class Variables:
    """The variable store of one plan (see the module docstring)."""

    def __init__(self) -> None:
        self.values: Mapping[str, np.ndarray] = {}
        self.written: dict[str, np.ndarray] = {}
        self.draws: dict[str, int] = {}  # layer path -> its generator's position, this run
        self.readers: dict[str, list[ReadValue3]] = {}  # variable id -> its ReadValue ops
        # variable id -> the element type and shape its first ReadValue declares (ReadValue-6)
        # or, without a declaration, gives on its output port (None: any)
        self.declared: dict[str, tuple[ElementType | None, Shape | None]] = {}
        self._lock = threading.RLock()
        self.used = False  # a ReadValue, Assign or RandomUniform was compiled against it

    @property
    def ids(self) -> list[str]:
        """Every variable id a ReadValue of the plan reads, in the order compiled."""
        return list(self.readers)

    @contextmanager
    def run(self, values: MutableMapping[str, np.ndarray] | None,
            draws: MutableMapping[str, int] | None = None) -> Iterator[None]:
        """Bind ``values`` (and the generators' positions ``draws``) for one run; on
        success, the run's writes go into ``values`` and its positions into ``draws``
        (None: a stateless run, every variable at its initial value and every generator
        at its start, what the run leaves dropped)."""
        with self._lock:
            self.values = values if values is not None else {}
            self.written = {}
            self.draws = dict(draws) if draws is not None else {}
            try:
                yield
                if values is not None:
                    values.update(self.written)
                if draws is not None:
                    draws.update(self.draws)
            finally:
                self.values, self.written, self.draws = {}, {}, {}


def _op(layer: Layer, scope: str) -> Any:
    try:
        return make_op(layer.type, layer.version, layer.attrs)
    except KeyError:
        raise ExecutionError(f"operation {layer.type}-{layer.version} is not supported by the "
                             "irtool runtime", layer=describe_layer(layer, scope)) from None
    except ValueError as err:
        raise ExecutionError(str(err), layer=describe_layer(layer, scope)) from None


def _store(options: RunOptions) -> Variables:
    store = options.variables
    return store if isinstance(store, Variables) else Variables()


def compile_read_value(layer: Layer, scope: str, options: RunOptions) -> Kernel:
    op: ReadValue3 = _op(layer, scope)
    store = _store(options)
    store.used = True
    store.readers.setdefault(op.variable_id, []).append(op)
    et, shape = op.variable_info()
    port = layer.outputs[0] if layer.outputs else None
    if et is None and port is not None and port.precision is not None \
            and port.precision.kind != "dynamic":
        et = port.precision
    if shape is None and port is not None:
        shape = port.dims
    store.declared.setdefault(op.variable_id, (et, shape))
    variable = op.variable_id

    def read_value(inputs: list[np.ndarray]) -> list[np.ndarray]:
        value = store.values.get(variable)
        return [value if value is not None else op.initial_value(inputs)]

    return read_value


def compile_assign(layer: Layer, scope: str, options: RunOptions) -> Kernel:
    op = _op(layer, scope)
    store = _store(options)
    store.used = True
    variable = op.variable_id

    def assign(inputs: list[np.ndarray]) -> list[np.ndarray]:
        store.written[variable] = inputs[0]
        return [inputs[0]]

    return assign


def compile_random_uniform(layer: Layer, scope: str, options: RunOptions) -> Kernel:
    op: RandomUniform = _op(layer, scope)
    store = _store(options)
    store.used = True
    key = layer_path(scope, layer.id)

    def random_uniform(inputs: list[np.ndarray]) -> list[np.ndarray]:
        value, store.draws[key] = op.draw(inputs, store.draws.get(key, 0))
        return [value]

    return random_uniform


STATE_COMPILERS: dict[str, Callable[[Layer, str, RunOptions], Kernel]] = {
    "ReadValue": compile_read_value,
    "Assign": compile_assign,
    "RandomUniform": compile_random_uniform,
}
CONTROL_FLOW.update(STATE_COMPILERS)
