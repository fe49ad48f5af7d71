"""XML Schema validation of IR files against ``schemas/ir_v10.xsd`` / ``ir_v11.xsd``.

The schemas live in the top-level ``schemas/`` folder; an installed irtool
reaches them as ``irtool/schemas`` (package data), a source checkout as the
``schemas/`` folder beside the package.
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path

from lxml import etree

from ..core.diagnostics import Diagnostic
from .codes import severity

MAX_XSD_DIAGNOSTICS = 200
"""A hostile file can break the schema a million times; the first ones say enough."""


@functools.cache  # asked for every file validated: importlib's lookup cost 0.2 ms a file
def schema_candidates(version: int) -> tuple[Path, ...]:
    """Where the schema for IR ``version`` may be, in order of preference."""
    name = f"ir_v{version}.xsd"
    found: list[Path] = []
    try:
        packaged = resources.files("irtool") / "schemas" / name
        found.append(Path(str(packaged)))
    except (ModuleNotFoundError, TypeError):  # pragma: no cover - irtool is importable here
        pass
    found.append(Path(__file__).resolve().parent.parent.parent / "schemas" / name)
    return tuple(found)


def find_schema(version: int) -> Path | None:
    return next((p for p in schema_candidates(version) if p.is_file()), None)


@functools.cache
def _compile(path: Path, mtime_ns: int, constraints: bool = True) -> etree.XMLSchema:
    # Keyed by mtime too, so a schema edited during a session is recompiled.
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    tree = etree.parse(str(path), parser)
    if not constraints:
        for el in tree.iter(*IDENTITY_CONSTRAINTS):
            el.getparent().remove(el)
    return etree.XMLSchema(tree)


_XS = "{http://www.w3.org/2001/XMLSchema}"
IDENTITY_CONSTRAINTS = (f"{_XS}key", f"{_XS}keyref", f"{_XS}unique")
"""The schema's identity constraints: layer ids unique in each graph, the net's edges
naming layers that exist, port ids unique in each layer."""


def load_schema(version: int) -> tuple[etree.XMLSchema | None, str | None]:
    """The compiled schema for IR ``version``, or ``(None, why not)``."""
    path = find_schema(version)
    if path is None:
        where = ", ".join(str(p) for p in schema_candidates(version))
        return None, f"no schema for IR v{version} (looked in {where})"
    try:
        return _compile(path, path.stat().st_mtime_ns), None
    except (etree.XMLSchemaParseError, etree.XMLSyntaxError, OSError) as err:
        return None, f"schema {path} does not compile: {err}"


def load_stream_schema(version: int) -> tuple[etree.XMLSchema | None, str | None]:
    """``load_schema`` without its identity constraints (``IDENTITY_CONSTRAINTS``): the
    schema the streamed first read checks. libxml2 keeps a table of every key it checks,
    which made them 3 of the 5 s the schema took on an IR of 10^5 layers (the whole read
    and the rules: 12 s). What they check the reader and ``reading`` see again after the
    stream, and a file where any of it fails is read a second time, as a whole tree
    against the whole schema, so the diagnostics are those the whole schema gives."""
    path = find_schema(version)
    if path is None:
        return load_schema(version)
    try:
        return _compile(path, path.stat().st_mtime_ns, False), None
    except (etree.XMLSchemaParseError, etree.XMLSyntaxError, OSError):
        return load_schema(version)


def _layer_context(el: etree._Element | None) -> tuple[int | None, str | None, str]:
    """Id, name and scope of the innermost ``<layer>`` holding ``el``."""
    chain: list[etree._Element] = []
    while el is not None:
        chain.append(el)
        el = el.getparent()
    chain.reverse()  # root first
    layer_id: int | None = None
    layer_name: str | None = None
    scope_parts: list[str] = []
    pending_body: str | None = None
    for node in chain:
        if node.tag == "layer":
            if layer_id is not None and pending_body is not None:
                scope_parts += [str(layer_id), pending_body]
            pending_body = None
            try:
                layer_id = int(node.get("id", ""))
            except ValueError:
                layer_id = None
            layer_name = node.get("name")
        elif node.tag in ("body", "then_body", "else_body") and layer_id is not None:
            pending_body = node.tag
    return layer_id, layer_name, "/".join(scope_parts)


def xsd_diagnostics(root: etree._Element, file: str, version: int) -> list[Diagnostic]:
    """One ``XSD`` diagnostic per schema error (``XSD_UNAVAILABLE`` if no schema)."""
    schema, why = load_schema(version)
    if schema is None:
        return [Diagnostic("XSD_UNAVAILABLE", f"XSD checks skipped: {why}", file,
                           root.sourceline, severity=severity("XSD_UNAVAILABLE"))]
    if schema.validate(root):
        return []
    tree = root.getroottree()
    out: list[Diagnostic] = []
    errors = list(schema.error_log)
    for entry in errors[:MAX_XSD_DIAGNOSTICS]:
        el = None
        if entry.path:
            try:
                hits = tree.xpath(entry.path)
                el = hits[0] if hits and isinstance(hits[0], etree._Element) else None
            except etree.XPathError:
                el = None
        layer_id, layer_name, scope = _layer_context(el)
        message = entry.message.replace("{http://www.w3.org/2001/XMLSchema}", "xs:")
        out.append(Diagnostic("XSD", message, file, entry.line, layer_id, layer_name, scope,
                              severity("XSD")))
    if len(errors) > MAX_XSD_DIAGNOSTICS:
        out.append(Diagnostic("XSD", f"... and {len(errors) - MAX_XSD_DIAGNOSTICS} more schema "
                              "errors", file, errors[MAX_XSD_DIAGNOSTICS].line,
                              severity=severity("XSD")))
    return out
