"""Compile a ``Graph`` once into a flat ``Plan``; run the plan many times.

Compilation does all the graph work: networkx topological order, one value
slot per produced tensor, constants materialised, ops instantiated. Running a
plan is a loop over steps reading and writing slots, nothing else, which is
what makes per-iteration execution of loop bodies cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import ExecutionError
from ..ir.graph import Graph, Layer, tensor_name
from ..opset import make_op

Kernel = Callable[[list[np.ndarray]], list[np.ndarray]]


@dataclass
class Step:
    """One layer to execute: its kernel and where its inputs and outputs live."""

    layer: Layer
    kernel: Kernel
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


@dataclass
class Plan:
    """A compiled graph: slots, steps, and which slots are inputs and outputs.

    ``input_slots[i]`` receives the value of ``parameters[i]``; ``output_slots[j]``
    holds the value reaching ``results[j]``.
    """

    num_slots: int
    steps: list[Step]
    constants: dict[int, np.ndarray]
    parameters: list[Layer]
    results: list[Layer]
    input_slots: list[int]
    output_slots: list[int]
    input_names: list[str] = field(default_factory=list)
    output_names: list[str] = field(default_factory=list)
    scope: str = ""

    def execute(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Run the plan on one value per Parameter (in ``parameters`` order)."""
        slots: list = [None] * self.num_slots
        for slot, value in self.constants.items():
            slots[slot] = value
        for slot, value in zip(self.input_slots, inputs):
            slots[slot] = value
        for step in self.steps:
            try:
                outs = step.kernel([slots[i] for i in step.inputs])
            except ExecutionError:
                raise
            except Exception as err:  # a kernel failure becomes an error naming the layer
                raise ExecutionError(
                    f"{type(err).__name__}: {err}",
                    layer=_describe(step.layer, self.scope),
                ) from err
            for slot, value in zip(step.outputs, outs):
                slots[slot] = value
        return [slots[i] for i in self.output_slots]


def _describe(layer: Layer, scope: str) -> str:
    where = f"{scope}/{layer.id}" if scope else str(layer.id)
    return f'{where} "{layer.name}" ({layer.type}-{layer.version})'


@dataclass(frozen=True)
class RunOptions:
    """Settings that reach every (nested) plan: ``max_iterations`` caps each loop."""

    max_iterations: int | None = None


# Compilers for layers that are not plain kernels (Loop, TensorIterator, If).
# Each takes the layer, its scope and the options and returns a kernel; registered by the
# control-flow module so this one stays free of loop semantics.
SubgraphCompiler = Callable[[Layer, str, RunOptions], Kernel]
CONTROL_FLOW: dict[str, SubgraphCompiler] = {}


def compile_graph(graph: Graph, scope: str = "", options: RunOptions | None = None) -> Plan:
    """Compile ``graph`` into a ``Plan``. Raises ``ExecutionError`` naming the layer
    for unknown ops, bad attributes or dangling inputs."""
    options = options or RunOptions()
    slot_of: dict[tuple[int, int], int] = {}
    steps: list[Step] = []
    constants: dict[int, np.ndarray] = {}
    parameters = graph.parameters()
    results = graph.results()

    def new_slot(layer_id: int, port_id: int) -> int:
        slot = len(slot_of)
        slot_of[(layer_id, port_id)] = slot
        return slot

    def input_slots(layer: Layer) -> tuple[int, ...]:
        slots = []
        for port in layer.inputs:
            src = graph.source(layer.id, port.id)
            if src is None or src not in slot_of:
                raise ExecutionError(f"input port {port.id} is not connected",
                                     layer=_describe(layer, scope))
            slots.append(slot_of[src])
        return tuple(slots)

    for layer_id in graph.topological_order():
        layer = graph.layer(layer_id)
        if layer.type == "Parameter":
            new_slot(layer.id, layer.outputs[0].id if layer.outputs else 0)
            continue
        if layer.type == "Result":
            input_slots(layer)  # checks the connection
            continue
        if layer.type == "Const":
            try:
                value = layer.const_value()
            except ValueError as err:
                raise ExecutionError(str(err), layer=_describe(layer, scope)) from None
            constants[new_slot(layer.id, layer.outputs[0].id)] = value
            continue
        ins = input_slots(layer)
        outs = tuple(new_slot(layer.id, p.id) for p in layer.outputs)
        steps.append(Step(layer, _kernel(layer, scope, options), ins, outs))

    input_slot_list = [slot_of[(p.id, p.outputs[0].id if p.outputs else 0)] for p in parameters]
    output_slot_list = [input_slots(r)[0] for r in results]
    input_names = [tensor_name(p, p.outputs[0] if p.outputs else None) for p in parameters]
    output_names = []
    for r in results:
        src = graph.source(r.id, r.inputs[0].id)
        port = graph.layer(src[0]).port(src[1]) if src else None
        output_names.append(tensor_name(r, port))
    return Plan(len(slot_of), steps, constants, parameters, results, input_slot_list,
                output_slot_list, input_names, output_names, scope)


def _kernel(layer: Layer, scope: str, options: RunOptions) -> Kernel:
    compiler = CONTROL_FLOW.get(layer.type)
    if compiler is not None:
        return compiler(layer, scope, options)
    try:
        op = make_op(layer.type, layer.version, layer.attrs)
    except KeyError:
        raise ExecutionError(f"operation {layer.type}-{layer.version} is not supported by the "
                             "irtool runtime", layer=_describe(layer, scope)) from None
    except ValueError as err:
        raise ExecutionError(str(err), layer=_describe(layer, scope)) from None
    return op.compute
