"""``irtool inspect MODEL.xml|MODEL.onnx``: what an IR holds, loops and all, in words.

The summary lists inputs, outputs, an op histogram (bodies included) and, for
every Loop / TensorIterator / If, nested and indented: where its trip count and
condition come from, its port map in words, its back edges and its body.
``--dot`` writes a graphviz drawing (one ``cluster`` per body, back edges
dashed red, port-map connections dotted); ``--svg`` renders it with ``dot``.
An ONNX model is converted first and the resulting IR is inspected.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np

from ..core.errors import IRToolError
from ..core.files import replacing
from ..ir.graph import Graph, Layer, Model, PortMapEntry, format_shape, parse_shape, shape_text

CONTROL_FLOW = ("Loop", "TensorIterator", "If")
_MAX_SHOWN_VALUES = 8


# -- loading ----------------------------------------------------------------------------------


def load_for_inspect(path: str | os.PathLike[str]) -> tuple[Model, str | None]:
    """The IR to inspect and, for ONNX input, a note saying it was converted first.

    Only IR the validator finds no error in is inspected (``IRValidationError``
    otherwise, naming the first error as ``irtool validate`` does).
    """
    from ..frontends.onnx import convert_model
    from ..validation import read_valid, require_valid

    p = Path(path)
    if p.suffix.lower() == ".onnx":
        if not p.is_file():
            raise IRToolError("no such ONNX file", file=str(p))
        return (require_valid(convert_model(p)),
                f"{p} is ONNX: converted to IR with irtool first; this is that IR")
    return read_valid(p), None


# -- words ------------------------------------------------------------------------------------


def _q(text: str) -> str:
    return '"' + text.replace('"', '\\"') + '"'


def _port_type(layer: Layer, port_id: int) -> str:
    port = layer.port(port_id)
    if port is None:
        return "?"
    et = port.precision.name if port.precision is not None else "?"
    return f"{et}{shape_text(port.dims)}"


def _const_text(layer: Layer) -> str:
    try:
        value = layer.const_value()
    except ValueError:
        return f"Const {_q(layer.name)}"
    if value.size <= _MAX_SHOWN_VALUES:
        shown = np.array2string(value, separator=", ").replace("\n", "")
        if value.dtype == np.bool_:
            shown = shown.lower()
        return f"Const {_q(layer.name)} = {shown}"
    return f"Const {_q(layer.name)} of shape {shape_text(value.shape)}"


def describe_source(graph: Graph, layer_id: int, port_id: int) -> str:
    """Where input ``port_id`` of ``layer_id`` comes from, in words."""
    src = graph.source(layer_id, port_id)
    if src is None:
        return "nothing (not connected)"
    producer = graph.layer(src[0])
    if producer.type == "Const":
        return _const_text(producer)
    if producer.type == "Parameter":
        return f"Parameter {_q(producer.name)}"
    port = producer.port(src[1])
    names = port.names if port is not None else ()
    tensor = f" tensor {_q(names[0])}" if names else ""
    return f"{producer.type} {_q(producer.name)} (layer {producer.id}, port {src[1]}){tensor}"


def _body_layer(body: Graph, layer_id: int) -> str:
    if layer_id in body:
        inner = body.layer(layer_id)
        return f"{inner.type} {_q(inner.name)} (layer {layer_id})"
    return f"missing layer {layer_id}"


def _slicing(entry: PortMapEntry) -> str:
    parts = [f"axis {entry.axis}"]
    for key in ("start", "end", "stride", "part_size"):
        value = getattr(entry, key)
        if value is not None:
            parts.append(f"{key} {value}")
    return ", ".join(parts)


def _output_port_name(layer: Layer, port_id: int) -> str:
    port = layer.port(port_id)
    return f" {_q(port.names[0])}" if port is not None and port.names else ""


def port_map_lines(graph: Graph, layer: Layer, map_name: str, body: Graph) -> list[str]:
    """The port map ``map_name`` of ``layer`` in words, one line per entry."""
    carried = {e.to_layer for e in layer.back_edges}
    lines = []
    entries = layer.port_maps.get(map_name, [])
    for e in sorted(entries, key=lambda e: (e.kind != "input", e.external_port_id < 0,
                                            e.external_port_id)):
        inner = _body_layer(body, e.internal_layer_id)
        if e.kind == "input":
            if e.external_port_id < 0:
                purpose = e.purpose or "unconnected"
                what = "the current iteration number" if purpose == "current_iteration" \
                    else f"purpose {purpose}"
                lines.append(f"{inner} <- {what} (purpose {purpose})")
                continue
            src = describe_source(graph, layer.id, e.external_port_id)
            if e.axis is not None:
                role = f"sliced, one part per iteration ({_slicing(e)})"
            elif e.internal_layer_id in carried:
                role = "loop-carried: initial value"
            elif layer.type == "If":
                role = "passed in"
            else:
                role = "invariant (same value every iteration)"
            lines.append(f"input port {e.external_port_id} <- {src} -> {inner}: {role}")
        else:
            if e.external_port_id < 0:
                purpose = e.purpose or "unconnected"
                what = "the condition for the next iteration" \
                    if purpose == "execution_condition" else f"purpose {purpose}"
                lines.append(f"{inner} -> {what} (purpose {purpose})")
                continue
            target = f"output port {e.external_port_id}" \
                     f"{_output_port_name(layer, e.external_port_id)}"
            if e.axis is not None:
                role = f"concatenated over iterations ({_slicing(e)})"
            elif layer.type == "If":
                role = "the branch's value"
            else:
                role = "value of the last iteration"
            lines.append(f"{inner} -> {target}: {role}")
    return lines


def _purpose_entry(layer: Layer, kind: str, purpose: str) -> PortMapEntry | None:
    return next((e for e in layer.port_maps.get("port_map", [])
                 if e.kind == kind and e.purpose == purpose), None)


def control_flow_lines(graph: Graph, layer: Layer) -> list[str]:
    """The words for one Loop / TensorIterator / If (bodies summarised recursively)."""
    lines = [f"{layer.type} {_q(layer.name)} (layer {layer.id}, {layer.type}-{layer.version})"]
    body_names = sorted(layer.bodies, key=lambda n: ("else" in n, n))
    if layer.type == "Loop":
        if layer.inputs:
            lines.append(f"  trip count: input port {layer.inputs[0].id} <- "
                         f"{describe_source(graph, layer.id, layer.inputs[0].id)}")
        if len(layer.inputs) > 1:
            lines.append(f"  execution condition: input port {layer.inputs[1].id} <- "
                         f"{describe_source(graph, layer.id, layer.inputs[1].id)}")
        body = layer.bodies.get("body")
        cond = _purpose_entry(layer, "output", "execution_condition")
        if body is not None and cond is not None and cond.internal_layer_id in body:
            result = body.layer(cond.internal_layer_id)
            src = describe_source(body, result.id, result.inputs[0].id) if result.inputs \
                else "?"
            lines.append(f"  body condition: Result {_q(result.name)} <- {src}")
        elif body is not None:
            lines.append("  body condition: none (the condition stays what it was)")
        it = _purpose_entry(layer, "input", "current_iteration")
        if body is not None and it is not None:
            lines.append(f"  iteration number: {_body_layer(body, it.internal_layer_id)}")
    elif layer.type == "TensorIterator":
        sliced = [e for e in layer.port_maps.get("port_map", [])
                  if e.kind == "input" and e.axis is not None]
        if sliced:
            e = sliced[0]
            lines.append(f"  iterations: length of input port {e.external_port_id} along axis "
                         f"{e.axis} (divided by part_size {e.slicing().part_size})")
        else:
            lines.append("  iterations: no sliced input")
    elif layer.type == "If" and layer.inputs:
        lines.append(f"  condition: input port {layer.inputs[0].id} <- "
                     f"{describe_source(graph, layer.id, layer.inputs[0].id)}")
    for body_name in body_names:
        body = layer.bodies[body_name]
        map_name = "port_map" if body_name == "body" else body_name.replace("_body", "_port_map")
        title = "port map" if body_name == "body" else f"{body_name.replace('_body', '')} " \
                                                       "port map"
        lines.append(f"  {title}:")
        lines += [f"    {text}" for text in port_map_lines(graph, layer, map_name, body)]
        if body_name == "body":
            lines.append("  back edges:")
            if not layer.back_edges:
                lines.append("    none")
            for edge in layer.back_edges:
                lines.append(f"    Result {_name_in(body, edge.from_layer)} -> "
                             f"Parameter {_name_in(body, edge.to_layer)}")
        lines.append(f"  {body_name}: {_graph_counts(body)}")
        lines += [f"    {text}" for text in graph_lines(body)]
    return lines


def _name_in(body: Graph, layer_id: int) -> str:
    return _q(body.layer(layer_id).name) if layer_id in body else f"<missing layer {layer_id}>"


def _graph_counts(graph: Graph) -> str:
    return (f"{len(graph)} layers ({len(graph.parameters())} Parameter, "
            f"{len(graph.results())} Result)")


def histogram(graph: Graph) -> Counter[str]:
    """``type-version`` -> count over ``graph`` and every nested body."""
    return Counter(f"{layer.type}-{layer.version}" for _, layer in graph.walk())


def graph_lines(graph: Graph) -> list[str]:
    """A body's ops (this level) and its control-flow layers, recursively."""
    counts = Counter(f"{layer.type}-{layer.version}" for layer in graph)
    lines = ["ops: " + ", ".join(f"{k} x{v}" for k, v in sorted(counts.items()))]
    for layer in graph:
        if layer.type in CONTROL_FLOW:
            lines += control_flow_lines(graph, layer)
    return lines


def summary(model: Model, note: str | None = None) -> str:
    """The whole text ``irtool inspect`` prints."""
    g = model.graph
    total = sum(1 for _ in g.walk())
    out = [f"model {_q(model.name)}: IR v{model.version}, {len(g)} layers in the main graph, "
           f"{total} with bodies" + (f" ({model.path})" if model.path else "")]
    if note:
        out.append(f"note: {note}")
    out.append("inputs:")
    for layer, name in zip(model.inputs, model.input_names()):
        out.append(f"  {name}: {_port_type(layer, layer.outputs[0].id)}")
    out.append("outputs:")
    for layer, name in zip(model.outputs, model.output_names()):
        out.append(f"  {name}: {_port_type(layer, layer.inputs[0].id)}")
    out += variable_lines(g)
    out.append("ops (type-version: count, bodies included):")
    hist = histogram(g)
    width = max((len(k) for k in hist), default=0)
    out += [f"  {k.ljust(width)}  {v}" for k, v in sorted(hist.items())]
    flows = [layer for layer in g if layer.type in CONTROL_FLOW]
    nested = sum(1 for _, layer in g.walk() if layer.type in CONTROL_FLOW)
    out.append(f"control flow: {nested} layer(s)" if nested else "control flow: none")
    for layer in flows:
        out += [f"  {text}" for text in control_flow_lines(g, layer)]
    return "\n".join(out)


def summary_dict(model: Model, note: str | None = None) -> dict:
    """What ``summary`` prints, for ``irtool inspect --json``."""
    g = model.graph
    flows = [layer for layer in g if layer.type in CONTROL_FLOW]
    return {
        "model": model.name,
        "ir_version": model.version,
        "path": str(model.path) if model.path else None,
        "note": note,
        "layers": len(g),
        "layers_with_bodies": sum(1 for _ in g.walk()),
        "inputs": [{"name": name, "type": _port_type(layer, layer.outputs[0].id)}
                   for layer, name in zip(model.inputs, model.input_names())],
        "outputs": [{"name": name, "type": _port_type(layer, layer.inputs[0].id)}
                    for layer, name in zip(model.outputs, model.output_names())],
        "variables": variables(g),
        "ops": dict(sorted(histogram(g).items())),
        "control_flow": [{"layer": layer.id, "name": layer.name,
                          "type": f"{layer.type}-{layer.version}",
                          "description": control_flow_lines(g, layer)} for layer in flows],
    }


def variables(graph: Graph) -> list[dict]:
    """The variables of a stateful model (ReadValue/Assign), by id: the type and shape its
    ReadValue-6 declares (None when none does) and the layers reading and assigning it."""
    readers: dict[str, list[Layer]] = {}
    writers: dict[str, list[Layer]] = {}
    for _, layer in graph.walk():
        if layer.type in ("ReadValue", "Assign") and layer.attrs.get("variable_id"):
            into = readers if layer.type == "ReadValue" else writers
            into.setdefault(layer.attrs["variable_id"], []).append(layer)
    found = []
    for vid in sorted({*readers, *writers}):
        read = readers.get(vid, [])
        declared = next((r for r in read if "variable_type" in r.attrs), None)
        found.append({
            "id": vid,
            "type": declared.attrs["variable_type"] if declared else None,
            "shape": format_shape(parse_shape(declared.attrs.get("variable_shape", "...")))
            if declared else None,
            "read_by": [{"layer": r.id, "name": r.name} for r in read],
            "assigned_by": [{"layer": w.id, "name": w.name} for w in writers.get(vid, [])],
        })
    return found


def variable_lines(graph: Graph) -> list[str]:
    """``variables:`` and one line per variable (see ``variables``; none: no lines)."""
    found = variables(graph)
    if not found:
        return []
    lines = ["variables (ReadValue/Assign: kept from one run of a session to the next):"]
    for v in found:
        declared = f" {v['type']}[{v['shape']}]" if v["type"] else ""
        where = ", ".join([*(f'read by {r["layer"]} "{r["name"]}"' for r in v["read_by"]),
                           *(f'assigned by {w["layer"]} "{w["name"]}"'
                             for w in v["assigned_by"])])
        lines.append(f"  {_q(v['id'])}{declared}: {where}")
    return lines


# -- graphviz ---------------------------------------------------------------------------------


def _dot_id(scope: str, layer_id: int) -> str:
    return _q(f"{scope}/{layer_id}" if scope else str(layer_id))


def _dot_label(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


_LEGEND = (
    "legend\\l"
    "solid arrow: data, labelled element type[shape]\\l"
    "dotted arrow: port map between a Loop/TensorIterator/If and its body,\\l"
    "    labelled by purpose (sliced / concatenated axis, carried, invariant)\\l"
    "dashed red arrow: back edge, a body Result feeding a Parameter next iteration\\l"
    "3-D box: Loop / TensorIterator / If, drawn above its body (a rounded cluster)\\l"
    "ellipse: Parameter / Result; note: Const (small values shown)\\l"
    "double yellow ellipse: a Loop body's iteration number (Parameter)\\l"
    "    or condition (Result)\\l"
)


def _node_attrs(layer: Layer, role: str | None = None) -> str:
    label = f"{layer.name}\n{layer.type}-{layer.version}"
    if role:
        label += f"\n({role})"
    if layer.type == "Const":
        try:
            value = layer.const_value()
            if value.size <= 4:
                label += "\n" + np.array2string(value, separator=",").replace("\n", "")
        except ValueError:
            pass
    shape = {"Parameter": "ellipse", "Result": "ellipse", "Const": "note"}.get(
        layer.type, "box3d" if layer.type in CONTROL_FLOW else "box")
    marked = ", peripheries=2, style=filled, fillcolor=lightyellow" if role else ""
    return f"label={_dot_label(label)}, shape={shape}{marked}"


def to_dot(model: Model) -> str:
    """A graphviz ``digraph`` a person reads at a glance: each body a ``cluster_...``
    subgraph drawn below its Loop/TensorIterator/If; port maps dotted and labelled by
    purpose; back edges ``style=dashed color=red``; data edges labelled with the element
    type and shape they carry; the iteration-number Parameter and the condition Result
    marked; a legend."""
    lines = ["digraph irtool {", "  graph [rankdir=TB, fontsize=10];",
             "  node [fontsize=10];", "  edge [fontsize=8];"]
    _dot_graph(model.graph, "", lines, "  ", {})
    lines.append(f"  legend [shape=note, fontsize=9, label=\"{_LEGEND}\"];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _roles(layer: Layer) -> dict[int, str]:
    """Body layer id -> its purpose, for the Loop port-map entries without an outer port."""
    roles = {}
    for entries in layer.port_maps.values():
        for e in entries:
            if e.purpose == "current_iteration":
                roles[e.internal_layer_id] = "iteration number"
            elif e.purpose == "execution_condition":
                roles[e.internal_layer_id] = "condition: run again?"
    return roles


def _port_map_label(layer: Layer, e: PortMapEntry) -> str:
    """What a port-map entry is for, in a few words."""
    carried = {b.to_layer for b in layer.back_edges}
    if e.kind == "input":
        if e.axis is not None:
            reverse = " reversed" if e.slicing().stride < 0 else ""
            return f"sliced on axis {e.axis}{reverse}"
        if layer.type == "If":
            return "passed in"
        if e.internal_layer_id in carried:
            return "carried: initial value"
        return "invariant"
    if e.axis is not None:
        reverse = " reversed" if e.slicing().stride < 0 else ""
        return f"concatenated on axis {e.axis}{reverse}"
    return "branch value" if layer.type == "If" else "last iteration's value"


def _input_label(graph: Graph, layer: Layer, port_id: int, text: str) -> str:
    """An edge's label: what the consumer takes it as (for control flow), and its type."""
    if layer.type == "Loop" and layer.inputs:
        if port_id == layer.inputs[0].id:
            return f"trip count\n{text}"
        if len(layer.inputs) > 1 and port_id == layer.inputs[1].id:
            return f"condition\n{text}"
    if layer.type == "If" and layer.inputs and port_id == layer.inputs[0].id:
        return f"condition\n{text}"
    return text


def _dot_graph(graph: Graph, scope: str, lines: list[str], indent: str,
               roles: dict[int, str]) -> None:
    for layer in graph:
        lines.append(f"{indent}{_dot_id(scope, layer.id)} "
                     f"[{_node_attrs(layer, roles.get(layer.id))}];")
        for body_name, body in layer.bodies.items():
            inner = f"{scope}/{layer.id}/{body_name}" if scope else f"{layer.id}/{body_name}"
            cluster = "cluster_" + inner.replace("/", "_")
            lines.append(f"{indent}subgraph {cluster} {{")
            title = _dot_label(f"{layer.type} {layer.name}: {body_name}")
            lines.append(f"{indent}  label={title};")
            lines.append(f"{indent}  style=rounded;")
            _dot_graph(body, inner, lines, indent + "  ", _roles(layer))
            if body_name == "body":
                for edge in layer.back_edges:
                    lines.append(f"{indent}  {_dot_id(inner, edge.from_layer)} -> "
                                 f"{_dot_id(inner, edge.to_layer)} [style=dashed, color=red, "
                                 f'label="back edge", constraint=false];')
            lines.append(f"{indent}}}")
            map_name = "port_map" if body_name == "body" else \
                body_name.replace("_body", "_port_map")
            for e in layer.port_maps.get(map_name, []):
                if e.external_port_id < 0:
                    continue
                label = _dot_label(f"port {e.external_port_id}: {_port_map_label(layer, e)}")
                outer, body_end = _dot_id(scope, layer.id), _dot_id(inner, e.internal_layer_id)
                # Both directions are drawn from the outer layer down into its body (outputs
                # with the arrowhead turned back), so the layer is ranked above its body.
                direction = "" if e.kind == "input" else ", dir=back"
                lines.append(f"{indent}{outer} -> {body_end} [style=dotted, color=blue"
                             f"{direction}, label={label}];")
    for link in graph.edges():
        producer = graph.layer(link.from_layer)
        consumer = graph.layer(link.to_layer)
        text = _input_label(graph, consumer, link.to_port,
                            _port_type(producer, link.from_port))
        lines.append(f"{indent}{_dot_id(scope, link.from_layer)} -> "
                     f"{_dot_id(scope, link.to_layer)} [label={_dot_label(text)}];")


def write_image(dot_text: str, path: str | os.PathLike[str], fmt: str = "svg") -> None:
    """Render ``dot_text`` as ``fmt`` ("svg", "png") with graphviz's ``dot``; a missing
    ``dot`` is a clear error, and a failed render leaves no file."""
    dot = shutil.which("dot")
    if dot is None:
        raise IRToolError(f"graphviz's `dot` program is not installed, so no {fmt.upper()} can "
                          "be drawn; install it (Debian/Ubuntu: `apt-get install graphviz`) or "
                          "write the drawing with --dot OUT.dot", file=str(path))
    with replacing(path) as (tmp,):
        proc = subprocess.run([dot, f"-T{fmt}", "-o", str(tmp)], input=dot_text, text=True,
                              capture_output=True, timeout=300)
        if proc.returncode != 0:
            first = (proc.stderr.strip().splitlines() or ["failed"])[0]
            raise IRToolError(f"dot failed: {first}", file=str(path))

