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

from ..errors import ExecutionError, IRToolError
from ..ir.graph import Graph, Layer, tensor_name
from ..opset import make_op
from .fastpath import specialise

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

    def __post_init__(self) -> None:
        self.refresh()

    def refresh(self) -> None:
        """Regenerate ``execute``; needed after changing ``steps``."""
        # The generated function replaces the method on the instance: loop bodies call
        # ``execute`` once per iteration, so even one wrapper call is worth saving.
        self.execute = _generate(self)  # type: ignore[method-assign]

    def execute(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Run the plan on one value per Parameter (in ``parameters`` order).

        A kernel failure becomes an ``ExecutionError`` naming the layer. (Replaced per
        instance by the generated code; this body is never reached.)
        """
        raise NotImplementedError  # pragma: no cover - see refresh()

    def _failure(self, index: int, inputs: Sequence[np.ndarray], err: Exception) -> IRToolError:
        """The error to raise when step ``index`` (-1: binding the inputs) failed."""
        if index < 0:
            return ExecutionError(f"the plan takes {len(self.input_slots)} inputs, got "
                                  f"{len(inputs)}", layer=self.scope or None)
        return ExecutionError(f"{type(err).__name__}: {err}",
                              layer=describe_layer(self.steps[index].layer, self.scope))


def _generate(plan: Plan) -> Callable[[Sequence[np.ndarray]], list[np.ndarray]]:
    """Straight-line Python for ``plan``: one line per step, values in local variables.

    This is the "no per-step cost" part of compile-once-run-many: no loop over
    steps, no slot list, no tuple unpacking; kernels and constants are closure
    variables. The source holds only generated identifiers and integers (no names
    from the IR), and ``n`` tracks the running step so a failure names its layer.
    """
    free: dict[str, object] = {}

    def name(slot: int) -> str:
        return f"c{slot}" if slot in plan.constants else f"v{slot}"

    for slot, value in plan.constants.items():
        free[f"c{slot}"] = value
    body = ["n = -1"]
    if plan.input_slots:
        body.append(f"{', '.join(f'v{s}' for s in plan.input_slots)}, = inputs")
    elif True:
        body.append("if len(inputs): raise ValueError")
    for index, step in enumerate(plan.steps):
        free[f"k{index}"] = step.kernel
        args = ", ".join(name(i) for i in step.inputs)
        call = f"k{index}([{args}])"
        body.append(f"n = {index}")
        if len(step.outputs) == 1:
            body.append(f"v{step.outputs[0]} = {call}[0]")
        elif step.outputs:
            body.append(f"r = {call}")
            body.extend(f"v{slot} = r[{k}]" for k, slot in enumerate(step.outputs))
        else:
            body.append(call)
    outputs = ", ".join(name(i) for i in plan.output_slots)
    free["IRToolError"] = IRToolError
    free["failure"] = plan._failure
    source = "\n".join([
        f"def make({', '.join(free)}):",
        "    def run(inputs):",
        "        try:",
        *(f"            {line}" for line in body),
        "        except IRToolError:",
        "            raise",
        "        except Exception as err:",
        "            raise failure(n, inputs, err) from err",
        f"        return [{outputs}]",
        "    return run",
    ])
    namespace: dict[str, object] = {}
    exec(compile(source, f"<plan {plan.scope or 'top'}>", "exec"), namespace)
    return namespace["make"](**free)  # type: ignore[operator]


def layer_path(layer: Layer, scope: str) -> str:
    """``<scope>/<id>``: where a layer sits, bodies included (``"3/body/7"``)."""
    return f"{scope}/{layer.id}" if scope else str(layer.id)


def describe_layer(layer: Layer, scope: str) -> str:
    """How errors name a layer: path, name and ``type-version``."""
    return f'{layer_path(layer, scope)} "{layer.name}" ({layer.type}-{layer.version})'


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
                                     layer=describe_layer(layer, scope))
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
                raise ExecutionError(str(err), layer=describe_layer(layer, scope)) from None
            constants[new_slot(layer.id, layer.outputs[0].id)] = value
            continue
        ins = input_slots(layer)
        outs = tuple(new_slot(layer.id, p.id) for p in layer.outputs)
        consts = [constants.get(slot) for slot in ins]
        steps.append(Step(layer, _kernel(layer, scope, options, consts), ins, outs))

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


def _kernel(layer: Layer, scope: str, options: RunOptions,
            consts: list[np.ndarray | None]) -> Kernel:
    compiler = CONTROL_FLOW.get(layer.type)
    if compiler is not None:
        return compiler(layer, scope, options)
    try:
        op = make_op(layer.type, layer.version, layer.attrs)
    except KeyError:
        raise ExecutionError(f"operation {layer.type}-{layer.version} is not supported by the "
                             "irtool runtime", layer=describe_layer(layer, scope)) from None
    except ValueError as err:
        raise ExecutionError(str(err), layer=describe_layer(layer, scope)) from None
    return specialise(layer.type, op, consts)
