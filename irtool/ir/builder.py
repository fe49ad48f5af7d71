"""Building IR graphs in code: every port typed in one place, control flow by role.

``GraphBuilder`` adds layers to a ``Graph`` and gives each input port the type of
the value feeding it and each output port the type it is told (or that its
``infer`` callback works out), so no caller sets ``precision``/``dims`` by hand.
The ONNX frontend, the IR passes and the tests build through it.

Loop-5, TensorIterator-1 and If-8 layers are assembled by ``LoopBuilder``,
``TensorIteratorBuilder`` and ``IfBuilder``, whose methods name the role of each
port-map entry instead of spelling out ``PortMapEntry`` fields::

    body = GraphBuilder()
    i = body.parameter(TensorInfo(I64, ()), "i")
    acc = body.parameter(TensorInfo(F32, (2,)), "acc")
    ...                                        # the body's layers
    loop = net.loop(body.graph)
    loop.trip_count(trip)                      # input 0
    loop.condition(cond)                       # input 1
    loop.carried(a0, acc, acc_result)          # an input, its entry and the back edge
    loop.current_iteration(i)
    loop.execution_condition(keep_going)
    loop.output(acc_result, TensorInfo(F32, (2,)))
    loop.output(step_result, TensorInfo(F32, (-1, 2)), axis=0)   # concatenated
    layer, outputs = loop.build()

Slicing attributes (``start``, ``end``, ``stride``, ``part_size``) are written only
when given; ``PortMapEntry.slicing()`` supplies the spec's defaults for the others.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .graph import (
    BackEdge,
    ConstData,
    Graph,
    Layer,
    Port,
    PortMapEntry,
    Shape,
    TensorInfo,
    format_shape,
)
from .types import ElementType, from_numpy


@dataclass(frozen=True)
class Value:
    """A tensor of the graph being built: output port ``port`` of layer ``layer``."""

    layer: int
    port: int
    info: TensorInfo

    @property
    def element_type(self) -> ElementType:
        return self.info.element_type

    @property
    def shape(self) -> Shape | None:
        return self.info.shape

    @property
    def rank(self) -> int | None:
        return self.info.rank

    @property
    def src(self) -> tuple[int, int]:
        """``(layer, port)``: where the value comes from, as ``Graph.connect`` names it."""
        return self.layer, self.port


Infer = Callable[["GraphBuilder", str, str, Sequence[Value], dict[str, str], "str | None"],
                 list[TensorInfo]]
"""``infer(builder, type, version, inputs, attrs, name)``: the output types of a layer to
add (``builder.const_value`` tells which inputs are constants)."""


def ir_attr(value: Any) -> str:
    """A Python attribute value as the IR writes it: ``true``/``false``, ``1,2,3``."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, ElementType):
        return value.name
    if isinstance(value, (list, tuple, np.ndarray)):
        return ",".join(ir_attr(v) for v in value)
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    return str(int(value)) if isinstance(value, (int, np.integer)) else str(value)


class GraphBuilder:
    """Adds layers with typed ports to one graph (a new one, or ``graph``).

    ``op`` is the one way to add a layer, everywhere (the ONNX translators' ``NodeContext``
    is a ``GraphBuilder`` too). ``infer`` gives the output types of a layer added without
    them (the ONNX frontend asks the opset); without it, ``op`` needs ``outputs``.
    """

    def __init__(self, graph: Graph | None = None, infer: Infer | None = None) -> None:
        self.graph = graph if graph is not None else Graph()
        self.infer = infer

    # -- plain layers ---------------------------------------------------------
    def op(self, type: str, version: str, inputs: Sequence[Value],
           attrs: Mapping[str, Any] | None = None, *,
           outputs: Sequence[TensorInfo] | None = None,
           refine: Sequence[TensorInfo | None] = (), name: str | None = None,
           output_names: Iterable[Iterable[str]] = (), has_data: bool = True) -> list[Value]:
        """Add the layer ``type``-``version`` fed by ``inputs``; returns its output values
        (the layer is ``graph.layer(values[0].layer)``). Attribute values may be Python
        values (see ``ir_attr``).

        ``outputs``: the output types. Without them the builder's ``infer`` works them out,
        and ``refine`` holds what else is known of them (ONNX shape inference's types, by
        output): each inferred type keeps its element type and takes the static dims of
        its ``refine`` entry where the ranks agree, and the entry stands in for an output
        inference cannot tell. ``has_data``: whether the layer writes a ``<data>`` element.
        """
        if outputs is None:
            outputs = self._infer(type, version, inputs,
                                  {k: ir_attr(v) for k, v in (attrs or {}).items()}, name, refine)
        return self._add(type, version, inputs, attrs, outputs, name, output_names,
                         has_data)[1]

    def _infer(self, type: str, version: str, inputs: Sequence[Value], attrs: dict[str, str],
               name: str | None, refine: Sequence[TensorInfo | None]) -> list[TensorInfo]:
        if self.infer is None:
            raise ValueError(f"{type}-{version}: give the output types (this builder "
                             "infers none)")
        if not refine:
            return self.infer(self, type, version, inputs, attrs, name)
        try:
            inferred: list[TensorInfo] | None = self.infer(self, type, version, inputs, attrs,
                                                           name)
        except Exception:  # inference cannot tell here; what else is known may
            inferred = None
        infos = []
        for k, hint in enumerate(refine):
            own = inferred[k] if inferred is not None and k < len(inferred) else None
            info = _refined(own, hint)
            if info is None:  # neither knows: inference's own error says why
                return self.infer(self, type, version, inputs, attrs, name)
            infos.append(info)
        if inferred is not None and len(inferred) > len(infos):
            infos.extend(inferred[len(infos):])
        return infos

    def _add(self, type: str, version: str, inputs: Sequence[Value],
             attrs: Mapping[str, Any] | None, outputs: Sequence[TensorInfo],
             name: str | None = None, output_names: Iterable[Iterable[str]] = (),
             has_data: bool = True) -> tuple[Layer, list[Value]]:
        """Where every layer is made: input ports numbered ``0..n-1`` and output ports
        after them, as OpenVINO numbers them, each typed; inputs connected."""
        lid = self.graph.next_id()
        n = len(inputs)
        names = [tuple(ns) for ns in output_names]
        layer = Layer(
            id=lid,
            name=name or f"{type}_{lid}",
            type=type,
            version=version,
            attrs={k: ir_attr(v) for k, v in (attrs or {}).items()},
            inputs=[Port(i, value.element_type, value.shape) for i, value in enumerate(inputs)],
            outputs=[Port(n + k, info.element_type, info.shape, names[k] if k < len(names)
                          else ()) for k, info in enumerate(outputs)],
            has_data=has_data,
        )
        self.graph.add_layer(layer)
        for i, value in enumerate(inputs):
            self.graph.connect(value.layer, value.port, lid, i)
        return layer, [Value(lid, port.id, info) for port, info in zip(layer.outputs, outputs)]

    def const(self, value: Any, et: ElementType | None = None, name: str | None = None,
              source: tuple[str, int] | None = None) -> Value:
        """A ``Const`` holding ``value`` (converted to ``et``'s dtype when given).
        ``source`` is the file and offset whose bytes ``value`` is (``ConstData.source``)."""
        array = np.asarray(value)
        if et is not None and et.dtype is not None and array.dtype != et.dtype:
            array = array.astype(et.dtype)
            source = None
        et = et or from_numpy(array.dtype)
        info = TensorInfo(et, tuple(array.shape))
        layer, (out,) = self._add("Const", "opset1", [], {
            "element_type": et.name, "shape": ",".join(str(d) for d in array.shape)},
            [info], name)
        layer.const = ConstData.from_array(array, source)
        return out

    def const_value(self, value: Value) -> np.ndarray | None:
        """The array behind ``value`` when a ``Const`` produces it, else None."""
        layer = self.graph.layer(value.layer)
        if layer.type == "Const" and layer.const is not None:
            return layer.const_value()
        return None

    def parameter(self, info: TensorInfo, name: str, tensor_names: Iterable[str] = ()
                  ) -> Value:
        """A ``Parameter`` of ``info``; ``tensor_names`` go on its output port."""
        return self._add("Parameter", "opset1", [], {
            "shape": format_shape(info.shape), "element_type": info.element_type.name},
            [info], name, [tuple(tensor_names)])[1][0]

    def result(self, value: Value, name: str | None = None) -> Layer:
        """A ``Result`` fed by ``value``."""
        return self._add("Result", "opset1", [value], None, [], name)[0]

    def value(self, layer_id: int, port_id: int) -> Value:
        """An existing output port of the graph as a ``Value`` (its declared type)."""
        port = self.graph.layer(layer_id).port(port_id)
        if port is None or port.precision is None:
            raise ValueError(f"layer {layer_id} has no typed port {port_id}")
        return Value(layer_id, port_id, TensorInfo(port.precision, port.dims))

    # -- control flow ---------------------------------------------------------
    def loop(self, body: Graph, name: str | None = None) -> LoopBuilder:
        """A Loop-5 over ``body``, to be described by role and then ``build()``."""
        return LoopBuilder(self, body, name)

    def tensor_iterator(self, body: Graph, name: str | None = None) -> TensorIteratorBuilder:
        """A TensorIterator-1 over ``body``."""
        return TensorIteratorBuilder(self, body, name)

    def if_(self, condition: Value, then_body: Graph, else_body: Graph,
            name: str | None = None) -> IfBuilder:
        """An If-8 choosing ``then_body`` or ``else_body`` by ``condition`` (input 0)."""
        return IfBuilder(self, condition, then_body, else_body, name)


def _refined(inferred: TensorInfo | None, known: TensorInfo | None) -> TensorInfo | None:
    """``inferred`` with the static dims of ``known`` where the ranks agree (its element
    type is what the IR computes); ``known`` where nothing was inferred."""
    if inferred is None:
        return known
    if known is None or known.shape is None:
        return inferred
    if inferred.shape is None:
        return TensorInfo(inferred.element_type, known.shape)
    if len(inferred.shape) != len(known.shape):
        return inferred
    dims = tuple(a if a >= 0 else b for a, b in zip(inferred.shape, known.shape))
    return TensorInfo(inferred.element_type, dims)


def _layer_id(end: Value | Layer | int) -> int:
    """A body Parameter (a ``Value``) or Result (a ``Layer``), or its layer id."""
    if isinstance(end, Value):
        return end.layer
    return end.id if isinstance(end, Layer) else end


@dataclass
class _Output:
    info: TensorInfo
    entries: list[tuple[str, PortMapEntry]]  # (port map name, entry) to get the port id
    names: tuple[str, ...]


class _LayerBuilder:
    """What the three control-flow builders share: the layer's inputs and outputs."""

    type: ClassVar[str]
    version: ClassVar[str]

    def __init__(self, builder: GraphBuilder, name: str | None) -> None:
        self.builder = builder
        self.name = name
        self.inputs: list[Value] = []
        self._outputs: list[_Output] = []
        self._built = False

    def _input(self, value: Value) -> int:
        """Append an input; its port id (input ports are numbered first, from 0)."""
        self.inputs.append(value)
        return len(self.inputs) - 1

    def _output(self, info: TensorInfo, names: Iterable[str]) -> _Output:
        out = _Output(info, [], tuple(names))
        self._outputs.append(out)
        return out

    def _build(self) -> tuple[Layer, list[Value]]:
        if self._built:
            raise ValueError(f"this {self.type} was built already")
        self._built = True
        layer, values = self.builder._add(
            self.type, self.version, self.inputs, None, [o.info for o in self._outputs],
            self.name, [o.names for o in self._outputs], has_data=False)
        for out, port in zip(self._outputs, layer.outputs):
            for _, entry in out.entries:
                entry.external_port_id = port.id
        return layer, values


class _IterationBuilder(_LayerBuilder):
    """Loop and TensorIterator: one body, one ``port_map``, back edges."""

    def __init__(self, builder: GraphBuilder, body: Graph, name: str | None) -> None:
        super().__init__(builder, name)
        self.body = body
        self.port_map: list[PortMapEntry] = []
        self.back_edges: list[BackEdge] = []

    def invariant(self, outer: Value, param: Value | int) -> int:
        """``outer`` is the value of body Parameter ``param`` in every iteration; returns
        the input port."""
        port = self._input(outer)
        self.port_map.append(PortMapEntry("input", port, _layer_id(param)))
        return port

    def sliced(self, outer: Value, param: Value | int, axis: int, *, start: int | None = None,
               end: int | None = None, stride: int | None = None,
               part_size: int | None = None) -> int:
        """Body Parameter ``param`` takes one part of ``outer`` along ``axis`` per
        iteration; returns the input port."""
        port = self._input(outer)
        self.port_map.append(PortMapEntry("input", port, _layer_id(param), axis=axis,
                                          start=start, end=end, stride=stride,
                                          part_size=part_size))
        return port

    def back_edge(self, result: Layer | int, param: Value | int) -> None:
        """Body Result ``result`` feeds body Parameter ``param`` on the next iteration."""
        self.back_edges.append(BackEdge(_layer_id(result), _layer_id(param)))

    def carried(self, initial: Value, param: Value | int, result: Layer | int) -> int:
        """A loop-carried value: ``initial`` on the first iteration, then ``result`` of
        the previous one (``invariant`` plus ``back_edge``); returns the input port."""
        port = self.invariant(initial, param)
        self.back_edge(result, param)
        return port

    def output(self, result: Layer | int, info: TensorInfo, *, axis: int | None = None,
               start: int | None = None, end: int | None = None, stride: int | None = None,
               part_size: int | None = None, names: Iterable[str] = ()) -> int:
        """A layer output of type ``info``: ``result``'s last value, or with ``axis`` its
        values of every iteration concatenated; returns the output's index."""
        entry = PortMapEntry("output", -1, _layer_id(result), axis=axis, start=start, end=end,
                             stride=stride, part_size=part_size)
        self.port_map.append(entry)
        self._output(info, names).entries.append(("port_map", entry))
        return len(self._outputs) - 1

    def build(self) -> tuple[Layer, list[Value]]:
        """Add the layer to the outer graph; returns it and its output values."""
        layer, values = self._build()
        layer.bodies["body"] = self.body
        layer.port_maps["port_map"] = self.port_map
        layer.back_edges = self.back_edges
        return layer, values


class TensorIteratorBuilder(_IterationBuilder):
    """TensorIterator-1: as many iterations as the sliced inputs have parts."""

    type = "TensorIterator"
    version = "opset1"


class LoopBuilder(_IterationBuilder):
    """Loop-5: ``trip_count`` (input 0) and ``condition`` (input 1) come first."""

    type = "Loop"
    version = "opset5"

    def trip_count(self, value: Value) -> None:
        """Input 0: how many iterations at most (negative: no limit)."""
        if self.inputs:
            raise ValueError("the trip count is the Loop's first input")
        self._input(value)

    def condition(self, value: Value) -> None:
        """Input 1: whether the first iteration runs."""
        if len(self.inputs) != 1:
            raise ValueError("the execution condition is the Loop's second input")
        self._input(value)

    def carried_condition(self, param: Value | int, result: Layer | int) -> None:
        """A body Parameter reading the condition: input 1 on the first iteration, the
        ``execution_condition`` Result ``result`` after."""
        self.port_map.append(PortMapEntry("input", 1, _layer_id(param)))
        self.back_edge(result, param)

    def current_iteration(self, param: Value | int) -> None:
        """Body Parameter ``param`` takes the iteration number (0, 1, ...)."""
        self.port_map.append(PortMapEntry("input", -1, _layer_id(param),
                                          purpose="current_iteration"))

    def execution_condition(self, result: Layer | int) -> None:
        """Body Result ``result`` says whether another iteration runs."""
        self.port_map.append(PortMapEntry("output", -1, _layer_id(result),
                                          purpose="execution_condition"))


class IfBuilder(_LayerBuilder):
    """If-8: input 0 is the condition; each branch has its own port map."""

    type = "If"
    version = "opset8"

    def __init__(self, builder: GraphBuilder, condition: Value, then_body: Graph,
                 else_body: Graph, name: str | None) -> None:
        super().__init__(builder, name)
        self._input(condition)
        self.bodies = {"then": then_body, "else": else_body}
        self.port_maps: dict[str, list[PortMapEntry]] = {"then": [], "else": []}
        self._ports: dict[tuple[int, int], int] = {}

    def input(self, outer: Value) -> int:
        """The input port carrying ``outer`` (one port per distinct value)."""
        port = self._ports.get(outer.src)
        if port is None:
            port = self._ports[outer.src] = self._input(outer)
        return port

    def then_input(self, outer: Value, param: Value | int) -> None:
        """``outer`` is the value of then-body Parameter ``param``."""
        self.port_maps["then"].append(PortMapEntry("input", self.input(outer), _layer_id(param)))

    def else_input(self, outer: Value, param: Value | int) -> None:
        """``outer`` is the value of else-body Parameter ``param``."""
        self.port_maps["else"].append(PortMapEntry("input", self.input(outer), _layer_id(param)))

    def output(self, then_result: Layer | int, else_result: Layer | int, info: TensorInfo,
               names: Iterable[str] = ()) -> int:
        """An output of type ``info``: ``then_result`` or ``else_result``, by the branch
        taken; returns the output's index."""
        out = self._output(info, names)
        for branch, result in (("then", then_result), ("else", else_result)):
            entry = PortMapEntry("output", -1, _layer_id(result))
            self.port_maps[branch].append(entry)
            out.entries.append((branch, entry))
        return len(self._outputs) - 1

    def build(self) -> tuple[Layer, list[Value]]:
        """Add the layer to the outer graph; returns it and its output values."""
        layer, values = self._build()
        for branch in ("then", "else"):
            layer.bodies[f"{branch}_body"] = self.bodies[branch]
            layer.port_maps[f"{branch}_port_map"] = self.port_maps[branch]
        return layer, values


__all__ = ["GraphBuilder", "IfBuilder", "Infer", "LoopBuilder", "TensorIteratorBuilder",
           "Value", "ir_attr"]
