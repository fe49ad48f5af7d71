"""ONNX Loop, Scan and If -> OpenVINO Loop-5, TensorIterator-1 and If-8.

The mapping (DESIGN.md, "ONNX control flow -> IR"):

* Loop: inputs are trip count, execution condition, carried initial values,
  then the outer values the body captures. The body's iteration number is the
  ``current_iteration`` Parameter; its condition output the
  ``execution_condition`` Result; carried values are Parameter/Result pairs
  joined by back edges; scan outputs are ``Unsqueeze(0)`` + a Result the Loop
  concatenates along axis 0. A body that reads its incoming condition gets it as
  a merged input on port 1 with a back edge from the condition Result, as
  OpenVINO's own frontend wires it.
* Scan: a TensorIterator; scan inputs are sliced inputs (one part per
  iteration, squeezed in the body), scan outputs are concatenated outputs,
  reverse directions use ``stride=-1`` with ``start=-1 end=0``. Scan-8's batch
  axis becomes an outer Loop over the batch around the scan (none for a batch of 1).
  (A body that reads no scan input is made a Loop later: ``passes/unread_slices.py``.)
* If: the condition (made a boolean scalar) plus one input per distinct outer
  value the branches capture.

Every body is translated in a child ``Scope``; the first use of an outer name
there records a capture, which becomes an input of the control-flow layer here,
and, when this scope is itself a body, a capture of this scope in turn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import onnx

from ...ir.builder import LoopBuilder, TensorIteratorBuilder
from ...ir.graph import Graph, Layer, shape_text
from ...ir.types import ELEMENT_TYPES
from ...opset import TensorInfo
from ...passes.constant_folding import constant_value
from ...passes.prune import prune_graph
from .context import NodeContext, Scope, Value, onnx_op
from .ops._common import BOOL, I64, INT64_MAX
from .protos import node_label
from .sequences import append_form, appended_carries
from .tensor_types import refine, tensor_info_from_type, union, value_infos

_MAX_RELAXATIONS = 8


# ---------------------------------------------------------------------------
# Bodies


@dataclass
class Body:
    """A translated body: its scope (graph, captures), the Parameter of each body
    input and the value of each body output."""

    scope: Scope
    params: list[Value]
    outputs: list[Value]


def build_body(ctx: NodeContext, graph: onnx.GraphProto, infos: Sequence[TensorInfo],
                   squeeze_axes: Sequence[int | None], what: str,
                   scope: Scope | None = None,
                   ranges: Mapping[int, tuple[int, int]] | None = None) -> Body:
    """Translate ``graph`` with one body Parameter of ``infos[i]`` per graph input.

    Where ``squeeze_axes[i]`` is set, the Parameter receives a slice with that axis
    kept (size 1) and the body sees it squeezed, as ONNX Scan wants. ``ranges[i]``: the
    values body input ``i`` takes at most (``Scope.ranges``).
    """
    scope = scope or ctx.scope.child(what)
    builder = scope.builder
    params = []
    for i, (vi, info, axis) in enumerate(zip(graph.input, infos, squeeze_axes)):
        if axis is None:
            param = builder.parameter(info, name=vi.name, tensor_names=(vi.name,))
            scope.define(vi.name, param)
            if ranges and i in ranges:
                scope.ranges[param.src] = ranges[i]
        else:
            param = builder.parameter(info, name=f"{vi.name}/slice")
            squeezed = _squeeze(scope, param, axis, vi.name)
            scope.graph.layer(squeezed.layer).outputs[0].names = (vi.name,)
            scope.define(vi.name, squeezed)
        params.append(param)
    return Body(scope, params, ctx.translate_body(graph, scope, what))


def build_carrying_body(ctx: NodeContext, graph: onnx.GraphProto, infos: list[TensorInfo],
                            squeeze_axes: Sequence[int | None],
                            carried: Sequence[tuple[int, int]], what: str,
                            parent: Scope | None = None,
                            ranges: Mapping[int, tuple[int, int]] | None = None) -> Body:
    """``build_body`` where body input ``i`` takes the value of body output ``o`` on
    the next iteration for each ``(i, o)`` in ``carried``.

    Such a Parameter starts with the initial value's type, static dims and all (what the
    body's ONNX input declares is not taken: ``h[?,16]`` there says nothing about
    whether ``h`` changes shape, and keeping it would leave ``convert --input
    "X[?,1,8],h0[1,16]"`` with outputs ``[?,16]``). It keeps a static dimension only
    where the output provably has it too (by irtool's inference or ONNX's): by
    induction every iteration then sees it. Otherwise the body is translated again with
    that dimension dynamic, e.g. for a value that grows by a Concat.
    """
    onnx_infos = value_infos(graph)
    for _ in range(_MAX_RELAXATIONS):
        scope = parent.child(what) if parent is not None else None
        body = build_body(ctx, graph, infos, squeeze_axes, what, scope, ranges)
        changed = False
        for i, o in carried:
            out = refine(body.outputs[o].info, onnx_infos.get(graph.output[o].name))
            if out.element_type != infos[i].element_type:
                raise ctx.error(f"{what}: output {graph.output[o].name!r} is "
                                f"{out.element_type.name} but input {graph.input[i].name!r} "
                                f"it feeds is {infos[i].element_type.name}")
            relaxed = union(infos[i], out)
            if relaxed != infos[i]:
                infos[i] = relaxed
                changed = True
        if not changed:
            return body
    raise ctx.error(f"{what}: the shapes of the loop-carried values do not settle")


def _layer_name(ctx: NodeContext) -> str | None:
    """The name of the control-flow layer a node becomes."""
    return ctx.node.name or ctx.node.output[0] or None


def _axes_const(scope: Scope, axes: Sequence[int]) -> Value:
    return scope.builder.const(np.asarray(list(axes), dtype=np.int64))


def _squeeze(scope: Scope, value: Value, axis: int, name: str | None = None) -> Value:
    shape = None if value.shape is None else value.shape[:axis] + value.shape[axis + 1:]
    return scope.builder.op("Squeeze", "opset1", [value, _axes_const(scope, [axis])],
                            outputs=[TensorInfo(value.element_type, shape)], name=name)[0]


def _unsqueeze(scope: Scope, value: Value, axis: int) -> Value:
    shape = None if value.shape is None else (*value.shape[:axis], 1, *value.shape[axis:])
    return scope.builder.op("Unsqueeze", "opset1", [value, _axes_const(scope, [axis])],
                            outputs=[TensorInfo(value.element_type, shape)])[0]


def _result(scope: Scope, value: Value) -> Layer:
    return scope.builder.result(value)


def _slicing(reverse: bool = False) -> dict[str, int]:
    """A sliced input's / concatenated output's attributes, written the way OpenVINO
    writes them (all four, one element per iteration)."""
    if reverse:
        return {"start": -1, "end": 0, "stride": -1, "part_size": 1}
    return {"start": 0, "end": -1, "stride": 1, "part_size": 1}


def _insert_dim(shape: tuple[int, ...] | None, axis: int, size: int) -> tuple[int, ...] | None:
    if shape is None:
        return None
    return (*shape[:axis], size, *shape[axis:])


def _wire_captures(body: Scope, layer: LoopBuilder | TensorIteratorBuilder) -> None:
    """Each capture of the body becomes one more input of the layer, for its Parameter."""
    for capture in body.captures:
        layer.invariant(capture.outer, capture.inner)


# ---------------------------------------------------------------------------
# Loop


def _passthrough_of(scope: Scope, value: Value) -> tuple[int, int]:
    """Where ``value`` comes from, looking through ``Identity`` layers."""
    where = (value.layer, value.port)
    while scope.graph.layer(where[0]).type == "Identity":
        layer = scope.graph.layer(where[0])
        src = scope.graph.source(layer.id, layer.inputs[0].id)
        if src is None:
            break
        where = src
    return where


def _one_value(ctx: NodeContext, value: Value | None, what: str) -> None:
    """Refuse a trip count or condition whose declared shape holds more than one value."""
    if value is not None and value.shape is not None and all(d >= 0 for d in value.shape) \
            and int(np.prod(value.shape)) != 1:
        raise ctx.error(f"{what} has shape {list(value.shape)}; it must hold one value")


def _one_element(shape: tuple[int, ...]) -> tuple[int, ...]:
    """A declared one-value shape with its dynamic dims (-1) made 1."""
    return tuple(1 if d < 0 else d for d in shape)


def _trip_count(ctx: NodeContext) -> Value:
    m = ctx.input(0)
    if m is None:
        return ctx.const(np.array([-1], dtype=np.int64))
    _one_value(ctx, m, "the trip count M (input 0)")
    known = ctx.const_value(m)
    # INT64_MAX is how exporters spell "no limit"; OpenVINO's frontend also maps it to -1.
    if known is not None and known.size == 1 and int(known.reshape(-1)[0]) == INT64_MAX:
        return ctx.const(np.array([-1], dtype=np.int64))
    if known is not None and known.size == 1 and int(known.reshape(-1)[0]) < 0:
        # ONNX runs ``for i < M``: a negative M is no iteration (as onnxruntime runs it),
        # where a negative IR trip count means no limit.
        return ctx.const(np.array([0], dtype=np.int64))
    if m.element_type not in (I64, ELEMENT_TYPES["i32"]):
        m = ctx.op("Convert", "opset1", [m], {"destination_type": "i64"},
                   outputs=[TensorInfo(I64, m.shape)])[0]
    if known is None:  # a negative M at run time is no iteration too, not "no limit"
        zero = ctx.const(np.zeros((), m.element_type.dtype))
        if _narrowed(ctx.scope.graph, m):
            # OpenVINO's CPU plugin folds Maximum(M, 0) of an M cast through a signed type
            # narrower than int32 to the constant 0 (its bounds of that Convert wrap):
            # docs/openvino-quirks.md. Select computes the same clamp without that.
            negative = ctx.op("Less", "opset1", [m, zero], {"auto_broadcast": "numpy"},
                              outputs=[TensorInfo(BOOL, m.shape)])[0]
            return ctx.op("Select", "opset1", [negative, zero, m],
                          {"auto_broadcast": "numpy"}, outputs=[m.info])[0]
        m = ctx.op("Maximum", "opset1", [m, zero], {"auto_broadcast": "numpy"},
                   outputs=[m.info])[0]
    return m


_NARROW_SIGNED = ("i4", "i8", "i16")


def _narrowed(graph: Graph, value: Value) -> bool:
    """Does ``value`` come, through ops that keep a one-element value, from a Convert to a
    signed integer type narrower than int32?"""
    where: tuple[int, int] | None = (value.layer, value.port)
    while where is not None:
        layer = graph.layer(where[0])
        if layer.type == "Convert" and layer.attrs.get("destination_type") in _NARROW_SIGNED:
            return True
        if layer.type not in ("Convert", "Squeeze", "Unsqueeze", "Reshape", "Identity") \
                or not layer.inputs:
            return False
        where = graph.source(layer.id, layer.inputs[0].id)
    return False


def _no_trip_unless(ctx: NodeContext, trip: Value, cond: Value) -> Value:
    """``cond ? trip : 0``: the same Loop for a condition known only at run time, which a
    false one stops before its first iteration. OpenVINO's CPU plugin sizes a concatenated
    output by a trip count it can tell and keeps those rows when such a condition runs no
    iteration (docs/openvino-quirks.md); a trip count of 0 it runs right. The condition
    takes the trip count's shape first, so that a condition of unknown shape leaves port 0
    one value."""
    if trip.shape is not None and cond.shape != trip.shape:
        target = ctx.const(np.array(trip.shape, dtype=np.int64))
        cond = ctx.op("Reshape", "opset1", [cond, target], {"special_zero": False},
                      outputs=[TensorInfo(BOOL, trip.shape)])[0]
    zero = ctx.const(np.zeros((), trip.element_type.dtype))
    return ctx.op("Select", "opset1", [cond, trip, zero], {"auto_broadcast": "numpy"},
                  outputs=[TensorInfo(trip.element_type, trip.shape)])[0]


def _iteration_range(ctx: NodeContext, trip: Value) -> dict[int, tuple[int, int]]:
    """The iteration number's range (body input 0) under a constant trip count ``T >= 1``:
    ``[0, T - 1]`` in every iteration that runs, whatever stops the loop earlier."""
    known = ctx.const_value(trip)
    if known is None or known.size != 1 or known.dtype.kind not in "iu":
        return {}
    count = int(known.reshape(-1)[0])
    return {0: (0, count - 1)} if count >= 1 else {}


def _is_empty(ctx: NodeContext, value: Value) -> bool:
    """Is ``value`` a constant of length 0 along axis 0 (an empty sequence)?"""
    known = ctx.const_value(value)
    return known is not None and known.ndim >= 1 and known.shape[0] == 0


def _appends_as_scan_outputs(graph: onnx.GraphProto, n_carried: int, n_scan: int,
                             appended: dict[int, onnx.NodeProto]) -> onnx.GraphProto:
    """``graph`` with each appended carry (``sequences.appended_carries``) made a scan
    output of the element its ``SequenceInsert`` appends, after the other scan outputs."""
    body = onnx.GraphProto()
    body.CopyFrom(graph)
    kept = [i for i in range(n_carried) if i not in appended]
    inserts = {id(n) for n in appended.values()}
    del body.input[:], body.output[:], body.node[:]
    body.input.extend([graph.input[0], graph.input[1],
                       *(graph.input[2 + i] for i in kept)])
    body.output.extend([graph.output[0], *(graph.output[1 + i] for i in kept),
                        *graph.output[1 + n_carried:1 + n_carried + n_scan],
                        *(onnx.ValueInfoProto(name=appended[i].input[1])
                          for i in sorted(appended))])
    body.node.extend(n for n in graph.node if id(n) not in inserts)
    return body


@onnx_op("Loop", 1, 11, 13, 16, 19, 21, 23, 24, 25)
def translate_loop(ctx: NodeContext) -> list[Value | None]:
    """ONNX Loop -> Loop-5.

    A sequence the body appends one element to per iteration, starting empty, becomes
    a scan output (stacked by the Loop) or, for a ragged list only ever concatenated, a
    carried tensor grown by Concat (``sequences.append_form``).
    """
    graph: onnx.GraphProto = ctx.attr("body")
    if graph is None:
        raise ctx.error("the 'body' attribute is missing")
    n_carried = max(len(ctx.node.input) - 2, 0)
    n_scan = len(ctx.node.output) - n_carried
    if len(graph.input) != 2 + n_carried:
        raise ctx.error(f"the body has {len(graph.input)} inputs; 2 + {n_carried} carried "
                        "values expected")
    # More body outputs than the node lists are tolerated (as OpenVINO does): the extra
    # trailing ones are scan outputs nobody reads.
    if n_scan < 0 or len(graph.output) < 1 + n_carried + n_scan:
        raise ctx.error(f"the body has {len(graph.output)} outputs; 1 + {n_carried} carried "
                        f"+ {max(n_scan, 0)} scan outputs expected")
    what = f"body of Loop {ctx.name}"
    trip = _trip_count(ctx)
    initial = [ctx.required_input(2 + i) for i in range(n_carried)]
    given_cond = ctx.input(1)
    _one_value(ctx, given_cond, "the condition cond (input 1)")
    appended = {i: insert for i, insert in appended_carries(ctx.node).items()
                if _is_empty(ctx, initial[i])}
    element_hints = value_infos(graph)
    if appended:
        graph = _appends_as_scan_outputs(graph, n_carried, n_scan, appended)
    kept = [i for i in range(n_carried) if i not in appended]
    # The ONNX output each output of the Loop layer stands for, in the layer's order.
    order = kept + [n_carried + j for j in range(n_scan)] + sorted(appended)
    hints = [ctx.output_info(k) for k in order]
    initial = [initial[i] for i in kept]
    n_carried, n_scan = len(kept), n_scan + len(appended)

    iter_info = tensor_info_from_type(graph.input[0].type)
    iter_shape = iter_info.shape if iter_info is not None and iter_info.shape is not None else ()
    if len(iter_shape) > 1 or any(d not in (-1, 1) for d in iter_shape):
        raise ctx.error(f"{what}: the iteration number (input 0) is declared of shape "
                        f"{list(iter_shape)}; it is a scalar")
    iter_shape = tuple(1 if d < 0 else d for d in iter_shape)
    cond_decl = tensor_info_from_type(graph.input[1].type)
    cond_shape = cond_decl.shape if cond_decl is not None and cond_decl.shape is not None else ()
    known_cond = ctx.const_value(given_cond)
    if known_cond is not None and known_cond.size == 1 and not bool(known_cond.reshape(-1)[0]):
        # No iteration runs. OpenVINO's CPU plugin rejects a Loop whose condition is a
        # constant false, but runs one with a trip count of 0 fine, with the same meaning.
        trip, given_cond = ctx.const(np.array([0], dtype=np.int64)), None
    cond = given_cond if given_cond is not None else \
        ctx.const(np.ones(_one_element(cond_shape), dtype=bool))
    if cond.shape is not None and len(cond.shape) > 1:
        # IR's Loop takes a condition of rank 0 or 1 (OpenVINO's too), and the body sees
        # the condition it carries with that port's shape: a [1, 1] one would reach the
        # body reshaped, a difference ONNX can observe.
        raise ctx.error(f"{what}: the condition has shape {shape_text(cond.shape)}; irtool "
                        "takes a Loop condition of rank 0 or 1")
    ranges = _iteration_range(ctx, trip)
    if given_cond is not None and known_cond is None and not _runs_zero_times(ctx, trip):
        # (a constant trip count of 0 stays one: the Loop is folded below)
        trip = _no_trip_unless(ctx, trip, given_cond)
    infos = [TensorInfo(I64, iter_shape), TensorInfo(BOOL, cond.shape)]
    infos += [v.info for v in initial]
    carried = [(1, 0)] + [(2 + i, 1 + i) for i in range(n_carried)]
    body = build_carrying_body(ctx, graph, infos, [None] * len(infos), carried, what,
                               ranges=ranges)
    scope = body.scope
    iter_param, cond_param, *state_params = body.params
    cond_out, *outs = body.outputs[:1 + n_carried + n_scan]

    if _passthrough_of(scope, cond_out) == (cond_param.layer, cond_param.port):
        # The condition never changes: it stays what let the first iteration run (true).
        cond_out = scope.builder.const(np.ones(_one_element(cond_param.shape or ()),
                                               dtype=bool))
    if cond_out.element_type != BOOL:
        raise ctx.error(f"{what}: the condition output is {cond_out.element_type.name}, not "
                        "boolean")
    cond_result = _result(scope, cond_out)
    out_infos: list[TensorInfo] = []
    results: list[tuple[Layer, int | None]] = []
    grown: list[tuple[Value, Value, Layer]] = []
    for i, (param, value) in enumerate(zip(state_params, outs[:n_carried])):
        results.append((_result(scope, value), None))
        out_infos.append(refine(param.info, hints[i]))
    for j, value in enumerate(outs[n_carried:]):
        k = order[n_carried + j]
        if k in appended:
            axis = _append_axis(ctx, k, appended[k], value, element_hints)
            if axis is not None:
                start, param, result, info = _grown_by_concat(ctx, scope, value, axis)
                grown.append((start, param, result))
                results.append((result, None))
                out_infos.append(info)
                ctx.conversion.concatenated[ctx.node.output[k]] = axis
                continue
        results.append((_result(scope, _unsqueeze(scope, value, 0)), 0))
        info = refine(TensorInfo(value.element_type, _insert_dim(value.shape, 0, -1)),
                      hints[n_carried + j])
        # What the body's output declares of one iteration's value: onnxruntime gives a
        # scan output of no iteration those dims (irtool's runtime reads them from here).
        row = element_hints.get(graph.output[1 + n_carried + j].name)
        if row is not None and row.shape is not None:
            info = refine(info, TensorInfo(row.element_type, _insert_dim(row.shape, 0, -1)))
        # The iteration count is known only when the loop runs: an ONNX shape that says
        # otherwise is a hint the runtime would find wrong for other trip counts.
        out_infos.append(TensorInfo(info.element_type, _insert_dim(info.shape[1:], 0, -1))
                         if info.shape else info)

    loop = ctx.scope.builder.loop(scope.graph, _layer_name(ctx))
    loop.trip_count(trip)
    loop.condition(cond)
    loop.current_iteration(iter_param)
    loop.execution_condition(cond_result)
    for value, param, (result, _) in zip(initial, state_params, results):
        loop.carried(value, param, result)
    for start, param, result in grown:
        loop.carried(start, param, result)
    _wire_captures(scope, loop)
    prune_graph(scope.graph)  # e.g. an Identity of the condition whose output went unused
    if scope.graph.consumers(cond_param.layer):
        loop.carried_condition(cond_param, cond_result)
    else:
        scope.graph.remove_layer(cond_param.layer)
    for (result, axis), info in zip(results, out_infos):
        if axis is None:
            loop.output(result, info)
        else:
            loop.output(result, info, axis=axis, **_slicing())  # type: ignore[arg-type]
    built = list(loop.build()[1])
    if _runs_zero_times(ctx, trip):
        # OpenVINO's CPU plugin dies (SIGFPE) compiling a Loop it can tell runs zero
        # times when it has a concatenated output; without one it fails to compile it
        # ("Zero count of iteration") or gives zeros for its carried values when they
        # start from constants, and gives another carried value's initial value (or
        # uninitialised memory) for a carried value whose next one is another's
        # (docs/openvino-quirks.md). None runs: the carried values stay the initial ones,
        # the scan outputs are empty. The Loop, now unused, is pruned; it stays only for a
        # scan output whose element shape is not static (its carried values still folded).
        folded = _zero_iteration_outputs(ctx, initial, outs[n_carried:], results[n_carried:],
                                         [start for start, _, _ in grown])
        built = [b if f is None else f for f, b in zip(folded, built)]
    elif ctx.const_value(trip) is None:
        built[:n_carried] = _initial_unless_run(ctx, trip, initial, built[:n_carried])
    values: list[Value | None] = [None] * len(ctx.node.output)
    for position, k in enumerate(order):
        values[k] = built[position]
    return values


def _initial_unless_run(ctx: NodeContext, trip: Value, initial: Sequence[Value],
                        carried: Sequence[Value]) -> list[Value]:
    """Each carried output as ``trip != 0 ? output : initial``, for a Loop whose trip count
    (port 0: 0 when a condition given at run time is false, negative for no limit) is known
    only at run time. The same values: a Loop that runs no iteration gives the initial
    ones. OpenVINO's CPU plugin gives another carried value's initial value or memory
    never written instead, on its own conversion too (docs/openvino-quirks.md); the Select
    takes the initial value there. Only where the output and the initial value have one
    static shape and type: a carried value whose shape changes cannot be selected so."""
    zero = ctx.const(np.zeros((), trip.element_type.dtype))
    runs = ctx.op("NotEqual", "opset1", [trip, zero], {"auto_broadcast": "numpy"},
                  outputs=[TensorInfo(BOOL, trip.shape)])[0]
    if runs.shape != ():
        runs = ctx.op("Reshape", "opset1", [runs, ctx.const(np.zeros((0,), np.int64))],
                      {"special_zero": False}, outputs=[TensorInfo(BOOL, ())])[0]
    out = []
    for value, start in zip(carried, initial):
        if value.shape is None or value.shape != start.shape or \
                any(d < 0 for d in value.shape) or value.element_type != start.element_type:
            out.append(value)
            continue
        out.append(ctx.op("Select", "opset1", [runs, value, start], {"auto_broadcast": "numpy"},
                          outputs=[value.info])[0])
    return out


def _append_axis(ctx: NodeContext, k: int, insert: onnx.NodeProto, element: Value,
                 hints: dict[str, TensorInfo]) -> int | None:
    """For appended carry ``k``: None to stack its elements (a scan output), or the axis
    to concatenate them along in a carried tensor (``sequences.append_form``)."""
    info = refine(element.info, hints.get(insert.input[1]))
    info = refine(info, ctx.sequence_element(ctx.node.input[2 + k]))
    start = ctx.required_input(2 + k)
    if info.element_type != start.element_type:
        raise ctx.error(f"appending {info.element_type.name} to a sequence of "
                        f"{start.element_type.name} (node {node_label(insert)})")
    reads = ctx.conversion.reads(ctx.node.output[k]) if ctx.node.output[k] else []
    form = append_form(reads, info)
    if isinstance(form, str):
        raise ctx.error(f"the sequence the body grows by {node_label(insert)} cannot be "
                        f"lowered to a tensor: {form}")
    return form


def _grown_by_concat(ctx: NodeContext, scope: Scope, element: Value, axis: int
                     ) -> tuple[Value, Value, Layer, TensorInfo]:
    """A carried tensor, empty at first, that each iteration concatenates ``element`` to
    along ``axis``: its start value, body Parameter, body Result and output type.

    The start is empty along ``axis`` and of the element's static dims elsewhere. Where
    another dim is dynamic the start has 1 there, and the carry is broadcast
    (bidirectionally) against the element's dims with 1 along ``axis`` before each
    Concat: the empty start takes the first piece's dims, and later the broadcast
    changes nothing (ONNX requires the pieces to agree off the concatenation axis). (A
    Reshape to the carry's own length would do too, but OpenVINO rewrites such a
    Reshape's target to ``[0, -1]``, which an empty start makes ``[0, 0]``.)
    """
    assert element.shape is not None
    dims = list(element.shape)
    et = element.element_type
    assert et.dtype is not None
    start_dims = [0 if i == axis else (1 if d < 0 else d) for i, d in enumerate(dims)]
    start = ctx.const(np.zeros(start_dims, dtype=et.dtype), et)
    info = TensorInfo(et, (*dims[:axis], -1, *dims[axis + 1:]))
    param = scope.builder.parameter(info, name=f"{_layer_name(ctx)}/concatenated")
    carried = param
    if any(d < 0 for i, d in enumerate(dims) if i != axis):
        carried = _broadcast_off_axis(scope, param, element, axis)
    joined = scope.builder.op("Concat", "opset1", [carried, element], {"axis": axis},
                              outputs=[info])[0]
    return start, param, _result(scope, joined), info


def _broadcast_off_axis(scope: Scope, value: Value, like: Value, axis: int) -> Value:
    """``value`` broadcast to the dims of ``like`` but along ``axis``, where it keeps its
    own length."""
    rank = len(like.shape or ())
    pieces = [scope.builder.const(np.array([1], dtype=np.int64))]
    if axis > 0:
        pieces.insert(0, _dims(scope, like, list(range(axis))))
    if axis + 1 < rank:
        pieces.append(_dims(scope, like, list(range(axis + 1, rank))))
    target = scope.builder.op("Concat", "opset1", pieces, {"axis": 0},
                              outputs=[TensorInfo(I64, (rank,))])[0]
    return scope.builder.op("Broadcast", "opset3", [value, target], {"mode": "bidirectional"},
                            outputs=[value.info])[0]


def _runs_zero_times(ctx: NodeContext, trip: Value) -> bool:
    """Is the IR trip count a constant that runs no iteration (0; a constant false
    condition was made a trip count of 0 above)?"""
    known = constant_value(ctx.scope.graph, trip)
    return known is not None and known.size == 1 and int(known.reshape(-1)[0]) == 0


def _zero_iteration_outputs(ctx: NodeContext, initial: Sequence[Value],
                            scans: Sequence[Value], results: Sequence[tuple[Layer, int | None]],
                            starts: Sequence[Value]) -> list[Value | None]:
    """The Loop's outputs after no iteration: the initial carried values, empty constants
    ``[0, *element]`` for the scan outputs, the empty start of a tensor grown by Concat;
    None for a scan output whose element's shape or type is not static."""
    outputs: list[Value | None] = list(initial)
    pending = iter(starts)
    for value, (_, axis) in zip(scans, results):
        if axis is None:  # a carried tensor grown by Concat: its empty start
            outputs.append(next(pending))
            continue
        et = value.element_type
        if value.shape is None or any(d < 0 for d in value.shape) or et.dtype is None:
            outputs.append(None)
            continue
        outputs.append(ctx.const(np.zeros((0, *value.shape), dtype=et.dtype), et))
    return outputs


# ---------------------------------------------------------------------------
# Scan


def _normalized_axes(ctx: NodeContext, name: str, count: int, ranks: Sequence[int | None]
                     ) -> list[int]:
    axes = list(ctx.attr(name, [0] * count))
    if len(axes) != count:
        raise ctx.error(f"{name} has {len(axes)} entries, {count} expected")
    out = []
    for axis, rank in zip(axes, ranks):
        if axis < 0:
            if rank is None:
                raise ctx.error(f"{name}: negative axis {axis} needs a known rank")
            axis += rank
        if rank is not None and not 0 <= axis < rank:
            raise ctx.error(f"{name}: axis {axis} is out of range for rank {rank}")
        out.append(axis)
    return out


def _directions(ctx: NodeContext, name: str, count: int) -> list[bool]:
    dirs = list(ctx.attr(name, [0] * count))
    if len(dirs) != count or any(d not in (0, 1) for d in dirs):
        raise ctx.error(f"{name} must hold {count} flags of 0 or 1, not {dirs}")
    return [bool(d) for d in dirs]


@dataclass
class SlicedBody:
    """A body run once per slice of its sliced inputs: what a TensorIterator needs.

    ``inputs`` holds ``(outer value, body Parameter, (axis, reverse) or None)`` per
    input, sliced where the third item is given; ``outputs`` holds ``(body Result id,
    concat axis or None, reverse, output type)`` per output; ``back_edges`` ``(body
    Result id, body Parameter id)`` pairs.
    """

    body: Scope
    inputs: list[tuple[Value, int, tuple[int, bool] | None]]
    outputs: list[tuple[int, int | None, bool, TensorInfo]]
    back_edges: list[tuple[int, int]]

    def capture(self) -> None:
        """Each capture of the body becomes one more (whole) input."""
        self.inputs += [(c.outer, c.inner.layer, None) for c in self.body.captures]


def emit_iteration(ctx: NodeContext, scope: Scope, it: SlicedBody, trip: Value | None
                   ) -> list[Value]:
    """``it`` as a TensorIterator-1 in ``scope``, or as a Loop-5 of ``trip`` iterations.

    OpenVINO refuses a TensorIterator inside a TensorIterator body, and its Loop
    does not stop at the end of its sliced inputs by itself: hence the trip count.
    """
    layer: LoopBuilder | TensorIteratorBuilder
    if trip is None:
        layer = scope.builder.tensor_iterator(it.body.graph, _layer_name(ctx))
    else:
        layer = loop = scope.builder.loop(it.body.graph, _layer_name(ctx))
        loop.trip_count(trip)
        loop.condition(scope.builder.const(np.array([True])))
    for outer, param, slicing in it.inputs:
        if slicing is None:
            layer.invariant(outer, param)
        else:
            layer.sliced(outer, param, slicing[0], **_slicing(slicing[1]))
    if trip is not None:
        loop.execution_condition(_result(it.body, it.body.builder.const(np.array([True]))))
    for result, param in it.back_edges:
        layer.back_edge(result, param)
    for result, axis, reverse, info in it.outputs:
        if axis is None:
            layer.output(result, info)
        else:
            layer.output(result, info, axis=axis, **_slicing(reverse))  # type: ignore[arg-type]
    return layer.build()[1]


def _length(scope: Scope, value: Value, axis: int) -> Value:
    """``value.shape[axis]`` as an i64 ``[1]`` tensor (a Const when static)."""
    if value.shape is not None and value.shape[axis] >= 0:
        return scope.builder.const(np.array([value.shape[axis]], dtype=np.int64))
    return _dims(scope, value, [axis])


def _dims(scope: Scope, value: Value, axes: list[int]) -> Value:
    """``value.shape[axes]`` as an i64 ``[len(axes)]`` tensor."""
    rank = -1 if value.rank is None else value.rank
    shape = scope.builder.op("ShapeOf", "opset3", [value], {"output_type": "i64"},
                             outputs=[TensorInfo(I64, (rank,))])[0]
    return scope.builder.op("Gather", "opset8",
                            [shape, _axes_const(scope, axes), scope.builder.const(np.int64(0))],
                            {"batch_dims": 0}, outputs=[TensorInfo(I64, (len(axes),))])[0]


def _contains(scope: Scope, type: str) -> bool:
    return any(layer.type == type for layer in scope.graph.layers)


def build_scan(ctx: NodeContext, scope: Scope, graph: onnx.GraphProto, states: list[Value],
               scan_inputs: list[Value], in_axes: list[int], in_reverse: list[bool],
               out_axes_attr: str | None, out_reverse: list[bool],
               out_hints: Sequence[TensorInfo | None]) -> list[Value]:
    """The layer running ``graph`` as an ONNX Scan-9 body, added to ``scope``.

    A TensorIterator, unless the body holds one (then a Loop: OpenVINO does not
    nest TensorIterators). ``out_axes_attr`` names the attribute with the scan
    output axes (None: all 0); they are normalised with the rank of each body
    output + 1.
    """
    n_states, n_scan_in, n_scan_out = len(states), len(scan_inputs), len(out_reverse)
    what = f"body of Scan {ctx.name}"
    # Extra trailing body outputs (unlisted scan outputs) are tolerated, as by OpenVINO.
    if len(graph.input) != n_states + n_scan_in or len(graph.output) < n_states + n_scan_out:
        raise ctx.error(f"the body has {len(graph.input)} inputs and {len(graph.output)} "
                        f"outputs for {n_states} states, {n_scan_in} scan inputs and "
                        f"{n_scan_out} scan outputs")
    infos = [v.info for v in states]
    squeeze: list[int | None] = [None] * n_states
    seq_len = -1
    for value, axis in zip(scan_inputs, in_axes):
        shape = value.shape
        infos.append(TensorInfo(value.element_type, None if shape is None
                                else (*shape[:axis], 1, *shape[axis + 1:])))
        squeeze.append(axis)
        if shape is not None and shape[axis] >= 0:
            if seq_len >= 0 and shape[axis] != seq_len:
                raise ctx.error(f"its scan inputs have lengths {seq_len} and {shape[axis]} "
                                "along their scan axes; they must be equal")
            seq_len = shape[axis]
    carried = [(i, i) for i in range(n_states)]
    body = build_carrying_body(ctx, graph, infos, squeeze, carried, what, parent=scope)
    inner = body.scope
    outs = body.outputs[n_states:n_states + n_scan_out]
    ranks = [None if v.rank is None else v.rank + 1 for v in outs]
    out_axes = (_normalized_axes(ctx, out_axes_attr, n_scan_out, ranks) if out_axes_attr
                else [0] * n_scan_out)

    it = SlicedBody(inner, [], [], [])
    it.inputs += [(v, p.layer, None) for v, p in zip(states, body.params[:n_states])]
    it.inputs += [(v, p.layer, (axis, rev)) for v, p, axis, rev
                  in zip(scan_inputs, body.params[n_states:], in_axes, in_reverse)]
    it.capture()
    for i, (param, value) in enumerate(zip(body.params[:n_states], body.outputs[:n_states])):
        result = _result(inner, value)
        it.back_edges.append((result.id, param.layer))
        it.outputs.append((result.id, None, False, refine(param.info, out_hints[i])))
    for j, (value, axis, rev) in enumerate(zip(outs, out_axes, out_reverse)):
        result = _result(inner, _unsqueeze(inner, value, axis))
        info = TensorInfo(value.element_type, _insert_dim(value.shape, axis, seq_len))
        it.outputs.append((result.id, axis, rev, refine(info, out_hints[n_states + j])))
    trip = (_length(scope, scan_inputs[0], in_axes[0])
            if _contains(inner, "TensorIterator") else None)
    return emit_iteration(ctx, scope, it, trip)


@onnx_op("Scan", 9, 11, 16, 19, 21, 23, 24, 25)
def translate_scan(ctx: NodeContext) -> list[Value | None]:
    """ONNX Scan-9 and later -> TensorIterator-1."""
    graph: onnx.GraphProto = ctx.attr("body")
    m = ctx.attr("num_scan_inputs")
    if graph is None or m is None:
        raise ctx.error("the 'body' and 'num_scan_inputs' attributes are required")
    inputs = [ctx.required_input(i) for i in range(ctx.num_inputs)]
    if not 0 < m <= len(inputs):
        raise ctx.error(f"num_scan_inputs={m} does not fit {len(inputs)} inputs")
    n = len(inputs) - m
    states, scans = inputs[:n], inputs[n:]
    in_axes = _normalized_axes(ctx, "scan_input_axes", m, [v.rank for v in scans])
    in_rev = _directions(ctx, "scan_input_directions", m)
    n_out = len(ctx.node.output) - n
    if n_out < 0:
        raise ctx.error(f"{n} state variables but only {len(ctx.node.output)} outputs")
    out_rev = _directions(ctx, "scan_output_directions", n_out)
    hints = [ctx.output_info(i) for i in range(len(ctx.node.output))]
    return list(build_scan(ctx, ctx.scope, graph, states, scans, in_axes, in_rev,
                           "scan_output_axes" if ctx.has_attr("scan_output_axes") else None,
                           out_rev, hints))


@onnx_op("Scan", 8)
def translate_scan8(ctx: NodeContext) -> list[Value | None]:
    """ONNX Scan-8: every input and output has a leading batch axis.

    An outer Loop walks the batch (each input sliced along axis 0 and squeezed);
    inside it, the scan over axis 0 of the per-batch tensors is the same layer as
    for Scan-9. The Loop concatenates final states and scan outputs back along
    axis 0. (A Loop, not a TensorIterator: OpenVINO does not nest those.) A batch
    known to be 1 is squeezed and unsqueezed around the scan instead.
    """
    graph: onnx.GraphProto = ctx.attr("body")
    m = ctx.attr("num_scan_inputs")
    if graph is None or m is None:
        raise ctx.error("the 'body' and 'num_scan_inputs' attributes are required")
    lens = ctx.input(0)
    inputs = [ctx.required_input(i) for i in range(1, ctx.num_inputs)]
    if not 0 < m <= len(inputs):
        raise ctx.error(f"num_scan_inputs={m} does not fit {len(inputs)} inputs")
    n = len(inputs) - m
    if lens is not None:
        _check_sequence_lens(ctx, lens, inputs[n:])
    in_rev = _directions(ctx, "directions", m)
    n_out = len(ctx.node.output) - n
    if n_out < 0:
        raise ctx.error(f"{n} state variables but only {len(ctx.node.output)} outputs")

    if all(v.shape is not None and v.shape[:1] == (1,) for v in inputs):
        # A batch of one needs no batch loop: OpenVINO runs the bare scan faster.
        squeezed = [_squeeze(ctx.scope, v, 0) for v in inputs]
        values = build_scan(ctx, ctx.scope, graph, squeezed[:n], squeezed[n:], [0] * m, in_rev,
                            None, [False] * n_out, [None] * (n + n_out))
        return [_unsqueeze(ctx.scope, v, 0) for v in values]
    outer = ctx.scope.child(f"batch loop of Scan {ctx.name}")
    sliced = []
    for v in inputs:
        shape = None if v.shape is None else (1, *v.shape[1:])
        param = outer.builder.parameter(TensorInfo(v.element_type, shape),
                                        name=f"{ctx.name}/batch_slice")
        sliced.append((param, _squeeze(outer, param, 0)))
    inner_values = build_scan(ctx, outer, graph, [s for _, s in sliced[:n]],
                              [s for _, s in sliced[n:]], [0] * m, in_rev, None,
                              [False] * n_out, [None] * (n + n_out))
    batch = next((v.shape[0] for v in inputs if v.shape is not None and v.shape[0] >= 0), -1)
    it = SlicedBody(outer, [(v, param.layer, (0, False)) for v, (param, _) in zip(inputs, sliced)],
                   [], [])
    it.capture()
    for i, value in enumerate(inner_values):
        result = _result(outer, _unsqueeze(outer, value, 0))
        info = TensorInfo(value.element_type, _insert_dim(value.shape, 0, batch))
        it.outputs.append((result.id, 0, False, refine(info, ctx.output_info(i))))
    return list(emit_iteration(ctx, ctx.scope, it, _length(ctx.scope, inputs[0], 0)))


def _check_sequence_lens(ctx: NodeContext, lens: Value, scans: list[Value]) -> None:
    """Scan-8 ``sequence_lens`` is fine only when it says every sequence is full length."""
    known = ctx.const_value(lens)
    full = {v.shape[1] for v in scans if v.shape is not None and len(v.shape) > 1}
    if known is not None and len(full) == 1 and -1 not in full \
            and bool(np.all(known == next(iter(full)))):
        return
    raise ctx.error("sequence_lens shorter than the scan inputs is not supported (only the "
                    "full sequence length, given as a constant, converts)")


# ---------------------------------------------------------------------------
# If


def _scalar_condition(ctx: NodeContext, cond: Value) -> Value:
    if cond.element_type != BOOL:
        cond = ctx.op("Convert", "opset1", [cond], {"destination_type": "boolean"},
                       outputs=[TensorInfo(BOOL, cond.shape)])[0]
    if cond.shape != ():
        target = ctx.const(np.zeros((0,), dtype=np.int64))
        cond = ctx.op("Reshape", "opset1", [cond, target], {"special_zero": False},
                       outputs=[TensorInfo(BOOL, ())])[0]
    return cond


@onnx_op("If", 1, 11, 13, 16, 19, 21, 23, 24, 25)
def translate_if(ctx: NodeContext) -> list[Value | None]:
    """ONNX If -> If-8: condition, then one input per distinct captured outer value."""
    branches = {key: ctx.attr(key) for key in ("then_branch", "else_branch")}
    for key, graph in branches.items():
        if graph is None:
            raise ctx.error(f"the '{key}' attribute is missing")
    n_out = len(ctx.node.output)
    for key, graph in branches.items():
        if len(graph.output) != n_out:
            raise ctx.error(f"{key} has {len(graph.output)} outputs, the node {n_out}")
    cond = _scalar_condition(ctx, ctx.required_input(0))
    known = constant_value(ctx.scope.graph, cond)
    if known is not None:
        # Only one branch can run: translate it in place, as OpenVINO would fold it.
        # This also spares translating a branch that is wrong for these inputs.
        taken = "then_branch" if bool(known) else "else_branch"
        return list(ctx.translate_body(branches[taken], ctx.scope, f"{taken} of If {ctx.name}"))
    bodies = {key: build_body(ctx, graph, [], [], f"{key} of If {ctx.name}")
              for key, graph in branches.items()}

    then_body, else_body = bodies["then_branch"], bodies["else_branch"]
    layer = ctx.scope.builder.if_(cond, then_body.scope.graph, else_body.scope.graph,
                                  _layer_name(ctx))
    for capture in then_body.scope.captures:
        layer.then_input(capture.outer, capture.inner)
    for capture in else_body.scope.captures:
        layer.else_input(capture.outer, capture.inner)
    out_infos = []
    for i, (t, e) in enumerate(zip(then_body.outputs, else_body.outputs)):
        if t.element_type != e.element_type:
            raise ctx.error(f"output {i} is {t.element_type.name} in then_branch but "
                            f"{e.element_type.name} in else_branch")
        both = union(t.info, e.info)
        if both.shape is None and t.shape is not None and e.shape is not None:
            # The branches give different ranks (ONNX allows it): the output's rank depends
            # on the condition, whatever rank the model declares for it.
            out_infos.append(both)
        else:
            out_infos.append(refine(both, ctx.output_info(i)))
    then_results = [_result(then_body.scope, value) for value in then_body.outputs]
    else_results = [_result(else_body.scope, value) for value in else_body.outputs]
    for then_result, else_result, info in zip(then_results, else_results, out_infos):
        layer.output(then_result, else_result, info)
    return list(layer.build()[1])
