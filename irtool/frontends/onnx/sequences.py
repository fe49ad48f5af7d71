"""ONNX sequences lowered to tensors: a sequence of N same-shaped tensors is the
stacked tensor ``[N, *element_shape]``.

That is what an IR (which has no sequence type) can hold, and it covers the
usual idioms: a sequence grown in a Loop (``SequenceEmpty`` before it,
``SequenceInsert`` per iteration, ``SequenceAt``/``ConcatFromSequence`` after)
becomes a loop-carried tensor that grows by a ``Concat`` along axis 0 (the Loop
translator gives it a dynamic leading dimension); ``SequenceAt(S, i)`` is
``Gather(S, i, axis=0)``; ``SequenceLength`` the leading dimension;
``SequenceErase`` and ``SplitToSequence`` (into equal parts) are slices and a
transpose.

The commonest idiom needs no element shape at all: a Loop that starts a
sequence empty and appends exactly one element per iteration (the body input
read by nothing but that ``SequenceInsert``, see ``appended_carries``) is
lowered by the Loop translator to a scan output: the Loop itself stacks the
elements, whatever their shape, which is also what OpenVINO runs fastest. When
the result is only concatenated (``ConcatFromSequence`` with ``new_axis=0``)
along an axis whose length may differ between iterations (a ragged list), the
Loop carries the concatenation instead, grown by a ``Concat`` (``append_form``).

Elsewhere the element shape of an empty sequence (``SequenceEmpty`` has only a
dtype) comes from ``element_types``: the tensors later inserted into sequences
that start from it, across Loop carried values, If branches and Identity. Where
elements have different shapes (or an empty sequence's elements have no static
shape outside that idiom, or an insert position other than "append" or
"prepend", or a computed erase position is used), the conversion stops with a
``ConversionError`` naming the node. Sequences as graph inputs or outputs are
rejected earlier, by the converter.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import onnx

from ...ir.graph import shape_text
from ...opset import TensorInfo
from .context import NodeContext, Value, onnx_op
from .ops._common import I64, INT64_MAX, i64, shape_of, to_scalar, unsqueeze
from .protos import node_label, outer_names, subgraphs
from .tensor_types import ONNX_TO_ELEMENT_TYPE, union, value_infos


class _Classes:
    """Union-find over value names: names that hold the same (growing) sequence."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, name: str) -> str:
        root = name
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        self.parent[name] = root
        return root

    def union(self, *names: str) -> None:
        roots = [self.find(n) for n in names if n]
        for r in roots[1:]:
            self.parent[r] = roots[0]


def _graphs(graph: onnx.GraphProto, outer: dict[str, TensorInfo]
            ) -> Iterator[tuple[onnx.GraphProto, dict[str, TensorInfo]]]:
    """Every graph with the tensor types visible in it (its own and its enclosing ones)."""
    infos = {**outer, **value_infos(graph)}
    yield graph, infos
    for node in graph.node:
        for _, sub in subgraphs(node):
            yield from _graphs(sub, infos)


def element_types(model: onnx.ModelProto) -> dict[str, TensorInfo | None]:
    """For each ``SequenceEmpty`` output: the type its elements will have (None: unknown).

    Sequences are followed through ``SequenceInsert``, ``Identity``, Loop carried
    values (initial, body input, body output, Loop output) and If outputs; the
    element type is the union of every tensor inserted along the way.
    """
    classes = _Classes()
    inserted: list[tuple[str, TensorInfo | None]] = []
    empties: list[str] = []
    # Elements read back from a sequence (SequenceAt) tell nothing new about element
    # shapes, and their declared types are often looser than the real ones.
    read_back = {n.output[0] for g, _ in _graphs(model.graph, {}) for n in g.node
                 if n.op_type == "SequenceAt" and n.output}
    for graph, infos in _graphs(model.graph, {}):
        for node in graph.node:
            op = node.op_type
            if op == "SequenceEmpty":
                empties.extend(node.output[:1])
            elif op == "SequenceInsert" and len(node.input) >= 2 and node.output:
                classes.union(node.output[0], node.input[0])
                if node.input[1] not in read_back:
                    inserted.append((node.output[0], infos.get(node.input[1])))
            elif op == "SequenceConstruct" and node.output:
                inserted.extend((node.output[0], infos.get(i)) for i in node.input
                                if i not in read_back)
            elif op in ("Identity", "SequenceErase") and node.input and node.output:
                classes.union(node.output[0], node.input[0])
            elif op == "Loop":
                body = next((g for name, g in subgraphs(node) if name == "body"), None)
                if body is None:
                    continue
                for i, init in enumerate(node.input[2:]):
                    names = [init]
                    names += [body.input[2 + i].name] if 2 + i < len(body.input) else []
                    names += [body.output[1 + i].name] if 1 + i < len(body.output) else []
                    names += [node.output[i]] if i < len(node.output) else []
                    classes.union(*names)
            elif op == "If":
                branches = [g for _, g in subgraphs(node)]
                for i, out in enumerate(node.output):
                    classes.union(out, *(b.output[i].name for b in branches
                                         if i < len(b.output)))
    found: dict[str, TensorInfo] = {}
    unknown: set[str] = set()
    for name, info in inserted:
        root = classes.find(name)
        if info is None:
            unknown.add(root)
        else:
            found[root] = union(found[root], info) if root in found else info
    roots = {name: classes.find(name) for name in empties}
    return {name: None if root in unknown else found.get(root) for name, root in roots.items()}


Use = tuple[onnx.NodeProto | None, int]
"""A read of a name: the node and its input index; ``(node, -1)`` when a graph nested in
the node reads it, ``(None, -1)`` when it is a graph output."""


def name_uses(model: onnx.ModelProto) -> dict[str, list[Use]]:
    """Every read of every name, in every graph of ``model`` (ONNX names are unique)."""
    uses: dict[str, list[Use]] = {}
    for graph, _ in _graphs(model.graph, {}):
        for node in graph.node:
            for k, name in enumerate(node.input):
                if name:
                    uses.setdefault(name, []).append((node, k))
            for _, sub in subgraphs(node):
                for name in outer_names(sub):
                    uses.setdefault(name, []).append((node, -1))
        for out in graph.output:
            uses.setdefault(out.name, []).append((None, -1))
    return uses


def appended_carries(node: onnx.NodeProto) -> dict[int, onnx.NodeProto]:
    """The carried sequences of Loop ``node`` that each iteration appends exactly one
    element to and reads otherwise not at all: carried index -> its ``SequenceInsert``.

    The body input must be read by that one ``SequenceInsert`` (no position) alone,
    and its output be the matching body output and nothing else's input.
    """
    body = next((g for name, g in subgraphs(node) if name == "body"), None)
    if node.op_type != "Loop" or body is None:
        return {}
    reads: dict[str, int] = {}
    for inner in body.node:
        for name in inner.input:
            reads[name] = reads.get(name, 0) + 1
        for _, sub in subgraphs(inner):
            for name in outer_names(sub):
                reads[name] = reads.get(name, 0) + 1
    outputs = [o.name for o in body.output]
    found = {}
    for i in range(len(node.input) - 2):
        if 2 + i >= len(body.input) or 1 + i >= len(outputs):
            break
        vi = body.input[2 + i]
        if vi.type.WhichOneof("value") != "sequence_type" or reads.get(vi.name) != 1:
            continue
        insert = next((n for n in body.node if n.op_type == "SequenceInsert"
                       and n.input[:1] == [vi.name]), None)
        if insert is None or len([p for p in insert.input[2:] if p]) or not insert.output:
            continue
        out = insert.output[0]
        if outputs[1 + i] == out and outputs.count(out) == 1 and out not in reads \
                and insert.input[1] != vi.name:
            found[i] = insert
    return found


def deferred_empties(model: onnx.ModelProto, uses: dict[str, list[Use]]) -> set[str]:
    """The ``SequenceEmpty`` outputs read only as the start of appended Loop carries
    (``appended_carries``): those need no element shape."""
    found = set()
    for graph, _ in _graphs(model.graph, {}):
        for node in graph.node:
            if node.op_type != "SequenceEmpty" or not node.output:
                continue
            reads = uses.get(node.output[0], [])
            if reads and all(user is not None and user.op_type == "Loop" and k >= 2
                             and k - 2 in appended_carries(user) for user, k in reads):
                found.add(node.output[0])
    return found


def append_form(reads: list[Use], element: TensorInfo) -> int | str | None:
    """How a Loop output holding an appended sequence (``appended_carries``) of elements
    like ``element`` is kept: None, stacked (a scan output, elements of one shape); an
    axis, concatenated along it (a carried tensor grown by Concat: pieces may differ in
    length there); a string, why neither holds it.

    Elements are of one shape when it is static, when every reader stacks them
    (``ConcatFromSequence`` with ``new_axis=1``, as ONNX requires), or concatenates
    them along an axis of static length (their other dims must agree in ONNX).
    """
    if element.is_static:
        return None
    concat_axes = set()
    others = []
    for user, _ in reads:
        if user is None or user.op_type != "ConcatFromSequence":
            others.append("graph output" if user is None else node_label(user))
            continue
        new_axis = next((a.i for a in user.attribute if a.name == "new_axis"), 0)
        axis = next((a.i for a in user.attribute if a.name == "axis"), None)
        if new_axis:
            continue
        rank = element.rank
        if rank is None or axis is None or not -rank <= axis < rank:
            return None  # ConcatFromSequence says what is wrong
        axis %= rank
        assert element.shape is not None
        if element.shape[axis] < 0:
            concat_axes.add(axis)
    shape = shape_text(element.shape)
    if others:
        return (f"its elements, of shape {shape} not known statically, may differ between "
                f"iterations, and {', '.join(others)} reads them one by one (only "
                "ConcatFromSequence takes such a list as a tensor)")
    if len(concat_axes) > 1 or (concat_axes and len(reads) > 1):
        return (f"its elements, of shape {shape}, are concatenated along axes whose length "
                "may differ between iterations by more than one reader")
    return concat_axes.pop() if concat_axes else None


def _stack_info(element: TensorInfo, length: int) -> TensorInfo:
    shape = None if element.shape is None else (length, *element.shape)
    return TensorInfo(element.element_type, shape)


@onnx_op("SequenceEmpty", 11)
def sequence_empty(ctx: NodeContext) -> list[Value | None]:
    """An empty sequence: a ``[0, *element_shape]`` constant."""
    et = ONNX_TO_ELEMENT_TYPE.get(ctx.attr("dtype", onnx.TensorProto.FLOAT))
    element = ctx.sequence_element(ctx.node.output[0])
    if (element is None or not element.is_static) and et is not None and et.dtype is not None \
            and ctx.conversion.deferred_empty(ctx.node.output[0]):
        # Only appended Loop carries start from it: the Loop stacks or concatenates the
        # elements itself and never reads this (``appended_carries``).
        return [ctx.const(np.zeros((0,), dtype=et.dtype), et)]
    if element is None or not element.is_static:
        raise ctx.error("the element shape of this empty sequence is not known statically "
                        "(needed to lower the sequence to a tensor)")
    if et is None or element.element_type != et or et.dtype is None:
        raise ctx.error(f"its elements are {element.element_type.name}, not the dtype given")
    return [ctx.const(np.zeros((0, *element.shape), dtype=et.dtype), et)]  # type: ignore[misc]


@onnx_op("SequenceConstruct", 11)
def sequence_construct(ctx: NodeContext) -> list[Value | None]:
    items = [ctx.required_input(i) for i in range(ctx.num_inputs)]
    _same_shapes(ctx, items)
    parts = [unsqueeze(ctx, v, [0]) for v in items]
    info = _stack_info(_joined(items), len(items))
    return [parts[0] if len(parts) == 1 else
            ctx.op("Concat", "opset1", parts, {"axis": 0}, outputs=[info])[0]]


def _joined(items: list[Value]) -> TensorInfo:
    info = items[0].info
    for v in items[1:]:
        info = union(info, v.info)
    return info


def _same_shapes(ctx: NodeContext, items: list[Value]) -> None:
    shapes = {v.shape for v in items if v.shape is not None and all(d >= 0 for d in v.shape)}
    types = {v.element_type for v in items}
    if len(shapes) > 1 or len(types) > 1:
        raise ctx.error("sequence elements of different shapes or types cannot be lowered to "
                        f"one tensor: {sorted(map(str, shapes))}")


@onnx_op("SequenceInsert", 11)
def sequence_insert(ctx: NodeContext) -> list[Value | None]:
    """Append (no position) or prepend (position 0) one element: a Concat along axis 0."""
    seq, item = ctx.required_input(0), ctx.required_input(1)
    position = ctx.input(2)
    first = False
    if position is not None:
        known = ctx.const_value(position)
        if known is None or known.size != 1 or int(known.reshape(-1)[0]) != 0:
            raise ctx.error("only appending (no position) or prepending (position 0) lowers "
                            "to tensors")
        first = True
    if seq.element_type != item.element_type:
        raise ctx.error(f"inserting {item.element_type.name} into a sequence of "
                        f"{seq.element_type.name}")
    if seq.shape is not None and item.shape is not None and (
            len(seq.shape) != len(item.shape) + 1 or any(
                a >= 0 and b >= 0 and a != b for a, b in zip(seq.shape[1:], item.shape))):
        raise ctx.error(f"element of shape {list(item.shape)} differs from the sequence's "
                        f"elements {list(seq.shape[1:])}")
    part = unsqueeze(ctx, item, [0])
    parts = [part, seq] if first else [seq, part]
    length = -1 if seq.shape is None or seq.shape[0] < 0 else seq.shape[0] + 1
    elem = item.info if seq.shape is None else union(
        item.info, TensorInfo(seq.element_type, seq.shape[1:]))
    return [ctx.op("Concat", "opset1", parts, {"axis": 0},
                    outputs=[_stack_info(elem, length)])[0]]


@onnx_op("SequenceAt", 11)
def sequence_at(ctx: NodeContext) -> list[Value | None]:
    seq, position = ctx.required_input(0), to_scalar(ctx, ctx.required_input(1))
    shape = None if seq.shape is None else seq.shape[1:]
    return [ctx.op("Gather", "opset8", [seq, position, i64(ctx, 0)], {"batch_dims": 0},
                    outputs=[TensorInfo(seq.element_type, shape)])[0]]


@onnx_op("SequenceLength", 11)
def sequence_length(ctx: NodeContext) -> list[Value | None]:
    seq = ctx.required_input(0)
    if seq.shape is not None and seq.shape[0] >= 0:
        return [i64(ctx, seq.shape[0])]
    return [ctx.op("Gather", "opset8", [shape_of(ctx, seq), i64(ctx, 0), i64(ctx, 0)],
                    {"batch_dims": 0}, outputs=[TensorInfo(I64, ())])[0]]


@onnx_op("ConcatFromSequence", 11)
def concat_from_sequence(ctx: NodeContext) -> list[Value | None]:
    """Stack (new_axis=1) or concatenate (new_axis=0) the elements along ``axis``."""
    seq = ctx.required_input(0)
    new_axis = bool(ctx.attr("new_axis", 0))
    axis = ctx.attr("axis")
    joined = ctx.conversion.concatenated.get(ctx.node.input[0])
    if joined is not None and not new_axis and axis is not None and seq.rank is not None \
            and -seq.rank <= axis < seq.rank and axis % seq.rank == joined:
        return [seq]  # a Loop concatenated the elements already (``append_form``)
    if joined is not None:
        raise ctx.error(f"the elements were concatenated along axis {joined} already")
    if seq.rank is None:
        raise ctx.error("the rank of the sequence's elements must be known")
    rank = seq.rank - 1
    out_rank = rank + 1 if new_axis else rank
    if axis is None or not -out_rank <= axis < out_rank:
        raise ctx.error(f"axis {axis} is out of range for elements of rank {rank}")
    axis %= out_rank
    assert seq.shape is not None
    n, dims = seq.shape[0], list(seq.shape[1:])
    # Move the sequence axis (0) to position `axis`.
    perm = [*range(1, axis + 1), 0, *range(axis + 1, rank + 1)]
    moved_shape = (*dims[:axis], n, *dims[axis:])
    moved = seq if axis == 0 else ctx.op(
        "Transpose", "opset1", [seq, i64(ctx, perm)],
        outputs=[TensorInfo(seq.element_type, moved_shape)])[0]
    if new_axis:
        return [moved]
    # Merge the sequence axis with the element axis after it: [.., N, d, ..] -> [.., N*d, ..].
    merged = -1 if n < 0 or dims[axis] < 0 else n * dims[axis]
    out_shape = (*dims[:axis], merged, *dims[axis + 1:])
    full = shape_of(ctx, moved)
    pieces = []
    if axis > 0:
        pieces.append(_pick(ctx, full, list(range(axis))))
    pieces.append(ctx.op("Multiply", "opset1", [_pick(ctx, full, [axis]),
                                                 _pick(ctx, full, [axis + 1])],
                          outputs=[TensorInfo(full.element_type, (1,))])[0])
    if axis + 2 <= rank:
        pieces.append(_pick(ctx, full, list(range(axis + 2, rank + 1))))
    target = pieces[0] if len(pieces) == 1 else ctx.op(
        "Concat", "opset1", pieces, {"axis": 0}, outputs=[TensorInfo(full.element_type,
                                                                      (rank,))])[0]
    return [ctx.op("Reshape", "opset1", [moved, target], {"special_zero": False},
                    outputs=[TensorInfo(seq.element_type, out_shape)])[0]]


def _pick(ctx: NodeContext, shape: Value, indices: list[int]) -> Value:
    return ctx.op("Gather", "opset8", [shape, i64(ctx, indices), i64(ctx, 0)],
                   {"batch_dims": 0}, outputs=[TensorInfo(shape.element_type,
                                                          (len(indices),))])[0]



def _slice0(ctx: NodeContext, seq: Value, start: int, stop: int) -> Value:
    """``seq[start:stop]`` along the sequence axis (Python bounds, negative from the end)."""
    shape = None if seq.shape is None else (-1, *seq.shape[1:])
    return ctx.op("Slice", "opset8", [seq, i64(ctx, [start]), i64(ctx, [stop]), i64(ctx, [1]),
                                       i64(ctx, [0])],
                   outputs=[TensorInfo(seq.element_type, shape)])[0]


@onnx_op("SequenceErase", 11)
def sequence_erase(ctx: NodeContext) -> list[Value | None]:
    """Drop the last element (no position) or the one at a constant position."""
    seq = ctx.required_input(0)
    position = ctx.input(1)
    p = -1
    if position is not None:
        known = ctx.const_value(position)
        if known is None or known.size != 1:
            raise ctx.error("only a constant position lowers to tensors")
        p = int(known.reshape(-1)[0])
    if p == -1:
        return [_slice0(ctx, seq, 0, -1)]
    before, after = _slice0(ctx, seq, 0, p), _slice0(ctx, seq, p + 1, INT64_MAX)
    return [ctx.op("Concat", "opset1", [before, after], {"axis": 0},
                    outputs=[TensorInfo(seq.element_type, before.shape)])[0]]


def _uniform_value(ctx: NodeContext, value: Value) -> int | None:
    """The one value every element of ``value`` has, when the IR makes it plain: a
    constant, or a Broadcast of a one-element constant (ONNX ConstantOfShape)."""
    known = ctx.const_value(value)
    if known is None:
        layer = ctx.scope.graph.layer(value.layer)
        if layer.type != "Broadcast":
            return None
        src = ctx.scope.graph.source(layer.id, layer.inputs[0].id)
        if src is None:
            return None
        known = ctx.builder.const_value(Value(src[0], src[1], value.info))
    if known is None or known.size == 0 or not np.all(known == known.reshape(-1)[0]):
        return None
    return int(known.reshape(-1)[0])


@onnx_op("SplitToSequence", 11)
def split_to_sequence(ctx: NodeContext) -> list[Value | None]:
    """Equal parts along ``axis``: the sequence axis moved to the front.

    Parts of size 1 (no ``split``, or a split of ones) work with any shape; larger
    equal parts need a static, divisible dimension. Unequal parts would be tensors of
    different shapes: a ConversionError.
    """
    data = ctx.required_input(0)
    if data.shape is None:
        raise ctx.error("the rank of the input must be known")
    rank = len(data.shape)
    axis = ctx.attr("axis", 0)
    if not -rank <= axis < rank:
        raise ctx.error(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    split = ctx.input(1)
    keepdims = ctx.flag("keepdims", 1) if split is None else True
    size = 1 if split is None else _uniform_value(ctx, split)
    if size is None:
        raise ctx.error("only a split into equal parts (known when converting) lowers to "
                        "tensors")
    dims = list(data.shape)
    perm = [axis, *(i for i in range(rank) if i != axis)]
    rest = [dims[i] for i in range(rank) if i != axis]
    if size == 1:
        moved = ctx.op("Transpose", "opset1", [data, i64(ctx, perm)],
                        outputs=[TensorInfo(data.element_type, (dims[axis], *rest))])[0]
        return [unsqueeze(ctx, moved, [axis + 1]) if keepdims else moved]
    n = dims[axis]
    if n < 0 or size <= 0 or n % size or any(d < 0 for d in dims):
        raise ctx.error(f"splitting a dimension of {n} into parts of {size} needs a static "
                        "shape it divides evenly")
    chunked = (*dims[:axis], n // size, size, *dims[axis + 1:])
    reshaped = ctx.op("Reshape", "opset1", [data, i64(ctx, list(chunked))],
                       {"special_zero": False},
                       outputs=[TensorInfo(data.element_type, chunked)])[0]
    perm = [axis, *(i for i in range(rank + 1) if i != axis)]
    out = tuple(chunked[i] for i in perm)
    return [ctx.op("Transpose", "opset1", [reshaped, i64(ctx, perm)],
                    outputs=[TensorInfo(data.element_type, out)])[0]]
