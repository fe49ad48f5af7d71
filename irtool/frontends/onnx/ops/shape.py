"""Shape and data-movement ONNX operators: Shape, Size, Reshape, Squeeze, Unsqueeze, Concat,
Split, Flatten, Transpose, Expand, Tile, Pad, Slice, Constant, ConstantOfShape, Range,
DepthToSpace, SpaceToDepth."""

from __future__ import annotations

import numpy as np

from ....opset import TensorInfo
from ....passes.loop_facts import offset_from, scalar_int
from ..context import SMALL_CONST, NodeContext, Value, dense_array, onnx_op
from ..tensor_types import refine
from ._common import (
    I64,
    INT64_MAX,
    binary,
    concat_1d,
    const_of,
    convert,
    dim_of,
    drop_axes,
    flatten_2d,
    i64,
    insert_axes,
    norm_axes,
    norm_axis,
    onnx_type,
    rank_of,
    shape_of,
    static_count,
    to_scalar,
)


# -- Shape, Size -----------------------------------------------------------------------------
@onnx_op("Shape", 1, 13, 15, 19, 21, 23, 24, 25)
def shape(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    start = int(ctx.attr("start", 0))
    end = ctx.attr("end")
    if start == 0 and end is None:
        return [ctx.op("ShapeOf", "opset3", [x], {"output_type": I64}, refine=ctx.onnx_types(0))[0]]
    dims = shape_of(ctx, x)
    stop = INT64_MAX if end is None else int(end)
    if x.rank is not None:  # clamp as ONNX does, so the output length is static
        rank = x.rank
        start = min(max(start + rank if start < 0 else start, 0), rank)
        stop = min(max(stop + rank if stop < 0 else stop, 0), rank)
        stop = max(stop, start)
    return [ctx.op("Slice", "opset8", [dims, i64(ctx, [start]), i64(ctx, [stop]),
                                           i64(ctx, [1]), i64(ctx, [0])],
                                           refine=ctx.onnx_types(0))[0]]


@onnx_op("Size", 1, 13, 19, 21, 23, 24, 25)
def size(ctx: NodeContext) -> list[Value | None]:
    dims = shape_of(ctx, ctx.required_input(0))
    return [ctx.op("ReduceProd", "opset1", [dims, i64(ctx, [0])], {"keep_dims": False},
                   refine=ctx.onnx_types(0))[0]]


# -- Reshape, Squeeze, Unsqueeze, Flatten --------------------------------------------------------
@onnx_op("Reshape", 1, 5, 13, 14, 19, 21, 23, 24, 25)
def reshape_(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    if ctx.opset < 5:
        target = i64(ctx, list(ctx.attr("shape", [])))
    else:
        target = convert(ctx, ctx.required_input(1), I64)
    known = ctx.const_value(target)
    if known is not None and (np.any(known < -1) or np.count_nonzero(known == -1) > 1):
        raise ctx.error(f"shape {np.asarray(known).tolist()}: a dim is at least -1, and only "
                        "one may be -1")
    # ONNX: 0 copies the input dim unless allowzero=1 (then 0 is a real 0).
    special_zero = not bool(ctx.attr("allowzero", 0))
    return [ctx.op("Reshape", "opset1", [x, target], {"special_zero": special_zero},
                   refine=ctx.onnx_types(0))[0]]


def _axes_from(ctx: NodeContext, attr_until: int) -> list[int] | Value | None:
    """Axes of Squeeze/Unsqueeze: the attribute before opset ``attr_until``, else input 1."""
    if ctx.opset < attr_until:
        axes = ctx.attr("axes")
        return None if axes is None else [int(a) for a in axes]
    value = ctx.input(1)
    if value is None:
        return None
    const = ctx.const_value(value)
    if const is not None:
        return [int(a) for a in const.ravel()]
    return convert(ctx, value, I64)


@onnx_op("Squeeze", 1, 11, 13, 21, 23, 24, 25)
def squeeze_(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    axes = _axes_from(ctx, 13)
    if axes is None and x.shape is not None and all(d >= 0 for d in x.shape):
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    if axes == []:
        # Nothing to squeeze: ONNX's shape inference and reference implementation read an
        # empty axes input so (onnxruntime squeezes every 1-dim; docs/differential.md),
        # and OpenVINO's Squeeze-1 reads an empty list as every 1-dim.
        return [ctx.op("Identity", "opset16", [x], refine=ctx.onnx_types(0))[0]]
    if axes is None:
        return [ctx.op("Squeeze", "opset1", [x], refine=ctx.onnx_types(0))[0]]
    count = static_count(axes) if isinstance(axes, Value) else None
    if isinstance(axes, Value) and count is not None and x.rank is not None:
        return [drop_axes(ctx, x, axes, count)]
    if isinstance(axes, list):
        if x.rank is not None:
            axes = norm_axes(ctx, axes, x.rank)
        axes = i64(ctx, axes)
    return [ctx.op("Squeeze", "opset1", [x, axes], refine=ctx.onnx_types(0))[0]]


@onnx_op("Unsqueeze", 1, 11, 13, 21, 23, 24, 25)
def unsqueeze_(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    axes = _axes_from(ctx, 13)
    if axes is None:
        raise ctx.error("axes are required")
    count = static_count(axes) if isinstance(axes, Value) else None
    if isinstance(axes, Value) and count is not None and x.rank is not None:
        return [insert_axes(ctx, x, axes, count)]
    if isinstance(axes, list):
        if x.rank is not None:
            axes = norm_axes(ctx, axes, x.rank + len(axes))
        known = ctx.const_value(x)
        if known is not None and known.size <= SMALL_CONST and len(set(axes)) == len(axes):
            # Exporters unsqueeze constant scalars into Slice starts/axes: kept a constant,
            # the Slice's inference (and ONNX's) can still tell which dims it keeps.
            return [ctx.const(np.expand_dims(known, tuple(axes)), x.element_type)]
        axes = i64(ctx, axes)
    return [ctx.op("Unsqueeze", "opset1", [x, axes], refine=ctx.onnx_types(0))[0]]


@onnx_op("Flatten", 1, 9, 11, 13, 21, 23, 24, 25)
def flatten(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    axis = int(ctx.attr("axis", 1))
    if x.rank is None and axis >= 0:
        return [flatten_2d(ctx, x, axis)]  # the rank matters only for a negative axis
    rank = rank_of(ctx, x)
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis <= rank:
        raise ctx.error(f"axis {axis} is out of range for rank {rank}")
    return [flatten_2d(ctx, x, axis)]


# -- Concat, Split ------------------------------------------------------------------------------
@onnx_op("Concat", 1, 4, 11, 13)
def concat(ctx: NodeContext) -> list[Value | None]:
    values = [v for v in ctx.inputs if v is not None]
    if not values:
        raise ctx.error("needs at least one input")
    axis = int(ctx.attr("axis", 1))
    if values[0].rank is not None:
        axis = norm_axis(ctx, axis, values[0].rank)
    return [ctx.op("Concat", "opset1", values, {"axis": axis}, refine=ctx.onnx_types(0))[0]]


@onnx_op("Split", 1, 2, 11, 13, 18)
def split(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    n = len(ctx.node.output)
    if n == 0:
        raise ctx.error("has no outputs")
    axis = int(ctx.attr("axis", 0))
    if x.rank == 0:
        raise ctx.error("its input is a scalar, which has no axis to split")
    if x.rank is not None:
        axis = norm_axis(ctx, axis, x.rank)
    lengths: list[int] | Value | None = None
    if ctx.has_attr("split"):
        lengths = [int(s) for s in ctx.attr("split")]
    elif ctx.opset in (1,) or ctx.opset >= 13:
        given = ctx.input(1)
        if given is not None:
            const = ctx.const_value(given)
            lengths = [int(s) for s in const.ravel()] if const is not None else \
                convert(ctx, given, I64)
    outputs = list(range(n))
    if lengths is None:
        dim = x.shape[axis] if x.shape is not None else -1
        if ctx.has_attr("num_outputs") and int(ctx.attr("num_outputs")) != n:
            # Checked before anything is sized by it: num_outputs=3e8 would allocate GBs.
            raise ctx.error(f"num_outputs is {ctx.attr('num_outputs')} but the node has {n} "
                            "outputs")
        if dim >= 0 and dim % n:
            # ONNX-18 makes the last chunk the smaller one when the dim does not divide.
            chunk = -(-dim // n)
            lengths = [chunk] * (n - 1) + [dim - chunk * (n - 1)]
        elif dim < 0 and ctx.has_attr("num_outputs") and n > 1:
            lengths = _ceil_chunks(ctx, x, axis, n)
        else:
            return ctx.op("Split", "opset1", [x, i64(ctx, axis)], {"num_splits": n},  # type: ignore[return-value]
                          refine=ctx.onnx_types(*outputs))
    if isinstance(lengths, list):
        if len(lengths) != n:
            raise ctx.error(f"split has {len(lengths)} entries for {n} outputs")
        lengths = i64(ctx, lengths)
    return ctx.op("VariadicSplit", "opset1", [x, i64(ctx, axis), lengths],  # type: ignore[return-value]
                  refine=ctx.onnx_types(*outputs))


def _ceil_chunks(ctx: NodeContext, x: Value, axis: int, n: int) -> Value:
    """Run-time lengths [c, ..., c, dim - c*(n-1)] with c = ceil(dim / n)."""
    dim = dim_of(ctx, x, axis)
    chunk = ctx.op("Divide", "opset1", [binary(ctx, "Add", dim, i64(ctx, n - 1)), i64(ctx, n)],
                    {"auto_broadcast": "numpy", "m_pythondiv": True},
                    outputs=[TensorInfo(I64, (1,))])[0]
    rest = binary(ctx, "Subtract", dim, binary(ctx, "Multiply", chunk, i64(ctx, n - 1)))
    head = ctx.op("Broadcast", "opset3", [chunk, i64(ctx, [n - 1])], {"mode": "numpy"},
                   outputs=[TensorInfo(I64, (n - 1,))])[0]
    return concat_1d(ctx, [head, rest])


# -- Transpose, Expand, Tile ---------------------------------------------------------------------
@onnx_op("Transpose", 1, 13, 21, 23, 24, 25)
def transpose(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    perm = ctx.attr("perm")
    if perm is None:
        # An empty order reverses the axes, as ONNX's default does.
        perm = list(reversed(range(x.rank))) if x.rank is not None else []
    perm = [int(p) for p in perm]
    if x.rank is not None and perm and sorted(perm) != list(range(x.rank)):
        raise ctx.error(f"perm {perm} is not a permutation of the {x.rank} axes of its input")
    return [ctx.op("Transpose", "opset1", [x, i64(ctx, perm)], refine=ctx.onnx_types(0))[0]]


@onnx_op("Expand", 8, 13)
def expand(ctx: NodeContext) -> list[Value | None]:
    x, target = ctx.required_input(0), ctx.required_input(1)
    return [ctx.op("Broadcast", "opset3", [x, convert(ctx, target, I64)],
                  {"mode": "bidirectional"}, refine=ctx.onnx_types(0))[0]]


@onnx_op("Tile", 1)
def tile_1(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    rank = rank_of(ctx, x)
    tiles = int(np.asarray(_const(ctx, 1, "tiles")).ravel()[0])
    axis = norm_axis(ctx, int(np.asarray(_const(ctx, 2, "axis")).ravel()[0]), rank)
    repeats = [1] * rank
    repeats[axis] = tiles
    return [ctx.op("Tile", "opset1", [x, i64(ctx, repeats)], refine=ctx.onnx_types(0))[0]]


@onnx_op("Tile", 6, 13)
def tile(ctx: NodeContext) -> list[Value | None]:
    x, repeats = ctx.required_input(0), ctx.required_input(1)
    return [ctx.op("Tile", "opset1", [x, convert(ctx, repeats, I64)], refine=ctx.onnx_types(0))[0]]


def _const(ctx: NodeContext, index: int, what: str) -> np.ndarray:
    value = ctx.const_value(ctx.input(index))
    if value is None:
        raise ctx.error(f"{what} (input {index}) must be a constant")
    return value


# -- Pad ------------------------------------------------------------------------------------------
_PAD_MODES = {"constant": "constant", "reflect": "reflect", "edge": "edge"}


@onnx_op("Pad", 1, 2, 11, 13, 18, 19, 21, 23, 24, 25)
def pad(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    rank = rank_of(ctx, x)
    mode = ctx.attr("mode", "constant")
    value: Value | None = None
    pads: np.ndarray | Value
    if ctx.opset < 11:
        raw = ctx.attr("pads" if ctx.opset >= 2 else "paddings")
        if raw is None:
            raw = ctx.attr("paddings") or ctx.attr("pads")
        pads = np.asarray(raw, dtype=np.int64)
        value = const_of(ctx, float(ctx.attr("value", 0.0)), x)
    else:
        given = ctx.required_input(1)
        const = ctx.const_value(given)
        pads = const.astype(np.int64) if const is not None else convert(ctx, given, I64)
        value = ctx.input(2)
        if value is not None:
            value = to_scalar(ctx, value)
        axes = ctx.input(3)
        if axes is not None:
            pads = _pads_for_axes(ctx, pads, axes, rank)
    if mode not in _PAD_MODES and mode != "wrap":
        raise ctx.error(f"mode {mode!r} is not supported")
    if isinstance(pads, np.ndarray):
        begin, end = i64(ctx, pads[:rank]), i64(ctx, pads[rank:])
    else:
        begin, end = ctx.op("Split", "opset1", [pads, i64(ctx, 0)], {"num_splits": 2},
                            outputs=[TensorInfo(I64, (rank,))] * 2)
    if mode == "wrap":
        return [_wrap_pad(ctx, x, begin, end, rank)]
    inputs = [x, begin, end]
    if mode == "constant":
        inputs.append(value if value is not None else const_of(ctx, 0, x))
    return [ctx.op("Pad", "opset12", inputs, {"pad_mode": _PAD_MODES[mode]},
                   refine=ctx.onnx_types(0))[0]]


def _pads_for_axes(ctx: NodeContext, pads: np.ndarray | Value, axes: Value,
                   rank: int) -> np.ndarray | Value:
    """Pads given for ``axes`` only (opset 18) as pads for every axis."""
    known = ctx.const_value(axes)
    if isinstance(pads, np.ndarray) and known is not None:
        full = np.zeros(2 * rank, dtype=np.int64)
        chosen = norm_axes(ctx, known.ravel().tolist(), rank)
        n = len(chosen)
        for i, axis in enumerate(chosen):
            full[axis] = pads[i]
            full[rank + axis] = pads[n + i]
        return full
    count = static_count(axes)
    norm = ctx.op("FloorMod", "opset1", [convert(ctx, axes, I64), i64(ctx, rank)],
                   {"auto_broadcast": "numpy"}, outputs=[TensorInfo(I64, (count or -1,))])[0]
    shifted = ctx.op("Add", "opset1", [norm, i64(ctx, rank)], {"auto_broadcast": "numpy"},
                      outputs=[TensorInfo(I64, (count or -1,))])[0]
    index = ctx.op("Concat", "opset1", [norm, shifted], {"axis": 0},
                    outputs=[TensorInfo(I64, (2 * count if count else -1,))])[0]
    values = i64(ctx, pads) if isinstance(pads, np.ndarray) else pads
    return ctx.op("ScatterElementsUpdate", "opset12",
                   [i64(ctx, [0] * (2 * rank)), index, values, i64(ctx, 0)],
                   {"reduction": "none", "use_init_val": True},
                   outputs=[TensorInfo(I64, (2 * rank,))])[0]


def _wrap_pad(ctx: NodeContext, x: Value, begin: Value, end: Value, rank: int) -> Value:
    """Circular padding. Negative pads crop first; then along each axis the positions
    -before .. dim+after are gathered modulo the (cropped) dim."""
    begin_c, end_c = ctx.const_value(begin), ctx.const_value(end)
    out = x
    zero = i64(ctx, 0)
    for axis in range(rank):
        if begin_c is not None and end_c is not None and begin_c[axis] == 0 and \
                end_c[axis] == 0:
            continue
        before = _element(ctx, begin, begin_c, axis)
        after = _element(ctx, end, end_c, axis)
        crop_front = binary(ctx, "Maximum", ctx.op("Negative", "opset1", [before])[0], zero)
        crop_back = binary(ctx, "Maximum", ctx.op("Negative", "opset1", [after])[0], zero)
        kept = binary(ctx, "Subtract", binary(ctx, "Subtract", dim_of(ctx, out, axis, False),
                                              crop_front), crop_back)
        start = ctx.op("Negative", "opset1", [binary(ctx, "Maximum", before, zero)])[0]
        stop = binary(ctx, "Add", kept, binary(ctx, "Maximum", after, zero))
        positions = ctx.op("Range", "opset4", [start, stop, i64(ctx, 1)],
                            {"output_type": I64}, outputs=[TensorInfo(I64, (-1,))])[0]
        index = binary(ctx, "Add", binary(ctx, "FloorMod", positions, kept), crop_front)
        out = ctx.op("Gather", "opset8", [out, index, i64(ctx, axis)], {"batch_dims": 0})[0]
    return ctx.op("Identity", "opset16", [out], refine=ctx.onnx_types(0))[0]


def _element(ctx: NodeContext, vector: Value, known: np.ndarray | None, index: int) -> Value:
    if known is not None:
        return i64(ctx, int(known[index]))
    return ctx.op("Gather", "opset8", [vector, i64(ctx, index), i64(ctx, 0)],
                   {"batch_dims": 0}, outputs=[TensorInfo(I64, ())])[0]


# -- Slice ------------------------------------------------------------------------------------
@onnx_op("Slice", 1)
def slice_1(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    starts = [int(s) for s in ctx.attr("starts", [])]
    ends = [int(e) for e in ctx.attr("ends", [])]
    axes = [int(a) for a in ctx.attr("axes", list(range(len(starts))))]
    return [ctx.op("Slice", "opset8", [x, i64(ctx, starts), i64(ctx, ends),
                                           i64(ctx, [1] * len(starts)), i64(ctx, axes)],
                                           refine=ctx.onnx_types(0))[0]]


@onnx_op("Slice", 10, 11, 13)
def slice_(ctx: NodeContext) -> list[Value | None]:
    x = ctx.required_input(0)
    starts = convert(ctx, ctx.required_input(1), I64)
    ends = convert(ctx, ctx.required_input(2), I64)
    axes, steps = ctx.input(3), ctx.input(4)
    count = starts.shape[0] if starts.shape is not None and starts.shape[0] >= 0 else None
    if steps is None:
        if count is None:
            steps = ctx.op("Broadcast", "opset3", [i64(ctx, 1), shape_of(ctx, starts)],
                            {"mode": "numpy"}, outputs=[TensorInfo(I64, (-1,))])[0]
        else:
            steps = i64(ctx, [1] * count)
    inputs = [x, starts, ends, convert(ctx, steps, I64)]
    if axes is not None:
        inputs.append(convert(ctx, axes, I64))
    hint = ctx.onnx_types(0)[0]
    proven = _iteration_slice(ctx, *inputs)
    return [ctx.op("Slice", "opset8", inputs,
                   refine=[hint if proven is None else refine(proven, hint)])[0]]


def _iteration_slice(ctx: NodeContext, x: Value, starts: Value, ends: Value, steps: Value,
                     axes: Value | None = None) -> TensorInfo | None:
    """``x``'s type with its sliced axis as long as the slice provably is, for the loop
    idiom ``x[i + a : i + b]`` of an iteration number ``i`` whose range the scope knows
    (``Scope.ranges``): one axis of static length ``d``, step 1, and ``0 <= i + a <= d``,
    ``0 <= i + b <= d`` for every ``i`` in the range (so neither bound is read from the
    end nor clamped), make the length ``max(b - a, 0)`` in every iteration. Anything else
    is not proven (None); ONNX's inference and irtool's leave such a slice's length
    dynamic, and then whatever reads it (a Squeeze, a carried value) its rank too."""
    step = ctx.const_value(steps)
    axis = 0 if axes is None else scalar_int(ctx.const_value(axes))
    if x.shape is None or step is None or step.size != 1 or int(step.reshape(-1)[0]) != 1 \
            or axis is None or not -len(x.shape) <= axis < len(x.shape):
        return None
    dim = x.shape[axis]
    start, end = offset_from(ctx.graph, starts.src), offset_from(ctx.graph, ends.src)
    if dim < 0 or start is None or end is None or start.base != end.base:
        return None
    bounds = ctx.scope.ranges.get(start.base)
    if bounds is None:
        return None
    low, high = bounds
    if not (start.exact_for(low, high) and end.exact_for(low, high)) or \
            not all(low + b.offset >= 0 and high + b.offset <= dim for b in (start, end)):
        return None
    shape = list(x.shape)
    shape[axis] = max(end.offset - start.offset, 0)
    return TensorInfo(x.element_type, tuple(shape))


# -- constants ----------------------------------------------------------------------------------
@onnx_op("Constant", 1, 9, 11, 12, 13, 19, 21, 23, 24, 25)
def constant(ctx: NodeContext) -> list[Value | None]:
    if not ctx.node.attribute:
        raise ctx.error("has no value attribute")
    attr = ctx.node.attribute[0]
    name = attr.name
    et = None
    if name == "value":
        array, et = ctx.tensor(attr.t, "value"), onnx_type(ctx, attr.t.data_type)
    elif name == "sparse_value":
        array = dense_array(attr.sparse_tensor, ctx.error)
        et = onnx_type(ctx, attr.sparse_tensor.values.data_type)
    elif name == "value_float":
        array = np.asarray(attr.f, dtype=np.float32)
    elif name == "value_floats":
        array = np.asarray(list(attr.floats), dtype=np.float32)
    elif name == "value_int":
        array = np.asarray(attr.i, dtype=np.int64)
    elif name == "value_ints":
        array = np.asarray(list(attr.ints), dtype=np.int64)
    elif name in ("value_string", "value_strings"):
        array = np.asarray(ctx.attr(name), dtype=object)
    else:
        raise ctx.error(f"unknown value attribute {name!r}")
    return [ctx.const(array, et)]


@onnx_op("ConstantOfShape", 9, 20, 21, 23, 24, 25)
def constant_of_shape(ctx: NodeContext) -> list[Value | None]:
    """A scalar Const broadcast to the shape (the value defaults to float32 0)."""
    target = convert(ctx, ctx.required_input(0), I64)
    attr = next((a for a in ctx.node.attribute if a.name == "value"), None)
    if attr is None:
        scalar = ctx.const(np.float32(0))
    else:
        array = ctx.tensor(attr.t, "value")
        if array.size != 1:
            raise ctx.error(f"value must hold one element, not {array.size}")
        scalar = ctx.const(array.reshape(()), onnx_type(ctx, attr.t.data_type))
    return [ctx.op("Broadcast", "opset3", [scalar, target], {"mode": "numpy"},
                   refine=ctx.onnx_types(0))[0]]


@onnx_op("Range", 11, 27)
def range_(ctx: NodeContext) -> list[Value | None]:
    start, limit, delta = (to_scalar(ctx, ctx.required_input(i)) for i in range(3))
    return [ctx.op("Range", "opset4", [start, limit, delta],
                  {"output_type": start.element_type}, refine=ctx.onnx_types(0))[0]]


# -- DepthToSpace, SpaceToDepth -------------------------------------------------------------
_BLOCK_MODES = {"DCR": "blocks_first", "CRD": "depth_first"}


@onnx_op("DepthToSpace", 1, 11, 13, 28)
def depth_to_space(ctx: NodeContext) -> list[Value | None]:
    mode = ctx.attr("mode", "DCR")
    if mode not in _BLOCK_MODES:
        raise ctx.error(f"mode {mode!r} is not supported")
    return [ctx.op("DepthToSpace", "opset1", [ctx.required_input(0)],
                  {"block_size": int(ctx.attr("blocksize")), "mode": _BLOCK_MODES[mode]},
                  refine=ctx.onnx_types(0))[0]]


@onnx_op("SpaceToDepth", 1, 13, 28)
def space_to_depth(ctx: NodeContext) -> list[Value | None]:
    mode = ctx.attr("mode", "DCR")
    if mode not in _BLOCK_MODES:
        raise ctx.error(f"mode {mode!r} is not supported")
    return [ctx.op("SpaceToDepth", "opset1", [ctx.required_input(0)],
                  {"block_size": int(ctx.attr("blocksize")), "mode": _BLOCK_MODES[mode]},
                  refine=ctx.onnx_types(0))[0]]


