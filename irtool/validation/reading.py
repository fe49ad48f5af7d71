"""The ``reading`` family: the file read for validation, in two passes at most.

The first pass streams the XML, checked against the schema on the way (``xsd``; all of
it but its identity constraints, ``xsd.load_stream_schema``), and reads it leniently: what
the IR reader cannot make sense of becomes a diagnostic (``XML_STRUCTURE``,
``LAYER_ATTR``... from ``irtool.ir.serde.xml_reader``) instead of an exception. Only when
the schema finds something, the model read may break an identity constraint
(``_breaks_identity``), or the .bin cannot be opened, is the file read a second time, as a
whole tree against the whole schema, so that every schema error is reported with the
layer it is in. A file that cannot be read at all (``FILE_UNREADABLE``), that is not
XML (``XML_MALFORMED``) or declares a DTD (``XML_DTD``) ends here, without a model.
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..core.diagnostics import Diagnostic
from ..core.errors import IRParseError
from ..core.sniff import other_kind
from ..ir.graph import Model
from ..ir.serde import xml_reader
from .codes import severity
from .report import repeats_a_port_id
from .xsd import load_stream_schema, xsd_diagnostics


@dataclass
class Read:
    """A file read for validation: the model (None when it could not be read at all), the
    size of its .bin, what reading found (``diagnostics``: the file's and the schema's),
    and what the lenient reader reported (``problems``, which the rules must not repeat)."""

    model: Model | None
    weights_size: int = 0
    diagnostics: list[Diagnostic] = field(default_factory=list)
    problems: list[Diagnostic] = field(default_factory=list)


def file_problem(code: str, message: str, file: str, line: int | None = None) -> Diagnostic:
    return Diagnostic(code, message, file, line, severity=severity(code))


_HEAD_CODES = {"io": "FILE_UNREADABLE", "size": "XML_MALFORMED", "dtd": "XML_DTD"}


def read(path: str | os.PathLike[str], bin_path: str | os.PathLike[str] | None) -> Read:
    """Read the file as a stream checked against the schema on the way; when the schema
    finds something (or the .bin cannot be opened), read it again as a whole tree."""
    file = str(path)
    mixup = other_kind(path, "ir")
    if mixup is not None:
        return Read(None, diagnostics=[file_problem("FILE_UNREADABLE", mixup, file)])
    try:
        head = xml_reader.read_head(path)
    except xml_reader.HeadError as err:
        return Read(None, diagnostics=[file_problem(_HEAD_CODES[err.kind], err.message, file,
                                                    err.line)])
    version = xml_reader.ir_version(head)
    schema, why = load_stream_schema(version if version in (10, 11) else 11)
    del head
    try:
        weights = xml_reader.open_weights(path, bin_path)
    except IRParseError:
        return _read_tree(path, bin_path)
    problems: list[Diagnostic] = []
    try:
        model = xml_reader.stream_model(path, weights, problems=problems, schema=schema)
    except xml_reader.NeedsTree:
        return _read_tree(path, bin_path)
    except xml_reader.HeadError as err:  # a DOCTYPE only the parser could see
        return Read(None, diagnostics=[file_problem(_HEAD_CODES[err.kind], err.message, file,
                                                    err.line)])
    except IRParseError as err:
        return Read(None, diagnostics=[file_problem("XML_MALFORMED", err.message, file,
                                                    err.line)])
    if schema is not None and _breaks_identity(model, problems):
        return _read_tree(path, bin_path)  # the whole schema's diagnostics, located
    diagnostics = [] if schema is not None else [
        file_problem("XSD_UNAVAILABLE", f"XSD checks skipped: {why}", file, model.graph.line)]
    return Read(model, _size(weights), diagnostics, problems)


_IDENTITY_CODES = frozenset({"DUPLICATE_LAYER_ID", "EDGE_UNKNOWN_LAYER"})


def _breaks_identity(model: Model, problems: list[Diagnostic]) -> bool:
    """Might the file break one of the schema's identity constraints, which the streamed
    read does not check (``xsd.load_stream_schema``)? A layer id used twice in a graph or
    an edge naming a missing layer (the lenient reader reports both, in bodies too), or
    a port id used twice in a layer. Never false when one is broken; true in a few files
    the constraints let pass (an edge of a body naming a missing layer), which then cost
    a second read only."""
    if any(p.code in _IDENTITY_CODES for p in problems):
        return True
    return any(repeats_a_port_id(layer) for _, layer in model.graph.walk())


def _read_tree(path: str | os.PathLike[str], bin_path: str | os.PathLike[str] | None) -> Read:
    """``read`` on the whole XML tree at once (every schema error located)."""
    file = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        return Read(None, diagnostics=[file_problem(
            "FILE_UNREADABLE", f"cannot read: {err.strerror or err}", file)])
    try:
        root = xml_reader.parse_xml(data, file)
    except xml_reader.HeadError as err:
        return Read(None, diagnostics=[file_problem(_HEAD_CODES[err.kind], err.message, file,
                                                    err.line)])
    except IRParseError as err:
        return Read(None, diagnostics=[file_problem("XML_MALFORMED", err.message, file,
                                                    err.line)])
    del data
    try:
        version = int(root.get("version", "11"))
    except ValueError:
        version = 11
    diagnostics = xsd_diagnostics(root, file, version if version in (10, 11) else 11)
    problems: list[Diagnostic] = []
    try:
        weights = xml_reader.open_weights(path, bin_path)
        model = xml_reader.model_from_xml(root, weights, file=file, problems=problems)
    except IRParseError as err:  # the .bin cannot be read
        return Read(None, diagnostics=[*diagnostics, *problems, file_problem(
            "FILE_UNREADABLE", err.message, file, err.line)])
    del root
    return Read(model, _size(weights), diagnostics, problems)


def _size(weights: bytes | mmap.mmap | None) -> int:
    return len(weights) if weights is not None else 0
