"""Write the in-memory IR as IR XML + .bin, deterministically and atomically.

Same model -> same bytes: layers and edges in their stored order, attributes
in their stored order, constants laid out in the order they are met (depth
first through bodies), identical constant payloads stored once.
The model's ``<rt_info>`` ends with a record of the weights (``irtool.ir.serde.weights``)
so that a ``.bin`` that is not this ``.xml``'s can be told. Both files are written
to temporaries in the target folder and renamed into place only when both are
complete (see ``irtool.core.files``), so a failed save leaves nothing behind.

The ``.bin`` is streamed: payloads in memory are written from views of them, and a
payload that is a slice of a file (a weight of the ONNX model it was converted from,
``ConstData.source``) is copied from that file through one reusable buffer, so the
weights never all sit in memory; the record's checksum is computed on the way.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import BinaryIO

from lxml import etree

from ...core.errors import IRToolError
from ...core.files import replacing
from ..graph import Graph, Layer, Model, Port, PortMapEntry, RTNode, join_names
from .weights import RECORD_TAG, WeightsDigest, split_record

_COPY_CHUNK = 1 << 20
"""Bytes copied at a time from a weight's source file to the .bin."""

_PORT_MAP_ORDER = ("port_map", "then_port_map", "else_port_map")
_BODY_ORDER = ("body", "then_body", "else_body")


@contextmanager
def _opened(source: tuple[str, int] | None) -> Iterator[int | None]:
    """A descriptor of ``source``'s file for ``pread`` (None without a source)."""
    if source is None:
        yield None
        return
    fd = os.open(source[0], os.O_RDONLY)
    try:
        yield fd
    finally:
        os.close(fd)


class _Payload:
    """One Const's bytes: a view, and the file slice holding the same bytes (or None).

    Reads of a payload with a source go to the file (``pread``), not through the view:
    the view maps the file, and the kernel maps a file's pages in folios of up to 2 MiB,
    so a few sampled bytes would put megabytes of each weight into the process."""

    __slots__ = ("source", "view")

    def __init__(self, view: memoryview, source: tuple[str, int] | None) -> None:
        self.view = view
        self.source = source

    def read(self, fd: int | None, start: int, stop: int) -> bytes | memoryview:
        if fd is None or self.source is None:
            return self.view[start:stop]
        return os.pread(fd, stop - start, self.source[1] + start)


class _BinBuilder:
    """Accumulates constant payloads, storing each distinct payload once.

    Payloads are kept as views (no copies) and written one after the other. Equal
    payloads have equal sizes and equal sampled bytes, so only payloads that agree on
    both are compared in full: most weights differ in size or in their first bytes, and
    no payload is hashed for de-duplication."""

    def __init__(self) -> None:
        self.chunks: list[memoryview] = []
        self.sources: list[tuple[str, int] | None] = []  # per chunk: see ConstData.source
        self.size = 0
        self.seen: dict[tuple[int, bytes], list[tuple[_Payload, int]]] = {}
        self.digest = WeightsDigest()  # the record binding the .xml to this .bin

    @staticmethod
    def _sample(payload: _Payload, fd: int | None) -> bytes:
        n = len(payload.view)
        if n <= 256:
            return bytes(payload.read(fd, 0, n))
        step = n // 16
        return b"".join(bytes(payload.read(fd, i, i + 8)) for i in range(0, n - 8, step)) \
            + bytes(payload.read(fd, n - 8, n))

    @staticmethod
    def _same(a: _Payload, b: _Payload) -> bool:
        """Equal bytes (sizes are equal), compared a chunk at a time."""
        with _opened(a.source) as fa, _opened(b.source) as fb:
            n = len(a.view)
            return all(a.read(fa, i, min(n, i + _COPY_CHUNK))
                       == b.read(fb, i, min(n, i + _COPY_CHUNK))
                       for i in range(0, n, _COPY_CHUNK))

    def add(self, payload: memoryview, source: tuple[str, int] | None = None) -> int:
        if source is not None:
            # A mapped file cut short would kill the process (SIGBUS) at the first read
            # past its end: say so first.
            path, start = source
            try:
                size = os.stat(path).st_size
            except OSError as err:
                raise IRToolError(f"cannot read the weights converted from it: "
                                  f"{err.strerror}", file=path) from None
            if size < start + len(payload):
                raise IRToolError("ends before the weights it held when converted: was it "
                                  "changed since?", file=path)
        this = _Payload(payload, source)
        with _opened(source) as fd:
            key = (len(payload), self._sample(this, fd))
        same = self.seen.setdefault(key, [])
        for other, offset in same:
            if self._same(other, this):
                return offset
        offset = self.size
        same.append((this, offset))
        self.chunks.append(payload)
        self.sources.append(source)
        self.size += len(payload)
        return offset

    def checksum(self) -> None:
        """The record's data checksum from the payloads in memory (``write`` computes it
        while writing instead)."""
        for chunk in self.chunks:
            self.digest.add_data(chunk)

    def write(self, out: BinaryIO) -> None:
        """Write the payloads to ``out`` one after the other, checksumming them; those
        with a source file are copied from it in chunks, never whole in memory."""
        buffer: memoryview | None = None
        with ExitStack() as files:
            opened: dict[str, io.BufferedReader] = {}
            for chunk, source in zip(self.chunks, self.sources):
                if source is None:
                    self.digest.add_data(chunk)
                    out.write(chunk)
                    continue
                path, offset = source
                if path not in opened:
                    opened[path] = files.enter_context(open(path, "rb"))
                if buffer is None:
                    buffer = memoryview(bytearray(_COPY_CHUNK))
                src = opened[path]
                src.seek(offset)
                left = len(chunk)
                while left:
                    n = src.readinto(buffer[:min(left, _COPY_CHUNK)])
                    if not n:
                        raise IRToolError("ends before the weights it held when converted: "
                                          "was it changed since?", file=path)
                    self.digest.add_data(buffer[:n])
                    out.write(buffer[:n])
                    left -= n


def _rt_element(parent: etree._Element, node: RTNode) -> None:
    el = etree.SubElement(parent, node.tag, node.attrs)
    if node.text is not None:
        el.text = node.text
    for child in node.children:
        _rt_element(el, child)


def _rt_info(parent: etree._Element, info: list[RTNode] | None) -> None:
    if info is None:
        return
    el = etree.SubElement(parent, "rt_info")
    for node in info:
        _rt_element(el, node)


def _port(parent: etree._Element, port: Port) -> None:
    attrs = {"id": str(port.id)}
    if port.precision is not None:
        attrs["precision"] = port.precision.precision
    if port.names:
        attrs["names"] = join_names(port.names)
    attrs.update(port.extra)
    el = etree.SubElement(parent, "port", attrs)
    for d in port.dims or ():
        etree.SubElement(el, "dim").text = str(d)
    _rt_info(el, port.rt_info)


def _port_map_entry(parent: etree._Element, entry: PortMapEntry) -> None:
    attrs: dict[str, str] = {}
    if entry.axis is not None:
        attrs["axis"] = str(entry.axis)
    attrs["external_port_id"] = str(entry.external_port_id)
    attrs["internal_layer_id"] = str(entry.internal_layer_id)
    for key in ("start", "end", "stride", "part_size"):
        value = getattr(entry, key)
        if value is not None:
            attrs[key] = str(value)
    if entry.purpose is not None:
        attrs["purpose"] = entry.purpose
    attrs.update(entry.extra)
    etree.SubElement(parent, entry.kind, attrs)


# Child elements of a <layer> in the order OpenVINO writes them; a layer read from a file
# is written in the order it had (``Layer.child_order``).
_CHILD_ORDER = ("data", "rt_info", "input", "output", *_PORT_MAP_ORDER, "back_edges",
                *_BODY_ORDER)


def _layer(parent: etree._Element, layer: Layer, weights: _BinBuilder) -> None:
    attrs = {"id": str(layer.id), "name": layer.name, "type": layer.type,
             "version": layer.version}
    attrs.update(layer.extra)
    el = etree.SubElement(parent, "layer", attrs)
    written: set[str] = set()
    unknown = iter(layer.unknown)
    for tag in layer.child_order or ():
        if tag in _CHILD_ORDER:
            if tag not in written:
                written.add(tag)
                _layer_child(el, layer, tag, weights)
        else:  # an element irtool does not model, kept in its place
            node = next(unknown, None)
            if node is not None:
                _rt_element(el, node)
    for tag in _CHILD_ORDER:
        if tag not in written:
            _layer_child(el, layer, tag, weights)
    for node in unknown:
        _rt_element(el, node)


def _layer_child(el: etree._Element, layer: Layer, tag: str, weights: _BinBuilder) -> None:
    """The child element ``tag`` of ``layer``'s element, if the layer has one."""
    if tag == "rt_info":
        _rt_info(el, layer.rt_info)
    elif tag == "data":
        data = dict(layer.attrs)
        if layer.type == "Const" and layer.const is not None:
            payload = layer.const.view()
            offset = weights.add(payload, layer.const.source)
            data["offset"] = str(offset)
            data["size"] = str(len(payload))
            weights.digest.add_const(data.get("element_type", ""), data.get("shape", ""),
                                     offset, len(payload))
        if data or layer.has_data:
            etree.SubElement(el, "data", data)
    elif tag in ("input", "output"):
        ports = layer.inputs if tag == "input" else layer.outputs
        if ports:
            group = etree.SubElement(el, tag)
            for port in ports:
                _port(group, port)
    elif tag in _PORT_MAP_ORDER:
        if tag in layer.port_maps:
            pm = etree.SubElement(el, tag)
            for entry in layer.port_maps[tag]:
                _port_map_entry(pm, entry)
    elif tag == "back_edges":
        if layer.back_edges or layer.type in ("Loop", "TensorIterator"):
            be = etree.SubElement(el, "back_edges")
            for edge in layer.back_edges:
                etree.SubElement(be, "edge", {"from-layer": str(edge.from_layer),
                                              "to-layer": str(edge.to_layer), **edge.extra})
    elif tag in layer.bodies:
        _graph(etree.SubElement(el, tag), layer.bodies[tag], weights)


def _graph(el: etree._Element, graph: Graph, weights: _BinBuilder) -> None:
    layers = etree.SubElement(el, "layers")
    for layer in graph.layers:
        _layer(layers, layer, weights)
    edges = etree.SubElement(el, "edges")
    for e in graph.edges():
        etree.SubElement(edges, "edge", {
            "from-layer": str(e.from_layer), "from-port": str(e.from_port),
            "to-layer": str(e.to_layer), "to-port": str(e.to_port)})
    _rt_info(el, graph.rt_info)


def serialize(model: Model) -> tuple[bytes, bytes]:
    """The XML text and the .bin payload of ``model``."""
    xml, chunks = serialize_parts(model)
    return xml, b"".join(chunks)


def serialize_parts(model: Model) -> tuple[bytes, list[memoryview]]:
    """The XML text of ``model`` and its .bin as the views to write one after the other."""
    root, weights = _tree(model)
    weights.checksum()
    return _text(root, weights), weights.chunks


def _tree(model: Model) -> tuple[etree._Element, _BinBuilder]:
    """The XML tree of ``model`` (its weights record without values yet) and its .bin."""
    weights = _BinBuilder()
    root = etree.Element("net", {"name": model.name, "version": str(model.version)})
    _graph(root, model.graph, weights)
    # The top-level rt_info is the model's own; _graph wrote graph.rt_info (None at top).
    # It ends with a fresh record of the weights (irtool.ir.serde.weights), replacing any old one.
    info, _ = split_record(model.rt_info)
    _rt_info(root, [*(info or []), RTNode(RECORD_TAG)])
    for node in model.unknown:
        _rt_element(root, node)
    return root, weights


def _text(root: etree._Element, weights: _BinBuilder) -> bytes:
    """The XML text, with the weights record of the checksummed ``weights``."""
    record = root.find(f"rt_info/{RECORD_TAG}")
    assert record is not None
    for child in weights.digest.record().children:
        _rt_element(record, child)
    etree.indent(root, space="\t")
    text: bytes = etree.tostring(root, encoding="utf-8")
    return b'<?xml version="1.0"?>\n' + text + b"\n"


def write_model(model: Model, xml_path: str | os.PathLike[str],
                bin_path: str | os.PathLike[str] | None = None) -> tuple[Path, Path]:
    """Write ``model`` to ``xml_path`` and ``bin_path`` (default: same stem ``.bin``).

    All or nothing: on any failure neither file is created or changed. Missing folders
    are created. Both files are synced to disk before they are renamed into place.
    """
    xml_path = Path(xml_path)
    bin_path = Path(bin_path) if bin_path is not None else xml_path.with_suffix(".bin")
    root, weights = _tree(model)
    write_ir_files(xml_path, bin_path, root, weights)
    return xml_path, bin_path


def write_ir_files(xml_path: Path, bin_path: Path, root: etree._Element,
                   weights: _BinBuilder) -> None:
    """Stream ``weights`` to ``bin_path``, then the XML of ``root`` (with the weights
    record) to ``xml_path``, all or nothing, synced to disk (see ``write_model``)."""
    with replacing(bin_path, xml_path) as (bin_tmp, xml_tmp):  # .xml last: readers open it
        # (An OSError, of the temporaries or of a weight's source file, becomes an
        # IRToolError naming that file in ``replacing``.)
        with open(bin_tmp, "wb") as f:
            weights.write(f)
            f.flush()
            os.fsync(f.fileno())
        with open(xml_tmp, "wb") as f:
            f.write(_text(root, weights))
            f.flush()
            os.fsync(f.fileno())
