"""An ONNX file parsed without its large tensors: the *skeleton*.

``onnx.load`` reads the whole file and protobuf parses it into a copy of its own, so a
model's weights are in memory twice before conversion starts. ``read_skeleton`` instead
maps the file and walks protobuf's wire format only as deep as tensors can sit: the main
graph's initializers, ``TensorProto`` attributes (``Constant``'s ``value``) and the graphs
of ``Loop``/``Scan``/``If`` attributes at any depth, and the nodes of model-local
functions. Every tensor whose ``raw_data`` holds at least ``threshold`` bytes is rewritten
as an external-data tensor (``data_location=EXTERNAL``, ``location``/``offset``/``length``)
that points into the ``.onnx`` file itself; only what is left is parsed. A model saved
with real external data (``save_as_external_data``) is then the same case, and
``external_data`` reads both lazily.

The rewrite keeps every other byte as it was: a message the walk descends into gets its
length prefix encoded again, the rest is copied span by span.
"""

from __future__ import annotations

import contextlib
import mmap
import os
from pathlib import Path

import onnx

THRESHOLD = 1024
"""Tensors with fewer ``raw_data`` bytes stay inline: shape inference and the translators
read the values of small ones (shapes, axes), and they cost nothing to parse."""

# The message kinds the walk descends into, and for each the fields (all length-delimited)
# that hold messages which can hold tensors: field number -> kind of that message.
_MODEL, _GRAPH, _NODE, _ATTRIBUTE, _FUNCTION, _TENSOR = range(6)
_CHILDREN = {
    _MODEL: {7: _GRAPH, 25: _FUNCTION},  # ModelProto.graph, .functions
    _GRAPH: {1: _NODE, 5: _TENSOR},  # GraphProto.node, .initializer
    _FUNCTION: {7: _NODE},  # FunctionProto.node
    _NODE: {5: _ATTRIBUTE},  # NodeProto.attribute
    _ATTRIBUTE: {5: _TENSOR, 6: _GRAPH, 10: _TENSOR, 11: _GRAPH},  # .t, .g, .tensors, .graphs
}
# TensorProto's fields: name, raw_data, external_data, data_location.
_NAME, _RAW_DATA, _EXTERNAL_DATA, _DATA_LOCATION = 8, 9, 13, 14
_WIRE_VARINT, _WIRE_FIXED64, _WIRE_BYTES, _WIRE_FIXED32 = 0, 1, 2, 5
_FOLIO = 2 << 20  # the largest folio the kernel maps a file's pages in


class WireError(ValueError):
    """The file is not the protobuf encoding of a message (truncated, bad varint...)."""


def _varint(buf: mmap.mmap | bytes, pos: int, end: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= end:
            raise WireError(f"a varint runs past byte {end}")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise WireError(f"a varint longer than 10 bytes at byte {pos}")


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field: key, length, payload."""
    return _encode_varint(number << 3 | _WIRE_BYTES) + _encode_varint(len(payload)) + payload


def _entry(key: str, value: str) -> bytes:
    """A ``TensorProto.external_data`` entry (a StringStringEntryProto)."""
    return _field(_EXTERNAL_DATA, _field(1, key.encode()) + _field(2, value.encode()))


class _Walk:
    def __init__(self, buf: mmap.mmap | bytes, location: str, threshold: int) -> None:
        self.buf = buf
        self.location = location
        self.threshold = threshold
        self.moved = 0  # tensors made external, for tests and logging

    def release(self, start: int, end: int) -> None:
        """Unmap the pages around ``buf[start:end]`` (a large tensor the walk stepped over):
        the kernel maps file pages in folios of up to 2 MiB, so reading a tensor's header
        maps megabytes of its neighbours' data, and without this the process's high-water
        mark would grow by the size of the model."""
        if isinstance(self.buf, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
            lo = max(0, start - _FOLIO)
            lo -= lo % mmap.PAGESIZE
            hi = min(len(self.buf), end + _FOLIO)
            with contextlib.suppress(OSError, ValueError):
                self.buf.madvise(mmap.MADV_DONTNEED, lo, hi - lo)

    def fields(self, start: int, end: int):
        """``(number, wire type, field start, value start, value end)`` of each field."""
        buf, pos = self.buf, start
        while pos < end:
            field_start = pos
            key, pos = _varint(buf, pos, end)
            number, wire = key >> 3, key & 7
            if wire == _WIRE_VARINT:
                value_start = pos
                _, pos = _varint(buf, pos, end)
            elif wire == _WIRE_BYTES:
                length, value_start = _varint(buf, pos, end)
                pos = value_start + length
            elif wire == _WIRE_FIXED64:
                value_start, pos = pos, pos + 8
            elif wire == _WIRE_FIXED32:
                value_start, pos = pos, pos + 4
            else:  # groups (3, 4) are not in ONNX's schema
                raise WireError(f"wire type {wire} at byte {field_start}")
            if pos > end or number == 0:
                raise WireError(f"field {number} at byte {field_start} runs past byte {end}")
            yield number, wire, field_start, value_start, pos

    def message(self, start: int, end: int, kind: int) -> bytes | None:
        """The message at ``buf[start:end]`` with its large tensors made external, or None
        when nothing in it changes."""
        if kind == _TENSOR:
            return self.tensor(start, end)
        children = _CHILDREN[kind]
        parts: list[bytes] = []
        copied = start  # bytes before this are in ``parts`` already
        for number, wire, field_start, value_start, value_end in self.fields(start, end):
            child = children.get(number)
            if child is None or wire != _WIRE_BYTES:
                continue
            new = self.message(value_start, value_end, child)
            if new is None:
                continue
            parts.append(self.buf[copied:field_start])
            parts.append(_field(number, new))
            copied = value_end
        if not parts:
            return None
        parts.append(self.buf[copied:end])
        return b"".join(parts)

    def tensor(self, start: int, end: int) -> bytes | None:
        raw: tuple[int, int, int] | None = None
        for number, wire, field_start, value_start, value_end in self.fields(start, end):
            if number in (_EXTERNAL_DATA, _DATA_LOCATION):
                return None  # already external (or says where its data is): leave it
            if number == _RAW_DATA and wire == _WIRE_BYTES:
                raw = (field_start, value_start, value_end)
        if raw is None or raw[2] - raw[1] < self.threshold:
            return None
        field_start, value_start, value_end = raw
        self.moved += 1
        new = b"".join((
            self.buf[start:field_start], self.buf[value_end:end],
            _entry("location", self.location), _entry("offset", str(value_start)),
            _entry("length", str(value_end - value_start)),
            _encode_varint(_DATA_LOCATION << 3 | _WIRE_VARINT), _encode_varint(1)))
        self.release(start, end)
        return new


def skeleton_bytes(path: str | os.PathLike[str], threshold: int = THRESHOLD) -> tuple[bytes, int]:
    """The serialized skeleton of the ONNX file at ``path`` and how many tensors it moved
    out. Raises ``WireError`` when the file is not a protobuf message."""
    path = Path(path)
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return b"", 0
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            walk = _Walk(buf, path.name, threshold)
            new = walk.message(0, size, _MODEL)
            return (buf[:] if new is None else new), walk.moved


def read_skeleton(path: str | os.PathLike[str], threshold: int = THRESHOLD) -> onnx.ModelProto:
    """The ONNX model at ``path`` with every tensor of ``threshold`` bytes or more left in
    the file as external data (relative to the file's folder). Raises ``WireError`` or
    protobuf's ``DecodeError`` when the file is not a model."""
    data, _ = skeleton_bytes(path, threshold)
    model = onnx.ModelProto()
    model.ParseFromString(data)
    return model


__all__ = ["THRESHOLD", "WireError", "read_skeleton", "skeleton_bytes"]
