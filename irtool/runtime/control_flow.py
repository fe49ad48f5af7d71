"""Loop-5, TensorIterator-1 and If-8 kernels.

Bodies are compiled once into sub-``Plan``s when the outer plan is compiled.
Compilation also turns the ``port_map`` and ``back_edges`` into index lists
(which body Parameter takes which outer input, back-edge value, slice or the
iteration number; which body Result feeds which output), and ``codegen.loops`` turns
those and the body plan into one generated Python loop: no graph work and no
per-iteration calls or lists beyond the body's own numpy calls. This module
keeps the semantics around it: trip counts, caps, slicing, zero iterations and
the outputs.

Semantics follow the OpenVINO specs (``Loop-5``, ``TensorIterator-1``, ``If-8``)
and, where the specs are silent, OpenVINO's own implementations:

* Trip count ``< 0`` means unbounded; the loop then runs while the execution
  condition holds (``for (i = 0; i != trip && cond; ++i)``).
* Zero iterations: an output without ``axis`` whose body Result is carried by a
  back edge (or is a body Parameter) returns the initial value, one fed by a body
  Const returns the constant (as OpenVINO does); a concatenated
  output has length 0 along its axis and the other dims and element type of the
  body Result's declaration, the Loop output's where the body's leaves them open
  (a dim nothing declares is 0, as OpenVINO and onnxruntime give).
* Sliced inputs: ``start``/``end`` count as in OpenVINO's CPU plugin: a negative
  bound ``b`` means ``D + 1 + b`` (so ``-1`` is the end of the axis of length
  ``D``); the range is ``[start, end)`` for ``stride > 0`` and ``[end, start)``
  walked downwards for ``stride < 0``. Each part is ``part_size`` wide and the
  walk moves ``|stride|`` per iteration. Outputs with ``axis`` concatenate the
  per-iteration values, in reverse order when their ``stride`` is negative.
"""

from __future__ import annotations

import sys

import numpy as np

from ..core.errors import ExecutionError, IRToolError
from ..core.scopes import body_scope, layer_path
from ..ir.graph import Graph, Layer, PortMapEntry
from ..ir.types import ElementType
from ..passes.vectorize import BatchedForm, batched_form
from .codegen.loops import generate
from .compiler import compile_graph
from .iteration import (
    ConcatOutput,
    Iterate,
    Iteration,
    SlicedInput,
    ZeroIteration,
    annotate_iteration,
    concatenate,
    fail,
    slice_bounds,
    slice_parts,
    squeezes_match,
    stack,
)
from .plan import CONTROL_FLOW, Kernel, Plan, RunOptions

DEFAULT_MAX_ITERATIONS = 1_000_000
"""Iterations any loop may run when no ``max_iterations`` is given: a trip count of 10**12
is as much a runaway as an unbounded one."""

_INT_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


# ---------------------------------------------------------------------------
# Compile-time descriptions


def _compile_body(layer: Layer, scope: str, options: RunOptions, name: str) -> tuple[Graph, Plan]:
    body = layer.bodies.get(name)
    if body is None:
        raise fail(layer, scope, f"has no {name}")
    return body, compile_graph(body, body_scope(scope, layer.id, name), options)


def _dtype(et: ElementType | None) -> np.dtype | None:
    return None if et is None or et.kind == "dynamic" else et.dtype


def _compile_iteration(layer: Layer, scope: str, options: RunOptions) -> Iteration:
    """Resolve a Loop/TensorIterator ``port_map`` and ``back_edges`` to index lists."""
    graph, plan = _compile_body(layer, scope, options, "body")
    it = Iteration(body=plan, num_outputs=len(layer.outputs))
    params = {p.id: i for i, p in enumerate(plan.parameters)}
    results = {r.id: i for i, r in enumerate(plan.results)}
    fed: set[int] = set()

    def outer_input(entry: PortMapEntry) -> int:
        index = layer.input_index(entry.external_port_id)
        if index is None:
            raise fail(layer, scope, f"port_map input names port {entry.external_port_id}, "
                        "which is not an input port of the layer", entry.line)
        return index

    for entry in layer.port_maps.get("port_map", []):
        if entry.kind == "input":
            if entry.internal_layer_id not in params:
                raise fail(layer, scope, f"port_map input names body layer "
                            f"{entry.internal_layer_id}, which is not a body Parameter", entry.line)
            param = params[entry.internal_layer_id]
            fed.add(param)
            if entry.purpose == "current_iteration" or entry.external_port_id < 0:
                if entry.purpose != "current_iteration":
                    raise fail(layer, scope, f"port_map input for body Parameter "
                                f"{entry.internal_layer_id} has external_port_id "
                                f"{entry.external_port_id} and no purpose", entry.line)
                it.current = param
                pl = plan.parameters[param]
                dtype = _dtype(pl.element_type) or np.dtype(np.int64)
                if dtype not in _INT_DTYPES:
                    raise fail(layer, scope, f"current_iteration Parameter "
                                f"{entry.internal_layer_id} has element type {dtype}; "
                                "i32 or i64 expected", entry.line)
                shape = pl.shape
                # OpenVINO's reference makes a dynamic current_iteration a [1] tensor.
                it.current_dtype = dtype
                it.current_shape = shape if shape in ((), (1,)) else (1,)
            elif entry.axis is not None:
                it.slices.append(SlicedInput(param, outer_input(entry), entry.axis,
                                             *entry.slicing(), entry.external_port_id))
                if it.slices[-1].stride == 0 or it.slices[-1].part_size <= 0:
                    raise fail(layer, scope, f"sliced input on port {entry.external_port_id} "
                                "needs a non-zero stride and a positive part_size", entry.line)
            else:
                it.fixed.append((param, outer_input(entry)))
        else:
            if entry.internal_layer_id not in results:
                raise fail(layer, scope, f"port_map output names body layer "
                            f"{entry.internal_layer_id}, which is not a body Result", entry.line)
            result = results[entry.internal_layer_id]
            if entry.purpose == "execution_condition":
                it.condition = result
            if entry.external_port_id < 0:
                continue
            out = layer.output_index(entry.external_port_id)
            if out is None:
                raise fail(layer, scope, f"port_map output names port {entry.external_port_id}, "
                            "which is not an output port of the layer", entry.line)
            if entry.axis is not None:
                it.concat.append(_concat_spec(layer, plan, entry, out, result))
            else:
                it.last.append((out, result))

    for edge in layer.back_edges:
        if edge.from_layer not in results or edge.to_layer not in params:
            raise fail(layer, scope, f"back edge {edge.from_layer} -> {edge.to_layer} must join "
                        "a body Result to a body Parameter", edge.line)
        param = params[edge.to_layer]
        it.back.append((param, results[edge.from_layer]))
        if param == it.current:
            it.current_fed_back = True

    for i, p in enumerate(plan.parameters):
        if i not in fed:
            raise fail(layer, scope, f"body Parameter {p.id} \"{p.name}\" has no port_map input")
    mapped = {o for o, _ in it.last} | {c.output for c in it.concat}
    missing = [p.id for i, p in enumerate(layer.outputs) if i not in mapped]
    if missing:
        raise fail(layer, scope, f"output port(s) {', '.join(map(str, missing))} have no "
                    "port_map output")
    it.zero = {out: _zero_source(graph, plan, it, result) for out, result in it.last}
    return it


def _concat_spec(layer: Layer, plan: Plan, entry: PortMapEntry, out: int, result: int
                 ) -> ConcatOutput:
    """A concatenated output, with what a zero-iteration run returns for it."""
    res_layer = plan.results[result]
    declared = res_layer.inputs[0].dims if res_layer.inputs else None
    outer = layer.outputs[out]
    axis = entry.axis if entry.axis is not None else 0
    dims: tuple[int, ...] | None = None
    open_dims: tuple[int, ...] | None = None
    why = ""
    # Body Result dims first; the layer's own output dims fill what they leave unknown.
    for candidate in (declared, outer.dims):
        if candidate is None:
            continue
        shape = list(candidate) or [1]  # scalar slices stack into a vector
        rank = len(shape)
        ax = axis + rank if axis < 0 else axis
        if not 0 <= ax < rank:
            why = f"axis {axis} is out of range for rank {rank}"
            continue
        shape[ax] = 0
        if all(d >= 0 for d in shape):
            dims = tuple(shape)
            break
        open_dims = open_dims or tuple(max(d, 0) for d in shape)
    if dims is None and open_dims is not None:
        dims = open_dims  # a dim no declaration fixes is 0, as in OpenVINO and onnxruntime
    if dims is None and not why:
        why = "the body Result's shape is unknown"
    # The body Result's element type, or where it is dynamic the layer's own output's.
    dtype = _dtype(res_layer.inputs[0].precision if res_layer.inputs else None)
    if dtype is None:
        dtype = _dtype(outer.precision)
    if dims is not None and dtype is None:
        dims, why = None, "the body Result's element type is unknown"
    return ConcatOutput(out, result, axis, entry.slicing().stride < 0, dims, dtype, why)


def _zero_source(graph: Graph, plan: Plan, it: Iteration, result: int) -> ZeroIteration:
    """The value of an output without ``axis`` when the loop body never runs."""
    param_of = {r: p for p, r in it.back}
    param = param_of.get(result)
    if param is None:
        # A Result fed straight by a body Parameter passes that Parameter's value on.
        res_layer = plan.results[result]
        src = graph.source(res_layer.id, res_layer.inputs[0].id) if res_layer.inputs else None
        if src is not None and graph.layer(src[0]).type == "Parameter":
            ids = [p.id for p in plan.parameters]
            param = ids.index(src[0]) if src[0] in ids else None
    if param is not None:
        for p, o in it.fixed:
            if p == param:
                return ZeroIteration(outer=o)
        if param == it.current:
            return ZeroIteration(value=np.zeros(it.current_shape, it.current_dtype))
    constant = plan.constants.get(plan.output_slots[result])
    if constant is not None:
        # A Result fed by a Const: OpenVINO gives the constant whether the body ran or not.
        return ZeroIteration(value=constant)
    # Not a carried value: like OpenVINO, an empty tensor of the declared type and shape
    # (unknown dims become 0).
    res_layer = plan.results[result]
    port = res_layer.inputs[0] if res_layer.inputs else None
    dims = port.dims if port is not None else None
    dtype = _dtype(port.precision if port is not None else None)
    if dims is None or dtype is None:
        return ZeroIteration(error="the loop ran zero iterations and the body Result "
                              "is not a carried value and has no declared type and shape")
    return ZeroIteration(value=np.zeros(tuple(max(d, 0) for d in dims), dtype))


# ---------------------------------------------------------------------------
# Run time


def _scalar(value: np.ndarray, what: str, kinds: str, layer: Layer, scope: str) -> int | bool:
    """The single element of a scalar or 1-element tensor of a dtype kind in ``kinds``."""
    if value.__class__ is np.ndarray and value.ndim == 0 and value.dtype.kind in kinds:
        item = value.item()  # the common case, without the copies below
        return bool(item) if kinds == "b" else int(item)
    arr = np.asarray(value)
    if arr.size != 1 or arr.ndim > 1 or arr.dtype.kind not in kinds:
        want = "boolean" if kinds == "b" else "i32 or i64"
        raise fail(layer, scope, f"{what} must be a scalar or 1-element {want} tensor, got "
                    f"{arr.dtype}{list(arr.shape)}")
    item = arr.reshape(()).item()
    return bool(item) if kinds == "b" else int(item)


def _run(it: Iteration, layer: Layer, scope: str, outer: list[np.ndarray], trip: int | None,
         cond: bool, cap: int, cap_note: str) -> list[np.ndarray]:
    """Iterate ``it.body`` while ``i < trip`` (``None``: unbounded) and ``cond`` holds."""
    bound = trip if trip is not None else sys.maxsize
    capped = cap < bound
    if capped and trip is not None and it.condition is None:
        raise _limit(layer, scope, cap, cap_note)  # a plain for loop: known before it starts
    end = cap if capped else bound
    lim = end if cond else 0
    parts = []
    available = None
    for spec in it.slices:
        count = slice_bounds(spec, outer[spec.outer], layer, scope)[4]
        available = count if available is None else min(available, count)
    iterate: Iterate = it.iterate  # type: ignore[assignment]
    run = iterate.run
    if available is not None:
        lim = min(lim, available)
        squeezed: dict[int, int] = {}
        if iterate.run_squeezed is not None and squeezes_match(it, outer, iterate.squeezed):
            run, squeezed = iterate.run_squeezed, iterate.squeezed
        parts = [slice_parts(spec, outer[spec.outer], lim, layer, scope, k in squeezed)
                 for k, spec in enumerate(it.slices)]
    i, cond, lasts, collected = run(outer, parts, lim, cond)
    if available is not None and cond and i == available < end:
        err = fail(layer, scope, f"iteration {i} needs part {i} of the sliced inputs, which "
                    f"have only {available} parts")
        annotate_iteration(err, f"iteration {i} of {layer_path(scope, layer.id)}")
        raise err
    if capped and cond and i == cap:  # it would run another iteration
        raise _limit(layer, scope, cap, cap_note)
    result: list = [None] * it.num_outputs
    for (o, _), last in zip(it.last, lasts):
        if i:
            result[o] = last
            continue
        zero = it.zero[o]
        if zero.error is not None:
            raise fail(layer, scope, f"output port {layer.outputs[o].id}: {zero.error}")
        # Copies, as OpenVINO's are: callers may write to outputs without touching the
        # inputs or the value kept here for the next run.
        source = outer[zero.outer] if zero.outer is not None else zero.value
        result[o] = np.array(source, copy=True)
    for ci, (joined, values) in enumerate(zip(it.concat, collected)):
        if values:
            fusion = iterate.stacking.get(ci)
            if fusion is None:
                result[joined.output] = concatenate(values, joined, layer, scope)
            else:
                result[joined.output] = stack(values, joined, fusion, it.body, layer, scope)
        elif joined.empty_dims is None:
            raise fail(layer, scope, f"output port {layer.outputs[joined.output].id}: the loop "
                        f"ran zero iterations and the empty concatenation has no known shape: "
                        f"{joined.why_no_empty}")
        else:
            result[joined.output] = np.zeros(joined.empty_dims, joined.empty_dtype)
    return result


def _condition_check(layer: Layer, scope: str):
    def check(value: np.ndarray) -> bool:
        return _scalar(value, "the body's execution condition", "b", layer, scope)  # type: ignore[return-value]

    return check


def _limit(layer: Layer, scope: str, cap: int, note: str) -> ExecutionError:
    return fail(layer, scope, f"loop stopped: it would run more than {cap} iterations "
                 f"({note})")


def _cap(options: RunOptions) -> tuple[int, str]:
    if options.max_iterations is not None:
        return options.max_iterations, f"max_iterations={options.max_iterations}"
    return DEFAULT_MAX_ITERATIONS, (f"the default cap is {DEFAULT_MAX_ITERATIONS}; "
                                    "max_iterations (--max-iterations) sets another")


def _batched_plan(layer: Layer, scope: str, options: RunOptions
                  ) -> tuple[BatchedForm, Plan] | None:
    """The loop's iterations as one batched computation (``passes.vectorize``), compiled;
    None when the iterations may depend on each other or ``options`` say no."""
    if not options.vectorize or not options.optimize:
        return None
    form = batched_form(layer)
    if form is None:
        return None
    options.applied["batched loops"] += 1
    return form, compile_graph(form.graph, body_scope(scope, layer.id, "batched"), options)


def _batch_fits(batched: tuple[BatchedForm, Plan], it: Iteration, inputs: list[np.ndarray],
                count: int) -> bool:
    """Does the batched form compute these iterations: is ``count`` the length of every
    sliced input and of every input the form reads whole?"""
    form = batched[0]
    if form.count >= 0 and form.count != count:
        return False
    for index, axis in [*((s.outer, s.axis) for s in it.slices), *form.whole]:
        shape = np.shape(inputs[index])
        if not -len(shape) <= axis < len(shape) or shape[axis] != count:
            return False
    return True


# ---------------------------------------------------------------------------
# The three operations


def compile_loop(layer: Layer, scope: str, options: RunOptions) -> Kernel:
    """Loop-5: trip count (input 0), execution condition (input 1), then the port_map."""
    if len(layer.inputs) < 2:
        raise fail(layer, scope, "Loop needs the trip count and execution condition inputs")
    it = _compile_iteration(layer, scope, options)
    # Without a condition Result OpenVINO keeps going; a constant true one needs no check.
    if it.condition is not None:
        slot = it.body.output_slots[it.condition]
        constant = it.body.constants.get(slot)
        if constant is not None and constant.size == 1 and constant.dtype == np.bool_ \
                and bool(constant.reshape(())):
            it.condition = None
    it.iterate = generate(it, layer, scope, _condition_check(layer, scope), options)
    batched = _batched_plan(layer, scope, options)

    def loop(inputs: list[np.ndarray]) -> list[np.ndarray]:
        trip = _scalar(inputs[0], "the trip count (input 0)", "iu", layer, scope)
        cond = _scalar(inputs[1], "the execution condition (input 1)", "b", layer, scope)
        cap, note = _cap(options)
        # The batched form runs exactly ``trip`` iterations over whole sliced inputs;
        # anything else (no iteration, unbounded, over the cap) is the loop's to handle.
        if batched is not None and cond and 0 < trip <= cap and \
                _batch_fits(batched, it, inputs, trip):
            try:
                return batched[1].execute(inputs)
            except IRToolError:
                pass  # the loop says which body layer fails, in which iteration
        return _run(it, layer, scope, inputs, None if trip < 0 else int(trip),
                    bool(cond), cap, note)

    loop.iteration = it  # type: ignore[attr-defined]  # for tests and inspection
    loop.batched = batched  # type: ignore[attr-defined]
    return loop


def compile_tensor_iterator(layer: Layer, scope: str, options: RunOptions) -> Kernel:
    """TensorIterator-1: as many iterations as the sliced inputs have parts."""
    it = _compile_iteration(layer, scope, options)
    if it.current is not None:
        raise fail(layer, scope, "a TensorIterator body cannot have a current_iteration input")
    it.condition = None
    it.iterate = generate(it, layer, scope, _condition_check(layer, scope), options)
    batched = _batched_plan(layer, scope, options)

    def tensor_iterator(inputs: list[np.ndarray]) -> list[np.ndarray]:
        counts = {slice_bounds(s, inputs[s.outer], layer, scope)[4] for s in it.slices}
        if len(counts) > 1:
            raise fail(layer, scope, f"the sliced inputs give different iteration counts: "
                        f"{sorted(counts)}")
        trip = counts.pop() if counts else 1
        cap, note = _cap(options)
        if batched is not None and 0 < trip <= cap and _batch_fits(batched, it, inputs, trip):
            try:
                return batched[1].execute(inputs)
            except IRToolError:
                pass  # the loop says which body layer fails, in which iteration
        return _run(it, layer, scope, inputs, trip, True, cap, note)

    tensor_iterator.iteration = it  # type: ignore[attr-defined]  # for tests and inspection
    tensor_iterator.batched = batched  # type: ignore[attr-defined]
    return tensor_iterator


def compile_if(layer: Layer, scope: str, options: RunOptions) -> Kernel:
    """If-8: input 0 picks ``then_body`` (true) or ``else_body``; each has its own port map."""
    if not layer.inputs:
        raise fail(layer, scope, "If needs a condition input")
    branches = {}
    for flag, name in ((True, "then"), (False, "else")):
        _, plan = _compile_body(layer, scope, options, f"{name}_body")
        params = {p.id: i for i, p in enumerate(plan.parameters)}
        results = {r.id: i for i, r in enumerate(plan.results)}
        feeds: list[int | None] = [None] * len(plan.parameters)
        sources: list[int | None] = [None] * len(layer.outputs)
        for entry in layer.port_maps.get(f"{name}_port_map", []):
            if entry.kind == "input":
                index = layer.input_index(entry.external_port_id)
                if entry.internal_layer_id not in params or index is None:
                    raise fail(layer, scope, f"{name}_port_map input {entry.external_port_id} -> "
                                f"{entry.internal_layer_id} does not join an input port to a "
                                f"{name}_body Parameter", entry.line)
                feeds[params[entry.internal_layer_id]] = index
            else:
                index = layer.output_index(entry.external_port_id)
                if entry.internal_layer_id not in results or index is None:
                    raise fail(layer, scope, f"{name}_port_map output {entry.internal_layer_id} "
                                f"-> {entry.external_port_id} does not join a {name}_body Result "
                                "to an output port", entry.line)
                sources[index] = results[entry.internal_layer_id]
        for i, p in enumerate(plan.parameters):
            if feeds[i] is None:
                raise fail(layer, scope, f"{name}_body Parameter {p.id} \"{p.name}\" has no "
                            f"{name}_port_map input")
        for o, port in enumerate(layer.outputs):
            if sources[o] is None:
                raise fail(layer, scope, f"output port {port.id} has no {name}_port_map output")
        branches[flag] = (plan.execute, feeds, sources)

    def if_kernel(inputs: list[np.ndarray]) -> list[np.ndarray]:
        cond = _scalar(inputs[0], "the condition (input 0)", "b", layer, scope)
        execute, feeds, sources = branches[bool(cond)]
        outs = execute([inputs[i] for i in feeds])  # type: ignore[index]
        return [outs[r] for r in sources]  # type: ignore[index]

    return if_kernel


CONTROL_FLOW.update({
    "Loop": compile_loop,
    "TensorIterator": compile_tensor_iterator,
    "If": compile_if,
})
