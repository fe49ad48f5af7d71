"""The in-memory IR: ``Model``, ``Graph``, ``Layer``, ``Port``, port maps, back edges.

A ``Graph`` wraps a ``networkx.MultiDiGraph`` whose nodes are layer ids and whose
edges carry ``from_port``/``to_port``. Everything an IR file says is kept, so a
read-then-write round trip loses nothing: attribute values stay the strings the
file had (``Layer.attrs``), and anything irtool has no model for (extra XML
attributes, ``rt_info`` trees, unknown child elements) rides along as data.
"""

from __future__ import annotations

import copy
import heapq
from collections.abc import Container, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, NamedTuple

import networkx as nx
import numpy as np

from ..core.scopes import body_scope, layer_path
from .edits import (
    AS_TUPLE,
    NESTED,
    EditedDict,
    EditedList,
    EditedMultiDiGraph,
    Observed,
    ir_dataclass,
)
from .types import ElementType, element_type, from_numpy, unpack

if TYPE_CHECKING:  # the buffer protocol's type (typing_extensions' stubs come with mypy)
    from typing_extensions import Buffer

Shape = tuple[int, ...]
"""Static or partly dynamic shape: ``-1`` marks a dynamic dimension."""


@dataclass(frozen=True)
class TensorInfo:
    """Element type and shape of a value; ``shape`` None = dynamic rank, -1 = dynamic dim."""

    element_type: ElementType
    shape: Shape | None

    @property
    def is_static(self) -> bool:
        return self.shape is not None and all(d >= 0 for d in self.shape)

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    @classmethod
    def of(cls, array: np.ndarray) -> TensorInfo:
        return cls(from_numpy(array.dtype), tuple(array.shape))


@ir_dataclass
class RTNode(Observed):
    """One element of an ``rt_info`` tree (or any XML element irtool does not model).

    Kept generic so the IR layer stays free of XML: tag, attributes in file order,
    children, text.
    """

    tag: str
    attrs: dict[str, str] = field(default_factory=EditedDict)
    children: list[RTNode] = field(default_factory=EditedList)
    text: str | None = None


@ir_dataclass
class Port(Observed):
    """An input or output port of a layer."""

    _STORED = {"dims": AS_TUPLE, "names": AS_TUPLE}

    id: int
    precision: ElementType | None = None
    dims: Shape | None = ()
    names: tuple[str, ...] = ()
    extra: dict[str, str] = field(default_factory=EditedDict)
    rt_info: list[RTNode] | None = None
    line: int | None = None

    @property
    def rank(self) -> int | None:
        return None if self.dims is None else len(self.dims)


def port_dtype(port: Port) -> np.dtype | None:
    """The numpy dtype a value on ``port`` must have, or None (nothing to check)."""
    et = port.precision
    if et is None or not hasattr(et, "kind") or et.kind in ("dynamic", "string"):
        return None
    if et.dtype is None or et.bitwidth < 8:
        return None
    return et.dtype


def port_dims(port: Port) -> tuple[int, ...] | None:
    """The dims a value on ``port`` must have (-1: any), or None (rank unknown)."""
    return tuple(port.dims) if port.dims else None


def mismatch(value: Any, dtype: np.dtype | None, dims: tuple[int, ...] | None) -> str | None:
    """What is wrong with ``value`` against the declaration, or None."""
    got_dtype = getattr(value, "dtype", None)
    shape = getattr(value, "shape", None)
    if got_dtype is None or shape is None:
        return f"computed a {type(value).__name__}, not a tensor"
    if dtype is not None and got_dtype != dtype:
        return "element type"
    if dims is not None and (len(shape) != len(dims)
                             or any(d >= 0 and d != s for d, s in zip(dims, shape))):
        return "shape"
    return None


@ir_dataclass
class PortMapEntry(Observed):
    """One ``<input>`` or ``<output>`` of a ``port_map`` (Loop, TensorIterator, If).

    ``external_port_id`` is a port id of the outer layer (``-1``: not connected,
    used with ``purpose``); ``internal_layer_id`` a body Parameter (inputs) or
    Result (outputs). ``axis`` slices an input / concatenates an output.
    """

    kind: str  # "input" | "output"
    external_port_id: int
    internal_layer_id: int
    axis: int | None = None
    start: int | None = None
    end: int | None = None
    stride: int | None = None
    part_size: int | None = None
    purpose: str | None = None
    extra: dict[str, str] = field(default_factory=EditedDict)
    line: int | None = None

    def slicing(self) -> Slicing:
        """``start``, ``end``, ``stride`` and ``part_size`` with the spec's defaults (0, -1,
        1, 1) for what the entry leaves out, as OpenVINO's reader takes them."""
        return Slicing(0 if self.start is None else self.start,
                       -1 if self.end is None else self.end,
                       1 if self.stride is None else self.stride,
                       1 if self.part_size is None else self.part_size)


class Slicing(NamedTuple):
    """How a sliced input is cut, or a concatenated output joined (see ``PortMapEntry``)."""

    start: int
    end: int
    stride: int
    part_size: int


def sliced_range(dim: int, start: int, end: int, stride: int) -> tuple[int, int]:
    """The half-open range ``[lo, hi)`` of a dimension of ``dim`` elements that a port
    map's ``start`` and ``end`` name, as OpenVINO (its core and CPU plugin) and irtool's
    runtime read them: ``end`` exclusive, a negative value counted from one past the end
    (``-1`` is ``dim``), and ``start`` the upper bound when ``stride`` is negative. The
    range does not fit when ``lo < 0`` or ``hi > dim``, and runs away from its end when
    ``lo > hi``. (The spec's words, "the last index", would make ``end`` inclusive; the
    two readings agree on every range OpenVINO runs, see ``validation.control_flow``.)"""
    first = start + dim + 1 if start < 0 else start
    last = end + dim + 1 if end < 0 else end
    return (first, last) if stride > 0 else (last, first)


@ir_dataclass
class BackEdge(Observed):
    """A body Result whose value feeds a body Parameter on the next iteration."""

    from_layer: int
    to_layer: int
    extra: dict[str, str] = field(default_factory=EditedDict)
    line: int | None = None


class ConstData(Observed):
    """The bytes of a ``Const``: a lazy view into a .bin, or bytes irtool made.

    ``source``, when set, is a file and offset holding the same bytes (an ONNX tensor
    the Const was read from): ``save`` copies them from there without reading them into
    memory."""

    __slots__ = ("_buffer", "offset", "size", "source")
    _buffer: Buffer
    offset: int
    size: int
    source: tuple[str, int] | None

    def __init__(self, buffer: Buffer, offset: int = 0,
                 size: int | None = None, source: tuple[str, int] | None = None) -> None:
        # Making a ConstData is no edit (see ``edits``): its fields are set directly.
        init = object.__setattr__
        init(self, "_buffer", buffer)
        init(self, "offset", offset)
        init(self, "size", len(memoryview(buffer).cast("B")) - offset if size is None else size)
        init(self, "source", source)

    @classmethod
    def from_array(cls, array: np.ndarray, source: tuple[str, int] | None = None
                   ) -> ConstData:
        """Bytes of a numpy array in C order (strings use OpenVINO's packed layout);
        ``source``: see the class (kept only when the array's own bytes are used)."""
        array = np.asarray(array)
        if array.dtype.kind in ("U", "S", "O"):
            return cls(pack_strings(array))
        contiguous = np.ascontiguousarray(array)
        if _unchangeable(contiguous):
            # Read-only all the way down (as numpy_helper gives ONNX tensors, or a view of
            # an ONNX file): nothing can change it, so the array itself is the buffer and a
            # large weight is not copied again.
            return cls(contiguous.reshape(-1).view(np.uint8),
                       source=source if contiguous is array else None)
        return cls(contiguous.tobytes())

    def view(self) -> memoryview:
        """The bytes as a read-only memoryview, without copying them."""
        return memoryview(self._buffer).cast("B")[self.offset:self.offset + self.size] \
            .toreadonly()

    def tobytes(self) -> bytes:
        return bytes(self.view())

    def to_numpy(self, et: ElementType, shape: Shape) -> np.ndarray:
        """The data as an array of ``shape``; sub-byte types unpack to one byte each.
        Plain types are a read-only view of the bytes, not a copy."""
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if et.kind == "string":
            return unpack_strings(self.tobytes(), count).reshape(shape)
        if et.dtype is None or et.bitwidth < 8:
            return unpack(self.tobytes(), et, count).reshape(shape)
        return np.frombuffer(self.view(), dtype=et.dtype, count=count).reshape(shape)


def _unchangeable(array: np.ndarray) -> bool:
    """Can nobody write ``array``'s bytes? Not when it, or an array or buffer under it, is
    writable: a read-only view of a writable array changes when that array does."""
    base: object = array
    while isinstance(base, np.ndarray):
        if base.flags.writeable:
            return False
        base = base.base
    if isinstance(base, memoryview):
        return base.readonly
    return not isinstance(base, bytearray)


def pack_strings(array: np.ndarray) -> bytes:
    """OpenVINO's string tensor layout: i32 count, i32 offsets (count + 1, from 0), then
    the bytes (UTF-8; surrogate escapes turn back into the bytes they stand for)."""
    items = [s if isinstance(s, bytes) else str(s).encode("utf-8", "surrogateescape")
             for s in np.asarray(array).ravel()]
    ends = np.cumsum([len(s) for s in items], dtype=np.int64).astype(np.int32)
    header = np.concatenate([[len(items), 0], ends]).astype(np.int32) if items else \
        np.array([0], dtype=np.int32)
    return header.tobytes() + b"".join(items)


def string_layout_problem(raw: bytes | memoryview, count: int) -> str | None:
    """What is wrong with ``raw`` as the packed layout of ``count`` strings, or None."""
    if count == 0:
        return None
    header_size = 4 * (count + 2)
    if len(raw) < header_size:
        return (f"{len(raw)} bytes cannot hold the header of {count} strings "
                f"({header_size} bytes)")
    header = np.frombuffer(raw, dtype="<i4", count=count + 2)
    if int(header[0]) != count:
        return f"the data says it holds {int(header[0])} strings, the shape {count}"
    offsets = header[1:].astype(np.int64)
    if offsets[0] != 0 or (np.diff(offsets) < 0).any():
        return "its string offsets do not start at 0 and grow"
    if header_size + offsets[-1] > len(raw):
        return (f"its strings end at byte {header_size + int(offsets[-1])}, past its "
                f"{len(raw)} bytes")
    return None


def unpack_strings(raw: bytes, count: int) -> np.ndarray:
    """The strings of OpenVINO's packed layout (see ``pack_strings``) as an object array."""
    if count == 0:
        return np.empty(0, dtype=object)
    problem = string_layout_problem(raw, count)
    if problem:
        raise ValueError(f"string data: {problem}")
    offsets = np.frombuffer(raw, dtype="<i4", count=count + 2)[1:].tolist()
    begin = 4 * (count + 2)
    out = np.empty(count, dtype=object)
    for i in range(count):
        out[i] = raw[begin + offsets[i]:begin + offsets[i + 1]].decode("utf-8",
                                                                      "surrogateescape")
    return out


@ir_dataclass
class Layer(Observed):
    """One operation. ``attrs`` are the ``<data>`` attributes as written in the IR.

    Control-flow layers own sub-graphs: ``bodies`` (``"body"`` for Loop and
    TensorIterator; ``"then_body"``/``"else_body"`` for If), ``port_maps`` under
    the matching names, and ``back_edges``.
    """

    _STORED = {"port_maps": NESTED}

    id: int
    name: str
    type: str
    version: str
    attrs: dict[str, str] = field(default_factory=EditedDict)
    inputs: list[Port] = field(default_factory=EditedList)
    outputs: list[Port] = field(default_factory=EditedList)
    const: ConstData | None = None
    bodies: dict[str, Graph] = field(default_factory=EditedDict)
    port_maps: dict[str, list[PortMapEntry]] = field(default_factory=EditedDict)
    back_edges: list[BackEdge] = field(default_factory=EditedList)
    extra: dict[str, str] = field(default_factory=EditedDict)
    rt_info: list[RTNode] | None = None
    unknown: list[RTNode] = field(default_factory=EditedList)
    has_data: bool = True
    line: int | None = None
    # The tags of the layer's child elements in file order (None: made in code). The writer
    # follows it, so a round trip keeps e.g. an <rt_info> before or after <data>.
    child_order: tuple[str, ...] | None = None

    def input(self, index: int) -> Port:
        return self.inputs[index]

    def output(self, index: int) -> Port:
        return self.outputs[index]

    def port(self, port_id: int) -> Port | None:
        """The input or output port with this id."""
        for p in self.inputs:
            if p.id == port_id:
                return p
        for p in self.outputs:
            if p.id == port_id:
                return p
        return None

    def input_index(self, port_id: int) -> int | None:
        return next((i for i, p in enumerate(self.inputs) if p.id == port_id), None)

    def output_index(self, port_id: int) -> int | None:
        return next((i for i, p in enumerate(self.outputs) if p.id == port_id), None)

    @property
    def element_type(self) -> ElementType | None:
        """``element_type`` of a Parameter or Const."""
        value = self.attrs.get("element_type")
        return element_type(value) if value is not None else None

    @property
    def shape(self) -> Shape | None:
        """The ``shape`` attribute of a Parameter or Const (``None``: dynamic rank)."""
        return parse_shape(self.attrs.get("shape", ""))

    def const_value(self) -> np.ndarray:
        """The value of a Const as a numpy array."""
        if self.const is None:
            raise ValueError(f"layer {self.id} {self.name!r} has no constant data")
        et = self.element_type
        shape = self.shape
        if et is None or shape is None or any(d < 0 for d in shape):
            raise ValueError(f"Const {self.name!r} needs a static shape and element type")
        return self.const.to_numpy(et, shape)


def parse_shape(text: str) -> Shape | None:
    """``"2,3"`` -> ``(2, 3)``; ``"?"`` and intervals like ``"1..10"`` -> ``-1``;
    ``"..."`` (dynamic rank) -> ``None``; ``""`` -> ``()``."""
    text = text.strip()
    if text in ("...", "[...]"):
        return None
    text = text.strip("[]")
    if not text:
        return ()
    dims = []
    for part in text.split(","):
        part = part.strip()
        dims.append(int(part) if part.lstrip("-").isdigit() else -1)
    return tuple(dims)


def format_shape(shape: Shape | None) -> str:
    """A shape as the IR's ``shape`` attribute spells it: ``2,?``; ``...``: dynamic rank."""
    if shape is None:
        return "..."
    return ",".join("?" if d < 0 else str(d) for d in shape)


def shape_text(shape: Shape | None) -> str:
    """A shape as messages show it: ``[2,?]`` (``?``: a dynamic dim; ``[...]``: rank)."""
    return f"[{format_shape(shape)}]"


class Edge(NamedTuple):
    from_layer: int
    from_port: int
    to_layer: int
    to_port: int


class Graph(Observed):
    """A (sub-)graph of layers on a ``networkx.MultiDiGraph``.

    Node = layer id with the ``Layer`` under ``"layer"``; edge =
    ``from_layer -> to_layer`` with ``from_port``/``to_port`` (and the XML
    ``line`` when read from a file). Layers and edges keep insertion order (edges by a
    sequence number: networkx itself groups them by source layer), which makes writing
    deterministic and a read-then-write round trip keep the file's order.
    """

    _STORED = {"nx": lambda g: g if isinstance(g, EditedMultiDiGraph) else EditedMultiDiGraph(g)}

    def __init__(self) -> None:
        self.nx: nx.MultiDiGraph = EditedMultiDiGraph()
        self._edge_seq = 0
        self.rt_info: list[RTNode] | None = None
        self.line: int | None = None

    # -- layers ---------------------------------------------------------------
    def add_layer(self, layer: Layer) -> Layer:
        if layer.id in self.nx:
            raise ValueError(f"duplicate layer id {layer.id}")
        self.nx.add_node(layer.id, layer=layer)
        return layer

    def fill_layer(self, layer: Layer) -> None:
        """``add_layer`` for a graph being made (a reader's; see ``Observed.fill``): no
        edit counted, and no check (the reader reports a duplicate id itself)."""
        self.nx.fill_node(layer.id, {"layer": layer})

    def remove_layer(self, layer_id: int) -> None:
        self.nx.remove_node(layer_id)

    def next_id(self) -> int:
        return max(self.nx.nodes, default=-1) + 1

    def layer(self, layer_id: int) -> Layer:
        layer: Layer = self.nx.nodes[layer_id]["layer"]
        return layer

    def __contains__(self, layer_id: object) -> bool:
        return layer_id in self.nx

    def __len__(self) -> int:
        return int(self.nx.number_of_nodes())

    @property
    def layers(self) -> list[Layer]:
        return [data["layer"] for _, data in self.nx.nodes(data=True)]

    def __iter__(self) -> Iterator[Layer]:
        return iter(self.layers)

    def layers_of_type(self, *types: str) -> list[Layer]:
        return [layer for layer in self.layers if layer.type in types]

    def parameters(self) -> list[Layer]:
        return self.layers_of_type("Parameter")

    def results(self) -> list[Layer]:
        return self.layers_of_type("Result")

    # -- edges ----------------------------------------------------------------
    def connect(self, src: int, src_port: int, dst: int, dst_port: int,
                line: int | None = None) -> None:
        self.nx.add_edge(src, dst, from_port=src_port, to_port=dst_port, line=line,
                         seq=self._edge_seq)
        self._edge_seq += 1

    def fill_edges(self, edges: Iterable[tuple[int, int, int, int, int | None]]
                   ) -> list[tuple[int, int, int, int, int | None]]:
        """``connect`` of each ``(src, src_port, dst, dst_port, line)`` for a graph being made
        (a reader's): no edit. Returns those naming a layer the graph does not have, in
        order, which are not added."""
        nodes = self.nx._node
        seq = self._edge_seq
        data, missing = [], []
        for edge in edges:
            src, src_port, dst, dst_port, line = edge
            if src in nodes and dst in nodes:
                data.append((src, dst, {"from_port": src_port, "to_port": dst_port,
                                        "line": line, "seq": seq}))
                seq += 1
            else:
                missing.append(edge)
        self.nx.fill_edges(data)
        self.__dict__["_edge_seq"] = seq  # not an edit: the graph is being made
        return missing

    def disconnect_input(self, dst: int, dst_port: int) -> None:
        doomed = [(u, k) for u, _, k, d in self.nx.in_edges(dst, keys=True, data=True)
                  if d["to_port"] == dst_port]
        for u, k in doomed:
            self.nx.remove_edge(u, dst, key=k)

    def _ordered_edges(self) -> list[tuple[int, int, dict[str, Any]]]:
        return sorted(self.nx.edges(data=True), key=lambda e: e[2].get("seq", 0))

    def edges(self) -> list[Edge]:
        """Every edge, in the order they were connected (for a read graph: file order)."""
        return [Edge(u, d["from_port"], v, d["to_port"]) for u, v, d in self._ordered_edges()]

    def edge_lines(self) -> list[tuple[Edge, int | None]]:
        return [(Edge(u, d["from_port"], v, d["to_port"]), d.get("line"))
                for u, v, d in self._ordered_edges()]

    def source(self, layer_id: int, port_id: int) -> tuple[int, int] | None:
        """The ``(layer, port)`` feeding input ``port_id`` of ``layer_id``."""
        for u, _, d in self.nx.in_edges(layer_id, data=True):
            if d["to_port"] == port_id:
                return u, d["from_port"]
        return None

    def consumers(self, layer_id: int, port_id: int | None = None) -> list[tuple[int, int]]:
        """``(layer, port)`` pairs fed by ``layer_id`` (by its output ``port_id`` if given)."""
        return [(v, d["to_port"]) for _, v, d in self.nx.out_edges(layer_id, data=True)
                if port_id is None or d["from_port"] == port_id]

    def sources(self) -> dict[tuple[int, int], tuple[int, int]]:
        """``(layer, input port) -> (producer, output port)`` for every edge, in one pass
        (where an input has several producers, the last edge wins)."""
        return {(v, d["to_port"]): (u, d["from_port"]) for u, v, d in self.nx.edges(data=True)}

    def topological_order(self) -> list[int]:
        """Layer ids so that producers come first; ties break by layer id.

        Raises ``ValueError`` naming the layers left when they form a cycle. (Plain dicts
        and a heap: linear in layers and edges, where networkx's generic sort is several
        times slower on graphs of 10^5 layers.)"""
        # networkx's own adjacency dicts (node -> successor -> edge key -> data), read
        # directly: its edge views cost more than the sort itself.
        succ: dict[int, dict[int, dict[int, Any]]] = self.nx._succ
        indegree = dict.fromkeys(succ, 0)
        for targets in succ.values():
            for v, keys in targets.items():
                indegree[v] += len(keys)
        ready = [n for n, d in indegree.items() if d == 0]
        heapq.heapify(ready)
        order = []
        while ready:
            node = heapq.heappop(ready)
            order.append(node)
            for nxt, keys in succ[node].items():
                indegree[nxt] -= len(keys)
                if indegree[nxt] == 0:
                    heapq.heappush(ready, nxt)
        if len(order) != len(indegree):
            left = sorted(n for n, d in indegree.items() if d > 0)
            raise ValueError(f"layers {', '.join(map(str, left[:10]))}"
                             f"{' ...' if len(left) > 10 else ''} form a cycle")
        return order

    def is_acyclic(self) -> bool:
        """Whether no layer feeds itself through any chain of edges (``topological_order``
        without the order: no heap, each node's distinct producers counted once)."""
        succ: dict[int, dict[int, Any]] = self.nx._succ
        waiting = {node: len(producers) for node, producers in self.nx._pred.items()}
        ready = [node for node, count in waiting.items() if not count]
        done = 0
        while ready:
            node = ready.pop()
            done += 1
            for nxt in succ[node]:
                left = waiting[nxt] - 1
                waiting[nxt] = left
                if not left:
                    ready.append(nxt)
        return done == len(waiting)

    def walk(self, scope: str = "") -> Iterator[tuple[str, Layer]]:
        """Every layer of this graph and of all nested bodies, with its scope path."""
        for data in self.nx._node.values():  # (networkx's NodeDataView costs more)
            layer = data["layer"]
            yield scope, layer
            if layer.bodies:
                for body_name, body in layer.bodies.items():
                    yield from body.walk(body_scope(scope, layer.id, body_name))

    def copy(self, keep: Container[int] | None = None) -> Graph:
        """A copy sharing nothing that can change with this graph (constant payloads, which
        are read-only, are shared): only the layers ``keep`` and the edges between them,
        when given. Much faster than ``copy.deepcopy`` on large graphs."""
        out = Graph()
        out._edge_seq = self._edge_seq
        out.rt_info = copy.deepcopy(self.rt_info)
        out.line = self.line
        for lid, data in self.nx.nodes(data=True):
            if keep is None or lid in keep:
                out.nx.add_node(lid, layer=copy_layer(data["layer"]))
        for u, v, key, data in self.nx.edges(keys=True, data=True):
            if keep is None or (u in keep and v in keep):
                out.nx.add_edge(u, v, key=key, **data)
        return out


def copy_layer(layer: Layer) -> Layer:
    """A copy of ``layer`` (its bodies too) sharing only its constant payload with it."""
    def port(p: Port) -> Port:
        return replace(p, extra=dict(p.extra), rt_info=copy.deepcopy(p.rt_info))

    return replace(
        layer, attrs=dict(layer.attrs), inputs=[port(p) for p in layer.inputs],
        outputs=[port(p) for p in layer.outputs],
        bodies={name: body.copy() for name, body in layer.bodies.items()},
        port_maps={name: [replace(e, extra=dict(e.extra)) for e in entries]
                   for name, entries in layer.port_maps.items()},
        back_edges=[replace(e, extra=dict(e.extra)) for e in layer.back_edges],
        extra=dict(layer.extra), rt_info=copy.deepcopy(layer.rt_info),
        unknown=copy.deepcopy(layer.unknown))


@ir_dataclass(repr=False)
class Model(Observed):
    """An IR model: the top graph plus what the ``<net>`` element says about it."""

    graph: Graph
    name: str = "model"
    version: int = 11
    rt_info: list[RTNode] | None = None
    unknown: list[RTNode] = field(default_factory=EditedList)
    path: str | None = None
    weights_record: dict[str, str] | None = None  # see irtool.ir.serde.weights

    @property
    def inputs(self) -> list[Layer]:
        return self.graph.parameters()

    @property
    def outputs(self) -> list[Layer]:
        return self.graph.results()

    def __repr__(self) -> str:
        """``<Model 'name' IR v11, 12 layers (30 with bodies), inputs x: f32[2,?], outputs
        y: f32[2,?], from m.xml>``: what a REPL user wants to see first."""
        def port(p: Port | None) -> str:
            if p is None:
                return "?"
            et = p.precision.name if isinstance(p.precision, ElementType) else "?"
            return et + shape_text(p.dims)

        inputs = [f"{n}: {port(layer.outputs[0] if layer.outputs else None)}"
                  for layer, n in zip(self.inputs, self.input_names())]
        outputs = [f"{n}: {port(layer.inputs[0] if layer.inputs else None)}"
                   for layer, n in zip(self.outputs, self.output_names())]
        total = sum(1 for _ in self.graph.walk())
        return (f"<Model {self.name!r} IR v{self.version}, {len(self.graph)} layers ({total} "
                f"with bodies), inputs {', '.join(inputs) or 'none'}, outputs "
                f"{', '.join(outputs) or 'none'}" + (f", from {self.path}" if self.path else "")
                + ">")

    def input_names(self) -> list[str]:
        """Tensor names of the model inputs (first name of each Parameter's port)."""
        return [tensor_name(p, p.outputs[0] if p.outputs else None) for p in self.inputs]

    def output_names(self) -> list[str]:
        """Tensor names of the model outputs (the names of the port feeding each Result).

        IR v10 ports often carry no names; OpenVINO then names an output after the layer
        feeding its Result (``layer.N`` when that layer has several outputs), and so do we.
        """
        names = []
        for r in self.outputs:
            src = self.graph.source(r.id, r.inputs[0].id) if r.inputs else None
            feeder = self.graph.layer(src[0]) if src and src[0] in self.graph else None
            port = feeder.port(src[1]) if feeder is not None and src else None
            if self.version < 11 and feeder is not None and port is not None and not port.names:
                names.append(legacy_output_name(feeder, port))
            else:
                names.append(tensor_name(r, port))
        return names


def tensor_name(layer: Layer, port: Port | None) -> str:
    """The name a user feeds or reads a tensor by: its first port name, else the layer's."""
    if port is not None and port.names:
        return port.names[0]
    if layer.type == "Result" and "output_names" in layer.extra:
        return split_names(layer.extra["output_names"])[0]
    return layer.name


def describe_layer(layer: Layer, scope: str) -> str:
    """How errors name a layer: its path (``core.scopes``), name and ``type-version``."""
    return f'{layer_path(scope, layer.id)} "{layer.name}" ({layer.type}-{layer.version})'


def legacy_output_name(layer: Layer, port: Port) -> str:
    """OpenVINO's name for an unnamed output of an IR v10 layer: the layer's name, with
    ``.N`` (N the output's position) when the layer has more than one output."""
    if len(layer.outputs) == 1:
        return layer.name
    return f"{layer.name}.{layer.outputs.index(port)}"


def split_names(text: str) -> tuple[str, ...]:
    """Split an IR ``names`` attribute: comma separated, ``\\,`` escapes a comma."""
    if "\\" not in text:  # no escape: str.split does it (a tensor's names are read per port)
        return tuple(n for n in text.split(",") if n)
    out, cur, i = [], [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] == ",":
            cur.append(",")
            i += 2
            continue
        if ch == ",":
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    out.append("".join(cur))
    return tuple(n for n in out if n)


def join_names(names: Iterable[str]) -> str:
    return ",".join(n.replace(",", "\\,") for n in names)


__all__ = [
    "BackEdge",
    "ConstData",
    "Edge",
    "Graph",
    "Layer",
    "Model",
    "Port",
    "PortMapEntry",
    "RTNode",
    "Shape",
    "Slicing",
    "TensorInfo",
    "copy_layer",
    "describe_layer",
    "element_type",
    "format_shape",
    "join_names",
    "mismatch",
    "parse_shape",
    "port_dims",
    "port_dtype",
    "shape_text",
    "split_names",
    "tensor_name",
]
