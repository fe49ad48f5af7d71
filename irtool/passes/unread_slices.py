"""A TensorIterator whose body reads none of its sliced inputs -> a Loop of as many
iterations as they have slices.

OpenVINO's CPU plugin runs such a TensorIterator once, whatever the length of its sliced
inputs (docs/openvino-quirks.md): a Scan whose body only counts, or whose only read of its
rows the converter folded away (an If on a constant), or reaches only an output nobody
takes (the plugin drops that output, and the read with it). A Loop-5 whose trip count is
that length (a Const, or ``Gather(ShapeOf(X), axis)`` when it is dynamic) and whose
conditions are constant true runs the same iterations on the same values, and the plugin
runs it right. Not an optimisation: OpenVINO needs it.

The rewrite is made only where it is the same computation:

* no body value that a taken output or a back edge into such a value depends on
  (transitively, through back edges) is computed from a sliced Parameter: a layer with
  bodies counts as reading all its inputs;
* every sliced input walks its whole axis one element at a time (``part_size`` 1,
  ``stride`` 1 or -1, the default range for that direction: what ``convert`` writes), so
  the iterations are the length of that axis; and the sliced inputs are one value along one
  axis, or their lengths are static and equal (lengths that could disagree when the model
  runs are the TensorIterator's error, which a Loop would not raise).

The sliced Parameters, read by nothing, go (their inputs are not inputs of the Loop:
OpenVINO's Loop slices only forwards), and so do the states and outputs nothing taken
depends on; a state whose final value is taken keeps its initial value and back edge
even when nothing reads it (after no iteration, the output is that initial value).
"""

from __future__ import annotations

import numpy as np

from ..ir.builder import GraphBuilder, Value
from ..ir.graph import Graph, Layer, Model, PortMapEntry, TensorInfo
from ..ir.types import ELEMENT_TYPES
from .base import Pass, PassResult
from .loop_facts import iterations
from .prune import prune_graph

I64 = ELEMENT_TYPES["i64"]
_WHOLE_AXIS = {(None, None, None), (0, -1, 1), (-1, 0, -1)}  # (start, end, stride)


class LoopsOverUnreadSlices(Pass[Model]):
    """Rewrite every TensorIterator of a model whose body reads no sliced input."""

    def apply(self, model: Model) -> PassResult[Model]:
        found = list(iterations(model.graph, "TensorIterator"))  # the pass replaces them
        return PassResult(model, sum(_as_loop(graph, layer) for graph, layer in found))


def _read_from(body: Graph, layer: Layer, taken: set[int]) -> set[int]:
    """The body layers the values of the Results ``taken`` (internal ids of outputs
    something reads) depend on, back edges followed."""
    into = {edge.to_layer: edge.from_layer for edge in layer.back_edges}
    live: set[int] = set()
    stack = list(taken)
    while stack:
        lid = stack.pop()
        if lid in live or lid not in body:
            continue
        live.add(lid)
        stack.extend(body.nx.predecessors(lid))
        if lid in into:
            stack.append(into[lid])
    return live


def _whole_axis(entry: PortMapEntry) -> bool:
    return entry.part_size in (None, 1) and (entry.start, entry.end, entry.stride) in _WHOLE_AXIS


def _as_loop(graph: Graph, ti: Layer) -> int:
    body = ti.bodies["body"]
    entries = ti.port_maps.get("port_map", [])
    sliced = [e for e in entries if e.kind == "input" and e.axis is not None]
    if not sliced or not all(_whole_axis(e) for e in sliced):
        return 0
    taken = {e.internal_layer_id for e in entries
             if e.kind == "output" and graph.consumers(ti.id, e.external_port_id)}
    live = _read_from(body, ti, taken)
    if any(e.internal_layer_id in live for e in sliced):
        return 0
    edges = [edge for edge in ti.back_edges if edge.from_layer in live]
    keep = live | {edge.to_layer for edge in edges}
    if any(e.internal_layer_id in keep for e in sliced):
        return 0
    slices = []
    for entry in sliced:
        src = graph.source(ti.id, entry.external_port_id)
        if src is None or entry.axis is None:
            return 0
        slices.append((src, entry.axis))
    lengths = {_static_length(graph, src, axis) for src, axis in slices}
    if len(set(slices)) > 1 and (None in lengths or len(lengths) > 1):
        return 0  # only running them tells whether their lengths agree: the TensorIterator's error
    builder = GraphBuilder(graph)
    (src, axis), length = slices[0], lengths.pop()
    trip = (builder.const(np.array([length], np.int64)) if length is not None
            else _length(builder, builder.value(*src), axis))

    loop = builder.loop(body, ti.name)
    loop.trip_count(trip)
    loop.condition(builder.const(np.array([True])))
    # What no taken value depends on goes: the slices, and states and outputs nobody takes.
    for entry in entries:
        if entry.kind != "input":
            continue
        if entry.internal_layer_id not in keep:
            body.remove_layer(entry.internal_layer_id)
            continue
        src = graph.source(ti.id, entry.external_port_id)
        assert src is not None  # a port-map input without an edge fails validation first
        loop.invariant(builder.value(*src), entry.internal_layer_id)
    for edge in edges:
        loop.back_edge(edge.from_layer, edge.to_layer)
    for result in body.results():
        if result.id not in live:
            body.remove_layer(result.id)
    inner = GraphBuilder(body)
    loop.execution_condition(inner.result(inner.const(np.array([True]))))
    by_port = {e.external_port_id: e for e in entries if e.kind == "output"}
    outputs = []
    for port in ti.outputs:
        entry = by_port[port.id]
        if entry.internal_layer_id not in taken:
            continue
        assert port.precision is not None
        loop.output(entry.internal_layer_id, TensorInfo(port.precision, port.dims),
                    axis=entry.axis, start=entry.start, end=entry.end, stride=entry.stride,
                    part_size=entry.part_size, names=port.names)
        outputs.append(port.id)
    _, values = loop.build()
    for port_id, value in zip(outputs, values):
        for consumer, consumer_port in graph.consumers(ti.id, port_id):
            graph.disconnect_input(consumer, consumer_port)
            graph.connect(value.layer, value.port, consumer, consumer_port)
    graph.remove_layer(ti.id)
    prune_graph(graph)  # the removed Parameters' dead readers, outer values no longer read
    return 1


def _static_length(graph: Graph, src: tuple[int, int], axis: int) -> int | None:
    port = graph.layer(src[0]).port(src[1])
    dims = None if port is None else port.dims
    if dims is None or not -len(dims) <= axis < len(dims) or dims[axis] < 0:
        return None
    return dims[axis]


def _length(builder: GraphBuilder, value: Value, axis: int) -> Value:
    """``value.shape[axis]`` as an i64 ``[1]`` tensor, computed when the model runs."""
    rank = -1 if value.rank is None else value.rank
    shape = builder.op("ShapeOf", "opset3", [value], {"output_type": "i64"},
                       outputs=[TensorInfo(I64, (rank,))])[0]
    return builder.op("Gather", "opset8",
                      [shape, builder.const(np.array([axis], np.int64)),
                       builder.const(np.int64(0))],
                      {"batch_dims": 0}, outputs=[TensorInfo(I64, (1,))])[0]
