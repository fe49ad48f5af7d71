"""Exposing inner values as model outputs, so that an engine that gives nothing but
outputs (OpenVINO) shows them: a copy of the model with one more Result per value.

A value at the top level gets a Result. A value inside a body is brought out through
each control-flow layer around it (``Level``, outermost first), by adding an output to
that layer:

* Loop / TensorIterator, every iteration (``iteration`` None): in the body,
  ``Unsqueeze(value, [0])`` and a Result, mapped to a new output concatenated on axis 0:
  the values of all iterations, stacked (``[iterations, *shape]``). Values whose shape
  changes from iteration to iteration cannot be stacked (OpenVINO's CPU plugin aborts on
  such a concatenation): the caller leaves them out or asks for one iteration.
* Loop of the top graph, one iteration ``i``: its trip count becomes the constant ``i + 1``
  (the loop reached iteration ``i``, so it runs the same iterations up to there) and the
  body Result is mapped to an output without axis: the last iteration's value, ``i``'s.
  (Every iteration up to a ``limit``: the trip count ``limit``, values stacked.)
* TensorIterator, or a Loop inside another loop, one iteration: as for every iteration,
  and ``unwrap`` takes iteration ``i``. (Cutting a loop that runs in every iteration of an
  outer one would change what those iterations compute.)
* If: the branch the run takes (``Level.body``) maps a Result of the value to a new output;
  the other branch, which does not run, an empty constant of the same element type and
  rank (the CPU plugin refuses an If whose branches give two ranks).

The rewrite is exact for what it exposes: it adds layers that read values and changes no
value a layer computes, except the trip count of a Loop cut at iteration ``i``, whose
iterations ``0..i`` are those of the model. (An engine may still compile the copy
differently: OpenVINO's graph transformations see the extra outputs. The caller compares
the model's own outputs between the two runs to know.)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..ir.builder import GraphBuilder, Value
from ..ir.graph import Graph, Layer, Model, Port, PortMapEntry, TensorInfo
from .base import Pass, PassResult
from .fp16 import copy_model
from .prune import prune_graph

PROBE_PREFIX = "irtool_probe_"
"""The name of each added Result: the prefix and the value's position in the probes."""


@dataclass(frozen=True)
class Level:
    """One control-flow layer on the way to the values: ``layer`` (an id in the graph of the
    level before, the top graph first), the ``body`` holding the values or the next level
    (``"body"``, ``"then_body"``, ``"else_body"``), and for a Loop or TensorIterator the one
    ``iteration`` wanted (None: every iteration; then ``limit``, when given, cuts a Loop after
    that many iterations, so that only the first are stacked)."""

    layer: int
    body: str
    iteration: int | None = None
    limit: int | None = None


@dataclass(frozen=True)
class Probe:
    """Output port ``port`` of layer ``layer`` of the innermost graph; ``info`` overrides
    the element type and shape its port declares (an If needs the rank)."""

    layer: int
    port: int
    info: TensorInfo | None = None


@dataclass
class ExposeValues(Pass[Model]):
    """A copy of the model with the ``probes`` (values of the graph ``levels`` lead to) as
    extra outputs, their Results named ``PROBE_PREFIX`` and their position
    (``result_names``; the model's own Results are renamed too: ``output_names``);
    ``select`` and ``unwrap`` turn what an engine gives for one back into values by
    iteration. ``also``: more groups of ``(levels, probes)``, exposed in the
    same copy, numbered after these (``result_names`` of group ``k``: ``names(k)``)."""

    levels: Sequence[Level]
    probes: Sequence[Probe]
    also: Sequence[tuple[Sequence[Level], Sequence[Probe]]] = ()
    copy: bool = True
    """False: change the model given instead of a copy (a caller that has just read it
    from its file: a copy of a large model costs several times the read)."""
    kinds: list[list[str]] = field(default_factory=list)  # the type of each level's layer
    _outputs: int = 0

    in_place = False

    @property
    def groups(self) -> list[tuple[Sequence[Level], Sequence[Probe]]]:
        return [(self.levels, self.probes), *self.also]

    def names(self, group: int = 0) -> list[str]:
        """The Result names of group ``group``'s probes, in order."""
        start = sum(len(p) for _, p in self.groups[:group])
        return [f"{PROBE_PREFIX}{start + k}" for k in range(len(self.groups[group][1]))]

    @property
    def result_names(self) -> list[str]:
        return self.names(0)

    @property
    def output_names(self) -> list[str]:
        """The names the copy's Results of the model's own outputs get, in the model's
        order: names of their own, which no body layer has (OpenVINO renames a Result
        whose name a body layer has too)."""
        return [f"{PROBE_PREFIX}output_{k}" for k in range(self._outputs)]

    def apply(self, model: Model) -> PassResult[Model]:
        out = copy_model(model) if self.copy else model
        results = out.graph.results()
        for k, result in enumerate(results):
            result.name = f"{PROBE_PREFIX}output_{k}"
        self._outputs = len(results)
        top = GraphBuilder(out.graph)
        self.kinds = []
        count = 0
        for number, (levels, probes) in enumerate(self.groups):
            values = self._group(out, levels, probes)
            for name, value in zip(self.names(number), values):
                top.result(value, name=name)
            count += len(values)
        return PassResult(out, count)

    def _group(self, out: Model, levels: Sequence[Level], probes: Sequence[Probe]
               ) -> list[Value]:
        graphs: list[Graph] = [out.graph]
        layers: list[Layer] = []
        kinds = []
        for level in levels:
            graph = graphs[-1]
            if level.layer not in graph:
                raise ValueError(f"no layer {level.layer} on the way to the values")
            layer = graph.layer(level.layer)
            if level.body not in layer.bodies:
                raise ValueError(f"layer {layer.id} ({layer.type}) has no {level.body}")
            layers.append(layer)
            kinds.append(layer.type)
            graphs.append(layer.bodies[level.body])
        self.kinds.append(kinds)
        values = [_value(graphs[-1], p) for p in probes]
        for depth in reversed(range(len(levels))):
            values = _through(graphs[depth], layers[depth], levels[depth], values,
                              cut=depth == 0)
        return values

    def select(self, value: np.ndarray, group: int = 0) -> np.ndarray:
        """What an engine gives for one exposed output, with one leading axis per level of
        every iteration (outermost first) and the fixed iterations taken."""
        index: list[int | slice] = []
        for depth, (level, kind) in enumerate(zip(self.groups[group][0], self._kinds(group))):
            if kind == "If":
                continue
            if level.iteration is None:
                index.append(slice(None))
            elif kind == "TensorIterator" or depth > 0:  # stacked, not cut
                index.append(level.iteration)
        return np.asarray(value)[tuple(index)] if index else np.asarray(value)

    def unwrap(self, value: np.ndarray, group: int = 0
               ) -> Iterator[tuple[tuple[int, ...], np.ndarray]]:
        """``(iterations, value)`` for each value an exposed output holds: the iteration
        numbers of the loops around it, outermost first, as ``runtime.trace`` keys them."""
        selected = self.select(value, group)
        loops = [(lv.iteration, lv.iteration is None) for lv, kind
                 in zip(self.groups[group][0], self._kinds(group)) if kind != "If"]
        every = sum(1 for _, e in loops if e)
        for index in np.ndindex(*selected.shape[:every]):
            numbers = iter(index)
            where = tuple(next(numbers) if e else it for it, e in loops)
            yield where, selected[index]  # type: ignore[misc]

    def _kinds(self, group: int) -> list[str]:
        if group < len(self.kinds):
            return self.kinds[group]
        return ["Loop"] * len(self.groups[group][0])


def _value(graph: Graph, probe: Probe) -> Value:
    if probe.layer not in graph:
        raise ValueError(f"no layer {probe.layer} to expose")
    port = graph.layer(probe.layer).port(probe.port)
    if port is None:
        raise ValueError(f"layer {probe.layer} has no port {probe.port}")
    info = probe.info
    if info is None:
        if port.precision is None:
            raise ValueError(f"port {probe.port} of layer {probe.layer} has no element type")
        info = TensorInfo(port.precision, port.dims)
    return Value(probe.layer, probe.port, info)


def _new_output(layer: Layer, info: TensorInfo) -> Port:
    ports = [p.id for p in (*layer.inputs, *layer.outputs)]
    port = Port(max(ports, default=-1) + 1, info.element_type, info.shape)
    layer.outputs.append(port)
    return port


def _through(outer: Graph, layer: Layer, level: Level, values: list[Value], cut: bool
             ) -> list[Value]:
    """Each of ``values`` (in the body ``level`` names) as a new output of ``layer``; ``cut``:
    a Loop's trip count may be cut (it is not inside another loop)."""
    body = GraphBuilder(layer.bodies[level.body])
    out: list[Value] = []
    if layer.type == "If":
        other = GraphBuilder(layer.bodies["else_body" if level.body == "then_body"
                                          else "then_body"])
        other_map = "else_port_map" if level.body == "then_body" else "then_port_map"
        for value in values:
            rank = value.rank
            if rank is None:
                raise ValueError(f"the rank of value {value.src} in {level.body} is unknown")
            result = body.result(value)
            empty = other.result(other.const(np.zeros((0,) * rank, value.element_type.dtype),
                                             value.element_type))
            info = TensorInfo(value.element_type, (-1,) * rank)
            port = _new_output(layer, info)
            layer.port_maps[level.body.replace("_body", "_port_map")].append(
                PortMapEntry("output", port.id, result.id))
            layer.port_maps[other_map].append(PortMapEntry("output", port.id, empty.id))
            out.append(Value(layer.id, port.id, info))
        return out
    if layer.type not in ("Loop", "TensorIterator"):
        raise ValueError(f"layer {layer.id} is a {layer.type}, which has no body to expose")
    stacked = level.iteration is None or layer.type == "TensorIterator" or not cut
    if layer.type == "Loop" and cut and level.iteration is not None:
        _cut(outer, layer, level.iteration + 1)
    elif layer.type == "Loop" and cut and level.limit is not None:
        _cut(outer, layer, level.limit)
    axes = body.const(np.array([0], np.int64)) if stacked and values else None
    for value in values:
        if stacked:
            shape = None if value.shape is None else (1, *value.shape)
            assert axes is not None
            lifted = body.op("Unsqueeze", "opset1", [value, axes],
                             outputs=[TensorInfo(value.element_type, shape)])[0]
            result = body.result(lifted)
            info = TensorInfo(value.element_type,
                              None if value.shape is None else (-1, *value.shape))
            entry = PortMapEntry("output", -1, result.id, axis=0)
        else:
            result = body.result(value)
            info = value.info
            entry = PortMapEntry("output", -1, result.id)
        port = _new_output(layer, info)
        entry.external_port_id = port.id
        layer.port_maps["port_map"].append(entry)
        out.append(Value(layer.id, port.id, info))
    return out


def _cut(outer: Graph, layer: Layer, count: int) -> None:
    """The Loop's trip count becomes the constant ``count``."""
    trip = layer.inputs[0]
    if trip.precision is None or trip.precision.dtype is None:
        raise ValueError(f"the trip count of Loop {layer.id} has no element type")
    dims = trip.dims if trip.dims and all(d >= 0 for d in trip.dims) else ()
    value = np.full(dims, count, trip.precision.dtype)
    const = GraphBuilder(outer).const(value, trip.precision, name=f"{layer.name}/trip_cut")
    outer.disconnect_input(layer.id, trip.id)
    outer.connect(const.layer, const.port, layer.id, trip.id)


@dataclass
class KeepPrefix(Pass[Model]):
    """A copy of the model that computes only ``layers`` (ids in the top graph, with the
    Parameters and Consts they read): every other layer and every Result goes, and each
    value of those layers that one of them read becomes an output (Results named
    ``PROBE_PREFIX`` and a number). With ``layers`` a prefix of the topological order, an
    engine that fails on the model can be asked from which layer on it fails."""

    layers: frozenset[int]
    copy: bool = True  # as ``ExposeValues.copy``

    in_place = False

    def apply(self, model: Model) -> PassResult[Model]:
        out = copy_model(model) if self.copy else model
        graph = out.graph
        keep = set(self.layers)
        kept = keep | {layer.id for layer in graph if layer.type in ("Parameter", "Const")}
        exposed = sorted({(e.from_layer, e.from_port) for e in graph.edges()
                          if e.from_layer in keep and e.to_layer not in kept})
        for layer in graph.layers:
            if layer.id not in kept:
                graph.remove_layer(layer.id)
        builder = GraphBuilder(graph)
        for k, (layer_id, port) in enumerate(exposed):
            builder.result(_value(graph, Probe(layer_id, port)), name=f"{PROBE_PREFIX}{k}")
        prune_graph(graph)
        return PassResult(out, len(exposed))
