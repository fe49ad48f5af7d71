"""Loop-5, TensorIterator-1 and If-8 rules: port maps, back edges, special ports, slicing.

The law is OpenVINO's Loop-5 and TensorIterator-1 specs, plus what OpenVINO's
IR reader does with a port map: it keys entries by ``external_port_id`` (so a
duplicate silently drops one), honours a back edge only through an input
entry of its Parameter, and takes ``start=0 end=-1 stride=1 part_size=1`` as
slicing defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.scopes import body_scope
from ..ir.graph import Graph, Layer, Port, PortMapEntry, sliced_range
from .report import (
    Reporter,
    dims,
    find_port,
    fmt_dims,
    known_rank,
    layer_map,
    one_element,
    precision,
    producer,
    static_dims_differ,
)

LOOP_PURPOSES = {"current_iteration": "input", "execution_condition": "output"}
_INTEGER_COUNTS = ("i32", "i64")


@dataclass
class _Ctx:
    graph: Graph  # the graph holding the control-flow layer
    layers: dict[int, Layer]
    layer: Layer
    scope: str
    rep: Reporter
    # what the port map's sliced inputs cut (entry, parts) and its concatenated outputs
    # (entry, outer port, body port): the iteration count is checked on the whole
    sliced: list[tuple[PortMapEntry, int]] = field(default_factory=list)
    concatenated: list[tuple[PortMapEntry, Port, Port]] = field(default_factory=list)

    def add(self, code: str, message: str, line: int | None = None) -> None:
        self.rep.add(code, message, layer=self.layer, line=line, scope=self.scope)


def check_control_flow(graph: Graph, layers: dict[int, Layer], layer: Layer, scope: str,
                       rep: Reporter) -> None:
    """Rules for one Loop, TensorIterator or If layer (its bodies are walked by the caller)."""
    if layer.type == "Loop":
        _check_iterator(_Ctx(graph, layers, layer, scope, rep), is_loop=True)
    elif layer.type == "TensorIterator":
        _check_iterator(_Ctx(graph, layers, layer, scope, rep), is_loop=False)
    elif layer.type == "If":
        _check_if(_Ctx(graph, layers, layer, scope, rep))


# -- shared: one port map against one body -------------------------------------


@dataclass
class _Mapped:
    """What one port map establishes, for the rules that look at the whole."""

    inputs: dict[int, list[PortMapEntry]]  # body Parameter id -> input entries
    outputs: dict[int, PortMapEntry]  # external output port -> entry
    external_inputs: set[int]
    special: dict[str, list[PortMapEntry]]  # purpose -> entries


def _check_port_map(ctx: _Ctx, body: Graph, entries: list[PortMapEntry], map_name: str,
                    *, purposes: dict[str, str]) -> _Mapped:
    layer = ctx.layer
    body_layers = layer_map(body)
    mapped = _Mapped({}, {}, set(), {})
    seen_ext: dict[tuple[str, int], PortMapEntry] = {}
    seen_internal: dict[tuple[str, int], PortMapEntry] = {}
    for entry in entries:
        kind = entry.kind
        special: str | None = None  # a purpose that is right for this entry
        where = (f"{map_name} {kind} external_port_id={entry.external_port_id} "
                 f"internal_layer_id={entry.internal_layer_id}")
        # purpose
        if entry.purpose is not None:
            wanted_kind = purposes.get(entry.purpose)
            if wanted_kind is None:
                allowed = ", ".join(purposes) or "none"
                ctx.add("PORT_MAP_PURPOSE", f"{where}: purpose={entry.purpose!r} is not known "
                        f"for {layer.type} (allowed: {allowed})", entry.line)
            elif wanted_kind != kind:
                ctx.add("PORT_MAP_PURPOSE", f"{where}: purpose={entry.purpose!r} belongs on an "
                        f"{wanted_kind} entry", entry.line)
            special = entry.purpose
        # duplicates: OpenVINO's reader keys entries by external port id
        ext_key = (kind, entry.external_port_id)
        if ext_key in seen_ext:
            ctx.add("PORT_MAP_DUPLICATE", f"{where}: external port {entry.external_port_id} is "
                    f"already mapped by the {kind} entry on line {seen_ext[ext_key].line}; "
                    "OpenVINO keeps only one of them", entry.line)
        seen_ext.setdefault(ext_key, entry)
        int_key = (kind, entry.internal_layer_id)
        if kind == "input" and int_key in seen_internal:
            ctx.add("PORT_MAP_DUPLICATE", f"{where}: body Parameter {entry.internal_layer_id} "
                    f"is already fed by the entry on line {seen_internal[int_key].line}",
                    entry.line)
        seen_internal.setdefault(int_key, entry)
        # the body end
        internal = body_layers.get(entry.internal_layer_id)
        wanted_type = "Parameter" if kind == "input" else "Result"
        if internal is None:
            ctx.add("PORT_MAP_UNKNOWN_LAYER", f"{where}: the body has no layer "
                    f"{entry.internal_layer_id}", entry.line)
        elif internal.type != wanted_type:
            ctx.add("PORT_MAP_WRONG_KIND", f"{where}: body layer {internal.id} "
                    f"{internal.name!r} is a {internal.type}, not a {wanted_type}", entry.line)
            internal = None
        if kind == "input" and internal is not None:
            mapped.inputs.setdefault(internal.id, []).append(entry)
        if special is not None and internal is not None:
            # Only a real body Parameter/Result counts as the special port.
            mapped.special.setdefault(special, []).append(entry)
        # the outer end
        ext_port = _external_port(ctx, entry, where)
        if ext_port is None:
            continue
        if kind == "input":
            mapped.external_inputs.add(ext_port.id)
        else:
            mapped.outputs.setdefault(ext_port.id, entry)
        if internal is not None:
            _check_entry_tensors(ctx, entry, ext_port, internal, where)
    return mapped


def _external_port(ctx: _Ctx, entry: PortMapEntry, where: str) -> Port | None:
    layer = ctx.layer
    ext = entry.external_port_id
    if ext == -1:
        if entry.purpose is None:
            ctx.add("PORT_MAP_BAD_PORT", f"{where}: external_port_id -1 (not connected) needs "
                    "a purpose", entry.line)
        return None
    own, other = ((layer.inputs, layer.outputs) if entry.kind == "input"
                  else (layer.outputs, layer.inputs))
    port = find_port(own, ext)
    if port is None:
        if find_port(other, ext) is not None:
            other_kind = "an output" if entry.kind == "input" else "an input"
            why = f"port {ext} is {other_kind} port of the {layer.type}"
        else:
            why = f"the {layer.type} has no port {ext}"
        ctx.add("PORT_MAP_BAD_PORT", f"{where}: {why}", entry.line)
    return port


def _body_port(internal: Layer) -> Port | None:
    ports = internal.outputs if internal.type == "Parameter" else internal.inputs
    return ports[0] if ports else None


def _check_entry_tensors(ctx: _Ctx, entry: PortMapEntry, ext_port: Port, internal: Layer,
                         where: str) -> None:
    body_port = _body_port(internal)
    if body_port is None:
        return
    a, b = precision(ext_port), precision(body_port)
    if a is not None and b is not None and a != b:
        ctx.add("PORT_MAP_TYPE", f"{where}: the {ctx.layer.type} port is {a.name} but body "
                f"{internal.type} {internal.id} is {b.name}", entry.line)
    if entry.axis is not None:
        if entry.kind == "input":
            _check_sliced_input(ctx, entry, ext_port, body_port, where)
        else:
            _check_concat_output(ctx, entry, ext_port, body_port, where)
        return
    r_ext, r_body = known_rank(ext_port), known_rank(body_port)
    if r_ext is None or r_body is None:
        return
    if r_ext != r_body:
        ctx.add("PORT_MAP_SHAPE", f"{where}: the {ctx.layer.type} port has rank {r_ext} "
                f"{fmt_dims(ext_port)} but body {internal.type} {internal.id} has rank {r_body} "
                f"{fmt_dims(body_port)}", entry.line)
    elif entry.kind == "input" and ctx.layer.type != "If":
        # A body Parameter takes the input's shape (relaxed to -1 where a back
        # edge disagrees); two different static dims cannot both hold.
        axis = static_dims_differ(ext_port.dims, body_port.dims)
        if axis is not None:
            ctx.add("PORT_MAP_SHAPE", f"{where}: dim {axis} is {dims(ext_port)[axis]} on the "
                    f"{ctx.layer.type} port but {dims(body_port)[axis]} on body Parameter "
                    f"{internal.id}", entry.line)


def _slicing_params(ctx: _Ctx, entry: PortMapEntry, where: str) -> tuple[int, int, int, int]:
    start, end, stride, part = entry.slicing()
    if part < 1:
        ctx.add("SLICE_PARAMS", f"{where}: part_size={part} must be at least 1", entry.line)
    if stride == 0:
        ctx.add("SLICE_PARAMS", f"{where}: stride=0 never advances", entry.line)
    return start, end, stride, part


def _check_sliced_input(ctx: _Ctx, entry: PortMapEntry, ext_port: Port, body_port: Port,
                        where: str) -> None:
    start, end, stride, part = _slicing_params(ctx, entry, where)
    rank = known_rank(ext_port)
    if rank is None:
        return
    axis = entry.axis
    assert axis is not None
    if not -rank <= axis < rank:
        ctx.add("SLICE_AXIS", f"{where}: axis={axis} is outside the rank {rank} of the sliced "
                f"input {fmt_dims(ext_port)}", entry.line)
        return
    axis %= rank
    r_body = known_rank(body_port)
    if r_body is not None and r_body != rank:
        ctx.add("PORT_MAP_SHAPE", f"{where}: a slice of {fmt_dims(ext_port)} has rank {rank} "
                f"but body Parameter {entry.internal_layer_id} has {fmt_dims(body_port)}",
                entry.line)
    elif r_body is not None and part >= 1 and dims(body_port)[axis] not in (-1, part):
        ctx.add("PORT_MAP_SHAPE", f"{where}: slices along axis {axis} have size {part} but body "
                f"Parameter {entry.internal_layer_id} has {fmt_dims(body_port)}", entry.line)
    dim = dims(ext_port)[axis]
    if dim < 0 or part < 1 or stride == 0:
        return  # dynamic: nothing to fit; bad params reported above
    # A static empty dimension names no element: _parts says so (OpenVINO's CPU plugin
    # refuses such a TensorIterator; irtool's runtime would run it zero times).
    parts, problem = _parts(dim, start, end, stride, part)
    if problem is not None:
        ctx.add("SLICE_DIM", f"{where}: {problem}", entry.line)
        return
    if parts is not None:
        ctx.sliced.append((entry, parts))
    if not _openvino_reads_alike(start, end, stride):
        ctx.add("SLICE_OPENVINO", f"{where}: start={start} end={end} stride={stride}: "
                "OpenVINO's CPU plugin reads only start=0 with a negative end (stride > 0) or "
                "start=-1 with an end of 0 or more (stride < 0); it cuts other ranges from the "
                "first (last) element or refuses them, while irtool's runtime cuts the range "
                "written", entry.line)


def _parts(dim: int, start: int, end: int, stride: int, part: int
           ) -> tuple[int | None, str | None]:
    """How many parts ``start``/``end`` cut every ``|stride|`` elements, ``part`` long, from
    a dimension of ``dim``, read as both engines read them (``ir.graph.sliced_range``); or
    why they do not fit."""
    lo, hi = sliced_range(dim, start, end, stride)
    if not (0 <= lo <= dim and 0 <= hi <= dim):
        return None, f"start={start} end={end} fall outside the sliced dimension of size {dim}"
    if lo > hi:
        return None, f"stride={stride} runs away from end={end} (start={start}, dimension {dim})"
    length, step = hi - lo, abs(stride)
    if not length:
        return None, (f"start={start} end={end} name no element of the sliced dimension of "
                      f"size {dim} (end is exclusive, -1 one past the last element)")
    if length % part or length < part or (length - part) % step:
        # The spec's walk: a part of part_size every |stride| elements, the last one
        # ending at end. (OpenVINO's CPU plugin refuses a stride longer than the range,
        # and in a Loop any stride but +-1.)
        every = f" every {step}" if step != part else ""
        return None, (f"the {length} sliced elements of dimension {dim} do not split into "
                      f"parts of {part}{every}")
    return (length - part) // step + 1, None


def _openvino_reads_alike(start: int, end: int, stride: int) -> bool:
    """Does OpenVINO's CPU plugin slice ``start``/``end`` as written? It cuts the parts from
    the first element walking forward and from the last walking back, whatever ``start``
    says, and refuses a forward range whose ``end`` is 0 or more, or a backward one whose
    ``end`` is negative (``tests/validation/test_validate_rules.py`` records what each engine
    does with each)."""
    return (start == 0 and end < 0) if stride > 0 else (start == -1 and end >= 0)


def _check_concat_output(ctx: _Ctx, entry: PortMapEntry, ext_port: Port, body_port: Port,
                         where: str) -> None:
    _slicing_params(ctx, entry, where)
    axis = entry.axis
    assert axis is not None
    r_ext, r_body = known_rank(ext_port), known_rank(body_port)
    rank = r_ext if r_ext is not None else r_body
    if rank is None:
        # No dims: a scalar or a dynamic rank (IR writes both so); nothing to check.
        return
    if not -rank <= axis < rank:
        ctx.add("CONCAT_AXIS", f"{where}: axis={axis} is outside the rank {rank} of the "
                f"concatenated output {fmt_dims(ext_port if r_ext else body_port)}", entry.line)
        return
    if r_ext is not None and r_body is not None and r_ext != r_body:
        ctx.add("PORT_MAP_SHAPE", f"{where}: concatenating {fmt_dims(body_port)} gives rank "
                f"{r_body}, but the output port is {fmt_dims(ext_port)}", entry.line)
        return
    if r_ext is None or r_body is None:
        return
    axis %= rank
    for i, (outer, inner) in enumerate(zip(dims(ext_port), dims(body_port))):
        if i != axis and outer >= 0 and inner >= 0 and outer != inner:
            # e.g. axis="-1" where the port was declared for axis 0: irtool joins along the
            # axis the entry names, as the spec says; OpenVINO's CPU plugin then fails or
            # returns the last iteration only.
            ctx.add("PORT_MAP_SHAPE", f"{where}: concatenating {fmt_dims(body_port)} along "
                    f"axis {entry.axis} keeps dim {i} at {inner}, but the output port declares "
                    f"{fmt_dims(ext_port)}", entry.line)
            return
    ctx.concatenated.append((entry, ext_port, body_port))


def _check_iteration_count(ctx: _Ctx, entries: list[PortMapEntry]) -> None:
    """A TensorIterator runs as many iterations as its sliced inputs cut parts (once when
    none is sliced, as in OpenVINO's CPU plugin); they must agree, and each concatenated
    output of static dims must hold that many parts."""
    if ctx.sliced:
        first, count = ctx.sliced[0]
        source = f"its sliced input on port {first.external_port_id} cuts {count} part(s)"
        start = first.slicing().start
    elif not any(e.kind == "input" and e.axis is not None for e in entries):
        count, source, start = 1, "it slices no input, so its body runs once: 1 part", 0
    else:
        return  # a sliced input of dynamic size: the count is known only at run time
    for entry, parts in ctx.sliced[1:]:
        if parts != count:
            ctx.add("ITERATION_COUNT", f"port_map input external_port_id="
                    f"{entry.external_port_id}: cuts {parts} part(s), but {source}; OpenVINO's "
                    "CPU plugin refuses such a TensorIterator", entry.line)
            return
    reading = "" if start in (0, -1) else (
        f"; irtool reads start={start} as the spec does (the first part at index {start}), "
        f"OpenVINO's CPU plugin cuts its {count} part(s) from index 0")
    for entry, ext_port, body_port in ctx.concatenated:
        assert entry.axis is not None  # a concatenated output
        axis = entry.axis % len(dims(ext_port))
        outer, inner = dims(ext_port)[axis], dims(body_port)[axis]
        if outer < 0 or inner < 0:
            continue
        where = f"port_map output external_port_id={entry.external_port_id}"
        e_start, e_end, stride, part = entry.slicing()
        if stride == 0:
            continue  # SLICE_PARAMS says so; no walk to fit the parts in
        # The whole axis in the walk's direction (a pair read against the stride, e.g.
        # start=0 end=-1 stride=-1, runs away from its end: _parts says so, OpenVINO's CPU
        # plugin refuses it).
        if (e_start, e_end) == ((0, -1) if stride > 0 else (-1, 0)):
            if outer != count * inner:
                ctx.add("ITERATION_COUNT", f"{where}: {source}, which concatenate to {count} x "
                        f"{inner} along axis {entry.axis}, but the output port declares "
                        f"{fmt_dims(ext_port)}{reading}", entry.line)
            continue
        slots, problem = _parts(outer, e_start, e_end, stride, max(part, 1))
        if problem is not None or slots != count:
            held = problem if problem is not None else f"they hold {slots} part(s)"
            ctx.add("ITERATION_COUNT", f"{where}: {source}, but start={e_start} end={e_end} "
                    f"of the declared {fmt_dims(ext_port)}: {held} (OpenVINO's CPU plugin "
                    "refuses this)", entry.line)


# -- Loop and TensorIterator --------------------------------------------------


def _check_iterator(ctx: _Ctx, *, is_loop: bool) -> None:
    layer = ctx.layer
    if is_loop:
        _check_count_input(ctx, 0, "LOOP_TRIP_COUNT", "trip count", _INTEGER_COUNTS)
        _check_count_input(ctx, 1, "LOOP_CONDITION", "execution condition", ("boolean",))
    body = layer.bodies.get("body")
    if body is None:
        ctx.add("BODY_MISSING", f"a {layer.type} needs a <body>")
        return
    body_layers = layer_map(body)
    entries = layer.port_maps.get("port_map", [])
    mapped = _check_port_map(ctx, body, entries, "port_map",
                             purposes=LOOP_PURPOSES if is_loop else {})
    back_targets = _check_back_edges(ctx, body_layers, mapped)
    if is_loop:
        _check_loop_specials(ctx, body_layers, mapped)
    else:
        _check_iteration_count(ctx, entries)
    # every body Parameter has a source
    current = {e.internal_layer_id for e in mapped.special.get("current_iteration", [])}
    for pid, param in body_layers.items():
        if param.type != "Parameter":
            continue
        if pid in mapped.inputs or pid in current:
            continue
        if pid in back_targets:
            continue  # BACK_EDGE_NO_INIT says what is missing
        ctx.rep.add("PARAMETER_UNMAPPED", f"nothing feeds this body Parameter: no port_map "
                    f"input of {layer.type} {layer.id}"
                    + (", back edge or current_iteration purpose" if is_loop else " or back edge"),
                    layer=param, scope=body_scope(ctx.scope, layer.id, "body"))
    # every outer port is used
    skip = 2 if is_loop else 0
    for index, port in enumerate(layer.inputs):
        if index >= skip and port.id not in mapped.external_inputs:
            ctx.add("INPUT_UNMAPPED", f"input port {port.id} feeds no body Parameter (no "
                    "port_map input entry)", port.line)
    for port in layer.outputs:
        if port.id not in mapped.outputs:
            ctx.add("OUTPUT_UNMAPPED", f"output port {port.id} is produced by no body Result "
                    "(no port_map output entry)", port.line)


def _check_count_input(ctx: _Ctx, index: int, code: str, what: str,
                       allowed: tuple[str, ...]) -> None:
    layer = ctx.layer
    if len(layer.inputs) <= index:
        ctx.add(code, f"the Loop has no input {index} ({what})")
        return
    port = layer.inputs[index]
    source = producer(ctx.graph, ctx.layers, layer, port.id)
    for label, p in (("input port", port), ("producer's port", source[1] if source else None)):
        et = precision(p)
        if et is not None and et.name not in allowed:
            ctx.add(code, f"the {what} (input {index}) is {et.name} by its {label}; it must be "
                    f"{' or '.join(allowed)}", port.line)
            return
        if not one_element(p):
            ctx.add(code, f"the {what} (input {index}) has shape {fmt_dims(p)} by its {label}; "
                    "it must be a scalar or a 1D tensor of one element", port.line)
            return


def _check_back_edges(ctx: _Ctx, body_layers: dict[int, Layer], mapped: _Mapped) -> set[int]:
    targets: dict[int, int | None] = {}
    for edge in ctx.layer.back_edges:
        where = f"back edge {edge.from_layer} -> {edge.to_layer}"
        src = body_layers.get(edge.from_layer)
        dst = body_layers.get(edge.to_layer)
        bad = False
        if src is None or src.type != "Result":
            what = "does not exist" if src is None else f"is a {src.type}"
            ctx.add("BACK_EDGE_ENDPOINT", f"{where}: from-layer {edge.from_layer} {what}; it "
                    "must be a body Result", edge.line)
            bad = True
        if dst is None or dst.type != "Parameter":
            what = "does not exist" if dst is None else f"is a {dst.type}"
            ctx.add("BACK_EDGE_ENDPOINT", f"{where}: to-layer {edge.to_layer} {what}; it must "
                    "be a body Parameter", edge.line)
            bad = True
        if dst is not None and dst.type == "Parameter":
            if edge.to_layer in targets:
                ctx.add("BACK_EDGE_DUPLICATE", f"{where}: Parameter {edge.to_layer} is already "
                        f"fed by the back edge on line {targets[edge.to_layer]}", edge.line)
            else:
                targets[edge.to_layer] = edge.line
            if not any(e.external_port_id >= 0 for e in mapped.inputs.get(edge.to_layer, [])):
                ctx.add("BACK_EDGE_NO_INIT", f"{where}: Parameter {edge.to_layer} "
                        f"{dst.name!r} has no port_map input for its first-iteration value",
                        edge.line)
        if bad or src is None or dst is None:
            continue
        rp, pp = _body_port(src), _body_port(dst)
        a, b = precision(rp), precision(pp)
        if a is not None and b is not None and a != b:
            ctx.add("BACK_EDGE_MISMATCH", f"{where}: the Result is {a.name} but the Parameter "
                    f"is {b.name}", edge.line)
        ra, rb = known_rank(rp), known_rank(pp)
        if ra is not None and rb is not None and ra != rb:
            ctx.add("BACK_EDGE_MISMATCH", f"{where}: the Result has rank {ra} {fmt_dims(rp)} "
                    f"but the Parameter rank {rb} {fmt_dims(pp)}", edge.line)
    return set(targets)


def _check_loop_specials(ctx: _Ctx, body_layers: dict[int, Layer], mapped: _Mapped) -> None:
    conds = mapped.special.get("execution_condition", [])
    if len(conds) != 1:
        lines = ", ".join(str(e.line) for e in conds)
        ctx.add("LOOP_BODY_CONDITION", "the body needs exactly one Result with "
                f"purpose=\"execution_condition\", found {len(conds)}"
                + (f" (lines {lines})" if conds else ""), conds[1].line if conds else None)
    for entry in conds:
        result = body_layers.get(entry.internal_layer_id)
        if result is None or result.type != "Result":
            continue  # PORT_MAP_UNKNOWN_LAYER / PORT_MAP_WRONG_KIND
        port = _body_port(result)
        et = precision(port)
        if et is not None and et.name != "boolean":
            ctx.add("LOOP_BODY_CONDITION", f"the execution_condition Result {result.id} is "
                    f"{et.name}, not boolean", entry.line)
        elif not one_element(port):
            ctx.add("LOOP_BODY_CONDITION", f"the execution_condition Result {result.id} has "
                    f"shape {fmt_dims(port)}, not a 1-element scalar/1D", entry.line)
    iters = mapped.special.get("current_iteration", [])
    if len(iters) > 1:
        ctx.add("LOOP_CURRENT_ITERATION", f"{len(iters)} port_map inputs have purpose="
                "\"current_iteration\"; at most one may", iters[1].line)
    for entry in iters:
        if entry.external_port_id != -1:
            ctx.add("LOOP_CURRENT_ITERATION", f"the current_iteration entry has external_port_id="
                    f"{entry.external_port_id}; it must be -1", entry.line)
        param = body_layers.get(entry.internal_layer_id)
        if param is None or param.type != "Parameter":
            continue
        port = _body_port(param)
        et = precision(port)
        if et is not None and et.name not in _INTEGER_COUNTS:
            ctx.add("LOOP_CURRENT_ITERATION", f"the current_iteration Parameter {param.id} is "
                    f"{et.name}, not i32/i64", entry.line)
        elif not one_element(port):
            ctx.add("LOOP_CURRENT_ITERATION", f"the current_iteration Parameter {param.id} has "
                    f"shape {fmt_dims(port)}, not a 1-element scalar/1D", entry.line)


# -- If -----------------------------------------------------------------------


def _check_if(ctx: _Ctx) -> None:
    layer = ctx.layer
    _check_if_condition(ctx)
    # per branch: external output port -> the body Result producing it
    branches: dict[str, dict[int, Layer]] = {}
    counts: dict[str, int] = {}
    for body_name, map_name in (("then_body", "then_port_map"), ("else_body", "else_port_map")):
        entries = layer.port_maps.get(map_name, [])
        counts[body_name] = sum(1 for e in entries if e.kind == "output")
        body = layer.bodies.get(body_name)
        if body is None:
            ctx.add("BODY_MISSING", f"an If needs a <{body_name}>")
            continue
        body_layers = layer_map(body)
        mapped = _check_port_map(ctx, body, entries, map_name, purposes={})
        for pid, param in body_layers.items():
            if param.type == "Parameter" and pid not in mapped.inputs:
                ctx.rep.add("PARAMETER_UNMAPPED", f"nothing feeds this {body_name} Parameter: "
                            f"no {map_name} input of If {layer.id}", layer=param,
                            scope=body_scope(ctx.scope, layer.id, body_name))
        for port in layer.outputs:
            if port.id not in mapped.outputs:
                ctx.add("OUTPUT_UNMAPPED", f"output port {port.id} is produced by no "
                        f"{body_name} Result (no {map_name} output entry)", port.line)
        branches[body_name] = {
            ext: body_layers[e.internal_layer_id] for ext, e in mapped.outputs.items()
            if e.internal_layer_id in body_layers
            and body_layers[e.internal_layer_id].type == "Result"
        }
    if len(branches) < 2:
        return
    if counts["then_body"] != counts["else_body"]:
        ctx.add("IF_BRANCH_MISMATCH", f"then_body produces {counts['then_body']} output(s) but "
                f"else_body {counts['else_body']}")
    for ext, then_result in branches["then_body"].items():
        else_result = branches["else_body"].get(ext)
        if else_result is None:
            continue
        a, b = precision(_body_port(then_result)), precision(_body_port(else_result))
        if a is not None and b is not None and a != b:
            ctx.add("IF_BRANCH_MISMATCH", f"output port {ext} is {a.name} from then_body "
                    f"Result {then_result.id} but {b.name} from else_body Result "
                    f"{else_result.id}")


def _check_if_condition(ctx: _Ctx) -> None:
    layer = ctx.layer
    if not layer.inputs:
        ctx.add("IF_CONDITION", "an If needs its condition as input 0")
        return
    port = layer.inputs[0]
    source = producer(ctx.graph, ctx.layers, layer, port.id)
    for label, p in (("input port", port), ("producer's port", source[1] if source else None)):
        et = precision(p)
        if et is not None and et.name != "boolean":
            ctx.add("IF_CONDITION", f"the condition (input 0) is {et.name} by its {label}; it "
                    "must be boolean", port.line)
            return
        if not one_element(p):
            ctx.add("IF_CONDITION", f"the condition (input 0) has shape {fmt_dims(p)} by its "
                    f"{label}; it must be a scalar or a 1D tensor of one element", port.line)
            return
