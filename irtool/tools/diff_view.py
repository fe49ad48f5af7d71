"""An IR file as ``irtool diff`` compares it: every element it holds, as written, with its line.

The reader of ``xml_reader`` builds a ``Model`` and stops at, or drops, what it cannot use
(a layer whose id is not a number, an edge to nowhere, a second ``<data>``); a diff must
still see all of it, to say where two files differ even when one of them is broken. So
this view keeps attributes as the strings the file holds, references (layer ids, port ids)
unresolved, containers that are missing as ``None`` (not empty), and the line of every
element; ``irtool.tools.diff`` resolves the references and decides what means the same.

Top-level layers are read one at a time from lxml's event stream and freed (as the reader
does), and a Const's bytes are never read here: ``Payload`` digests them from the mapped
``.bin`` only when asked, so a large model is compared without holding its weights.
"""

from __future__ import annotations

import hashlib
import mmap
import os
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from ..core.errors import IRParseError
from ..ir.serde.weights import RECORD_TAG
from ..ir.serde.xml_reader import default_bin_path, read_bin, read_head

PORT_MAP_TAGS = ("port_map", "then_port_map", "else_port_map")
BODY_TAGS = ("body", "then_body", "else_body")
BODY_OF = {"port_map": "body", "then_port_map": "then_body", "else_port_map": "else_body"}

Canon = tuple  # (tag, sorted attributes, text, children): an element in a comparable form


def canon(el: etree._Element, ordered: bool = False) -> Canon:
    """``el`` as a nested tuple; children sorted unless ``ordered`` (rt_info's order carries
    no meaning)."""
    kids = [canon(c, ordered) for c in el if isinstance(c.tag, str)]
    return (str(el.tag), tuple(sorted(el.attrib.items())), (el.text or "").strip(),
            tuple(kids if ordered else sorted(kids)))


def canon_text(c: Canon) -> str:
    """A short XML-like rendering of a ``Canon`` for messages."""
    tag, attrs, text, kids = c
    inner = " ".join(f'{k}="{v}"' for k, v in attrs)
    body = text + "".join(canon_text(k) for k in kids)
    head = f"<{tag}{' ' + inner if inner else ''}"
    return f"{head}>{body}</{tag}>" if body else f"{head}/>"


@dataclass(slots=True)
class Info:
    """An ``<rt_info>`` (or another element irtool does not interpret): its children."""

    line: int
    children: list[tuple[Canon, int]]  # each child and its line


@dataclass(slots=True)
class PortView:
    id: str | None
    line: int
    attrs: dict[str, str]  # as written, but for id
    dims: list[str]
    rt_info: Info | None = None


@dataclass(slots=True)
class EdgeView:
    """An ``<edge>`` of ``<edges>`` or ``<back_edges>``, its ends as written."""

    from_layer: str | None
    from_port: str | None
    to_layer: str | None
    to_port: str | None
    line: int
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class EntryView:
    """A port map ``<input>``/``<output>``."""

    kind: str
    external_port_id: str | None
    internal_layer_id: str | None
    attrs: dict[str, str]  # the others: axis, start, end, stride, part_size, purpose...
    line: int


@dataclass(slots=True)
class Section:
    """A port map or back edges element: its line and entries."""

    line: int
    items: list


@dataclass(slots=True)
class LayerView:
    id: str | None
    name: str | None
    type: str | None
    version: str | None
    line: int
    extra: dict[str, str]
    data: list[tuple[dict[str, str], int]]  # each <data> and its line
    inputs: list[PortView] | None
    outputs: list[PortView] | None
    input_line: int | None = None
    output_line: int | None = None
    port_maps: dict[str, Section] = field(default_factory=dict)
    back_edges: Section | None = None
    bodies: dict[str, GraphView] = field(default_factory=dict)
    rt_info: Info | None = None
    others: Info | None = None  # child elements nothing above covers
    payload: Payload | None = None

    @property
    def attrs(self) -> dict[str, str]:
        return self.data[0][0] if self.data else {}

    @property
    def data_line(self) -> int:
        return self.data[0][1] if self.data else self.line


@dataclass(slots=True)
class GraphView:
    line: int
    layers: list[LayerView] | None  # None: no <layers>
    edges: list[EdgeView] | None  # None: no <edges>
    layers_line: int | None = None
    edges_line: int | None = None


@dataclass(slots=True)
class IRView:
    file: str
    net_line: int
    net_attrs: dict[str, str]
    graph: GraphView
    rt_info: Info | None
    others: Info | None
    weights: Weights
    error: IRParseError | None = None  # the file could not be read as XML: nothing else is set


class Weights:
    """The ``.bin`` beside an IR, mapped read-only; payload digests cached per range."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: bytes | mmap.mmap | None = None
        self.error: str | None = None
        if path.exists():
            try:
                self.data = read_bin(path)
            except OSError as err:
                self.error = f"cannot read {path.name}: {err.strerror}"
        self._digests: dict[tuple[int, int], str] = {}

    @property
    def size(self) -> int | None:
        return None if self.data is None else len(self.data)

    def digest(self, offset: int, size: int) -> str:
        key = (offset, size)
        if key not in self._digests:
            h = hashlib.blake2b(digest_size=16)
            assert self.data is not None
            view = memoryview(self.data)
            for start in range(offset, offset + size, 1 << 24):  # 16 MiB at a time
                h.update(view[start:min(start + (1 << 24), offset + size)])
            view.release()
            self._digests[key] = h.hexdigest()
        return self._digests[key]


@dataclass(slots=True)
class Payload:
    """A Const's bytes as its ``offset``/``size`` say: ``status`` is ``"ok"`` (digest
    set), ``"bad"`` (offset or size missing or not a number), ``"no-bin"`` (no .bin) or
    ``"beyond"`` (the range ends past the .bin)."""

    status: str
    offset: int | None = None
    size: int | None = None
    weights: Weights | None = None

    @property
    def digest(self) -> str | None:
        if self.status != "ok" or self.weights is None:
            return None
        assert self.offset is not None and self.size is not None
        return self.weights.digest(self.offset, self.size)

    def describe(self) -> str:
        if self.status == "ok":
            return f"{self.size} bytes, blake2b {(self.digest or '')[:16]}"
        if self.status == "beyond":
            return (f"[{self.offset}, {(self.offset or 0) + (self.size or 0)}) beyond the end "
                    f"of the .bin ({self.weights.size if self.weights else 0} bytes)")
        if self.status == "no-bin":
            return "no .bin"
        return "offset/size unreadable"


def _payload(attrs: dict[str, str], weights: Weights) -> Payload:
    try:
        offset, size = int(attrs["offset"]), int(attrs["size"])
    except (KeyError, ValueError):
        return Payload("bad")
    if offset < 0 or size < 0:
        return Payload("bad")
    if weights.data is None:
        return Payload("no-bin", offset, size, weights)
    if offset + size > len(weights.data):
        return Payload("beyond", offset, size, weights)
    return Payload("ok", offset, size, weights)


def _info(el: etree._Element) -> Info:
    return Info(el.sourceline, [(canon(c), c.sourceline) for c in el if isinstance(c.tag, str)])


def _ports(el: etree._Element) -> list[PortView]:
    ports = []
    for p in el:
        if p.tag != "port":
            continue
        port = PortView(p.get("id"), p.sourceline,
                        {k: v for k, v in p.attrib.items() if k != "id"}, [])
        for child in p:
            if child.tag == "dim":
                port.dims.append((child.text or "").strip())
            elif child.tag == "rt_info":
                port.rt_info = _info(child)
        ports.append(port)
    return ports


def _edge(el: etree._Element) -> EdgeView:
    ends = ("from-layer", "from-port", "to-layer", "to-port")
    return EdgeView(el.get("from-layer"), el.get("from-port"), el.get("to-layer"),
                    el.get("to-port"), el.sourceline,
                    {k: v for k, v in el.attrib.items() if k not in ends})


def _layer(el: etree._Element, weights: Weights) -> LayerView:
    own = ("id", "name", "type", "version")
    layer = LayerView(el.get("id"), el.get("name"), el.get("type"), el.get("version"),
                      el.sourceline, {k: v for k, v in el.attrib.items() if k not in own},
                      [], None, None)
    others = []
    for child in el:
        tag = child.tag
        if not isinstance(tag, str):
            continue
        if tag == "data":
            layer.data.append((dict(child.attrib), child.sourceline))
        elif tag in ("input", "output"):
            ports = _ports(child)
            if tag == "input":  # a second <input> adds its ports (a file may hold two)
                layer.inputs = (layer.inputs or []) + ports
                layer.input_line = layer.input_line or child.sourceline
            else:
                layer.outputs = (layer.outputs or []) + ports
                layer.output_line = layer.output_line or child.sourceline
        elif tag in PORT_MAP_TAGS:
            entries = [EntryView(e.tag, e.get("external_port_id"), e.get("internal_layer_id"),
                                 {k: v for k, v in e.attrib.items()
                                  if k not in ("external_port_id", "internal_layer_id")},
                                 e.sourceline)
                       for e in child if e.tag in ("input", "output")]
            layer.port_maps[tag] = Section(child.sourceline, entries)
        elif tag == "back_edges":
            layer.back_edges = Section(child.sourceline,
                                       [_edge(e) for e in child if e.tag == "edge"])
        elif tag in BODY_TAGS:
            layer.bodies[tag] = _graph(child, weights)
        elif tag == "rt_info":
            layer.rt_info = _info(child)
        else:
            others.append((canon(child, ordered=True), child.sourceline))
    if others:
        layer.others = Info(others[0][1], others)
    if layer.type == "Const":
        layer.payload = _payload(layer.attrs, weights)
    return layer


def _graph(el: etree._Element, weights: Weights) -> GraphView:
    graph = GraphView(el.sourceline, None, None)
    layers, edges = el.find("layers"), el.find("edges")
    if layers is not None:
        graph.layers = [_layer(c, weights) for c in layers if c.tag == "layer"]
        graph.layers_line = layers.sourceline
    if edges is not None:
        graph.edges = [_edge(c) for c in edges if c.tag == "edge"]
        graph.edges_line = edges.sourceline
    return graph


def _drop_record(info: Info | None) -> Info | None:
    """The model rt_info without irtool's record of the .bin (it describes the file)."""
    if info is None:
        return None
    kept = [(c, line) for c, line in info.children if c[0] != RECORD_TAG]
    return Info(info.line, kept) if kept or len(kept) == len(info.children) else None


def read_view(xml_path: str | os.PathLike) -> IRView:
    """The view of an IR file; a file that is not well-formed XML gives a view whose
    ``error`` says where it breaks (``OSError`` when it cannot be opened at all)."""
    file = str(xml_path)
    weights = Weights(default_bin_path(xml_path))
    view = IRView(file, 0, {}, GraphView(0, None, None), None, None, weights)
    try:
        read_head(xml_path)
        _stream(view, weights)
    except IRParseError as err:
        view.error = err
    return view


def _stream(view: IRView, weights: Weights) -> None:
    # Only the ends of <layer> and <edge> reach Python (lxml filters the rest): a
    # top-level one is read and freed at once; the root's other children are read at
    # the end, when the tree holds little else.
    events = etree.iterparse(
        view.file, events=("end",), tag=("layer", "edge"), resolve_entities=False,
        no_network=True, load_dtd=False, dtd_validation=False, huge_tree=False,
        remove_comments=True, remove_pis=True)
    graph = view.graph
    root = None
    try:
        for _, el in events:
            if root is None:
                root = el.getroottree().getroot()
            parent = el.getparent()
            if parent is None or parent.getparent() is not root:
                continue  # inside a body, or not where IR puts layers and edges
            if parent.tag == "layers" and el.tag == "layer":
                if graph.layers is None:
                    graph.layers, graph.layers_line = [], parent.sourceline
                graph.layers.append(_layer(el, weights))
            elif parent.tag == "edges" and el.tag == "edge":
                if graph.edges is None:
                    graph.edges, graph.edges_line = [], parent.sourceline
                graph.edges.append(_edge(el))
            else:
                continue
            el.clear()
            while el.getprevious() is not None:
                del parent[0]
        root = events.root
    except etree.XMLSyntaxError as err:
        line = err.position[0] if err.position else None
        raise IRParseError(f"malformed XML: {err.msg}", file=view.file, line=line) from None
    except OSError as err:
        raise IRParseError(f"cannot read: {err.strerror or err}", file=view.file) from None
    if root is None:
        raise IRParseError("malformed XML: no root element", file=view.file)
    view.net_line, view.net_attrs = root.sourceline, dict(root.attrib)
    graph.line = root.sourceline
    others = []
    if root.tag != "net":
        others.append((("root", (("tag", str(root.tag)),), "", ()), root.sourceline))
    for el in root:
        if el.tag == "layers" and graph.layers is None:
            graph.layers, graph.layers_line = [], el.sourceline
        elif el.tag == "edges" and graph.edges is None:
            graph.edges, graph.edges_line = [], el.sourceline
        elif el.tag == "rt_info" and view.rt_info is None:
            view.rt_info = _drop_record(_info(el))
        elif el.tag not in ("layers", "edges") and isinstance(el.tag, str):
            others.append((canon(el, ordered=True), el.sourceline))
    if others:
        view.others = Info(others[0][1], others)
