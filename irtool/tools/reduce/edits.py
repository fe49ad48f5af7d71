"""The edits ``irtool reduce`` tries, each a new ``Candidate`` made from the current one.

Every edit works on a copy (``passes.fp16.copy_model``: constant payloads shared) and ends
with the dead layers pruned and the model inputs nothing reads dropped, with their feed:

* ``keep_layers``: only the given layers of the top graph stay. An input a kept layer read
  from a layer that goes is fed by a new Parameter holding the value it had (a Const when
  that value follows from constants alone, as OpenVINO would fold it: a constant trip
  count must stay one); a kept layer's output that fed a layer that goes becomes a model
  output, so that what it computes is still seen.
* ``keep_results``: only the given model outputs stay.
* ``hoist_body``: a Loop or TensorIterator replaced by its body for one iteration: each
  body Parameter fed by what it reads in that iteration (the outer value itself where
  it is the same in every iteration, the iteration number as a Const, else a Parameter
  with the traced value), every body Result a model output, and the layer's own outputs,
  for the layers reading them, Parameters holding the values they had.
* ``inline_branch``: an If replaced by one branch's layers, wired to the If's inputs and
  outputs (for the branch the run takes, exactly what the If computes).
* ``set_trip_count``: a Loop's trip count made the Const ``n``.
* ``set_value``: a model input's value, or a Const's data, replaced (zeros, a smaller
  shape).

An edit that changes shapes (``set_trip_count``, a value of another shape) leaves the
declared shapes to ``redeclare``, which runs irtool's executor on the candidate and
writes the dims it computes into the ports that declared static dims. None is returned
where the edit cannot be made (no value to cut with, a branch without an output).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Container, Iterable
from dataclasses import dataclass, field

import numpy as np

from ...ir import ConstData, Graph, GraphBuilder, Layer, Model, TensorInfo, Value
from ...ir.graph import copy_layer, format_shape, tensor_name
from ...passes.fp16 import copy_model
from ...passes.prune import prune_graph
from .values import PortKey, Values, record

BOUNDARY = frozenset({"Parameter", "Const", "Result"})
"""Layers that are a graph's interface or data, not computation: never cut on their own."""

ITERATING = frozenset({"Loop", "TensorIterator"})


@dataclass
class Candidate:
    """A model, its inputs by name, and (when known) what irtool computes at each output
    port of its top graph."""

    model: Model
    feed: dict[str, np.ndarray]
    values: Values | None = None
    what: str = "the original"
    constant: set[PortKey] | None = field(default=None, repr=False)
    """The ports whose values follow from constants alone (``constant_ports``), once known."""


def layer_counts(model: Model) -> tuple[int, int]:
    """``(layers of the top graph, layers with those of every body)``."""
    return len(model.graph), sum(1 for _ in model.graph.walk())


def operations(model: Model) -> list[int]:
    """The top graph's computing layers (not ``BOUNDARY``), in topological order."""
    graph = model.graph
    return [lid for lid in graph.topological_order() if graph.layer(lid).type not in BOUNDARY]


# -- what follows from constants alone -------------------------------------------------------


def constant_ports(model: Model) -> set[PortKey]:
    """The top graph's output ports whose value follows from Consts alone (and from static
    shapes, through ``ShapeOf``), by pure operations: what OpenVINO folds when it compiles."""
    graph = model.graph
    found: set[PortKey] = set()
    for lid in graph.topological_order():
        layer = graph.layer(lid)
        if layer.type in ("Parameter", "Result"):
            continue
        if layer.type == "Const":
            found.update((lid, p.id) for p in layer.outputs)
            continue
        if layer.type in ("ShapeOf",) and all(
                p.dims is not None and all(d >= 0 for d in p.dims) for p in layer.inputs):
            found.update((lid, p.id) for p in layer.outputs)
            continue
        sources = [graph.source(lid, p.id) for p in layer.inputs]
        if all(s is not None and s in found for s in sources) and _pure(layer):
            found.update((lid, p.id) for p in layer.outputs)
    return found


def _pure(layer: Layer) -> bool:
    from ...opset import lookup

    if layer.bodies:
        return all(_pure(inner) for body in layer.bodies.values() for inner in body.layers)
    if layer.type in BOUNDARY:
        return True
    op = lookup(layer.type, layer.version)
    return op is not None and op.pure


# -- the edits ------------------------------------------------------------------------------

Fill = Callable[[Layer, int], np.ndarray | None]
"""The value to cut with at ``(layer, port id)`` when none was recorded (or None)."""


def zeros_fill(layer: Layer, port_id: int) -> np.ndarray | None:
    """Zeros of the port's declared type and static shape (None when it has none)."""
    port = layer.port(port_id)
    if port is None or port.precision is None or port.dims is None:
        return None
    dtype = port.precision.dtype
    if dtype is None or port.precision.bitwidth < 8 or any(d < 0 for d in port.dims):
        return None
    return np.zeros(port.dims, dtype)


class _Edit:
    """One edit in the making: a copy of the candidate, and the layers it adds."""

    def __init__(self, cand: Candidate, fill: Fill = zeros_fill,
                 keep: Container[int] | None = None) -> None:
        self.source = cand.model.graph
        self.model = copy_model(cand.model, keep)  # only what stays, when that is known
        self.graph = self.model.graph
        self.builder = GraphBuilder(self.graph)
        self.feed = dict(cand.feed)
        self.known = cand.values is not None
        self.values = cand.values or {}
        if cand.constant is None:  # asked once per candidate, however many edits it makes
            cand.constant = constant_ports(cand.model)
        self.constant = cand.constant
        self.fill = fill
        self.new_values: Values = {}
        self.taken = _tensor_names(self.source)
        self._cuts: dict[PortKey, Value] = {}

    def value_of(self, key: PortKey) -> np.ndarray | None:
        value = self.values.get(key)
        if value is None and key[0] in self.source:
            value = self.fill(self.source.layer(key[0]), key[1])
        return value

    def stand_in(self, key: PortKey, value: np.ndarray | None = None,
                 constant: bool | None = None) -> Value | None:
        """A new Parameter (a Const when ``constant``, by default when the port's value
        follows from constants) holding the value of port ``key`` (or ``value``); one per
        port, however many layers read it."""
        if key in self._cuts:
            return self._cuts[key]
        layer = self.source.layer(key[0])
        port = layer.port(key[1])
        value = self.value_of(key) if value is None else value
        if port is None or port.precision is None or value is None:
            return None
        et = port.precision
        if et.dtype is None or et.bitwidth < 8 or value.dtype != et.dtype:
            return None  # sub-byte, string or mistyped values do not round-trip as inputs
        # Named as the tensor it stands for (that port goes with its layer).
        base = port.names[0] if port.names else (
            f"{layer.name}:{layer.outputs.index(port)}" if len(layer.outputs) > 1
            else layer.name)
        name = self.fresh(base, free=set(port.names))
        if constant if constant is not None else key in self.constant:
            made = self.builder.const(value, et, name=name)
        else:
            dims = port.dims if port.dims is not None else tuple(value.shape)
            made = self.builder.parameter(TensorInfo(et, dims), name, [name])
            self.feed[name] = value
        self.new_values[made.src] = value
        self._cuts[key] = made
        return made

    def fresh(self, base: str, free: Collection[str] = ()) -> str:
        """``base``, or ``base_2``, ``base_3``...: a name no tensor or model input or
        output has yet (``free``: names that may be taken again)."""
        name, n = base, 1
        while name in self.taken and name not in free:
            n += 1
            name = f"{base}_{n}"
        self.taken.add(name)
        return name

    def rewire(self, layer_id: int, port_id: int, value: Value) -> None:
        """Input ``port_id`` of ``layer_id`` reads ``value`` instead."""
        self.graph.disconnect_input(layer_id, port_id)
        self.graph.connect(value.layer, value.port, layer_id, port_id)

    def observe(self, layer_id: int, port_id: int) -> None:
        """A model output on port ``port_id`` of ``layer_id`` (unless one reads it already)."""
        if any(self.graph.layer(c).type == "Result"
               for c, _ in self.graph.consumers(layer_id, port_id)):
            return
        layer = self.graph.layer(layer_id)
        port = layer.port(port_id)
        if port is None or port.precision is None:
            return
        self.builder.result(Value(layer_id, port_id, TensorInfo(port.precision, port.dims)),
                            self.fresh(f"{layer.name}/result"))

    def finish(self, what: str, *, keep_values: bool = True) -> Candidate | None:
        """The candidate: dead layers pruned, unread model inputs dropped; None when no
        model output is left. ``keep_values``: the recorded values still hold for the
        layers that stayed (a cut changes none of them)."""
        tidy(self.model, self.feed)
        if not self.graph.results():
            return None
        self._name_outputs()
        values = None
        if keep_values and self.known:
            values = {k: v for k, v in {**self.values, **self.new_values}.items()
                      if k[0] in self.graph}
        return Candidate(self.model, self.feed, values, what)

    def _name_outputs(self) -> None:
        """Every model output has a tensor name (OpenVINO's users read outputs by name):
        an unnamed port feeding a Result is named after its layer."""
        for result in self.graph.results():
            src = self.graph.source(result.id, result.inputs[0].id) if result.inputs else None
            if src is None:
                continue
            layer = self.graph.layer(src[0])
            port = layer.port(src[1])
            if port is not None and not port.names:
                base = layer.name if len(layer.outputs) == 1 else \
                    f"{layer.name}:{layer.outputs.index(port)}"
                port.names = (self.fresh(base),)


def tidy(model: Model, feed: dict[str, np.ndarray]) -> None:
    """Prune dead layers (bodies too), drop the model inputs nothing reads, and keep in
    ``feed`` only what the model's inputs take."""
    graph = model.graph
    prune_graph(graph)
    for param in graph.parameters():
        if not graph.consumers(param.id):
            graph.remove_layer(param.id)
    names = set(model.input_names())
    for name in [n for n in feed if n not in names]:
        del feed[name]


def _tensor_names(graph: Graph) -> set[str]:
    """The tensor names of the top graph, and the names of its Parameters and Results."""
    names = set()
    for layer in graph.layers:
        if layer.type in ("Parameter", "Result"):
            names.add(layer.name)
        for port in layer.outputs:
            names.update(port.names)
    return names


def keep_layers(cand: Candidate, keep: Iterable[int], fill: Fill = zeros_fill
                ) -> Candidate | None:
    """Only the computing layers ``keep`` of the top graph stay (see the module)."""
    source = cand.model.graph
    keep = set(keep)
    doomed = {lid for lid in operations(cand.model) if lid not in keep}
    copied = set(keep)
    for lid in keep:
        for port in source.layer(lid).inputs:
            src = source.source(lid, port.id)
            if src is not None and source.layer(src[0]).type in BOUNDARY:
                copied.add(src[0])
        copied.update(c for c, _ in source.consumers(lid)
                      if source.layer(c).type == "Result")
    edit = _Edit(cand, fill, copied)
    for lid in keep:
        for port in source.layer(lid).inputs:
            src = source.source(lid, port.id)
            if src is not None and src[0] in doomed:
                made = edit.stand_in(src)
                if made is None:
                    return None
                edit.rewire(lid, port.id, made)
        for port in source.layer(lid).outputs:
            if any(c in doomed for c, _ in source.consumers(lid, port.id)):
                edit.observe(lid, port.id)
    n = len(keep)
    return edit.finish(f"kept {n} layer{'s' if n != 1 else ''}")


def keep_results(cand: Candidate, keep: Iterable[int]) -> Candidate | None:
    """Only the model outputs (Result layers) ``keep`` stay."""
    edit = _Edit(cand)
    keep = set(keep)
    for result in edit.graph.results():
        if result.id not in keep:
            edit.graph.remove_layer(result.id)
    n = len(keep)
    return edit.finish(f"kept {n} output{'s' if n != 1 else ''}")


def _copy_layers(edit: _Edit, body: Graph, skip: Callable[[Layer], bool]) -> dict[int, int]:
    """Copy the layers of ``body`` that ``skip`` does not name into the top graph, under new
    ids (tensor names the top graph has already dropped); body id -> top id."""
    ids: dict[int, int] = {}
    for layer in body.layers:
        if skip(layer):
            continue
        new = copy_layer(layer)
        new.id = edit.graph.next_id()
        new.line = None
        for port in new.outputs:
            port.names = tuple(n for n in port.names if n not in edit.taken)
            edit.taken.update(port.names)
        if new.type == "Result":
            new.name = edit.fresh(new.name)
        edit.graph.add_layer(new)
        ids[layer.id] = new.id
    return ids


def _copy_edges(edit: _Edit, body: Graph, ids: dict[int, int],
                sources: dict[int, Value]) -> None:
    """The body's edges between copied layers, and from each replaced body Parameter
    (``sources``: body id -> the value standing in for it) to the layers that read it."""
    for edge in body.edges():
        if edge.to_layer not in ids:
            continue
        if edge.from_layer in ids:
            edit.graph.connect(ids[edge.from_layer], edge.from_port, ids[edge.to_layer],
                               edge.to_port)
        elif edge.from_layer in sources:
            value = sources[edge.from_layer]
            edit.graph.connect(value.layer, value.port, ids[edge.to_layer], edge.to_port)


def _outer_source(edit: _Edit, layer: Layer, port_id: int) -> Value | None:
    """The value feeding input ``port_id`` of ``layer`` in the top graph."""
    src = edit.graph.source(layer.id, port_id)
    if src is None:
        return None
    try:
        return edit.builder.value(*src)
    except ValueError:
        return None


def hoist_body(cand: Candidate, layer_id: int, k: int, traced: dict[int, np.ndarray],
               fill: Fill = zeros_fill) -> Candidate | None:
    """The Loop or TensorIterator ``layer_id`` replaced by its body in iteration ``k``
    (see the module); ``traced``: what ``values.trace`` gave for its body Parameters."""
    edit = _Edit(cand, fill)
    graph = edit.graph
    layer = graph.layer(layer_id)
    body = layer.bodies["body"]
    fed_back = {e.to_layer for e in layer.back_edges}
    sources: dict[int, Value] = {}
    for entry in layer.port_maps.get("port_map", []):
        if entry.kind != "input" or entry.internal_layer_id not in body:
            continue
        param = body.layer(entry.internal_layer_id)
        out = param.outputs[0]
        made: Value | None
        if entry.purpose == "current_iteration":
            dtype = out.precision.dtype if out.precision is not None else None
            if dtype is None:
                return None
            shape = out.dims if out.dims is not None else ()
            made = edit.builder.const(np.full(shape, k, dtype), out.precision,
                                      name=edit.fresh(f"{param.name}={k}"))
        elif entry.axis is None and (k == 0 or param.id not in fed_back):
            made = _outer_source(edit, layer, entry.external_port_id)
        else:
            stacked = traced.get(param.id)
            if stacked is None or k >= len(stacked):
                return None
            made = _body_value(edit, param, stacked[k])
        if made is None:
            return None
        sources[param.id] = made
    if any(p.id not in sources for p in body.parameters()):
        return None
    ids = _copy_layers(edit, body, lambda inner: inner.type == "Parameter")
    _copy_edges(edit, body, ids, sources)
    if not _cut_outputs(edit, layer):
        return None
    graph.remove_layer(layer_id)
    return edit.finish(f"hoisted the body of {layer.type} {layer.name!r} (iteration {k})",
                       keep_values=False)


def _body_value(edit: _Edit, param: Layer, value: np.ndarray) -> Value | None:
    """A new model input holding ``value`` for body Parameter ``param``."""
    out = param.outputs[0]
    et = out.precision
    if et is None or et.dtype is None or et.bitwidth < 8 or value.dtype != et.dtype:
        return None
    name = edit.fresh(param.name)
    dims = out.dims if out.dims is not None else tuple(value.shape)
    made = edit.builder.parameter(TensorInfo(et, dims), name, [name])
    edit.feed[name] = np.ascontiguousarray(value)
    return made


def _cut_outputs(edit: _Edit, layer: Layer) -> bool:
    """The layers reading ``layer``'s outputs read stand-ins of their values instead (model
    outputs reading them go); False when a value is not known."""
    graph = edit.graph
    for port in layer.outputs:
        for consumer, to_port in graph.consumers(layer.id, port.id):
            if graph.layer(consumer).type == "Result":
                graph.remove_layer(consumer)
                continue
            made = edit.stand_in((layer.id, port.id))
            if made is None:
                return False
            edit.rewire(consumer, to_port, made)
    return True


def inline_branch(cand: Candidate, layer_id: int, branch: str) -> Candidate | None:
    """The If ``layer_id`` replaced by its ``branch`` (``"then"`` or ``"else"``) body."""
    edit = _Edit(cand)
    graph = edit.graph
    layer = graph.layer(layer_id)
    body = layer.bodies.get(f"{branch}_body")
    if body is None:
        return None
    sources: dict[int, Value] = {}
    produced: dict[int, int] = {}  # If output port id -> body Result id
    for entry in layer.port_maps.get(f"{branch}_port_map", []):
        if entry.kind == "input" and entry.internal_layer_id in body:
            made = _outer_source(edit, layer, entry.external_port_id)
            if made is None:
                return None
            sources[entry.internal_layer_id] = made
        elif entry.kind == "output":
            produced[entry.external_port_id] = entry.internal_layer_id
    if any(p.id not in sources for p in body.parameters()):
        return None
    ids = _copy_layers(edit, body, lambda inner: inner.type in ("Parameter", "Result"))
    _copy_edges(edit, body, ids, sources)
    for port in layer.outputs:
        result = produced.get(port.id)
        src = body.source(result, body.layer(result).inputs[0].id) \
            if result is not None and result in body else None
        if src is None or port.precision is None:
            return None
        value = sources[src[0]] if src[0] in sources else \
            Value(ids[src[0]], src[1], TensorInfo(port.precision, port.dims))
        for consumer, to_port in graph.consumers(layer_id, port.id):
            edit.rewire(consumer, to_port, value)
    graph.remove_layer(layer_id)
    return edit.finish(f"inlined the {branch} branch of If {layer.name!r}", keep_values=False)


def set_trip_count(cand: Candidate, layer_id: int, n: int) -> Candidate | None:
    """Loop ``layer_id`` runs at most ``n`` iterations: its trip count a Const ``n`` (shapes
    to be declared anew: ``redeclare``)."""
    edit = _Edit(cand)
    layer = edit.graph.layer(layer_id)
    port = layer.inputs[0]
    if port.precision is None or port.precision.dtype is None:
        return None
    shape = port.dims if port.dims is not None and all(d >= 0 for d in port.dims) else ()
    made = edit.builder.const(np.full(shape, n, port.precision.dtype), port.precision,
                              name=edit.fresh(f"{layer.name}/trip_count"))
    edit.rewire(layer_id, port.id, made)
    return edit.finish(f"{layer.type} {layer.name!r} runs {n} iteration{'s' * (n != 1)}",
                       keep_values=False)


Holder = tuple[str, str | int]
"""What holds a value the reducer may simplify: ``("input", name)`` or ``("const", id)``."""


def holders(cand: Candidate) -> list[Holder]:
    """The model inputs and the top graph's Consts, inputs first."""
    graph = cand.model.graph
    found: list[Holder] = [("input", name) for name in cand.feed]
    found += [("const", c.id) for c in graph.layers_of_type("Const") if c.const is not None]
    return found


def held_value(cand: Candidate, holder: Holder) -> np.ndarray | None:
    kind, key = holder
    if kind == "input":
        return cand.feed.get(str(key))
    layer = cand.model.graph.layer(int(key))
    try:
        return layer.const_value()
    except ValueError:
        return None


def set_value(cand: Candidate, holder: Holder, value: np.ndarray, what: str
              ) -> Candidate | None:
    """``holder`` holds ``value`` (of its element type; another shape: ``redeclare``)."""
    edit = _Edit(cand)
    kind, key = holder
    if kind == "input":
        name = str(key)
        param = next((p for p in edit.graph.parameters()
                      if tensor_name(p, p.outputs[0] if p.outputs else None) == name), None)
        if param is None:
            return None
        edit.feed[name] = value
        layer = param
    else:
        layer = edit.graph.layer(int(key))
        layer.const = ConstData.from_array(value)
    if layer.shape is not None and tuple(layer.shape) != value.shape:
        static = layer.type == "Const" or all(d >= 0 for d in layer.shape)
        if not static:
            return None  # a dynamic input takes any shape: nothing to declare
        layer.attrs["shape"] = format_shape(value.shape)
        layer.outputs[0].dims = tuple(value.shape)
    return edit.finish(what, keep_values=False)


def redeclare(cand: Candidate, max_iterations: int | None = None) -> Candidate | None:
    """``cand`` with the static dims of its top graph's ports set to what irtool's
    executor computes (after an edit that changed shapes), and its values recorded;
    None when the executor cannot run it."""
    values = record(cand.model, cand.feed, max_iterations=max_iterations, relax=True)
    if values is None:
        return None
    graph = cand.model.graph
    for layer in graph.layers:
        for port in layer.outputs:
            value = values.get((layer.id, port.id))
            if value is not None:
                port.dims = _static_from(port.dims, value.shape)
    for edge in graph.edges():
        src = graph.layer(edge.from_layer).port(edge.from_port)
        dst = graph.layer(edge.to_layer).port(edge.to_port)
        if src is not None and dst is not None and src.dims is not None:
            dst.dims = _static_from(dst.dims, src.dims)
    cand.values = values
    return cand


def _static_from(declared: tuple[int, ...] | None, actual: tuple[int, ...]
                 ) -> tuple[int, ...] | None:
    """``declared`` with each static dim replaced by the one of ``actual`` (same rank)."""
    if declared is None or len(declared) != len(actual):
        return declared
    return tuple(a if d >= 0 else d for d, a in zip(declared, actual))
