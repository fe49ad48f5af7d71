"""What every ONNX translator works with: values, scopes, the graph builder, the registry.

* ``Value``: an IR tensor, i.e. an output port of a layer in one graph, with its
  element type and shape.
* ``GraphBuilder``: adds layers to one IR ``Graph``, filling every port's
  precision and dims (given by the translator, else from ``irtool.opset`` inference).
* ``Scope``: ONNX names visible in one graph. A body scope resolves a name it
  does not define through its parents; the first use of an outer value creates a
  body ``Parameter`` and records a *capture*, which the enclosing control-flow
  translator later wires to an input of its Loop / TensorIterator / If layer.
  Captures chain through any number of nesting levels.
* ``NodeContext``: one ONNX node being translated: inputs as ``Value``s,
  attributes, ONNX-inferred output types, and shortcuts to the builder.
* ``onnx_op``: registers a translator under ``(op_type, since_version)``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import onnx
from onnx import helper as onnx_helper

from ..errors import ConversionError
from ..ir.graph import Graph, Layer, constant
from ..ir.types import ElementType, from_numpy
from ..opset import TensorInfo, make_op
from .protos import node_label


@dataclass(frozen=True)
class Value:
    """An IR tensor: output ``port`` (port id) of layer ``layer`` in the scope's graph."""

    layer: int
    port: int
    info: TensorInfo

    @property
    def element_type(self) -> ElementType:
        return self.info.element_type

    @property
    def shape(self) -> tuple[int, ...] | None:
        return self.info.shape

    @property
    def rank(self) -> int | None:
        return self.info.rank


class GraphBuilder:
    """Adds layers to one IR graph with fully typed ports."""

    def __init__(self, graph: Graph | None = None) -> None:
        self.graph = graph if graph is not None else Graph()

    def op(
        self,
        type: str,
        version: str,
        inputs: Sequence[Value],
        attrs: dict[str, Any] | None = None,
        *,
        outputs: Sequence[TensorInfo] | None = None,
        num_outputs: int | None = None,
        name: str | None = None,
    ) -> list[Value]:
        """Add ``type``-``version`` fed by ``inputs``; returns its output values.

        ``attrs`` values may be Python values (ints, lists, bools); they are
        written as IR strings. Output types are ``outputs`` if given, else
        inferred by the op's ``infer``; a failure to infer raises
        ``ConversionError`` so that no port is left untyped.
        """
        str_attrs = {k: ir_attr(v) for k, v in (attrs or {}).items()}
        infos = list(outputs) if outputs is not None else self._infer(type, version, inputs,
                                                                      str_attrs, name)
        count = num_outputs if num_outputs is not None else len(infos)
        layer = self.graph.add_op(type, version, [(v.layer, v.port) for v in inputs], str_attrs,
                                  name=name, num_outputs=count)
        for port, value in zip(layer.inputs, inputs):
            port.precision = value.element_type
            port.dims = value.shape
        values = []
        for port, info in zip(layer.outputs, infos):
            port.precision = info.element_type
            port.dims = info.shape
            values.append(Value(layer.id, port.id, info))
        return values

    def _infer(self, type: str, version: str, inputs: Sequence[Value], attrs: dict[str, str],
               name: str | None) -> list[TensorInfo]:
        try:
            op = make_op(type, version, attrs)
            return op.infer([v.info for v in inputs], [self.const_value(v) for v in inputs])
        except (KeyError, NotImplementedError, ValueError) as err:
            raise ConversionError(
                f"cannot infer the output type of {type}-{version} from inputs "
                f"{[(str(v.element_type), v.shape) for v in inputs]}: {err}",
                layer=name,
            ) from None

    def const(self, value: Any, et: ElementType | None = None, name: str | None = None) -> Value:
        """A ``Const`` layer holding ``value`` (converted to ``et``'s dtype when given)."""
        array = np.asarray(value)
        if et is not None and et.dtype is not None and array.dtype != et.dtype:
            array = array.astype(et.dtype)
        layer = constant(self.graph, array, name=name, et=et)
        port = layer.outputs[0]
        return Value(layer.id, port.id, TensorInfo(et or from_numpy(array.dtype),
                                                   tuple(array.shape)))

    def const_value(self, value: Value) -> np.ndarray | None:
        """The array behind ``value`` when a ``Const`` produces it, else None."""
        layer = self.graph.layer(value.layer)
        if layer.type == "Const" and layer.const is not None:
            return layer.const_value()
        return None

    def parameter(self, info: TensorInfo, name: str, tensor_names: Iterable[str] = ()) -> Value:
        """A ``Parameter`` of ``info``; ``tensor_names`` go on its output port."""
        layer = self.graph.add_op("Parameter", "opset1", [], {
            "shape": _shape_attr(info.shape),
            "element_type": info.element_type.name,
        }, name=name, output_names=[tuple(tensor_names)])
        port = layer.outputs[0]
        port.precision = info.element_type
        port.dims = info.shape
        return Value(layer.id, port.id, info)

    def result(self, value: Value, name: str | None = None) -> Layer:
        """A ``Result`` fed by ``value``."""
        layer = self.graph.add_op("Result", "opset1", [(value.layer, value.port)], name=name,
                                  num_outputs=0)
        layer.inputs[0].precision = value.element_type
        layer.inputs[0].dims = value.shape
        return layer


def _shape_attr(shape: tuple[int, ...] | None) -> str:
    if shape is None:
        return "..."
    return ",".join("?" if d < 0 else str(d) for d in shape)


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


SMALL_CONST = 64
"""Constants up to this many elements are copied into bodies instead of captured."""


@dataclass
class Capture:
    """An outer value used inside a body: ``outer`` lives in the parent scope's graph,
    ``inner`` is the body Parameter standing for it."""

    name: str
    outer: Value
    inner: Value


@dataclass
class Scope:
    """ONNX names visible in one IR graph, with the parent scope for captures."""

    builder: GraphBuilder
    parent: Scope | None = None
    values: dict[str, Value] = field(default_factory=dict)
    captures: list[Capture] = field(default_factory=list)
    description: str = "main graph"

    @property
    def graph(self) -> Graph:
        return self.builder.graph

    def define(self, name: str, value: Value) -> None:
        self.values[name] = value

    def lookup(self, name: str) -> Value | None:
        """The value called ``name`` here, capturing it from an enclosing scope if needed."""
        if name in self.values:
            return self.values[name]
        if self.parent is None:
            return None
        outer = self.parent.lookup(name)
        if outer is None:
            return None
        known = self.parent.builder.const_value(outer)
        if known is not None and known.size <= SMALL_CONST:
            # A small constant (axes, shapes, positions) is copied into the body rather
            # than captured, so translators there still see its value.
            inner = self.builder.const(known, outer.element_type)
            self.values[name] = inner
            return inner
        inner = self.builder.parameter(outer.info, name=f"{name}/capture", tensor_names=())
        self.captures.append(Capture(name, outer, inner))
        self.values[name] = inner
        return inner

    def child(self, description: str) -> Scope:
        """A new scope for a body graph nested in this one."""
        return Scope(GraphBuilder(), parent=self, description=description)


class Conversion(Protocol):
    """What the conversion of the whole model does for a translator (the ``Converter``)."""

    def translate_body(self, graph: onnx.GraphProto, scope: Scope, what: str) -> list[Value]:
        ...

    def sequence_element(self, name: str) -> TensorInfo | None:
        ...


@dataclass
class NodeContext:
    """One ONNX node under translation."""

    node: onnx.NodeProto
    scope: Scope
    opset: int
    conversion: Conversion
    output_infos: list[TensorInfo | None] = field(default_factory=list)

    @property
    def name(self) -> str:
        return node_label(self.node)

    def translate_body(self, graph: onnx.GraphProto, scope: Scope, what: str) -> list[Value]:
        """Translate the nodes of ``graph`` (a body or branch) into ``scope``, whose caller
        has defined the graph's inputs; returns the values of the graph's outputs."""
        return self.conversion.translate_body(graph, scope, what)

    def sequence_element(self, name: str) -> TensorInfo | None:
        """The element type of the empty sequence called ``name``, when the model says."""
        return self.conversion.sequence_element(name)

    def for_node(self, node: onnx.NodeProto, scope: Scope, opset: int,
                 output_infos: list[TensorInfo | None]) -> NodeContext:
        """A context for another node of the same conversion (a function body's)."""
        return NodeContext(node, scope, opset, self.conversion, output_infos)

    @property
    def builder(self) -> GraphBuilder:
        return self.scope.builder

    @property
    def num_inputs(self) -> int:
        return len(self.node.input)

    def input(self, index: int) -> Value | None:
        """Input ``index`` as a Value; None when absent or given as the empty name."""
        if index >= len(self.node.input) or not self.node.input[index]:
            return None
        name = self.node.input[index]
        value = self.scope.lookup(name)
        if value is None:
            raise self.error(f"input {name!r} is not defined in this or any enclosing graph")
        return value

    def required_input(self, index: int) -> Value:
        value = self.input(index)
        if value is None:
            raise self.error(f"input {index} is required")
        return value

    @property
    def inputs(self) -> list[Value | None]:
        return [self.input(i) for i in range(len(self.node.input))]

    def attr(self, name: str, default: Any = None) -> Any:
        """Attribute value: ints, floats, decoded strings, tensors as numpy, GraphProto."""
        for a in self.node.attribute:
            if a.name == name:
                value = onnx_helper.get_attribute_value(a)
                if isinstance(value, bytes):
                    return value.decode()
                if isinstance(value, list) and value and isinstance(value[0], bytes):
                    return [v.decode() for v in value]
                if isinstance(value, onnx.TensorProto):
                    return onnx.numpy_helper.to_array(value)
                return value
        return default

    def has_attr(self, name: str) -> bool:
        return any(a.name == name for a in self.node.attribute)

    def output_info(self, index: int) -> TensorInfo | None:
        """What ONNX shape inference knows about output ``index``."""
        return self.output_infos[index] if index < len(self.output_infos) else None

    def op(self, type: str, version: str, inputs: Sequence[Value],
           attrs: dict[str, Any] | None = None, **kwargs: Any) -> list[Value]:
        kwargs.setdefault("name", self.node.name or None)
        try:
            return self.builder.op(type, version, inputs, attrs, **kwargs)
        except ConversionError as err:
            raise self.error(err.message) from None

    def op1(self, type: str, version: str, inputs: Sequence[Value],
            attrs: dict[str, Any] | None = None, **kwargs: Any) -> Value:
        """``op`` for single-output operations."""
        return self.op(type, version, inputs, attrs, **kwargs)[0]

    def const(self, value: Any, et: ElementType | None = None) -> Value:
        return self.builder.const(value, et)

    def const_value(self, value: Value | None) -> np.ndarray | None:
        return None if value is None else self.builder.const_value(value)

    def error(self, message: str) -> ConversionError:
        return ConversionError(f"{self.node.op_type}: {message}", node=self.name)


Translator = Callable[[NodeContext], Sequence[Value | None]]
_TRANSLATORS: dict[str, dict[int, Translator]] = {}


def onnx_op(op_type: str, *since_versions: int) -> Callable[[Translator], Translator]:
    """Register a translator for ONNX ``op_type`` (domain ai.onnx) at each ``since_version``.

    The translator returns one ``Value`` (or None for an absent optional output)
    per ONNX output.
    """

    def deco(fn: Translator) -> Translator:
        versions = _TRANSLATORS.setdefault(op_type, {})
        for v in since_versions:
            if v in versions and versions[v] is not fn:
                raise ValueError(f"ONNX {op_type}-{v} has two translators")
            versions[v] = fn
        return fn

    return deco


def find_translator(op_type: str, opset: int) -> Translator | None:
    """The translator for ``op_type`` in a model of ``opset``: the newest since-version <= opset."""
    versions = _TRANSLATORS.get(op_type)
    if not versions:
        return None
    usable = [v for v in versions if v <= opset]
    return versions[max(usable)] if usable else None


def translators() -> dict[str, list[int]]:
    """Every registered ONNX op with its since-versions."""
    return {op: sorted(vs) for op, vs in sorted(_TRANSLATORS.items())}
