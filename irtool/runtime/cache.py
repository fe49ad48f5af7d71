"""Compiled plans cached with the model they came from.

``irtool.run(model, feed)`` called again and again on one ``Model`` must not check and
compile it every time. The cache keeps, per model object, the plans compiled for it (one
per ``max_iterations``) together with a *fingerprint* of everything checking and
compiling read: layers (id, name, type, version, attributes, extra attributes, ports'
ids, types, shapes and names, Const data objects), edges, bodies, port maps and back
edges. A later call whose fingerprint differs (the model was changed in place) checks and
compiles again. The fingerprint costs one pass over the layers (C-level getters, the
cyclic collector paused), a small part of what checking and compiling cost.

What it does not see: bytes changed inside a Const's existing buffer (``ConstData`` holds
the bytes of the file or of ``from_array``, which nothing in irtool changes in place) and
``rt_info``, which neither the checks nor the runtime read.

Entries live as long as their model: the cache holds the model weakly.
"""

from __future__ import annotations

import operator
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..core.bulk import paused_gc
from ..ir.graph import Graph, Model

# C-level getters: the fingerprint is taken on every cached call, so it must cost little
# next to running a plan.
_PORT = operator.attrgetter("id", "precision", "dims", "names")
_LAYER = operator.attrgetter("id", "name", "type", "version", "const", "has_data")
_ENTRY = operator.attrgetter("kind", "external_port_id", "internal_layer_id", "axis", "start",
                             "end", "stride", "part_size", "purpose")
_BACK_EDGE = operator.attrgetter("from_layer", "to_layer")


def graph_fingerprint(graph: Graph) -> tuple[Any, ...]:
    """A value equal for two states of ``graph`` only when they compile alike (see the
    module docstring). Const data enter by identity, so the tuple keeps them alive."""
    layers: list[tuple[Any, ...]] = []
    for node, layer in graph.nx.nodes(data="layer"):
        if layer is None:
            layers.append((node,))
            continue
        key = (node, _LAYER(layer), tuple(layer.attrs.items()),
               tuple(map(_PORT, layer.inputs)), tuple(map(_PORT, layer.outputs)),
               tuple(layer.extra.items()))
        if layer.bodies:
            key += (tuple((name, graph_fingerprint(body)) for name, body in layer.bodies.items()),  # type: ignore[assignment]
                    tuple((name, tuple(map(_ENTRY, entries)))
                          for name, entries in layer.port_maps.items()),
                    tuple(map(_BACK_EDGE, layer.back_edges)))
        layers.append(key)
    edges = [(u, v, d.get("from_port"), d.get("to_port")) for u, v, d in graph.nx.edges(data=True)]
    return tuple(layers), tuple(edges)


def model_fingerprint(model: Model) -> tuple[Any, ...]:
    with paused_gc():  # thousands of small tuples: no collection is worth running here
        return model.version, model.name, graph_fingerprint(model.graph)


@dataclass
class _Entry:
    fingerprint: tuple[Any, ...]
    checked: bool = False
    compiled: dict[Any, Any] = field(default_factory=dict)


class PlanCache:
    """What was derived from each model object, valid while its fingerprint holds."""

    def __init__(self) -> None:
        self._entries: dict[int, _Entry] = {}
        self._lock = threading.Lock()
        self.compilations = 0  # how many times ``compiled`` had to build (for tests)

    def _entry(self, model: Model) -> _Entry:
        fingerprint = model_fingerprint(model)
        key = id(model)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                weakref.finalize(model, self._entries.pop, key, None)
            if entry is None or entry.fingerprint != fingerprint:
                entry = self._entries[key] = _Entry(fingerprint)
        return entry

    def compiled(self, model: Model, key: Any, check: Callable[[], None] | None,
                 build: Callable[[], Any]) -> Any:
        """``build()``'s result for ``model`` and ``key``, built once while the model stays
        the same. ``check`` (when given) runs first, once per state of the model; what it
        raises is raised again on the next call, since nothing is stored then."""
        entry = self._entry(model)
        if check is not None and not entry.checked:
            check()
            entry.checked = True
        if key not in entry.compiled:
            entry.compiled[key] = build()
            self.compilations += 1
        return entry.compiled[key]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


PLANS = PlanCache()
"""The process's plan cache, shared by ``irtool.run`` and ``irtool.compile``."""
