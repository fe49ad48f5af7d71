"""Read IR v10/v11 XML and its .bin into the in-memory IR, safely.

Untrusted input: no DTD, no entities, no network, a size cap on the XML, and
every Const ``offset``/``size`` checked against the .bin and against the
element count times the bit width before any byte is touched.

Two modes share one code path. Strict (``problems=None``): the first problem
raises ``IRParseError`` naming file, line and layer. Lenient (a list is given):
each problem is appended as a ``Diagnostic`` and reading goes on, so the
validator can report everything at once.
"""

from __future__ import annotations

import mmap
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from lxml import etree

from ...core.bulk import paused_gc
from ...core.diagnostics import Diagnostic
from ...core.errors import IRParseError
from ...core.scopes import body_scope
from ..edits import EditedDict, EditedList
from ..graph import (
    BackEdge,
    ConstData,
    Graph,
    Layer,
    Model,
    Port,
    PortMapEntry,
    RTNode,
    parse_shape,
    split_names,
    string_layout_problem,
)
from ..types import ElementType, element_type
from .weights import split_record

MAX_XML_BYTES = 1 << 31
MAX_DIM = 1 << 40  # larger than any real tensor dimension; anything above is corrupt input

_LAYER_ATTRS = ("id", "name", "type", "version")
_PORT_ATTRS = ("id", "precision", "names")
_PORT_MAP_TAGS = ("port_map", "then_port_map", "else_port_map")
_BODY_TAGS = ("body", "then_body", "else_body")
_PORT_MAP_INT_ATTRS = ("axis", "start", "end", "stride", "part_size")


class _Reader:
    def __init__(self, file: str, weights: bytes | memoryview | mmap.mmap | None,
                 problems: list[Diagnostic] | None) -> None:
        self.file = file
        self.weights = weights
        self.problems = problems
        self.missing_bin_said = False
        self.orders: dict[tuple[str, ...], tuple[str, ...]] = {}
        # Texts read over and over (10^5 ports and Consts): each parsed once.
        self.types: dict[str, ElementType] = {}
        self.shapes: dict[str, _ConstShape] = {}

    # -- problem reporting --------------------------------------------------
    def problem(self, code: str, message: str, line: int | None,
                layer: Layer | _Named | None = None, scope: str = "") -> None:
        if self.problems is None:
            where = f"{layer.id} {layer.name!r}" if layer is not None else None
            raise IRParseError(message, file=self.file, line=line, layer=where)
        self.problems.append(Diagnostic(
            code, message, self.file, line,
            layer.id if layer else None, layer.name if layer else None, scope,
        ))

    def int_attr(self, el: etree._Element, name: str, code: str, *, required: bool = True,
                 layer: Layer | _Named | None = None, scope: str = "") -> int | None:
        value = el.get(name)
        if value is None:
            if required:
                self.problem(code, f"<{el.tag}> lacks the {name!r} attribute", el.sourceline,
                             layer, scope)
            return None
        try:
            return int(value)
        except ValueError:
            self.problem(code, f"<{el.tag}> {name}={value!r} is not an integer", el.sourceline,
                         layer, scope)
            return None

    # -- structure ----------------------------------------------------------
    def model(self, root: etree._Element) -> Model:
        model = self._net(root)
        model.graph = self.graph(root, "")
        model.graph.rt_info = None  # <net>'s own rt_info is the model's (read below)
        for child in root:
            if child.tag in ("layers", "edges"):
                continue
            if child.tag == "rt_info":
                model.rt_info, model.weights_record = split_record([rt_node(c) for c in child])
            elif isinstance(child.tag, str):
                model.unknown.append(rt_node(child))
        return model

    def graph(self, el: etree._Element, scope: str) -> Graph:
        graph = Graph()
        graph.line = el.sourceline
        layers_el = el.find("layers")
        if layers_el is None:
            self.problem("XML_STRUCTURE", f"<{el.tag}> has no <layers>", el.sourceline,
                         scope=scope)
        else:
            for layer_el in layers_el:
                if layer_el.tag == "layer":
                    self.add_layer(graph, layer_el, scope)
        edges_el = el.find("edges")
        if edges_el is not None:
            self.connect(graph, [e for e in (self.edge(edge_el, scope) for edge_el in edges_el
                                             if edge_el.tag == "edge") if e is not None], scope)
        rt = el.find("rt_info")
        if rt is not None:
            graph.rt_info = [rt_node(c) for c in rt]
        return graph

    def add_layer(self, graph: Graph, el: etree._Element, scope: str) -> None:
        layer = self.layer(el, scope)
        if layer is None:
            return
        if layer.id in graph:
            self.problem("DUPLICATE_LAYER_ID", f"layer id {layer.id} is used twice",
                         layer.line, layer, scope)
            return
        graph.fill_layer(layer)

    def edge(self, el: etree._Element, scope: str) -> tuple[int, int, int, int, int] | None:
        """``(from-layer, from-port, to-layer, to-port, line)`` of an ``<edge>``."""
        get = el.get
        try:  # the common case in one go (10^5 edges); any problem: said below, one by one
            return (int(get("from-layer")), int(get("from-port")),
                    int(get("to-layer")), int(get("to-port")), el.sourceline)
        except (TypeError, ValueError):
            pass
        ids = [self.int_attr(el, a, "EDGE_ATTR", scope=scope)
               for a in ("from-layer", "from-port", "to-layer", "to-port")]
        if any(i is None for i in ids):
            return None
        return (*ids, el.sourceline)

    def connect(self, graph: Graph, edges: list[tuple[int, int, int, int, int]],
                scope: str) -> None:
        """Add ``edges`` (once every layer is in: IR may list them first)."""
        for src, src_port, dst, dst_port, line in graph.fill_edges(edges):
            missing = [i for i in (src, dst) if i not in graph]
            # Name the endpoint that does exist, so the report points at a layer.
            present = next((graph.layer(i) for i in (dst, src) if i in graph), None)
            self.problem("EDGE_UNKNOWN_LAYER",
                         f"edge {src}:{src_port} -> {dst}:{dst_port} names layer "
                         f"{missing[0]}, which does not exist", line, present, scope=scope)

    def stream(self, events: Iterator[tuple[str, etree._Element]], *,
               validating: bool = False) -> Model:
        """The model of an IR parsed as a stream of ``end`` events for ``<net>``,
        ``<layer>`` and ``<edge>`` (lxml's ``iterparse`` with that tag filter; every other
        element is parsed in C without an event): each top-level layer and edge is read as
        soon as it is complete and its elements freed, so the whole tree is never held (for
        an IR of 10^6 layers that tree takes several GB). The same rules as ``model``.

        ``validating``: libxml2's validating stream may stop at an error without raising
        one, so the root's own end event is required (``_EndsEarly`` without it)."""
        model: Model | None = None
        graph = Graph()
        edges: list[tuple[int, int, int, int, int]] = []
        root: etree._Element | None = None
        layers_el: etree._Element | None = None  # the first <layers> and <edges> of <net>
        edges_el: etree._Element | None = None
        complete = False
        for _, el in events:
            parent = el.getparent()
            if parent is None:
                complete = True  # the root's end (a schema error is raised after it)
                continue
            if root is None:
                root = el.getroottree().getroot()
                model = self._streamed_net(root, graph)
            if el.tag == "layer":
                if layers_el is None and parent.tag == "layers" and parent.getparent() is root:
                    layers_el = root.find("layers")
                if parent is not layers_el:
                    continue  # a body's layer: read with the layer that owns it
                self.add_layer(graph, el, "")
            else:
                if edges_el is None and parent.tag == "edges" and parent.getparent() is root:
                    edges_el = root.find("edges")
                if parent is not edges_el or el.tag != "edge":
                    continue  # a body's or a back edge: read with its layer
                edge = self.edge(el, "")
                if edge is not None:
                    edges.append(edge)
            el.clear()
            while el.getprevious() is not None:
                del parent[0]  # type: ignore[union-attr]
        root = getattr(events, "root", None) if root is None else root
        if root is None or (not complete and (validating or root.tag == "net")):
            raise _EndsEarly()
        if model is None:  # no layer or edge at all
            model = self._streamed_net(root, graph)
        for child in root:
            if child.tag == "rt_info":
                model.rt_info, model.weights_record = split_record([rt_node(c) for c in child])
            elif child.tag not in ("layers", "edges") and isinstance(child.tag, str):
                model.unknown.append(rt_node(child))
        if layers_el is None and root.find("layers") is None:
            self.problem("XML_STRUCTURE", "<net> has no <layers>", graph.line)
        self.connect(graph, edges, "")
        return model

    def _streamed_net(self, root: etree._Element, graph: Graph) -> Model:
        """The model of the streamed ``<net>`` ``root``, its graph the one being read."""
        _refuse_doctype(root, self.file)
        model = self._net(root)
        model.graph = graph
        graph.line = root.sourceline
        return model

    def _net(self, root: etree._Element) -> Model:
        """The model ``<net>`` describes, before its graph is read."""
        if root.tag != "net":
            self.problem("XML_STRUCTURE", f"root element is <{root.tag}>, expected <net>",
                         root.sourceline)
        version = self.int_attr(root, "version", "XML_STRUCTURE") or 11
        if version not in (10, 11):
            self.problem("IR_VERSION", f"IR version {version} is not supported (10 or 11)",
                         root.sourceline)
        return Model(graph=Graph(), name=root.get("name", "model"), version=version)

    def layer(self, el: etree._Element, scope: str) -> Layer | None:
        get = el.get
        try:  # the common case in one go; any problem: said by int_attr
            layer_id = int(get("id"))
        except (TypeError, ValueError):
            read_id = self.int_attr(el, "id", "LAYER_ATTR", scope=scope)
            if read_id is None:
                return None
            layer_id = read_id
        if layer_id < 0:
            self.problem("LAYER_ATTR", f"layer id {layer_id} is negative", el.sourceline,
                         scope=scope)
            return None
        name, op, version = get("name"), get("type"), get("version")
        line = el.sourceline
        attrib = el.attrib
        extra: dict[str, str] = EditedDict(
            {k: v for k, v in attrib.items() if k not in _LAYER_ATTRS}) \
            if len(attrib) > 4 - (name is None) - (op is None) - (version is None) \
            else EditedDict()  # (the id is there: read above)
        # Problems name the layer by its id and name; the Layer is made at the end, of
        # what was read (no container made to be replaced, no field set twice).
        who = _Named(layer_id, name or "")
        if name is None or op is None or version is None:
            for attr in ("name", "type", "version"):
                if get(attr) is None:
                    self.problem("LAYER_ATTR", f"layer lacks the {attr!r} attribute", line,
                                 who, scope)
        found: dict[str, Any] = {}
        port_maps: dict[str, list[PortMapEntry]] = {}
        bodies: dict[str, Graph] = {}
        unknown: list[RTNode] = []
        order = []
        for child in el:
            tag = child.tag
            if not isinstance(tag, str):
                continue
            order.append(tag)
            if tag == "data":
                found["attrs"] = EditedDict(child.items())  # (lxml's mapping: a call per key)
                found["has_data"] = True
            elif tag == "input":
                found["inputs"] = self.ports(child, who, scope)
            elif tag == "output":
                found["outputs"] = self.ports(child, who, scope)
            elif tag in _PORT_MAP_TAGS:
                port_maps[tag] = self.port_map(child, who, scope)
            elif tag == "back_edges":
                found["back_edges"] = self.back_edges(child, who, scope)
            elif tag in _BODY_TAGS:
                bodies[tag] = self.graph(child, body_scope(scope, layer_id, tag))
            elif tag == "rt_info":
                found["rt_info"] = [rt_node(c) for c in child]
            else:
                unknown.append(rt_node(child))
        if port_maps:
            found["port_maps"] = port_maps
        if bodies:
            found["bodies"] = bodies
        if unknown:
            found["unknown"] = unknown
        if op == "Const":
            found["const"] = self.const(found.get("attrs", _NO_ATTRS), line, who, scope)
        # Layers share a handful of orders: keep one tuple of each (memory at 10^6 layers).
        key = tuple(order)
        return Layer(layer_id, name or "", op or "", version or "", extra=extra, line=line,
                     has_data=found.pop("has_data", False),
                     child_order=self.orders.setdefault(key, key), **found)

    def ports(self, el: etree._Element, layer: _Named, scope: str) -> list[Port]:
        ports: list[Port] = EditedList()  # as a Layer stores it: no copy
        types = self.types
        for port_el in el:
            if port_el.tag != "port":
                continue
            try:
                port_id = int(port_el.get("id"))
            except (TypeError, ValueError):  # said by int_attr
                read_id = self.int_attr(port_el, "id", "PORT_ATTR", layer=layer, scope=scope)
                if read_id is None:
                    continue
                port_id = read_id
            precision: ElementType | None = None
            names: tuple[str, ...] = ()
            rt_info: list[RTNode] | None = None
            extra: dict[str, str] = EditedDict()  # as a Port stores it: no copy
            for key, value in port_el.items():
                if key == "id":
                    continue
                if key == "precision":
                    precision = types.get(value)
                    if precision is None:
                        try:
                            precision = types[value] = element_type(value)
                        except KeyError:
                            self.problem("ELEMENT_TYPE", f"port {port_id} has unknown "
                                         f"precision {value!r}", port_el.sourceline, layer,
                                         scope)
                elif key == "names":
                    names = split_names(value)
                else:
                    extra[key] = value
            dims = []
            for child in port_el:
                tag = child.tag
                if tag == "dim":
                    try:
                        dim = int(child.text)  # int() itself takes the whitespace around it
                    except (TypeError, ValueError):
                        text = (child.text or "").strip()
                        self.problem("BAD_DIM", f"port {port_id} has dim {text!r}, not an integer",
                                     child.sourceline, layer, scope)
                        dim = -1
                    if dim < -1 or dim > MAX_DIM:
                        self.problem("BAD_DIM", f"port {port_id} has dim {dim}, outside "
                                     f"-1..{MAX_DIM}", child.sourceline, layer, scope)
                        dim = -1
                    dims.append(dim)
                elif tag == "rt_info":
                    rt_info = [rt_node(c) for c in child]
            # (list.append: a list being made, no edit to count)
            list.append(ports, Port(port_id, precision, tuple(dims), names, extra, rt_info,
                                    port_el.sourceline))
        return ports

    def port_map(self, el: etree._Element, layer: _Named, scope: str) -> list[PortMapEntry]:
        entries = []
        for entry_el in el:
            if entry_el.tag not in ("input", "output"):
                continue
            ext = self.int_attr(entry_el, "external_port_id", "PORT_MAP_ATTR", layer=layer,
                                scope=scope)
            internal = self.int_attr(entry_el, "internal_layer_id", "PORT_MAP_ATTR", layer=layer,
                                     scope=scope)
            if ext is None or internal is None:
                continue
            entry = PortMapEntry(entry_el.tag, ext, internal, line=entry_el.sourceline)
            for key, value in entry_el.attrib.items():
                if key in ("external_port_id", "internal_layer_id"):
                    continue
                if key in _PORT_MAP_INT_ATTRS:
                    setattr(entry, key, self.int_attr(entry_el, key, "PORT_MAP_ATTR",
                                                      layer=layer, scope=scope))
                elif key == "purpose":
                    entry.purpose = value
                else:
                    entry.extra[key] = value
            entries.append(entry)
        return entries

    def back_edges(self, el: etree._Element, layer: _Named, scope: str) -> list[BackEdge]:
        edges = []
        for edge_el in el:
            if edge_el.tag != "edge":
                continue
            src = self.int_attr(edge_el, "from-layer", "BACK_EDGE_ATTR", layer=layer, scope=scope)
            dst = self.int_attr(edge_el, "to-layer", "BACK_EDGE_ATTR", layer=layer, scope=scope)
            if src is None or dst is None:
                continue
            extra = {k: v for k, v in edge_el.attrib.items() if k not in ("from-layer", "to-layer")}
            edges.append(BackEdge(src, dst, extra, line=edge_el.sourceline))
        return edges

    def const(self, attrs: dict[str, str], line: int | None, layer: _Named, scope: str
              ) -> ConstData | None:
        """The data of a Const with ``<data>`` ``attrs``, checked against the .bin (None,
        and the problem said, when it does not fit)."""
        offset_s, size_s = attrs.get("offset"), attrs.get("size")
        if offset_s is None or size_s is None:
            self.problem("CONST_DATA", "Const lacks offset/size", line, layer, scope)
            return None
        try:
            offset, size = int(offset_s), int(size_s)
        except ValueError:
            self.problem("CONST_DATA", f"Const offset={offset_s!r} size={size_s!r} are not "
                         "integers", line, layer, scope)
            return None
        if offset < 0 or size < 0:
            self.problem("CONST_DATA", f"Const offset {offset} / size {size} is negative",
                         line, layer, scope)
            return None
        if self.weights is None and size > 0:
            # No .bin at all: say so once, not "out of bounds" for every Const.
            if not self.missing_bin_said:
                self.missing_bin_said = True
                self.problem("FILE_UNREADABLE", f"weights file "
                             f"{default_bin_path(self.file).name} not found: the Consts' data "
                             "lives there; put the .bin saved with this .xml beside it",
                             line)
            return None
        bin_size = len(self.weights) if self.weights is not None else 0
        if offset + size > bin_size:
            self.problem("CONST_OUT_OF_BOUNDS", f"Const data [{offset}, {offset + size}) lies "
                         f"beyond the end of the .bin ({bin_size} bytes)", line, layer, scope)
            return None
        et_text = attrs.get("element_type", "")
        et = self.types.get(et_text)
        if et is None:
            try:
                et = self.types[et_text] = element_type(et_text)
            except KeyError:
                self.problem("ELEMENT_TYPE", f"Const has unknown element_type "
                             f"{attrs.get('element_type')!r}", line, layer, scope)
                return None
        shape_text = attrs.get("shape", "")
        shape = self.shapes.get(shape_text)
        if shape is None:
            shape = self.shapes[shape_text] = _ConstShape.of(shape_text)
        if not shape.static:
            self.problem("CONST_SHAPE", f"Const shape {attrs.get('shape')!r} is not static",
                         line, layer, scope)
            return None
        if shape.absurd:
            self.problem("BAD_DIM", f"Const shape {attrs.get('shape')!r} has an absurd dimension",
                         line, layer, scope)
            return None
        count = shape.elements
        if et.kind != "string" and et.kind != "dynamic":
            expected = et.nbytes(count)
            # OpenVINO writes an empty Const (a 0 in its shape) with size="1": one
            # placeholder byte. Accept that; anything else must match exactly.
            if size != expected and not (expected == 0 and size <= 1):
                self.problem("CONST_SIZE", f"Const of {et.name}[{attrs.get('shape', '')}] "
                             f"needs {expected} bytes but size is {size}", line, layer, scope)
                return None
        elif et.kind == "string" and self.weights is not None:
            problem = string_layout_problem(memoryview(self.weights)[offset:offset + size],
                                            count)
            if problem:
                self.problem("CONST_DATA", f"string Const: {problem}", line, layer, scope)
                return None
        if not size:
            return ConstData(b"")
        assert self.weights is not None  # a Const with bytes has a .bin (checked above)
        return ConstData(self.weights, offset, size)


class _Named(NamedTuple):
    """What a problem says of a layer being read: its id and name."""

    id: int
    name: str


_NO_ATTRS: dict[str, str] = {}


class _ConstShape(NamedTuple):
    """What ``_Reader.const`` needs of a Const's ``shape`` text (Consts repeat a few)."""

    static: bool  # a known rank, no dynamic dim
    absurd: bool  # a dim over MAX_DIM
    elements: int  # when static

    @classmethod
    def of(cls, text: str) -> _ConstShape:
        shape = parse_shape(text)
        if shape is None or any(d < 0 for d in shape):
            return cls(False, False, 0)
        if any(d > MAX_DIM for d in shape):
            return cls(True, True, 0)
        count = 1
        for d in shape:
            count *= d
        return cls(True, False, count)


def rt_node(el: etree._Element) -> RTNode:
    return RTNode(
        tag=str(el.tag),
        attrs=dict(el.attrib),
        children=[rt_node(c) for c in el if isinstance(c.tag, str)],
        text=el.text if el.text and el.text.strip() else None,
    )


# Byte order marks of the wide encodings, longest first (UTF-32 LE starts like UTF-16 LE),
# then how a document in each starts without one: its first character is "<" (the XML
# spec's appendix F; libxml2 reads such files too).
_WIDE_BOMS = ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
              (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))
_WIDE_STARTS = ((b"<\x00\x00\x00", "utf-32-le"), (b"\x00\x00\x00<", "utf-32-be"),
                (b"<\x00", "utf-16-le"), (b"\x00<", "utf-16-be"))
_NO_DTD = "DOCTYPE/ENTITY declarations are not allowed in IR XML"


def _reject_dtd(data: bytes, file: str) -> None:
    # A DOCTYPE is the door to entity expansion (billion laughs) and external
    # entities (XXE); IR never needs one, so refuse before lxml sees it.
    # A UTF-16/32 file hides the markup from a byte search: scan it as UTF-8.
    for mark, encoding in (*_WIDE_BOMS, *_WIDE_STARTS):
        if data.startswith(mark):
            skip = len(mark) if (mark, encoding) in _WIDE_BOMS else 0
            data = data[skip:].decode(encoding, "replace").encode("utf-8")
            break
    head_end = data.find(b"<net")
    head = data if head_end < 0 else data[:head_end]
    if b"<!DOCTYPE" in head or b"<!ENTITY" in data:
        line = data[: max(head.find(b"<!DOCTYPE"), 0)].count(b"\n") + 1
        raise IRParseError(_NO_DTD, file=file, line=line)


def _refuse_doctype(root: etree._Element, file: str) -> None:
    """Refuse a DOCTYPE the byte scan of ``_reject_dtd`` could not see: one in an
    encoding the file declares (UTF-7, ...) that libxml2 decodes. The parser's options
    kept it harmless while it was read (no entity expanded, nothing loaded)."""
    if root.getroottree().docinfo.doctype:
        raise HeadError("dtd", _NO_DTD, file=file, line=1)


def parse_xml(data: bytes, file: str) -> etree._Element:
    """Parse XML bytes safely: no DTD, no entities, no network."""
    if len(data) > MAX_XML_BYTES:
        raise IRParseError(f"XML is {len(data)} bytes, over the {MAX_XML_BYTES} limit", file=file)
    _reject_dtd(data, file)
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                             dtd_validation=False, huge_tree=False, remove_comments=True,
                             remove_pis=True)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as err:
        line = err.position[0] if err.position else None
        raise IRParseError(f"malformed XML: {err.msg}", file=file, line=line) from None
    _refuse_doctype(root, file)
    return root


def read_bin(path: Path) -> bytes | mmap.mmap:
    """Map the .bin read-only (a lazy view for Consts); an empty file is empty bytes."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return b""
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def default_bin_path(xml_path: str | os.PathLike[str]) -> Path:
    return Path(xml_path).with_suffix(".bin")


def open_weights(xml_path: str | os.PathLike[str], bin_path: str | os.PathLike[str] | None = None
                 ) -> bytes | mmap.mmap | None:
    """The weights beside ``xml_path`` (``bin_path``, default: same stem ``.bin``), mapped
    read-only; None when the default .bin does not exist (fine when no Const needs one)."""
    file = str(xml_path)
    bpath = Path(bin_path) if bin_path is not None else default_bin_path(xml_path)
    if not bpath.exists():
        if bin_path is not None:
            raise IRParseError(f"weights file {bpath} does not exist", file=file)
        return None
    try:
        return read_bin(bpath)
    except OSError as err:
        raise IRParseError(f"cannot read weights {bpath}: {err.strerror}", file=file) from None


def model_from_xml(root: etree._Element, weights: bytes | memoryview | mmap.mmap | None, *,
                   file: str, problems: list[Diagnostic] | None = None) -> Model:
    """The ``Model`` an already parsed IR XML tree describes (``problems``: see module)."""
    with paused_gc():
        model = _Reader(file, weights, problems).model(root)
    model.path = file
    return model


class NeedsTree(Exception):
    """``stream_model`` with a schema found the file wrong: it breaks the schema or is not
    well formed, which libxml2's validating stream reports poorly (or, for a file that
    ends early, not at all). The caller reads it again as a whole tree to report every
    problem with its place."""


_HEAD_BYTES = 1 << 20
_VERSION = re.compile(rb"<net\b[^>]*?\bversion\s*=\s*[\"'](\d+)[\"']")


class _EndsEarly(Exception):
    """The event stream stopped inside an element (libxml2's validating stream may stop
    at a syntax error without raising one)."""


class HeadError(IRParseError):
    """What ``read_head`` refuses; ``kind`` is ``"io"``, ``"size"`` or ``"dtd"``."""

    def __init__(self, kind: str, message: str, *, file: str, line: int | None = None) -> None:
        self.kind = kind
        super().__init__(message, file=file, line=line)


def read_head(xml_path: str | os.PathLike[str]) -> bytes:
    """The start of an IR file up to its root element (the whole file if it is in a wide
    encoding or the root is not found early), checked: not too large, no DTD."""
    file = str(xml_path)
    try:
        with open(xml_path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_XML_BYTES:
                raise HeadError("size", f"XML is {size} bytes, over the {MAX_XML_BYTES} "
                                "limit", file=file)
            head = f.read(_HEAD_BYTES)
            if b"<net" not in head or head.startswith(tuple(b for b, _ in _WIDE_BOMS)):
                head += f.read()
    except OSError as err:
        raise HeadError("io", f"cannot read: {err.strerror or err}", file=file) from None
    try:
        _reject_dtd(head, file)
    except IRParseError as err:
        raise HeadError("dtd", err.message, file=file, line=err.line) from None
    return head


def ir_version(head: bytes) -> int | None:
    """The ``version`` of ``<net>`` as the head of the file says it (None: not found)."""
    match = _VERSION.search(head)
    return int(match.group(1)) if match else None


def stream_model(xml_path: str | os.PathLike[str], weights: bytes | mmap.mmap | None, *,
                 problems: list[Diagnostic] | None = None,
                 schema: etree.XMLSchema | None = None) -> Model:
    """Read an IR file without holding its whole XML tree (see ``_Reader.stream``),
    checking it against ``schema`` on the way when given (``SchemaInvalid`` if it breaks
    it, or any other problem: ``NeedsTree``). Call ``read_head`` first: it refuses DTDs
    and oversized files."""
    file = str(xml_path)
    events = etree.iterparse(
        file, events=("end",), tag=("net", "layer", "edge"), schema=schema, resolve_entities=False,
        no_network=True, load_dtd=False, dtd_validation=False, huge_tree=False,
        remove_comments=True, remove_pis=True)
    try:
        with paused_gc():
            model = _Reader(file, weights, problems).stream(events,
                                                             validating=schema is not None)
    except (etree.XMLSyntaxError, _EndsEarly) as err:
        if schema is not None:
            raise NeedsTree(str(err)) from None
        if isinstance(err, _EndsEarly):
            raise IRParseError("malformed XML: the document ends early", file=file) from None
        line = err.position[0] if err.position else None
        raise IRParseError(f"malformed XML: {err.msg}", file=file, line=line) from None
    except OSError as err:
        raise IRParseError(f"cannot read: {err.strerror or err}", file=file) from None
    model.path = file
    return model


def read_model(xml_path: str | os.PathLike[str], bin_path: str | os.PathLike[str] | None = None, *,
               problems: list[Diagnostic] | None = None) -> Model:
    """Read ``xml_path`` and its weights (``bin_path``, default: same stem ``.bin``).

    A missing .bin is fine when no Const needs one. With ``problems`` given,
    problems are collected there instead of raised (XML that does not parse
    still raises: there is nothing to go on).
    """
    read_head(xml_path)
    weights = open_weights(xml_path, bin_path)
    return stream_model(xml_path, weights, problems=problems)


def read_model_bytes(xml: bytes, weights: bytes | None = None, *, file: str = "<memory>",
                     problems: list[Diagnostic] | None = None) -> Model:
    """Read an IR held in memory."""
    root = parse_xml(xml, file)
    return _Reader(file, weights, problems).model(root)
