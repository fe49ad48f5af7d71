"""Variables of stateful models: ReadValue and Assign layers that share a ``variable_id``.

Variables belong to the whole model (bodies included). The rules: every ReadValue and
Assign names a variable; a variable that is read is assigned and one that is assigned is
read, by one Assign; what its ReadValues declare (``variable_type`` / ``variable_shape``
of ReadValue-6, else the ReadValue's output port) agrees among them; and the ports that
carry its value (ReadValue's init input and output, Assign's input) agree with that.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.scopes import body_scope
from ..ir.graph import Graph, Layer, Port, Shape, parse_shape, shape_text
from ..ir.types import ElementType, element_type
from .report import Reporter, layer_map

STATEFUL = ("ReadValue", "Assign")


@dataclass
class _Use:
    scope: str
    layer: Layer
    et: ElementType | None  # None: any
    shape: Shape | None  # None: any rank


def _compatible(a: Shape | None, b: Shape | None) -> bool:
    if a is None or b is None:
        return True
    return len(a) == len(b) and all(x < 0 or y < 0 or x == y for x, y in zip(a, b))


def _port_info(port: Port | None) -> tuple[ElementType | None, Shape | None]:
    if port is None:
        return None, None
    et = port.precision if port.precision is not None and port.precision.kind != "dynamic" \
        else None
    return et, port.dims


def _show(et: ElementType | None, shape: Shape | None) -> str:
    return f"{et.name if et else 'any type'} {shape_text(shape)}"


def _declared(layer: Layer, scope: str, rep: Reporter) -> tuple[ElementType | None,
                                                                 Shape | None] | None:
    """What a ReadValue declares for its variable; None when the declaration is broken
    (reported)."""
    if layer.version != "opset6" and "variable_type" not in layer.attrs:
        return _port_info(layer.outputs[0] if layer.outputs else None)
    raw_type = layer.attrs.get("variable_type", "dynamic")
    try:
        et: ElementType | None = element_type(raw_type)
    except KeyError:
        rep.add("VARIABLE_TYPE", f"variable_type {raw_type!r} is not an element type",
                layer=layer, scope=scope)
        return None
    if et is not None and et.kind == "dynamic":
        et = None
    shape = parse_shape(layer.attrs.get("variable_shape", "..."))
    return et, shape


def check_variables(graph: Graph, rep: Reporter) -> None:
    """The rules of the module docstring over ``graph`` and every body in it."""
    readers: dict[str, list[_Use]] = {}
    writers: dict[str, list[tuple[str, Layer]]] = {}
    for scope, layer in _stateful(graph, ""):
        vid = layer.attrs.get("variable_id")
        if not vid:
            rep.add("VARIABLE_ID", f"a {layer.type} needs a variable_id", layer=layer,
                    scope=scope)
            continue
        if layer.type == "Assign":
            writers.setdefault(vid, []).append((scope, layer))
            continue
        declared = _declared(layer, scope, rep)
        if declared is None:
            continue
        use = _Use(scope, layer, *declared)
        for what, port in (("initial value input", layer.inputs[0] if layer.inputs else None),
                           ("output", layer.outputs[0] if layer.outputs else None)):
            _agree(use, vid, what, port, rep)
        first = readers.setdefault(vid, [use])[0]
        if first is not use and not (_same_type(first.et, use.et)
                                     and _compatible(first.shape, use.shape)):
            rep.add("VARIABLE_CONFLICT", f"variable {vid!r} is {_show(use.et, use.shape)} here "
                    f"but {_show(first.et, first.shape)} at layer {first.layer.id} "
                    f'"{first.layer.name}": two variables under one id', layer=layer, scope=scope)
    for vid, uses in readers.items():
        if vid not in writers:
            use = uses[0]
            rep.add("VARIABLE_NO_ASSIGN", f"variable {vid!r} is read but no Assign writes it",
                    layer=use.layer, scope=use.scope)
    for vid, assigns in writers.items():
        reads = readers.get(vid)
        if not reads:
            for scope, layer in assigns:
                rep.add("VARIABLE_NO_READ", f"Assign writes variable {vid!r}, which no "
                        "ReadValue reads", layer=layer, scope=scope)
            continue
        for scope, layer in assigns[1:]:
            first_assign = assigns[0][1]
            rep.add("VARIABLE_CONFLICT", f"variable {vid!r} is assigned here and at layer "
                    f'{first_assign.id} "{first_assign.name}"', layer=layer, scope=scope)
        for scope, layer in assigns:
            _agree(_Use(scope, layer, reads[0].et, reads[0].shape), vid, "input",
                   layer.inputs[0] if layer.inputs else None, rep)


def _stateful(graph: Graph, scope: str) -> list[tuple[str, Layer]]:
    """The ReadValue and Assign layers of ``graph`` and its bodies, in ``Graph.walk``'s
    order (without the nodes networkx made up for edges to missing layers, which other
    rules report)."""
    found = []
    for layer in layer_map(graph).values():
        if layer.type in STATEFUL:
            found.append((scope, layer))
        if layer.bodies:
            for name, body in layer.bodies.items():
                found += _stateful(body, body_scope(scope, layer.id, name))
    return found


def _same_type(a: ElementType | None, b: ElementType | None) -> bool:
    return a is None or b is None or a == b


def _agree(use: _Use, vid: str, what: str, port: Port | None, rep: Reporter) -> None:
    """Report a port of ``use.layer`` whose type or shape the variable cannot hold."""
    et, shape = _port_info(port)
    if _same_type(use.et, et) and _compatible(use.shape, shape):
        return
    rep.add("VARIABLE_TYPE", f"the {what} is {_show(et, shape)} but variable {vid!r} is "
            f"{_show(use.et, use.shape)}", layer=use.layer, scope=use.scope,
            line=port.line if port is not None else None)
