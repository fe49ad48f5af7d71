"""Remove layers whose values reach no ``Result``, in a graph and all its bodies."""

from __future__ import annotations

from ..ir.graph import Graph, Model
from .base import Pass, PassResult


def prune_graph(graph: Graph) -> int:
    """Drop every layer of ``graph`` (recursively in bodies) from which no Result is
    reachable. Parameters stay: they are the graph's interface (model inputs, or
    body Parameters that port maps refer to). Returns how many layers went."""
    live: set[int] = set()
    stack = [layer.id for layer in graph.results()]
    while stack:
        lid = stack.pop()
        if lid in live:
            continue
        live.add(lid)
        stack.extend(graph.nx.predecessors(lid))
    removed = 0
    for layer in graph.layers:
        if layer.id not in live and layer.type != "Parameter":
            graph.remove_layer(layer.id)
            removed += 1
    for layer in graph.layers:
        for body in layer.bodies.values():
            removed += prune_graph(body)
    return removed


class Prune(Pass[Model]):
    """``prune_graph`` on the model's graph."""

    def apply(self, model: Model) -> PassResult[Model]:
        return PassResult(model, prune_graph(model.graph))
