"""Remove what computes nothing anyone reads, in a graph and all its bodies: layers whose
values reach no ``Result``, and outputs of Loop and TensorIterator layers that nothing
reads (their port-map entries, and the body Results only they used)."""

from __future__ import annotations

from ..ir.graph import Graph, Layer, Model
from .base import Pass, PassResult

LOOPS = ("Loop", "TensorIterator")


def prune_graph(graph: Graph) -> int:
    """Drop every unread Loop/TensorIterator output (``drop_unread_outputs``) and every
    layer of ``graph`` (recursively in bodies) from which no Result is reachable.
    Parameters stay: they are the graph's interface (model inputs, or body Parameters
    that port maps refer to). Returns how many layers and outputs went."""
    removed = sum(drop_unread_outputs(graph, layer) for layer in graph.layers_of_type(*LOOPS))
    live: set[int] = set()
    stack = [layer.id for layer in graph.results()]
    while stack:
        lid = stack.pop()
        if lid in live:
            continue
        live.add(lid)
        stack.extend(graph.nx.predecessors(lid))
    for layer in graph.layers:
        if layer.id not in live and layer.type != "Parameter":
            graph.remove_layer(layer.id)
            removed += 1
    for layer in graph.layers:
        for body in layer.bodies.values():
            removed += prune_graph(body)
    return removed


def drop_unread_outputs(graph: Graph, loop: Layer) -> int:
    """Remove the output ports of ``loop`` (a Loop or TensorIterator of ``graph``) that no
    layer reads, their port-map entries, and the body Results no other entry or back edge
    uses; how many ports went. Not only tidier: OpenVINO's CPU plugin gave an empty scan
    output when an unread one before it concatenated the body's condition
    (docs/openvino-quirks.md)."""
    entries = loop.port_maps.get("port_map")
    body = loop.bodies.get("body")
    if entries is None or body is None:
        return 0
    unread = {port.id for port in loop.outputs if not graph.consumers(loop.id, port.id)}
    if not unread:
        return 0
    gone = [e for e in entries if e.kind == "output" and e.external_port_id in unread]
    for entry in gone:
        entries.remove(entry)
    for port in [p for p in loop.outputs if p.id in unread]:
        loop.outputs.remove(port)
    used = {e.internal_layer_id for e in entries} | {b.from_layer for b in loop.back_edges}
    for entry in gone:
        if entry.internal_layer_id not in used and entry.internal_layer_id in body:
            body.remove_layer(entry.internal_layer_id)
    return len(unread)


class Prune(Pass[Model]):
    """``prune_graph`` on the model's graph."""

    def apply(self, model: Model) -> PassResult[Model]:
        return PassResult(model, prune_graph(model.graph))
