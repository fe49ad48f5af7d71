"""Canonical comparison of two IR files: is a round trip faithful?

Two IR XML documents are canonically equal when they have the same elements in
the same order, each with the same attributes and values, and the same
non-blank text; whitespace between elements, quoting, the XML declaration,
comments and ``<x></x>`` versus ``<x/>`` do not count. Attribute order does not
count either (XML gives it no meaning) unless ``attribute_order`` is set.
A faithful round trip is canonically equal XML plus a byte-identical ``.bin``.
"""

from __future__ import annotations

import os
from pathlib import Path

from lxml import etree

from .weights import RECORD_TAG
from .xml_reader import default_bin_path, parse_xml

PathLike = str | os.PathLike[str]


def _root(source: PathLike | bytes) -> tuple[etree._Element, str]:
    if isinstance(source, bytes):
        return parse_xml(source, "<memory>"), "<memory>"
    path = Path(source)
    return parse_xml(path.read_bytes(), str(path)), str(path)


def _where(el: etree._Element) -> str:
    """``net/layers/layer[3]/data`` with the layer's id when it has one."""
    parts = []
    node: etree._Element | None = el
    while node is not None:
        step = str(node.tag)
        layer_id = node.get("id") if step == "layer" else None
        if layer_id is not None:
            step += f"[id={layer_id}]"
        parts.append(step)
        node = node.getparent()
    return "/".join(reversed(parts))


def _text(value: str | None) -> str:
    return (value or "").strip()


def _element_difference(a: etree._Element, b: etree._Element, attribute_order: bool) -> str | None:
    where = f"line {a.sourceline} vs {b.sourceline}: {_where(a)}"
    if a.tag != b.tag:
        return f"{where}: element <{a.tag}> != <{b.tag}>"
    a_attrs, b_attrs = list(a.attrib.items()), list(b.attrib.items())
    if dict(a_attrs) != dict(b_attrs):
        for name in dict.fromkeys([k for k, _ in a_attrs] + [k for k, _ in b_attrs]):
            if a.get(name) != b.get(name):
                return f"{where}: attribute {name!r} {a.get(name)!r} != {b.get(name)!r}"
    if attribute_order and a_attrs != b_attrs:
        return (f"{where}: attribute order {[k for k, _ in a_attrs]} != "
                f"{[k for k, _ in b_attrs]}")
    if _text(a.text) != _text(b.text):
        return f"{where}: text {_text(a.text)!r} != {_text(b.text)!r}"
    a_kids, b_kids = list(a), list(b)
    for a_kid, b_kid in zip(a_kids, b_kids):
        found = _element_difference(a_kid, b_kid, attribute_order)
        if found:
            return found
        if _text(a_kid.tail) != _text(b_kid.tail):
            return f"{where}: text after <{a_kid.tag}> differs"
    if len(a_kids) != len(b_kids):
        extra = (a_kids if len(a_kids) > len(b_kids) else b_kids)[min(len(a_kids), len(b_kids))]
        side = "first" if len(a_kids) > len(b_kids) else "second"
        return (f"{where}: {len(a_kids)} child elements != {len(b_kids)}; only the {side} has "
                f"<{extra.tag}> at line {extra.sourceline}")
    return None


def _drop_weights_record(root: etree._Element) -> None:
    """Remove the record of the weights irtool adds on save (``irtool.ir.serde.weights``), and the
    model ``<rt_info>`` if it held nothing else: it describes the .bin, not the model."""
    for info in root.findall("rt_info"):
        for record in info.findall(RECORD_TAG):
            info.remove(record)
        if len(info) == 0 and not _text(info.text) and not info.attrib:
            root.remove(info)


def xml_difference(a: PathLike | bytes, b: PathLike | bytes, *,
                   attribute_order: bool = False) -> str | None:
    """None when the two IR XML documents (paths or bytes) are canonically equal, else a
    one-line description of the first difference (both line numbers and the element path).
    irtool's record of the weights in the model's ``<rt_info>`` does not count."""
    root_a, _ = _root(a)
    root_b, _ = _root(b)
    for root in (root_a, root_b):
        _drop_weights_record(root)
    return _element_difference(root_a, root_b, attribute_order)


def round_trip_difference(original_xml: PathLike, copy_xml: PathLike, *,
                          attribute_order: bool = False) -> str | None:
    """None when ``copy_xml`` is a faithful copy of ``original_xml``: canonically equal XML
    and a byte-identical ``.bin`` beside each (or no ``.bin`` beside either); else why not."""
    found = xml_difference(original_xml, copy_xml, attribute_order=attribute_order)
    if found:
        return f"XML: {found}"
    bin_a, bin_b = default_bin_path(original_xml), default_bin_path(copy_xml)
    data_a = bin_a.read_bytes() if bin_a.exists() else None
    data_b = bin_b.read_bytes() if bin_b.exists() else None
    if data_a == data_b or not (data_a or data_b):
        return None
    if data_a is None or data_b is None:
        return f".bin: only {'the original' if data_b is None else 'the copy'} has one"
    if len(data_a) != len(data_b):
        return f".bin: {len(data_a)} bytes != {len(data_b)}"
    first = next(i for i, (x, y) in enumerate(zip(data_a, data_b)) if x != y)
    return f".bin: first differing byte at offset {first}"
