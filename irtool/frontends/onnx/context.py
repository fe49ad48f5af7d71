"""What every ONNX translator works with: values, scopes, the graph builder, the registry.

* ``Value`` and ``GraphBuilder`` come from ``irtool.ir.builder``: an IR tensor,
  and the builder that adds layers with typed ports; ``frontend_builder`` makes
  one that infers output types with ``irtool.opset`` when a translator gives none.
* ``Scope``: ONNX names visible in one graph. A body scope resolves a name it
  does not define through its parents; the first use of an outer value creates a
  body ``Parameter`` and records a *capture*, which the enclosing control-flow
  translator later wires to an input of its Loop / TensorIterator / If layer.
  Captures chain through any number of nesting levels.
* ``NodeContext``: one ONNX node being translated: inputs as ``Value``s,
  attributes, ONNX-inferred output types; it is itself the ``GraphBuilder`` a translator
  adds layers with (``ctx.op``, the one way to add a layer), naming them after the node
  and reporting failures as the node's ``ConversionError``.
* ``onnx_op``: registers a translator under ``(op_type, since_version)``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import onnx
from onnx import helper as onnx_helper

from ...core.errors import ConversionError
from ...core.registry import Registry
from ...ir.builder import GraphBuilder, Value, ir_attr
from ...ir.graph import Graph
from ...ir.types import ElementType
from ...opset import TensorInfo, make_op
from .external_data import ExternalData
from .protos import node_label

__all__ = ["Capture", "Conversion", "GraphBuilder", "NodeContext", "Scope", "Translator",
           "Value", "find_translator", "frontend_builder", "ir_attr", "onnx_op", "qualified",
           "translators"]


def frontend_builder(graph: Graph | None = None) -> GraphBuilder:
    """A ``GraphBuilder`` that infers output types with ``irtool.opset`` when a
    translator does not give them."""
    return GraphBuilder(graph, infer=_infer)


def _infer(builder: GraphBuilder, type: str, version: str, inputs: Sequence[Value],
           attrs: dict[str, str], name: str | None) -> list[TensorInfo]:
    """The op's own inference; a failure is a ``ConversionError``, so that no port is
    left untyped."""
    try:
        op = make_op(type, version, attrs)
        return op.infer([v.info for v in inputs], [builder.const_value(v) for v in inputs])
    except (KeyError, NotImplementedError, ValueError) as err:
        raise ConversionError(
            f"cannot infer the output type of {type}-{version} from inputs "
            f"{[(str(v.element_type), v.shape) for v in inputs]}: {err}",
            layer=name,
        ) from None


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
    opset: int | None = None
    """The ai.onnx version of the nodes here when not the model's (a local function's)."""
    depth: int = 0
    """How many local function calls this scope is nested in."""
    ranges: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    """Values of this scope known to lie in ``[low, high]`` whatever the inputs, by source
    ``(layer, port)``: a Loop body's iteration number under a constant trip count."""

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
        # Two names for one outer value (a Loop folded away passes its initial value on)
        # share one Parameter: a layer takes each outer port once.
        shared = next((c.inner for c in self.captures
                       if (c.outer.layer, c.outer.port) == (outer.layer, outer.port)), None)
        if shared is None:
            shared = self.builder.parameter(outer.info, name=f"{name}/capture",
                                            tensor_names=())
            self.captures.append(Capture(name, outer, shared))
        self.values[name] = shared
        return shared

    def child(self, description: str) -> Scope:
        """A new scope for a body graph nested in this one."""
        return Scope(frontend_builder(), parent=self, description=description,
                     opset=self.opset, depth=self.depth)


class Conversion(Protocol):
    """What the conversion of the whole model does for a translator (the ``Converter``)."""

    def translate_body(self, graph: onnx.GraphProto, scope: Scope, what: str) -> list[Value]:
        ...

    def sequence_element(self, name: str) -> TensorInfo | None:
        ...

    def deferred_empty(self, name: str) -> bool:
        """Is ``name`` an empty sequence that only starts appended Loop carries?"""
        ...

    def reads(self, name: str) -> list[tuple[onnx.NodeProto | None, int]]:
        """Every read of ``name`` in the model (``sequences.name_uses``)."""
        ...

    def tensor(self, tensor: onnx.TensorProto, what: str,
               fail: Callable[[str], Exception] | None = None) -> np.ndarray:
        """``tensor``'s values, external data included (``tensor_array``)."""
        ...

    def file_slice(self, array: np.ndarray) -> tuple[str, int] | None:
        """The file and offset whose bytes ``array`` is, when ``tensor`` gave it a view of
        an ONNX file (``ConstData.source``)."""
        ...

    concatenated: dict[str, int]
    """Sequences a Loop holds concatenated along this axis instead of stacked."""


@dataclass
class NodeContext(GraphBuilder):
    """One ONNX node under translation, and the builder its translator adds layers with:
    a ``GraphBuilder`` over the scope's graph whose layers are named after the node, whose
    output types are inferred with ``irtool.opset`` (refined where asked with ONNX shape
    inference's: ``refine=ctx.onnx_types(0)``), and whose failures are the node's."""

    node: onnx.NodeProto
    scope: Scope
    opset: int
    conversion: Conversion
    output_infos: list[TensorInfo | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        GraphBuilder.__init__(self, self.scope.graph, infer=_infer)

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

    def flag(self, name: str, default: int) -> bool:
        """A 0/1 attribute. Any other value is refused: onnxruntime and ONNX's reference
        read only 1 as true, OpenVINO's frontend any non-zero value."""
        value = self.attr(name, default)
        if value not in (0, 1):
            raise self.error(f"attribute {name!r} must be 0 or 1, not {value!r}")
        return bool(value)

    def attr(self, name: str, default: Any = None) -> Any:
        """Attribute value: ints, floats, decoded strings, tensors as numpy, GraphProto."""
        for a in self.node.attribute:
            if a.name == name:
                try:
                    value = onnx_helper.get_attribute_value(a)
                    if isinstance(value, bytes):
                        return value.decode()
                    if isinstance(value, list) and value and isinstance(value[0], bytes):
                        return [v.decode() for v in value]
                    if isinstance(value, onnx.TensorProto):
                        return self.tensor(value, f"attribute {name!r}")
                except (ValueError, TypeError) as err:  # undecodable text
                    text = (str(err).strip().splitlines() or [""])[0]
                    raise self.error(f"cannot read attribute {name!r}: "
                                     f"{type(err).__name__}: {text}") from None
                return value
        return default

    def tensor(self, tensor: onnx.TensorProto, what: str) -> np.ndarray:
        """A tensor attribute as numpy (see ``tensor_array``)."""
        return self.conversion.tensor(tensor, what, self.error)

    def has_attr(self, name: str) -> bool:
        return any(a.name == name for a in self.node.attribute)

    def output_info(self, index: int) -> TensorInfo | None:
        """What ONNX shape inference knows about output ``index``."""
        return self.output_infos[index] if index < len(self.output_infos) else None

    def onnx_types(self, *indices: int | None) -> list[TensorInfo | None]:
        """What ONNX shape inference says of the node's outputs ``indices`` (None: an IR
        output that is no ONNX output), for ``op(..., refine=...)``."""
        return [None if i is None else self.output_info(i) for i in indices]

    def op(self, type: str, version: str, inputs: Sequence[Value],
           attrs: Mapping[str, Any] | None = None, *,
           outputs: Sequence[TensorInfo] | None = None,
           refine: Sequence[TensorInfo | None] = (), name: str | None = None,
           output_names: Iterable[Iterable[str]] = (), has_data: bool = True) -> list[Value]:
        """``GraphBuilder.op``, the layer named after the node unless ``name`` is given."""
        try:
            return super().op(type, version, inputs, attrs, outputs=outputs, refine=refine,
                              name=name or self.node.name or None, output_names=output_names,
                              has_data=has_data)
        except ConversionError as err:
            raise self.error(err.message) from None

    def const(self, value: Any, et: ElementType | None = None, name: str | None = None,
              source: tuple[str, int] | None = None) -> Value:
        """``GraphBuilder.const``; an array read from the ONNX file keeps its place there
        (``ConstData.source``)."""
        if source is None and isinstance(value, np.ndarray):
            source = self.conversion.file_slice(value)
        return super().const(value, et, name, source)

    def const_value(self, value: Value | None) -> np.ndarray | None:
        return None if value is None else super().const_value(value)

    def error(self, message: str) -> ConversionError:
        return ConversionError(f"{self.node.op_type}: {message}", node=self.name)


Translator = Callable[[NodeContext], Sequence[Value | None]]
MAX_DENSE_BYTES = 1 << 30
"""The largest array a sparse tensor may expand to: its dims are all a file needs to ask
for any amount of memory."""


def tensor_array(tensor: onnx.TensorProto, what: str, fail: Callable[[str], Exception],
                 external: ExternalData | None = None) -> np.ndarray:
    """``tensor`` as numpy; one its data does not fill, or of an unknown type, raises
    ``fail(message)`` naming ``what`` instead of numpy's or onnx's own exception. An
    external tensor is read through ``external`` (lazily, read-only)."""
    if onnx.external_data_helper.uses_external_data(tensor):
        if external is None:
            raise fail(f"{what} is in an external data file, and no folder is known to "
                       "read it from")
        return external.array(tensor, what, fail)
    try:
        return onnx.numpy_helper.to_array(tensor)
    except Exception as err:  # ValueError, TypeError, KeyError: numpy_helper's words
        text = (str(err).strip().splitlines() or [""])[0]
        raise fail(f"cannot read {what}: {type(err).__name__}: {text}") from None


def dense_array(sparse: onnx.SparseTensorProto, fail: Callable[[str], Exception]
                ) -> np.ndarray:
    """A sparse tensor (linear or coordinate indices) as a dense array, its size checked
    before anything is allocated."""
    values = tensor_array(sparse.values, "a sparse tensor's values", fail)
    indices = tensor_array(sparse.indices, "a sparse tensor's indices", fail)
    dims = tuple(sparse.dims)
    size = int(np.prod(dims, dtype=object))
    if any(d < 0 for d in dims) or size * values.dtype.itemsize > MAX_DENSE_BYTES:
        raise fail(f"a sparse tensor of dims {list(dims)} would not fit in "
                   f"{MAX_DENSE_BYTES >> 30} GiB dense")
    out = np.zeros(size, dtype=values.dtype)
    try:
        if indices.ndim == 2:  # coordinates -> linear indices
            indices = np.ravel_multi_index(tuple(indices.T), dims) if indices.size else indices
        out[np.asarray(indices, dtype=np.int64).ravel()] = values.ravel()
    except (ValueError, IndexError) as err:
        raise fail(f"a sparse tensor's indices do not fit its dims {list(dims)}: "
                   f"{err}") from None
    return out.reshape(dims)


_TRANSLATORS: Registry[Translator] = Registry("ONNX ")


def qualified(op_type: str, domain: str = "") -> str:
    """The registry's name of an operator: bare for ai.onnx, ``domain:op_type`` otherwise."""
    return op_type if domain in ("", "ai.onnx") else f"{domain}:{op_type}"


def onnx_op(op_type: str, *since_versions: int, domain: str = ""
            ) -> Callable[[Translator], Translator]:
    """Register a translator for ONNX ``op_type`` of ``domain`` (ai.onnx unless given, e.g.
    ``ai.onnx.ml``) at each ``since_version`` of that domain's opset.

    The translator returns one ``Value`` (or None for an absent optional output)
    per ONNX output.
    """

    def deco(fn: Translator) -> Translator:
        for v in since_versions:
            _TRANSLATORS.add(qualified(op_type, domain), v, fn)
        return fn

    return deco


def find_translator(op_type: str, opset: int, domain: str = "") -> Translator | None:
    """The translator for ``op_type`` of ``domain`` in a model importing ``opset`` of that
    domain: the newest since-version <= opset."""
    return _TRANSLATORS.find(qualified(op_type, domain), opset)


def translators() -> dict[str, list[int]]:
    """Every registered ONNX op (``qualified`` names) with its since-versions."""
    found: dict[str, list[int]] = {}
    for op, version, _ in _TRANSLATORS:
        if isinstance(version, int):
            found.setdefault(op, []).append(version)
    return {op: sorted(vs) for op, vs in sorted(found.items())}
