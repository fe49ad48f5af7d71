"""Rules on element types, dimensions, Parameter/Const attributes and Const data."""

from __future__ import annotations

import re
from functools import lru_cache

from ..ir.graph import Layer, Port
from ..ir.serde.xml_reader import MAX_DIM
from ..ir.types import ElementType, element_type
from .report import Reporter, fmt_dims, precision

# <data> attributes that hold an element type on the ops that have them
# (Convert, ShapeOf, NonZero, TopK, NonMaxSuppression, RandomUniform, ...).
TYPE_ATTRS = ("element_type", "destination_type", "output_type", "index_element_type")

# One dimension of a shape attribute as OpenVINO writes it: "3", "?", "-1",
# or an interval "1..10" / "..10" / "1..".
_DIM = re.compile(r"^(?:-1|\d+|\?|\d*\.\.\d*)$")

CONST_CODES = frozenset({"CONST_DATA", "CONST_OUT_OF_BOUNDS", "CONST_SIZE", "CONST_SHAPE",
                         "ELEMENT_TYPE", "BAD_DIM"})


@lru_cache(maxsize=4096)  # a model repeats a few shapes over and over (10^5 Consts)
def parse_shape_attr(text: str) -> tuple[tuple[int, ...] | None, str | None]:
    """Strictly parse a ``shape`` attribute: ``(dims, None)`` or ``(None, why)``.

    ``dims`` is None for dynamic rank (``"..."``); a dynamic or interval dim is -1.
    """
    body = text.strip()
    if body in ("...", "[...]"):
        return None, None
    body = body.strip("[]").strip()
    if not body:
        return (), None
    dims = []
    for part in body.split(","):
        part = part.strip()
        if not _DIM.match(part):
            return None, f"{part!r} is not a dimension"
        if part in ("?", "-1") or ".." in part:
            dims.append(-1)
            continue
        value = int(part)
        if value > MAX_DIM:
            return None, f"dimension {value} is absurd (over {MAX_DIM})"
        dims.append(value)
    return tuple(dims), None


def _type_or_none(text: str) -> ElementType | None:
    try:
        return element_type(text)
    except KeyError:
        return None


def check_tensors(layer: Layer, scope: str, rep: Reporter) -> None:
    """Type, dim, shape-attribute and Const rules for one layer (the ports' and the Const
    data's only when the reader has not checked them: ``Reporter.as_read``)."""
    if not rep.as_read:
        for port in layer.inputs:
            _check_port(layer, "input", port, scope, rep)
        for port in layer.outputs:
            _check_port(layer, "output", port, scope, rep)
    for attr in TYPE_ATTRS:
        value = layer.attrs.get(attr)
        if value is not None and _type_or_none(value) is None \
                and not rep.reported(scope, layer, "ELEMENT_TYPE"):
            rep.add("ELEMENT_TYPE", f"{attr}={value!r} is not an element type", layer=layer,
                    scope=scope)
    if layer.type in ("Parameter", "Const"):
        _check_source_attrs(layer, scope, rep)
    if layer.type == "Const" and not rep.as_read and not rep.reported(scope, layer,
                                                                      *CONST_CODES):
        _check_const_data(layer, scope, rep)


def _check_port(layer: Layer, kind: str, port: Port, scope: str, rep: Reporter) -> None:
    if port.precision is not None and not isinstance(port.precision, ElementType):
        try:  # an in-memory model may carry a spelling instead of an ElementType
            element_type(str(port.precision))
        except KeyError:
            rep.add("ELEMENT_TYPE", f"{kind} port {port.id} has unknown precision "
                    f"{port.precision!r}", layer=layer, line=port.line, scope=scope)
    for dim in port.dims or ():
        if not isinstance(dim, int) or dim < -1 or dim > MAX_DIM:
            rep.add("BAD_DIM", f"{kind} port {port.id} has dim {dim}, outside -1..{MAX_DIM}",
                    layer=layer, line=port.line, scope=scope)
            break


def _check_source_attrs(layer: Layer, scope: str, rep: Reporter) -> None:
    et_text = layer.attrs.get("element_type")
    et: ElementType | None = None
    if et_text is None:
        rep.add("ELEMENT_TYPE", f"a {layer.type} needs an element_type attribute", layer=layer,
                scope=scope)
    else:
        et = _type_or_none(et_text)  # an unknown one is reported with the other type attrs
    shape_text = layer.attrs.get("shape")
    dims: tuple[int, ...] | None = None
    shape_ok = False
    if shape_text is None:
        rep.add("SHAPE_ATTR", f"a {layer.type} needs a shape attribute", layer=layer, scope=scope)
    else:
        dims, why = parse_shape_attr(shape_text)
        if why is not None:
            code = "BAD_DIM" if "absurd" in why else "SHAPE_ATTR"
            if not rep.reported(scope, layer, code):
                rep.add(code, f"shape={shape_text!r}: {why}", layer=layer, scope=scope)
        else:
            shape_ok = True
    port = layer.outputs[0] if len(layer.outputs) == 1 else None
    if port is None:
        return  # PORT_COUNT
    port_et = precision(port)
    if et is not None and et.kind != "dynamic" and port_et is not None and port_et != et:
        rep.add("ATTR_PORT_MISMATCH", f"element_type {et.name} but the output port says "
                f"{port_et.name}", layer=layer, line=port.line, scope=scope)
    if shape_ok and port.dims is not None:
        if dims is None:
            bad = len(port.dims) > 0
        else:
            bad = len(dims) != len(port.dims) or any(
                a >= 0 and b >= 0 and a != b for a, b in zip(dims, port.dims))
        if bad:
            rep.add("ATTR_PORT_MISMATCH", f"shape={shape_text!r} but the output port has dims "
                    f"{fmt_dims(port)}", layer=layer, line=port.line, scope=scope)


def _check_const_data(layer: Layer, scope: str, rep: Reporter) -> None:
    """Const data rules for in-memory models; for files the reader checked them first
    (``xml_reader._Reader.const``: a Const it gave data to breaks none of these rules,
    and one it did not is in ``rep.earlier``)."""
    const = layer.const
    if const is None:
        if ("", None, "FILE_UNREADABLE") in rep.earlier:
            return  # no .bin: the reader said so once for all Consts
        rep.add("CONST_DATA", "a Const without data", layer=layer, scope=scope)
        return
    buffer = getattr(const, "_buffer", None)
    if buffer is not None:
        try:
            available = memoryview(buffer).nbytes
        except TypeError:
            available = None
        if available is not None and const.offset + const.size > available:
            rep.add("CONST_OUT_OF_BOUNDS", f"Const data [{const.offset}, "
                    f"{const.offset + const.size}) lies beyond its {available}-byte buffer",
                    layer=layer, scope=scope)
            return
    et = _type_or_none(layer.attrs.get("element_type", ""))
    if et is None:
        return  # ELEMENT_TYPE
    dims, why = parse_shape_attr(layer.attrs.get("shape", ""))
    if why is not None:
        return  # SHAPE_ATTR / BAD_DIM
    if dims is None or any(d < 0 for d in dims):
        rep.add("CONST_SHAPE", f"Const shape {layer.attrs.get('shape')!r} is not static",
                layer=layer, scope=scope)
        return
    if et.kind in ("string", "dynamic"):
        return
    count = 1
    for d in dims:
        count *= d
    expected = et.nbytes(count)
    if const.size != expected and not (expected == 0 and const.size <= 1):
        # (OpenVINO stores an empty Const as one placeholder byte.)
        rep.add("CONST_SIZE", f"Const of {et.name}[{','.join(map(str, dims))}] needs "
                f"{expected} bytes but has {const.size}", layer=layer, scope=scope)
