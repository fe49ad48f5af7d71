"""Compile a ``Graph`` once into a ``Plan``; run the plan many times.

Compilation does all the graph work, in three stages:

1. lowering: the graph's own topological order (``Graph.topological_order``: linear, ties
   by layer id), one value slot per produced tensor, constants materialised, one pending
   step per layer that runs;
2. the compile pipeline (``irtool.passes.pipelines.compiling``) rewrites those steps:
   weight decompression folded as OpenVINO computes it and, optimising, constant folding
   and pool fusion;
3. a kernel per remaining step (``Op.compute``, a ``fastpath.specialise``d one, or the
   kernel ``CONTROL_FLOW`` compiles for a Loop/TensorIterator/If/ReadValue/Assign/
   RandomUniform), and for ops that are one numpy call a guarded direct call
   (``fastpath.inline_for``); the ``Plan`` then generates its ``execute``
   (``codegen.straight``).

``RunOptions.optimize`` off: the pipeline without its optimisations, and each step's
kernel is its op's own ``compute``, never specialised or inlined. ``RunOptions.applied``
counts what the optimisations did (the pipeline's ``PassResult.applied``, and the kernels
specialised and inlined here).
"""

from __future__ import annotations

import numpy as np

from ..core.bulk import paused_gc
from ..core.errors import ExecutionError
from ..ir.graph import Graph, Layer, Port, describe_layer, tensor_name
from ..opset import Kernel, make_op
from ..passes.pipelines import compiling
from ..passes.pool_fusion import pooled_then
from ..passes.program import PendingStep, Program
from .codegen import straight
from .fastpath import Inline, inline_for, specialise
from .plan import CONTROL_FLOW, Plan, RunOptions, Step


def compile_graph(graph: Graph, scope: str = "", options: RunOptions | None = None) -> Plan:
    """Compile ``graph`` into a ``Plan``. Raises ``ExecutionError`` naming the layer
    for unknown ops, bad attributes, dangling inputs or a cycle. Time and memory are
    linear in the layers."""
    with paused_gc():
        return _compile(graph, scope, options or RunOptions())


def _compile(graph: Graph, scope: str, options: RunOptions) -> Plan:
    slot_of: dict[tuple[int, int], int] = {}
    pending: list[PendingStep] = []
    constants: dict[int, np.ndarray] = {}
    const_layers: dict[int, Layer] = {}
    parameters = graph.parameters()
    results = graph.results()
    sources = graph.sources()
    read = set(sources.values())  # the (layer, port) outputs some input reads

    def new_slot(layer_id: int, port_id: int) -> int:
        slot = len(slot_of)
        slot_of[(layer_id, port_id)] = slot
        return slot

    def one_port(layer: Layer, ports: list[Port]) -> int:
        if len(ports) != 1:
            raise ExecutionError(f"a {layer.type} needs exactly one port, not {len(ports)}",
                                 layer=describe_layer(layer, scope))
        return ports[0].id

    def input_slots(layer: Layer) -> tuple[int, ...]:
        slots = []
        for port in layer.inputs:
            src = sources.get((layer.id, port.id))
            if src is None or src not in slot_of:
                raise ExecutionError(f"input port {port.id} is not connected",
                                     layer=describe_layer(layer, scope))
            slots.append(slot_of[src])
        return tuple(slots)

    try:
        order = graph.topological_order()
    except ValueError as err:
        raise ExecutionError(str(err), layer=scope or None) from None
    for layer_id in order:
        layer = graph.layer(layer_id)
        if layer.type == "Parameter":
            new_slot(layer.id, one_port(layer, layer.outputs))
            continue
        if layer.type == "Result":
            one_port(layer, layer.inputs)
            input_slots(layer)  # checks the connection
            continue
        if layer.type == "Const":
            try:
                value = layer.const_value()
            except (ValueError, KeyError) as err:
                raise ExecutionError(str(err), layer=describe_layer(layer, scope)) from None
            if value.__class__ is np.ndarray and not value.flags.aligned:
                # A view at an odd offset of a mapped .bin: numpy runs unaligned data
                # through slow buffered loops on every call, so align it once here.
                value = value.copy()
                value.flags.writeable = False
            slot = new_slot(layer.id, one_port(layer, layer.outputs))
            constants[slot] = value
            const_layers[slot] = layer
            continue
        ins = input_slots(layer)
        outs = tuple(new_slot(layer.id, p.id) for p in layer.outputs)
        pending.append(PendingStep(layer, ins, outs))

    input_slot_list = [slot_of[(p.id, p.outputs[0].id)] for p in parameters]
    output_slot_list = [input_slots(r)[0] for r in results]
    result = compiling(optimize=options.optimize)(
        Program(pending, constants, output_slot_list, const_layers, frozenset(CONTROL_FLOW)))
    program = result.target
    options.applied.update(result.applied)
    # Inline forms serve generated code only; a plan this large runs as a loop.
    generated = len(graph) <= straight.GENERATED_STEPS_LIMIT
    steps = []
    for step in program.steps:
        layer = step.layer
        consts = [constants.get(slot) for slot in step.inputs]
        unused = frozenset(i for i, p in enumerate(layer.outputs)
                           if (layer.id, p.id) not in read)
        kernel, inline = _kernel(layer, scope, options, consts, generated, unused)
        if step.then:
            moved = [(_kernel(op_layer, scope, options, args, False)[0], args)
                     for op_layer, args in step.then]
            kernel, inline = pooled_then(kernel, moved), None
        steps.append(Step(layer, kernel, step.inputs, step.outputs, inline))
    input_names = [tensor_name(p, p.outputs[0]) for p in parameters]
    output_names = []
    for r in results:
        src = sources.get((r.id, r.inputs[0].id))
        port = graph.layer(src[0]).port(src[1]) if src else None
        output_names.append(tensor_name(r, port))
    return Plan(len(slot_of), steps, constants, parameters, results, input_slot_list,
                output_slot_list, input_names, output_names, scope, options.check_declared,
                options.optimize)


def _kernel(layer: Layer, scope: str, options: RunOptions, consts: list[np.ndarray | None],
            inline: bool = True, unused: frozenset[int] = frozenset()
            ) -> tuple[Kernel, Inline | None]:
    compiler = CONTROL_FLOW.get(layer.type)
    if compiler is not None:
        return compiler(layer, scope, options), None
    try:
        op = make_op(layer.type, layer.version, layer.attrs)
    except KeyError:
        raise ExecutionError(f"operation {layer.type}-{layer.version} is not supported by the "
                             "irtool runtime", layer=describe_layer(layer, scope)) from None
    except ValueError as err:
        raise ExecutionError(str(err), layer=describe_layer(layer, scope)) from None
    if unused:
        op.unused_outputs = unused
    if not options.optimize:
        return op.compute, None
    kernel = specialise(layer.type, op, consts)
    if kernel != op.compute:
        options.applied["specialised kernels"] += 1
    inlined = inline_for(layer, op, consts, kernel) if inline else None
    if inlined is not None:
        options.applied["inlined numpy calls"] += 1
    return kernel, inlined
