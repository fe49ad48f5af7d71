"""Rules on the shape of one (sub-)graph: ids, edges, ports, cycles, connectivity."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import networkx as nx

from ..ir.graph import Graph, Layer
from .report import (
    Reporter,
    find_port,
    fmt_dims,
    known_rank,
    precision,
    repeats_a_port_id,
    static_dims_differ,
)

SOURCE_TYPES = ("Parameter", "Const")


def check_structure(graph: Graph, layers: dict[int, Layer], scope: str, rep: Reporter) -> None:
    """Every structural rule for one graph (not its bodies), reported rule by rule: ids,
    edges, cycles, boundary layers, connected inputs."""
    edges, cycles = rep.aside(), rep.aside()
    fed = _check_edges(graph, layers, scope, edges)
    _check_cycles(graph, layers, scope, cycles)
    boundary, connected = rep.aside(), rep.aside()
    _check_layers(graph, layers, fed, scope, rep, boundary, connected)
    for found in (edges, cycles, boundary, connected):
        rep.diagnostics += found.diagnostics


def _check_layers(graph: Graph, layers: dict[int, Layer], fed: dict[int, set[int]],
                  scope: str, ids: Reporter, boundary: Reporter, connected: Reporter) -> None:
    """The rules on each layer of the graph, in one pass over the layers (10^5 of them):
    ids (layer ids and port ids used once, as stored), boundary layers (a Parameter or
    Const has no input and one output, a Result one input and no output) and connected
    inputs (each input port of any other layer has a producer), each to its reporter."""
    owners: dict[int, Layer] = {}
    pred = graph.nx._pred
    for node, layer in layers.items():
        lid = layer.id
        owner = owners.get(lid)
        if owner is not None and owner is not layer:
            ids.add("DUPLICATE_LAYER_ID", f"layer id {lid} is used twice (also by "
                    f"{owner.name!r})", layer=layer, scope=scope)
        else:
            owners[lid] = layer
        if lid != node and not (lid in layers and layers[lid] is not layer):
            ids.add("LAYER_ID_MISMATCH", f"layer {layer.name!r} has id {lid} but is stored "
                    f"under node {node}", layer=layer, scope=scope)
        inputs, outputs = layer.inputs, layer.outputs
        if repeats_a_port_id(layer):
            seen: dict[int, str] = {}
            for kind, ports in (("input", inputs), ("output", outputs)):
                for port in ports:
                    if port.id in seen:
                        ids.add("DUPLICATE_PORT_ID", f"port id {port.id} is used by two ports "
                                f"({seen[port.id]} and {kind})", layer=layer,
                                line=port.line, scope=scope)
                    seen[port.id] = kind
        op = layer.type
        if op in SOURCE_TYPES:
            has_in_edges = bool(pred[node])
            if inputs or has_in_edges:
                boundary.add("PARAMETER_HAS_INPUT", f"a {op} takes no inputs but has "
                             f"{len(inputs)} input port(s)"
                             f"{' and incoming edges' if has_in_edges else ''}", layer=layer,
                             scope=scope)
            if len(outputs) != 1:
                boundary.add("PORT_COUNT", f"a {op} has exactly one output port, not "
                             f"{len(outputs)}", layer=layer, scope=scope)
            continue  # their (forbidden) inputs are PARAMETER_HAS_INPUT, not unconnected
        if op == "Result":
            if outputs:
                boundary.add("RESULT_HAS_OUTPUT", f"a Result has no outputs but has "
                             f"{len(outputs)} output port(s)", layer=layer, scope=scope)
            if len(inputs) != 1:
                boundary.add("PORT_COUNT", f"a Result has exactly one input port, not "
                             f"{len(inputs)}", layer=layer, scope=scope)
        ports_fed = fed.get(node, ())
        for port in inputs:
            if port.id not in ports_fed:
                connected.add("UNCONNECTED_INPUT", f"input port {port.id} has no producer",
                              layer=layer, line=port.line or layer.line, scope=scope)


def _check_edges(graph: Graph, layers: dict[int, Layer], scope: str,
                 rep: Reporter) -> dict[int, set[int]]:
    """Edge endpoint, producer and agreement rules; returns layer -> input ports fed."""
    fed = _sound_edges(graph, layers)
    if fed is not None:
        return fed  # nothing to report
    fed = defaultdict(set)
    producers: dict[tuple[int, int], tuple[int, int]] = {}
    # In file order, so that of two producers the later edge is the one reported.
    ordered = sorted(graph.nx.edges(data=True),
                     key=lambda e: (e[2].get("line") is None, e[2].get("line") or 0))
    for u, v, data in ordered:
        line = data.get("line")
        from_port, to_port = data.get("from_port"), data.get("to_port")
        src, dst = layers.get(u), layers.get(v)
        out_port = find_port(src.outputs, from_port) if src is not None else None
        in_port = find_port(dst.inputs, to_port) if dst is not None else None
        if out_port is not None and in_port is not None and (v, to_port) not in producers:
            # A sound edge of two ports that agree, cut short.
            a, b = out_port.precision, in_port.precision
            if a is b and out_port.dims == in_port.dims and out_port.dims:
                producers[(v, to_port)] = (u, from_port)
                fed[v].add(to_port)
                continue
        text = f"edge {u}:{from_port} -> {v}:{to_port}"
        missing = [n for n in (u, v) if n not in layers]
        if missing:
            present = next((layers[n] for n in (v, u) if n in layers), None)
            rep.add("EDGE_UNKNOWN_LAYER", f"{text} names layer {missing[0]}, which does not "
                    "exist", layer=present, line=line, scope=scope,
                    layer_id=None if present else missing[0])
            continue
        assert src is not None and dst is not None
        if out_port is None:
            what = "an input port" if find_port(src.inputs, from_port) else "not a port"
            rep.add("EDGE_UNKNOWN_PORT", f"{text}: port {from_port} of the source is {what}, "
                    "not an output port", layer=src, line=line, scope=scope)
        if in_port is None:
            what = "an output port" if find_port(dst.outputs, to_port) else "not a port"
            rep.add("EDGE_UNKNOWN_PORT", f"{text}: port {to_port} of the destination is {what}, "
                    "not an input port", layer=dst, line=line, scope=scope)
        if in_port is None:
            continue
        key = (v, to_port)
        if key in producers:
            first = producers[key]
            rep.add("MULTIPLE_PRODUCERS", f"input port {to_port} is fed by {first[0]}:{first[1]} "
                    f"and again by {u}:{from_port}", layer=dst, line=line, scope=scope)
        else:
            producers[key] = (u, from_port)
        fed[v].add(to_port)
        if out_port is None:
            continue
        a, b = precision(out_port), precision(in_port)
        if a is not None and b is not None and a != b:
            rep.add("EDGE_TYPE_MISMATCH", f"{text} joins {a.name} to {b.name}", layer=dst,
                    line=line, scope=scope)
        ra, rb = known_rank(out_port), known_rank(in_port)
        if ra is not None and rb is not None:
            axis = static_dims_differ(out_port.dims, in_port.dims) if ra == rb else None
            if ra != rb or axis is not None:
                rep.add("EDGE_SHAPE_MISMATCH", f"{text} joins {fmt_dims(out_port)} to "
                        f"{fmt_dims(in_port)}", layer=dst, line=line, scope=scope)
    return fed


def _sound_edges(graph: Graph, layers: dict[int, Layer]) -> dict[int, set[int]] | None:
    """``_check_edges``'s answer when every edge is sound (the common case, 10^5 edges read
    in one pass over networkx's adjacency, in no particular order): each joins an output
    port to an input port of layers that exist, of one element type and one non-empty
    list of dims, and no input port has two producers. None when any is not: the rules
    then go through the edges in file order to report what is wrong."""
    fed: dict[int, set[int]] = defaultdict(set)
    succ: dict[int, dict[int, dict[int, dict[str, Any]]]] = graph.nx._succ
    for u, targets in succ.items():
        src = layers.get(u)
        if src is None:
            return None
        outputs = src.outputs
        for v, keys in targets.items():
            dst = layers.get(v)
            if dst is None:
                return None
            inputs, ports_fed = dst.inputs, fed[v]
            for data in keys.values():
                from_port, to_port = data.get("from_port"), data.get("to_port")
                if to_port in ports_fed:
                    return None  # a second producer
                for out_port in outputs:
                    if out_port.id == from_port:
                        break
                else:
                    return None
                for in_port in inputs:
                    if in_port.id == to_port:
                        break
                else:
                    return None
                if out_port.precision is not in_port.precision \
                        or out_port.dims != in_port.dims or not out_port.dims:
                    return None
                ports_fed.add(to_port)
    return fed


def _check_cycles(graph: Graph, layers: dict[int, Layer], scope: str, rep: Reporter) -> None:
    if graph.is_acyclic():
        return  # the common case, in linear time; only a cyclic graph needs the SCCs
    sub = graph.nx.subgraph(layers)
    for component in nx.strongly_connected_components(sub):
        if len(component) == 1:
            node = next(iter(component))
            if not sub.has_edge(node, node):
                continue
        first = min(component)
        try:
            path = [e[0] for e in nx.find_cycle(sub.subgraph(component), source=first)]
        except nx.NetworkXNoCycle:  # pragma: no cover - an SCC always has a cycle
            path = sorted(component)
        chain = " -> ".join(str(n) for n in [*path, path[0]])
        rep.add("CYCLE", f"layers form a cycle: {chain}", layer=layers[first], scope=scope)
