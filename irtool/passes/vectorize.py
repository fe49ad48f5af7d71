"""Vectorised independent loops: a Loop or TensorIterator whose iterations do not depend on
each other becomes its body computed once for all iterations, with one more leading axis.

A loop qualifies when

* no carried value changes: every back edge returns its Parameter unchanged (or is the
  condition, constantly true), so iteration ``i`` sees only the invariant inputs, part
  ``i`` of each sliced input, and the iteration number ``i``;
* it never stops early: the body's condition Result is a constant true (through
  ``Identity``), and sliced inputs and concatenated outputs use the default slicing
  (start 0, end -1, stride 1, part size 1);
* every body op that sees a per-iteration value can take the leading axis: the op class
  says how in ``Op.batching`` (``irtool.opset.base``), and ``_RULES`` below holds each
  kind's rule. Body ops that see only invariant values are computed once, unchanged;
* nothing in the body, at any depth, may give another value on another call: no random
  draw, no variable (ReadValue/Assign), no op irtool does not know or a user's
  (``loop_facts.impure_layer``), since computing it once would give every iteration the
  first one's value;
* the iteration number is the counter: its Parameter is fed by no back edge.

The facts about the graph around the loop (trip count = the length of an input, a
constant true condition) are accepted only through ``loop_facts``' rules, each of which
holds for every value (its docstring lists them: casts only where they keep every value
of their source type, a clamp only at 0, one-element slices only). Whatever is not
proven keeps the loop. The batched ops compute the same values per row; where numpy or
BLAS sums in another order over the batch (MatMul, reductions) floats may differ in the
last bits, as any two BLAS calls may; integers are exact.

``batched_form(layer)`` builds the replacement as a stand-alone graph (one Parameter per
input port of the layer, one Result per output port, in order), which the runtime
compiles in place of the loop (``irtool.runtime.control_flow``, checking at run time
that the trip count, condition and slice lengths are those the form assumes) and which
``VectorizeLoops`` splices into the IR where those facts are proven from the graph,
so that OpenVINO gets the batched form too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..ir.builder import GraphBuilder, Value
from ..ir.graph import Graph, Layer, Model, Port, PortMapEntry, TensorInfo
from ..ir.types import element_type
from ..opset import make_op
from ..opset.base import Op
from .base import Pass, PassResult
from .loop_facts import (
    all_true,
    const_of,
    impure_layer,
    input_source,
    scalar_int,
    shape_index,
    trip_matches,
    unclamped,
)
from .prune import prune_graph

_I64 = element_type("i64")


class Refused(Exception):
    """Why a loop keeps its iterations (the message says which layer or entry)."""


@dataclass
class BatchedForm:
    """A loop's batched form: ``graph`` has one Parameter per input port of the loop and
    one Result per output port, in order. It assumes the loop runs exactly as many
    iterations as its trip count (a Loop) or its sliced inputs' parts, and, for each
    ``(input index, axis)`` in ``whole``, that this count is the input's length along
    the axis: the body's ``Gather(X, iteration, axis)`` became all of ``X``."""

    graph: Graph
    whole: list[tuple[int, int]]
    count: int = -1
    """The iteration count the form was built for, when the inputs' declared shapes fix
    it (-1: any)."""


@dataclass(frozen=True)
class _V:
    """A body value in the batched graph: ``batched`` values have the iteration axis first."""

    value: Value
    batched: bool


def batched_form(layer: Layer) -> BatchedForm | None:
    """The Loop/TensorIterator ``layer`` with its iterations as one leading axis (see
    ``BatchedForm``); None when the iterations may depend on each other or an op of the
    body cannot take the axis (``why_not`` says which)."""
    try:
        return _Batcher(layer).build()
    except Refused:
        return None


def why_not(layer: Layer) -> str | None:
    """Why ``batched_form`` refuses ``layer``, or None when it does not."""
    try:
        _Batcher(layer).build()
    except Refused as err:
        return str(err)
    return None


class VectorizeLoops(Pass[Model]):
    """Replace every loop of a model (innermost first) whose batched form exists and whose
    trip count, condition and slice lengths provably match it."""

    optimisation = "vectorised loops"

    def apply(self, model: Model) -> PassResult[Model]:
        return PassResult(model, _vectorize_graph(model.graph))


def _vectorize_graph(graph: Graph) -> int:
    count = 0
    for layer in graph.layers:
        for body in layer.bodies.values():
            count += _vectorize_graph(body)
    for layer in graph.layers:
        if layer.type not in ("Loop", "TensorIterator") or not _proven(graph, layer):
            continue
        form = batched_form(layer)
        if form is not None and _whole_proven(graph, layer, form) and \
                _splice(graph, layer, form.graph):
            count += 1
    return count


def _sliced(layer: Layer) -> list[PortMapEntry]:
    return [e for e in layer.port_maps.get("port_map", [])
            if e.kind == "input" and e.axis is not None]


def _proven(graph: Graph, layer: Layer) -> bool:
    """Does the graph prove what the batched form assumes: a Loop runs exactly its trip
    count (condition constantly true, trip count not negative) and every sliced input
    has that many parts; a TensorIterator's sliced inputs have equally many parts."""
    sources = []
    for entry in _sliced(layer):
        index = layer.input_index(entry.external_port_id)
        src = input_source(graph, layer, index) if index is not None else None
        if src is None:
            return False
        assert entry.axis is not None  # a sliced entry
        sources.append((src, entry.axis))
    if layer.type == "TensorIterator":
        if len(set(sources)) <= 1:
            return True
        lengths = set()
        for src, axis in sources:
            port = graph.layer(src[0]).port(src[1])
            dims = port.dims if port is not None else None
            if dims is None or not -len(dims) <= axis < len(dims) or dims[axis] < 0:
                return False
            lengths.add(dims[axis])
        return len(lengths) == 1
    if not all_true(const_of(graph, input_source(graph, layer, 1))):
        return False
    trip_src = input_source(graph, layer, 0)
    trip = scalar_int(const_of(graph, trip_src))
    if (trip is None or trip < 0) and shape_index(graph, unclamped(graph, trip_src)) is None:
        return False
    return all(axis is not None and axis >= 0 and trip_matches(graph, layer, src, axis)
               for src, axis in sources)


def _whole_proven(graph: Graph, layer: Layer, form: BatchedForm) -> bool:
    """Is the trip count provably the length of every input the form reads whole?"""
    for index, axis in form.whole:
        src = input_source(graph, layer, index)
        if src is None or not trip_matches(graph, layer, src, axis):
            return False
    return True


# ---------------------------------------------------------------------------
# Building the batched form


class _Batcher:
    """One loop's batched form, built into a new graph."""

    def __init__(self, layer: Layer) -> None:
        self.layer = layer
        body = layer.bodies.get("body")
        if body is None or layer.type not in ("Loop", "TensorIterator"):
            raise Refused(f"{layer.type} {layer.name!r} is not a Loop or TensorIterator")
        self.body = body
        self.sources = body.sources()
        self.g = GraphBuilder()
        self.values: dict[tuple[int, int], _V] = {}
        self.trip_dim = -1  # the iteration count, when static
        self._count: Value | None = None
        self.iteration: tuple[int, int] | None = None  # the scalar current_iteration
        self.invariant: dict[tuple[int, int], int] = {}  # body Parameter -> input index
        self.whole: list[tuple[int, int]] = []

    # -- small helpers ----------------------------------------------------------
    def refuse(self, what: str) -> Refused:
        return Refused(f"{self.layer.type} {self.layer.name!r}: {what}")

    def src(self, layer: Layer, index: int) -> tuple[int, int]:
        src = self.sources.get((layer.id, layer.inputs[index].id))
        if src is None:
            raise self.refuse(f"input {index} of body layer {layer.name!r} is not connected")
        return src

    def info(self, port: Port) -> TensorInfo:
        if port.precision is None or port.dims is None:
            raise self.refuse(f"a body port of unknown type or rank ({port.id})")
        return TensorInfo(port.precision, port.dims)

    def batched_info(self, port: Port) -> TensorInfo:
        info = self.info(port)
        assert info.shape is not None
        return TensorInfo(info.element_type, (self.trip_dim, *info.shape))

    def const(self, values: Sequence[int] | int) -> Value:
        return self.g.const(np.array(values, dtype=np.int64))

    def unsqueeze(self, v: Value, axes: list[int], name: str) -> Value:
        assert v.shape is not None
        shape = list(v.shape)
        for a in sorted(axes):
            shape.insert(a, 1)
        return self.g.op("Unsqueeze", "opset1", [v, self.const(axes)], None,
                         outputs=[TensorInfo(v.element_type, tuple(shape))], name=name)[0]

    def transpose(self, v: Value, perm: list[int], name: str) -> Value:
        assert v.shape is not None
        shape = tuple(v.shape[p] for p in perm)
        return self.g.op("Transpose", "opset1", [v, self.const(perm)], None,
                         outputs=[TensorInfo(v.element_type, shape)], name=name)[0]

    def reshape(self, v: Value, shape: tuple[int, ...], name: str) -> Value:
        """``v`` reshaped to ``shape``, whose one dynamic dim (at most) is the iteration
        count; refused when that cannot be written as ``-1``."""
        known = [d for d in shape if d >= 0]
        if len(known) < len(shape) - 1 or (len(known) < len(shape) and 0 in known):
            raise self.refuse(f"cannot reshape to {shape} with a dynamic iteration count")
        return self.g.op("Reshape", "opset1", [v, self.const(list(shape))],
                         {"special_zero": False},
                         outputs=[TensorInfo(v.element_type, shape)], name=name)[0]

    # -- the iteration count and number ----------------------------------------
    def count(self) -> Value:
        """The number of iterations as a scalar i64: the Loop's trip count (only a Loop has
        an iteration number to count with; ``_bind_input`` refuses a TensorIterator's)."""
        if self._count is not None:
            return self._count
        name = f"{self.layer.name}/count"
        trip = self.params[0]
        if trip.shape not in ((), (1,)):
            raise self.refuse("the trip count is not a scalar")
        if trip.shape == (1,):
            trip = self.g.op("Squeeze", "opset1", [trip, self.const([0])], None,
                             outputs=[TensorInfo(trip.element_type, ())],
                             name=name + "/squeeze")[0]
        if trip.element_type != _I64:
            trip = self.g.op("Convert", "opset1", [trip], {"destination_type": "i64"},
                             outputs=[TensorInfo(_I64, ())], name=name + "/convert")[0]
        self._count = trip
        return self._count

    def iteration_numbers(self, param: Layer) -> Value:
        """0, 1, ..., count-1 as the current_iteration Parameter's type, [T] or [T, 1]."""
        info = self.info(param.outputs[0])
        if info.shape not in ((), (1,)) or info.element_type.name not in ("i32", "i64"):
            raise self.refuse("current_iteration is not an i32/i64 scalar or [1]")
        et = info.element_type
        value = self.g.op("Range", "opset4", [self.const(0), self.count(), self.const(1)],
                          {"output_type": et.name}, outputs=[TensorInfo(et, (self.trip_dim,))],
                          name=f"{self.layer.name}/iterations")[0]
        if info.shape == (1,):
            value = self.unsqueeze(value, [1], f"{self.layer.name}/iterations/unsqueeze")
        return value

    def input_index(self, entry: PortMapEntry) -> int:
        index = self.layer.input_index(entry.external_port_id)
        if index is None:
            raise self.refuse(f"port_map names input port {entry.external_port_id}, "
                              "which the layer does not have")
        return index

    # -- the whole form ---------------------------------------------------------
    def build(self) -> BatchedForm:
        layer = self.layer
        self.params = [self.g.parameter(self.info(p), f"{layer.name}/input{i}")
                       for i, p in enumerate(layer.inputs)]
        entries = layer.port_maps.get("port_map", [])
        back = {e.to_layer: e.from_layer for e in layer.back_edges}
        condition = next((e.internal_layer_id for e in entries if e.kind == "output"
                          and e.purpose == "execution_condition"), None)
        if layer.type == "Loop" and condition is not None and (
                condition not in self.body or not self._constant_true(condition)):
                raise self.refuse("the body condition may stop the loop early")
        impure = impure_layer(self.body)
        if impure is not None:
            # Computed once for all iterations, a random draw or a variable read or write
            # (or an op irtool cannot vouch for) would give every iteration the same value.
            raise self.refuse(f"body layer {impure.name!r} ({impure.type}-{impure.version}) "
                              "may give another value on every call")
        self._static_count()
        for entry in entries:
            if entry.kind == "input":
                self._bind_input(entry, back, condition)
        if any(p.id not in {k[0] for k in self.values} for p in self.body.parameters()):
            raise self.refuse("a body Parameter has no port_map entry")
        for lid in self.body.topological_order():
            body_layer = self.body.layer(lid)
            if body_layer.type not in ("Parameter", "Result"):
                self._translate(body_layer)
        outputs: dict[int, Value] = {}
        for entry in entries:
            if entry.kind == "output" and entry.external_port_id >= 0:
                index = layer.output_index(entry.external_port_id)
                if index is None:
                    raise self.refuse(f"port_map names output port {entry.external_port_id}, "
                                      "which the layer does not have")
                outputs[index] = self._output(entry, index)
        if sorted(outputs) != list(range(len(layer.outputs))):
            raise self.refuse("not every output port has one port_map entry")
        for index in range(len(layer.outputs)):
            self.g.result(outputs[index], name=f"{layer.name}/output{index}")
        prune_graph(self.g.graph)  # e.g. an Unsqueeze whose stacking became a no-op
        return BatchedForm(self.g.graph, self.whole, self.trip_dim)

    def _fed(self, result_id: int) -> tuple[int, int]:
        """What feeds body Result ``result_id``, looking through Identity layers."""
        src = self.src(self.body.layer(result_id), 0)
        while self.body.layer(src[0]).type == "Identity":
            src = self.src(self.body.layer(src[0]), 0)
        return src

    def _stacked(self, result: Layer, axis: int) -> Value | None:
        """The batched ``v`` when ``result`` is fed by ``Unsqueeze(v, [axis])`` of a
        per-iteration ``v``, else None."""
        src = self._fed(result.id)
        layer = self.body.layer(src[0])
        if layer.type != "Unsqueeze" or len(layer.inputs) != 2:
            return None
        v = self.values.get(self.src(layer, 0))
        axes = const_of(self.body, self.src(layer, 1))
        rank = len(self.info(layer.outputs[0]).shape or ())
        if v is None or not v.batched or axes is None or axes.size != 1 or \
                axes.dtype.kind not in "iu":
            return None
        a = int(axes.reshape(-1)[0])
        return v.value if (a + rank if a < 0 else a) == axis else None

    def _constant_true(self, result_id: int) -> bool:
        return all_true(const_of(self.body, self._fed(result_id)))

    def _static_count(self) -> None:
        """The iteration count from a sliced input's static length, if there is one."""
        for entry in _sliced(self.layer):
            dims = self.params[self.input_index(entry)].shape
            if dims is not None and entry.axis is not None and \
                    -len(dims) <= entry.axis < len(dims) and dims[entry.axis] >= 0:
                self.trip_dim = dims[entry.axis]
                return

    def _bind_input(self, entry: PortMapEntry, back: dict[int, int],
                    condition: int | None) -> None:
        pid = entry.internal_layer_id
        if pid not in self.body or self.body.layer(pid).type != "Parameter":
            raise self.refuse(f"port_map input names body layer {pid}, not a Parameter")
        param = self.body.layer(pid)
        key = (pid, param.outputs[0].id)
        if entry.purpose == "current_iteration":
            if self.layer.type != "Loop":
                raise self.refuse("a TensorIterator with an iteration number")
            if pid in back:
                raise self.refuse("a back edge feeds the iteration number")
            self.values[key] = _V(self.iteration_numbers(param), True)
            if param.outputs[0].dims == ():
                self.iteration = key
            return
        outer = self.params[self.input_index(entry)]
        if entry.axis is not None:
            self.values[key] = _V(self._sliced_input(entry, outer, param), True)
            return
        if pid in back:
            result = back[pid]
            if result not in self.body:
                raise self.refuse(f"a back edge from missing body layer {result}")
            unchanged = self._fed(result) == key
            steady_true = result == condition and entry.external_port_id == 1 and \
                self.layer.type == "Loop"  # the condition: true before and after each step
            if not (unchanged or steady_true):
                raise self.refuse(f"the carried value of body Parameter {param.name!r} "
                                  "changes from one iteration to the next")
        self.values[key] = _V(outer, False)
        if pid not in back:
            self.invariant[key] = self.input_index(entry)

    def _sliced_input(self, entry: PortMapEntry, outer: Value, param: Layer) -> Value:
        if entry.slicing() != (0, -1, 1, 1):
            raise self.refuse(f"sliced input on port {entry.external_port_id} is not cut "
                              "in steps of one part from the start to the end")
        if outer.shape is None or entry.axis is None:
            raise self.refuse("a sliced input of unknown rank")
        rank = len(outer.shape)
        axis = entry.axis + rank if entry.axis < 0 else entry.axis
        if not 0 <= axis < rank:
            raise self.refuse(f"sliced input axis {entry.axis} is outside rank {rank}")
        name = f"{self.layer.name}/{param.name}"
        value = outer
        if axis != 0:
            value = self.transpose(value, [axis, *[d for d in range(rank) if d != axis]],
                                   name + "/transpose")
        # Iteration i sees part i with its axis kept at length 1.
        return self.unsqueeze(value, [axis + 1], name + "/part")

    # -- body layers ------------------------------------------------------------
    def _translate(self, layer: Layer) -> None:
        ins = [self.values.get(self.src(layer, i)) for i in range(len(layer.inputs))]
        if any(v is None for v in ins):
            raise self.refuse(f"body layer {layer.name!r} reads a value defined nowhere")
        inputs: list[_V] = ins  # type: ignore[assignment]
        batched = any(v.batched for v in inputs)
        if not batched:
            outs = self._copy(layer, [v.value for v in inputs],
                              [self.info(p) for p in layer.outputs])
            for port, value in zip(layer.outputs, outs):
                self.values[(layer.id, port.id)] = _V(value, False)
            return
        try:
            op = make_op(layer.type, layer.version, layer.attrs)
        except (KeyError, ValueError):
            # Every other layer make_op cannot make was refused before (impure_layer).
            raise self.refuse(f"body layer {layer.name!r} ({layer.type}-{layer.version}) "
                              "runs a body of its own on per-iteration values") from None
        rule = _RULES.get(op.batching or "")
        if rule is None:
            raise self.refuse(f"body layer {layer.name!r} ({layer.type}-{layer.version}) "
                              "cannot take a leading iteration axis")
        outs = rule(self, layer, op, inputs)
        for port, value in zip(layer.outputs, outs):
            self.values[(layer.id, port.id)] = _V(value, True)

    def _copy(self, layer: Layer, inputs: Sequence[Value], infos: Sequence[TensorInfo],
              attrs: dict[str, str] | None = None) -> list[Value]:
        """``layer`` once more in the new graph, fed by ``inputs`` (its constant data and
        bodies shared: neither is changed by this pass)."""
        values = self.g.op(layer.type, layer.version, inputs,
                           layer.attrs if attrs is None else attrs, outputs=infos,
                           name=f"{self.layer.name}/{layer.name}", has_data=layer.has_data)
        # The layer just added: the one of the highest id (ids grow), outputs or not.
        new = self.g.graph.layer(values[0].layer if values else max(self.g.graph.nx))
        new.const = layer.const
        new.bodies = dict(layer.bodies)
        new.port_maps = {k: list(v) for k, v in layer.port_maps.items()}
        new.back_edges = list(layer.back_edges)
        new.rt_info = layer.rt_info
        return values

    def _same(self, layer: Layer, inputs: Sequence[Value],
              attrs: dict[str, str] | None = None) -> list[Value]:
        """``layer`` with its outputs batched: the op itself handles the leading axis."""
        return self._copy(layer, inputs, [self.batched_info(p) for p in layer.outputs],
                          attrs)

    def _output(self, entry: PortMapEntry, index: int) -> Value:
        result = self.body.layer(entry.internal_layer_id)
        if result.type != "Result":
            raise self.refuse(f"port_map output names body layer {result.id}, not a Result")
        v = self.values[self.src(result, 0)]
        if entry.axis is None:
            if v.batched:
                raise self.refuse(f"output {index} is the last iteration's value of a "
                                  "per-iteration value")
            return v.value
        if not v.batched:
            raise self.refuse(f"output {index} concatenates a value that is the same in "
                              "every iteration")
        if entry.slicing() != (0, -1, 1, 1):
            raise self.refuse(f"output {index} is not joined in steps of one part")
        shape = v.value.shape
        assert shape is not None
        rank = len(shape) - 1
        axis = entry.axis + rank if entry.axis < 0 else entry.axis
        if not 0 <= axis < rank:
            raise self.refuse(f"output {index} concatenates along axis {entry.axis} of a "
                              f"rank-{rank} value")
        name = f"{self.layer.name}/output{index}"
        stacked = self._stacked(result, axis)
        if stacked is not None:
            # Unsqueeze(v, axis) joined along axis: the per-iteration v, stacked.
            if axis == 0:
                return stacked
            return self.transpose(stacked, [*range(1, axis + 1), 0, *range(axis + 1, rank)],
                                  name + "/transpose")
        value = v.value
        if axis != 0:
            value = self.transpose(value, [*range(1, axis + 1), 0, *range(axis + 1, rank + 1)],
                                   name + "/transpose")
        part = shape[axis + 1]
        joined = -1 if self.trip_dim < 0 or part < 0 else self.trip_dim * part
        target = (*shape[1:axis + 1], joined, *shape[axis + 2:])
        return self.reshape(value, target, name)


# ---------------------------------------------------------------------------
# The rule of each batching kind: (batcher, body layer, its Op, inputs) -> outputs


Rule = Callable[[_Batcher, Layer, Op, list[_V]], list[Value]]


def _rank(b: _Batcher, v: _V) -> int:
    rank = v.value.rank
    if rank is None:
        raise b.refuse("a value of unknown rank")
    return rank - 1 if v.batched else rank


def _elementwise(b: _Batcher, layer: Layer, op: Op, inputs: list[_V]) -> list[Value]:
    out_rank = len(b.info(layer.outputs[0]).shape or ())
    mode = layer.attrs.get("auto_broadcast", "numpy").lower()
    if mode not in ("numpy", "none"):
        raise b.refuse(f"body layer {layer.name!r} broadcasts the {mode} way")
    args = []
    for i, v in enumerate(inputs):
        rank = _rank(b, v)
        value = v.value
        if v.batched and rank < out_rank:
            # numpy broadcasting aligns from the right: keep the iteration axis first.
            value = b.unsqueeze(value, list(range(1, 1 + out_rank - rank)),
                                f"{layer.name}/align{i}")
        args.append(value)
    attrs = dict(layer.attrs)
    if "auto_broadcast" in attrs:
        attrs["auto_broadcast"] = "numpy"  # "none": equal shapes, unbatched ones align
    return b._same(layer, args, attrs)


def _matmul(b: _Batcher, layer: Layer, op: Op, inputs: list[_V]) -> list[Value]:
    a, c = inputs
    ra, rc = _rank(b, a), _rank(b, c)
    ta = layer.attrs.get("transpose_a", "false").lower() in ("true", "1")
    tc = layer.attrs.get("transpose_b", "false").lower() in ("true", "1")
    attrs = dict(layer.attrs)
    if a.batched and c.batched:
        if ra == rc >= 2:
            return b._same(layer, [a.value, c.value])
    elif a.batched:
        if ra >= 2 and ra >= rc:
            return b._same(layer, [a.value, c.value])
        if ra == 1 and rc == 2:  # rows of vectors times one matrix
            attrs["transpose_a"] = "false"
            return b._same(layer, [a.value, c.value], attrs)
    else:
        if rc >= 2 and rc >= ra:
            return b._same(layer, [a.value, c.value])
        if rc == 1 and ra == 2:  # M @ x_i for every i is X @ M^T
            attrs.update(transpose_a="false", transpose_b="false" if ta else "true")
            return b._same(layer, [c.value, a.value], attrs)
    raise b.refuse(f"body MatMul {layer.name!r} of ranks {ra} and {rc} "
                   f"(transposed: {ta}, {tc}) with these sides per iteration")


def _softmax(b: _Batcher, layer: Layer, op: Op, inputs: list[_V]) -> list[Value]:
    axis = op.axis  # type: ignore[attr-defined]
    attrs = dict(layer.attrs, axis=str(axis + 1 if axis >= 0 else axis))
    return b._same(layer, [inputs[0].value], attrs)


def _const_ints(b: _Batcher, layer: Layer, v: _V, what: str) -> list[int]:
    values = b.g.const_value(v.value) if not v.batched else None
    if values is None or values.dtype.kind not in "iu":
        raise b.refuse(f"the {what} of body layer {layer.name!r} are not constant")
    return [int(x) for x in values.reshape(-1)]


def _shifted(b: _Batcher, layer: Layer, axes: list[int], rank: int) -> list[int]:
    out = []
    for a in axes:
        if not -rank <= a < rank:
            raise b.refuse(f"axis {a} of body layer {layer.name!r} is outside rank {rank}")
        out.append((a + rank if a < 0 else a) + 1)
    return out


def _with_axes(b: _Batcher, layer: Layer, inputs: list[_V], rank: int) -> list[Value]:
    """An op whose input 1 lists axes of a rank-``rank`` tensor: the axes move by one."""
    if inputs[1].batched:
        raise b.refuse(f"the axes of body layer {layer.name!r} differ per iteration")
    et = inputs[1].value.element_type
    if et.dtype is None:  # u1: the shifted axes could not be written back in its bits
        raise b.refuse(f"the axes of body layer {layer.name!r} are of type {et.name}")
    axes = _shifted(b, layer, _const_ints(b, layer, inputs[1], "axes"), rank)
    new_axes = b.g.const(np.array(axes).astype(et.dtype).reshape(inputs[1].value.shape), et)
    return b._same(layer, [inputs[0].value, new_axes, *[v.value for v in inputs[2:]]])


def _reduce(b: _Batcher, layer: Layer, op: Op, inputs: list[_V]) -> list[Value]:
    return _with_axes(b, layer, inputs, _rank(b, inputs[0]))


def _unsqueeze(b: _Batcher, layer: Layer, op: Op, inputs: list[_V]) -> list[Value]:
    return _with_axes(b, layer, inputs, len(b.info(layer.outputs[0]).shape or ()))


def _squeeze(b: _Batcher, layer: Layer, op: Op, inputs: list[_V]) -> list[Value]:
    # An empty list of axes is no list: every 1-dim, which must not take the iteration
    # axis (a loop of one iteration) with it.
    if len(inputs) > 1 and (inputs[1].batched or _const_ints(b, layer, inputs[1], "axes")):
        return _with_axes(b, layer, inputs, _rank(b, inputs[0]))
    dims = b.info(layer.inputs[0]).shape or ()
    if any(d < 0 for d in dims):
        raise b.refuse(f"body Squeeze {layer.name!r} without axes on a dynamic shape")
    axes = [i + 1 for i, d in enumerate(dims) if d == 1]
    if not axes:
        # Nothing to squeeze; OpenVINO reads an empty axes list as every 1-dim, the
        # iteration axis of a loop of one iteration too.
        return [inputs[0].value]
    return b._same(layer, [inputs[0].value, b.const(axes)])


def _reshape(b: _Batcher, layer: Layer, op: Op, inputs: list[_V]) -> list[Value]:
    if inputs[1].batched:
        raise b.refuse(f"the target shape of body Reshape {layer.name!r} differs per iteration")
    out = b.info(layer.outputs[0]).shape or ()
    if any(d < 0 for d in out):
        raise b.refuse(f"body Reshape {layer.name!r} to a dynamic shape")
    return [b.reshape(inputs[0].value, (b.trip_dim, *out), layer.name)]


def _transpose(b: _Batcher, layer: Layer, op: Op, inputs: list[_V]) -> list[Value]:
    rank = _rank(b, inputs[0])
    perm = _const_ints(b, layer, inputs[1], "order") if not inputs[1].batched else None
    if perm is None:
        raise b.refuse(f"the order of body Transpose {layer.name!r} differs per iteration")
    if not perm:
        perm = list(range(rank))[::-1]
    new = [0, *_shifted(b, layer, perm, rank)]
    return b._same(layer, [inputs[0].value, b.const(new)])


def _concat(b: _Batcher, layer: Layer, op: Op, inputs: list[_V]) -> list[Value]:
    if not all(v.batched for v in inputs):
        raise b.refuse(f"body Concat {layer.name!r} joins per-iteration and invariant values")
    rank = _rank(b, inputs[0])
    axis = _shifted(b, layer, [op.axis], rank)[0]  # type: ignore[attr-defined]
    return b._same(layer, [v.value for v in inputs], dict(layer.attrs, axis=str(axis)))


def _gather(b: _Batcher, layer: Layer, op: Op, inputs: list[_V]) -> list[Value]:
    data, indices = inputs[0], inputs[1]
    if op.batch_dims != 0 or inputs[2].batched:  # type: ignore[attr-defined]
        raise b.refuse(f"body Gather {layer.name!r} with batch_dims or a per-iteration axis")
    rank = _rank(b, data)
    axis = _shifted(b, layer, _const_ints(b, layer, inputs[2], "axis"), rank)[0] - 1
    whole = b.invariant.get(b.src(layer, 0))
    if whole is not None and b.iteration is not None and b.src(layer, 1) == b.iteration:
        # Row i of an input X in iteration i: all of X, when the loop runs len(X) times
        # (the form records the assumption; see BatchedForm.whole).
        b.whole.append((whole, axis))
        if axis == 0:
            return [data.value]
        return [b.transpose(data.value, [axis, *[d for d in range(rank) if d != axis]],
                            f"{layer.name}/iteration_first")]
    if data.batched and not indices.batched:
        return b._same(layer, [data.value, indices.value, b.const(axis + 1)])
    if data.batched:
        if layer.version == "opset1":
            raise b.refuse(f"body Gather-1 {layer.name!r} has no batch_dims")
        attrs = dict(layer.attrs, batch_dims="1")
        return b._same(layer, [data.value, indices.value, b.const(axis + 1)], attrs)
    # Invariant data at per-iteration indices: the iteration axis lands at ``axis``.
    info = b.batched_info(layer.outputs[0])
    assert info.shape is not None and data.value.shape is not None
    shape = (*data.value.shape[:axis], *(indices.value.shape or ()), *data.value.shape[axis + 1:])
    raw = b._copy(layer, [data.value, indices.value, inputs[2].value],
                  [TensorInfo(info.element_type, shape)])[0]
    if axis == 0:
        return [raw]
    full = len(shape)
    return [b.transpose(raw, [axis, *[d for d in range(full) if d != axis]],
                        f"{layer.name}/iteration_first")]


_RULES: dict[str, Rule] = {
    "elementwise": _elementwise, "matmul": _matmul, "softmax": _softmax, "reduce": _reduce,
    "reshape": _reshape, "transpose": _transpose, "squeeze": _squeeze,
    "unsqueeze": _unsqueeze, "gather": _gather, "concat": _concat,
}


# ---------------------------------------------------------------------------
# Splicing a batched form into the graph in place of the loop


def _splice(graph: Graph, layer: Layer, form: Graph) -> bool:
    """Put ``form``'s layers into ``graph`` in place of ``layer``; False (and nothing
    changed) when a model output would lose its tensor name: an output the form passes
    straight through, or one whose value the form also gives another output (one port,
    one set of names: two scan outputs of the same body value are stacked alike)."""
    params = form.parameters()
    results = form.results()
    inputs = {p.id: input_source(graph, layer, i) for i, p in enumerate(params)}
    fsources = form.sources()
    outs = [fsources[(r.id, r.inputs[0].id)] for r in results]
    model_outputs = [j for j, port in enumerate(layer.outputs) if any(
        graph.layer(c).type == "Result" for c, _ in graph.consumers(layer.id, port.id))]
    if any(outs.count(outs[j]) > 1 or form.layer(outs[j][0]).type == "Parameter"
           for j in model_outputs):
        return False
    mapping: dict[tuple[int, int], tuple[int, int]] = {}
    for p in params:
        fed = inputs[p.id]
        if fed is not None:
            mapping[(p.id, p.outputs[0].id)] = fed
    next_id = graph.next_id()
    for lid in form.topological_order():
        new = form.layer(lid)
        if new.type in ("Parameter", "Result"):
            continue
        old_id = new.id
        new.id = next_id
        next_id += 1
        graph.add_layer(new)
        for port in new.inputs:
            src = mapping[fsources[(old_id, port.id)]]
            graph.connect(src[0], src[1], new.id, port.id)
        for port in new.outputs:
            mapping[(old_id, port.id)] = (new.id, port.id)
    for j, port in enumerate(layer.outputs):
        src = mapping[outs[j]]
        new_port = graph.layer(src[0]).port(src[1])
        if new_port is not None and port.names and src not in inputs.values():
            new_port.names = port.names
        for consumer, cport in graph.consumers(layer.id, port.id):
            graph.connect(src[0], src[1], consumer, cport)
    graph.remove_layer(layer.id)
    return True
