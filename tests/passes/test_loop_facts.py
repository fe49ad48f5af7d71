"""The proof rules of ``irtool.passes.loop_facts`` one by one, on small graphs: each fact is
accepted exactly where its docstring's rule says, and every fact accepted holds.

Expected answers come from the operations' own semantics worked out in numpy (what
``Slice`` of a shape takes is Python slicing of ``range(rank)``, whether a sum wraps is
numpy's fixed-width arithmetic, whether a cast keeps every value is a round trip of the
type's extremes), never from irtool. The loop-level consequences (a loop vectorised or
kept, with onnxruntime's or OpenVINO's values) are in ``test_vectorize_soundness.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.ir_builders import Net, info, true_result, unsqueeze

from irtool.ir import Layer, Value
from irtool.ir.types import element_type
from irtool.passes.loop_facts import (
    Offset,
    exact_convert,
    offset_from,
    scalar_int,
    shape_index,
    trip_matches,
    unclamped,
)

I64 = np.int64


def src(v: Value) -> tuple[int, int]:
    return v.layer, v.port


def _shape_slice(rank: int | None, start: object, stop: object, step: object = 1,
                 axes: object = None) -> tuple[Net, Value, Value]:
    """``Slice(ShapeOf(X), start, stop, step[, axes])`` of an X of ``rank`` (None: a
    ShapeOf output of unknown length); a bound given as None is a Parameter (not a
    constant). Returns the net, X and the Slice."""
    net = Net()
    x = net.param("X", "f32", (3,) * rank if rank is not None else None)
    shape = net.op("ShapeOf", "opset3", [x], {"output_type": "i64"}, et="i64",
                   shape=(rank if rank is not None else -1,))

    def bound(value: object, name: str) -> Value:
        if value is None:
            return net.param(name, "i64", (1,))
        return net.const(np.array([value], I64))

    inputs = [shape, bound(start, "start"), bound(stop, "stop"), bound(step, "step")]
    if axes is not None:
        inputs.append(net.const(np.array([axes], I64)))
    return net, x, net.op("Slice", "opset8", inputs, shape=(-1,))


def _one_element(rank: int, start: int, stop: int, step: int) -> int | None:
    """The one dim Slice takes from a shape of ``rank`` dims (Python's slicing is
    ONNX's and OpenVINO's Slice on one axis), or None when it takes none or several."""
    taken = list(range(rank))[start:stop:step]
    return taken[0] if len(taken) == 1 else None


BOUNDS = range(-5, 6)


@pytest.mark.parametrize("step", [1, 2, -1])
@pytest.mark.parametrize("rank", [1, 2, 3])
def test_a_slice_of_the_shape_is_a_length_only_when_it_takes_one_dim(rank: int,
                                                                     step: int) -> None:
    """Every bound pair that is accepted takes exactly the dim it is taken for; with step
    1 every pair that takes one dim is accepted, except a start before the first dim
    (clamped by Slice) which is refused."""
    for start in BOUNDS:
        for stop in BOUNDS:
            net, x, picked = _shape_slice(rank, start, stop, step)
            found = shape_index(net.graph, src(picked))
            one = _one_element(rank, start, stop, step)
            if found is not None:
                assert step == 1 and found == (src(x), one), (start, stop)
            elif step == 1 and one is not None:
                assert start < -rank, (start, stop)  # conservative: the clamped start


@pytest.mark.parametrize("start, stop", [(start, stop) for start in BOUNDS for stop in BOUNDS])
def test_a_slice_of_a_shape_of_unknown_length(start: int, stop: int) -> None:
    """Without a known rank only ``[s:s + 1]`` with ``s >= 0`` is accepted: it takes dim
    ``s`` of every shape that has one (and of none other, refused later)."""
    net, x, picked = _shape_slice(None, start, stop)
    found = shape_index(net.graph, src(picked))
    if start >= 0 and stop == start + 1:
        assert found == (src(x), start)
    else:
        assert found is None
    for rank in range(start + 1 if start >= 0 else 1, 8):  # every rank holding the dim
        if found is not None:
            assert _one_element(rank, start, stop, 1) == start


@pytest.mark.parametrize("axes, taken", [(0, True), (-1, True), (1, False), (-2, False)])
def test_a_slice_of_the_shape_along_axes(axes: int, taken: bool) -> None:
    """A shape has one axis: ``axes`` [0] or [-1] is it; any other names no axis of it
    (an invalid Slice) and proves nothing."""
    net, x, picked = _shape_slice(2, 1, 2, 1, axes)
    assert shape_index(net.graph, src(picked)) == ((src(x), 1) if taken else None)


@pytest.mark.parametrize("which", ["start", "stop", "step"])
def test_a_slice_bound_that_is_not_a_constant_proves_nothing(which: str) -> None:
    bounds = {"start": 0, "stop": 1, "step": 1, which: None}
    for rank in (2, None):
        net, _, picked = _shape_slice(rank, bounds["start"], bounds["stop"], bounds["step"])
        assert shape_index(net.graph, src(picked)) is None


# --------------------------------------------------------------------------- offset_from

def _chain(steps: list[tuple[str, object]], base_et: str = "i64") -> tuple[Net, Value, Value]:
    """A one-element integer Parameter ``n`` through ``steps``: ``("add", c)`` is
    ``Add(v, c)``, ``("radd", c)`` ``Add(c, v)``, ``("sub", c)`` ``Subtract(v, c)``,
    ``("rsub", c)`` ``Subtract(c, v)``, ``("mul", c)`` ``Multiply(v, c)``, ``("convert",
    et)`` a Convert, ``("reshape", shape)`` a Reshape, ``("addn", None)`` ``Add(v, m)`` of
    another Parameter ``m``. Constants have v's type. Returns the net, n and the end."""
    net = Net()
    n = net.param("n", base_et, (1,))
    v = n
    for kind, arg in steps:
        dtype = v.element_type.dtype
        if kind == "convert":
            v = net.op("Convert", "opset1", [v], {"destination_type": str(arg)}, et=str(arg))
        elif kind == "reshape":
            v = net.op("Reshape", "opset1", [v, net.const(np.array(arg, I64))],
                       {"special_zero": "false"}, shape=tuple(arg))  # type: ignore[arg-type]
        elif kind == "addn":
            m = net.param("m", v.element_type.name, (1,))
            v = net.op("Add", "opset1", [v, m], {"auto_broadcast": "numpy"})
        else:
            c = net.const(np.array([arg], dtype))
            ops = {"add": ("Add", [v, c]), "radd": ("Add", [c, v]), "sub": ("Subtract", [v, c]),
                   "rsub": ("Subtract", [c, v]), "mul": ("Multiply", [v, c])}
            op, inputs = ops[kind]
            v = net.op(op, "opset1", inputs, {"auto_broadcast": "numpy"})
    return net, n, v


def _value(steps: list[tuple[str, object]], n: int, base_et: str = "i64") -> int:
    """What the chain of ``_chain`` computes from ``n``, in numpy's arithmetic of the
    chain's types (a wrap shows)."""
    v = np.array([n], element_type(base_et).dtype)
    for kind, arg in steps:
        with np.errstate(over="ignore"):
            if kind == "convert":
                v = v.astype(element_type(str(arg)).dtype)
            elif kind == "add":
                v = v + np.array([arg], v.dtype)
            elif kind == "radd":
                v = np.array([arg], v.dtype) + v
            elif kind == "sub":
                v = v - np.array([arg], v.dtype)
    return int(v.reshape(-1)[0])


OFFSETS = {  # the steps, the offset and the magnitude expected
    "add": ([("add", 2)], 2, 2),
    "constant first": ([("radd", 3)], 3, 3),
    "subtract": ([("sub", 4)], -4, 4),
    "two adds": ([("radd", 3), ("add", 2)], 5, 5),
    "add then subtract": ([("add", 2), ("sub", 7)], -5, 9),
    "through a reshape": ([("add", 2), ("reshape", [1, 1]), ("sub", 1)], 1, 3),
    "through a widening cast": ([("add", 1), ("convert", "i64"), ("add", 1)], 2, 2),
}


@pytest.mark.parametrize("case", list(OFFSETS))
def test_an_offset_is_the_sum_of_the_constants(case: str) -> None:
    """``base + offset`` for every base (numpy computes the chain), the magnitude the sum
    of the constants' absolute values."""
    steps, offset, magnitude = OFFSETS[case]
    base_et = "i32" if case == "through a widening cast" else "i64"
    net, n, end = _chain(steps, base_et)
    found = offset_from(net.graph, src(end))
    assert found is not None and found.base == src(n)
    assert (found.offset, found.magnitude) == (offset, magnitude)
    for value in (-3, 0, 7):
        assert _value(steps, value, base_et) == value + found.offset


@pytest.mark.parametrize("case", ["constant minus the value", "multiply", "two parameters",
                                  "narrowing cast", "cast to a float"])
def test_what_is_not_an_offset_is_the_base(case: str) -> None:
    """A step that is not ``+ c`` or ``- c`` of a constant ``c`` (``c - v``, ``v * c``,
    ``v + m``, a cast that may change the value) ends the chain: the offset is from
    that step's value, not from ``n``."""
    steps: list[tuple[str, object]] = {
        "constant minus the value": [("rsub", 5)], "multiply": [("mul", 2)],
        "two parameters": [("addn", None)], "narrowing cast": [("convert", "i32")],
        "cast to a float": [("convert", "f64")]}[case]
    net, _, end = _chain([*steps, ("add", 1)] if case != "cast to a float" else steps)
    found = offset_from(net.graph, src(end))
    if case == "cast to a float":
        assert found is None  # a float is no integer offset
        return
    assert found is not None
    step = net.graph.layer(found.base[0])
    assert step.type == {"constant minus the value": "Subtract", "multiply": "Multiply",
                         "two parameters": "Add", "narrowing cast": "Convert"}[case]
    assert (found.offset, found.magnitude) == (1, 1)


@pytest.mark.parametrize("et", ["u8", "u64"])
def test_unsigned_steps_are_no_offset(et: str) -> None:
    """``n - 1`` of an unsigned ``n = 0`` wraps to the type's maximum (numpy agrees)."""
    net, _, end = _chain([("sub", 1)], et)
    assert _value([("sub", 1)], 0, et) == np.iinfo(element_type(et).dtype).max
    assert offset_from(net.graph, src(end)) is None


def test_no_source_is_no_offset() -> None:
    assert offset_from(Net().graph, None) is None
    net, _, end = _chain([("add", 1)])
    net.graph.layer(end.layer).outputs[0].precision = None  # a step of unknown type
    assert offset_from(net.graph, src(end)) is None
    net, _, end = _chain([("add", 1)])
    add = net.graph.layer(end.layer)
    net.graph.disconnect_input(add.id, add.inputs[0].id)  # an Add of nothing and 1
    assert offset_from(net.graph, src(end)) is None


@pytest.mark.parametrize("et", ["i32", "i64"])
def test_an_offset_is_exact_while_no_partial_sum_wraps(et: str) -> None:
    """``(n + 2) - 7`` in ``et``: exact for every ``|n| <= max - 9`` (the partial sums stay
    inside ``et``), refused from ``max - 8`` on, where ``n + 2 + 7`` (the magnitude's
    worst case) would wrap; at ``max - 1`` numpy's ``n + 2`` does."""
    steps: list[tuple[str, object]] = [("add", 2), ("sub", 7)]
    net, _, end = _chain(steps, et)
    found = offset_from(net.graph, src(end))
    assert found is not None and found.magnitude == 9
    top = int(np.iinfo(element_type(et).dtype).max)
    assert found.exact_for(0, top - 9) and found.exact_for(-(top - 9), 5)
    assert not found.exact_for(0, top - 8) and not found.exact_for(-(top - 8), 0)
    assert _value(steps[:1], top - 1, et) < 0  # n + 2 wraps


def test_an_offset_through_a_narrow_step_is_bounded_by_it() -> None:
    """``Convert(Convert(n, i32) + 1, i64) + 1`` from an i16 ``n``: every step holds i16's
    values, and the narrowest type on the way, i16, bounds the base."""
    steps: list[tuple[str, object]] = [("convert", "i32"), ("add", 1), ("convert", "i64"),
                                       ("add", 1)]
    net, n, end = _chain(steps, "i16")
    found = offset_from(net.graph, src(end))
    assert found == Offset(src(n), 2, 2, 2 ** 15)


# --------------------------------------------------------------------------- exact_convert

@pytest.mark.parametrize("source, target, exact", [
    ("u8", "u16", True), ("u16", "u64", True), ("u3", "i4", True), ("u4", "i4", False),
    ("u16", "u8", False), ("f16", "f64", True), ("f32", "f64", True), ("bf16", "f64", True),
    ("f16", "bf16", False), ("nf4", "f16", False), ("f8e4m3", "i64", False)])
def test_exact_convert_more_rules(source: str, target: str, exact: bool) -> None:
    """Unsigned targets, the 3-bit unsigned into the 4-bit signed type (0..7 in -8..7),
    floats into f64, and what is never proven: NF4's second code, -0.6961928009986877 (its
    table, bitsandbytes'), is no f16 (numpy rounds it), and a float into an integer."""
    assert exact_convert(element_type(source), element_type(target)) is exact
    if source == "nf4":
        code = np.float32(-0.6961928009986877)
        assert np.float32(np.float16(code)) != code


@pytest.mark.parametrize("source, target", [(None, "i64"), ("i64", None), (None, None)])
def test_an_unknown_type_is_never_exact(source: str | None, target: str | None) -> None:
    assert exact_convert(element_type(source) if source else None,
                         element_type(target) if target else None) is False


# ------------------------------------------------------------------- a Convert's source type

def _convert_chain(edit: str) -> tuple[Net, Value, Value, Value]:
    """``Convert(n: i32, i64) + 1`` with the Convert's input edited (``edit``): its port
    declaring another type, or none; no input port at all; not connected; connected from
    a port its producer does not have. Returns the net, n, the Convert and the end."""
    net, n, end = _chain([("convert", "i64"), ("add", 1)], "i32")
    graph = net.graph
    add = graph.layer(end.layer)
    convert_src = graph.source(add.id, add.inputs[0].id)
    assert convert_src is not None
    convert = graph.layer(convert_src[0])
    port = convert.inputs[0]
    if edit == "declares f32":
        port.precision = element_type("f32")
    elif edit == "declares no type":
        port.precision = None
    elif edit == "no input port":
        graph.disconnect_input(convert.id, port.id)
        convert.inputs.clear()
    elif edit == "not connected":
        graph.disconnect_input(convert.id, port.id)
    elif edit == "from a port its producer lacks":
        graph.disconnect_input(convert.id, port.id)
        graph.connect(n.layer, 99, convert.id, port.id)
    out = convert.outputs[0]
    return net, n, Value(convert.id, out.id, n.info), end


@pytest.mark.parametrize("edit", ["declares f32", "declares no type", "no input port",
                                  "not connected", "from a port its producer lacks"])
def test_a_convert_is_exact_only_from_a_known_source_type(edit: str) -> None:
    """The i32 -> i64 Convert keeps every value when its source's type is known: the
    producer's port gives it and the Convert's own input port, if it says, agrees. Else
    the chain ends at the Convert."""
    net, n, convert, end = _convert_chain(edit)
    found = offset_from(net.graph, src(end))
    assert found is not None and found.offset == 1
    assert found.base == (src(n) if edit == "declares no type" else src(convert))


@pytest.mark.parametrize("destination", [None, "", "f99"])
def test_a_convert_to_no_known_type_is_not_exact(destination: str | None) -> None:
    net, _, convert, end = _convert_chain("")
    layer = net.graph.layer(convert.layer)
    if destination is None:
        del layer.attrs["destination_type"]
    else:
        layer.attrs["destination_type"] = destination
    found = offset_from(net.graph, src(end))
    assert found is not None and found.base == src(convert)


# ------------------------------------------------------------- Gather(ShapeOf(X), k): a length

def _shape_gather(x_dims: tuple[int, ...] | None, index: int, *, shape_et: str | None = "i64",
                  shape_dims: tuple[int, ...] | None = None, axis: int = 0,
                  batch_dims: str = "0") -> tuple[Net, Value, Value]:
    """``Gather(ShapeOf(X), index, axis)`` with X declared ``x_dims`` and the ShapeOf's
    output declared ``shape_et`` (None: no type) and ``shape_dims`` (default: X's rank;
    unknown when X's is). X is the second Parameter, so its layer id is not its port's."""
    net = Net()
    net.param("other", "f32", None)
    x = net.param("X", "f32", x_dims)
    if shape_dims is None:
        shape_dims = (len(x_dims) if x_dims is not None else -1,)
    shape = net.op("ShapeOf", "opset3", [x], {"output_type": shape_et or "i64"},
                   et=shape_et or "i64", shape=shape_dims)
    if shape_et is None:
        net.graph.layer(shape.layer).outputs[0].precision = None
    picked = net.op("Gather", "opset8", [shape, net.const(np.array([index], I64)),
                                         net.const(np.array(axis, I64))],
                    {"batch_dims": batch_dims}, shape=(1,))
    return net, x, picked


I32_TOP = int(np.iinfo(np.int32).max)  # the longest dim an i32 ShapeOf gives exactly
U16_TOP = int(np.iinfo(np.uint16).max)


@pytest.mark.parametrize("x_dims, shape_et, proven", [
    ((5, 3), "i64", True), ((-1, 3), "i64", True), (None, "i64", True),
    ((5, 3), "i32", True), ((0, 3), "i32", True), ((I32_TOP, 3), "i32", True),
    ((I32_TOP + 1, 3), "i32", False), ((-1, 3), "i32", False), (None, "i32", False),
    ((5, 3), None, False), ((5, 3), "dynamic", False),
    ((U16_TOP, 3), "u16", True), ((U16_TOP + 1, 3), "u16", False)])
def test_a_narrow_shape_of_gives_a_length_only_where_the_dim_fits(
        x_dims: tuple[int, ...] | None, shape_et: str | None, proven: bool) -> None:
    """An i64 ShapeOf holds every dim; an i32 one only a dim declared static and at most
    i32's maximum (a longer one wraps); a ShapeOf of no known integer type proves
    nothing."""
    net, x, picked = _shape_gather(x_dims, 0, shape_et=shape_et)
    assert shape_index(net.graph, src(picked)) == ((src(x), 0) if proven else None)


def test_an_i32_shape_of_longer_than_its_data_proves_nothing() -> None:
    """A ShapeOf declared of unknown length over an X of rank 1: dim 1 does not exist."""
    net, _, picked = _shape_gather((5,), 1, shape_et="i32", shape_dims=(-1,))
    assert shape_index(net.graph, src(picked)) is None


@pytest.mark.parametrize("x_dims, shape_dims, index, dim", [
    ((4, 5), (-1,), 0, 0), ((4, 5), (-1,), 1, 1), ((4, 5), (2,), -1, 1), ((4, 5), (2,), -2, 0),
    ((4, 5), (2,), 2, None), ((4, 5), (2,), -3, None), ((4, 5), (-1,), -1, None),
    ((), (0,), 0, None), ((), (0,), -1, None)])
def test_gather_of_the_shape_by_index(x_dims: tuple[int, ...], shape_dims: tuple[int, ...],
                                      index: int, dim: int | None) -> None:
    """The dim ``range(rank)[index]`` names (numpy's indexing), where the ShapeOf's length
    is known; without it only a non-negative index; a scalar has no dim."""
    net, x, picked = _shape_gather(x_dims, index, shape_dims=shape_dims)
    if shape_dims[0] >= 0:
        names = list(range(shape_dims[0]))
        assert dim == (names[index] if -len(names) <= index < len(names) else None)
    assert shape_index(net.graph, src(picked)) == ((src(x), dim) if dim is not None else None)


# --------------------------------------------------------------- trip_matches and unclamped

def _loop_over(net: Net, x: Value, trip: Value) -> Layer:
    """A Loop of trip count ``trip`` (condition constant true) reading ``x`` whole, its
    body giving the iteration number each iteration."""
    body = Net()
    i = body.param("i", "i64", ())
    xb = body.param("xb", "f32", x.shape)
    r_i = body.result(unsqueeze(body, i))
    lp = net.loop(body)
    lp.trip_count(trip)
    lp.condition(net.const(np.array(True)))
    lp.current_iteration(i)
    lp.invariant(x, xb)
    lp.execution_condition(true_result(body))
    lp.output(r_i, info("i64", (-1,)), names=["Y"], axis=0)
    layer, _ = lp.build()
    return layer


@pytest.mark.parametrize("trip, x_dims, axis, matches", [
    (3, (3, 2), 0, True), (2, (3, 2), 1, True), (3, (3, 2), 1, False), (3, (5, 2), 0, False),
    (3, (-1, 2), 0, False), (3, None, 0, False), (3, (3, 2), 2, False), (-1, (-1, 2), 0, False),
    (0, (0, 2), 0, True)])
def test_a_constant_trip_count_is_a_length_only_where_declared_equal(
        trip: int, x_dims: tuple[int, ...] | None, axis: int, matches: bool) -> None:
    """A constant trip count equals ``X.shape[axis]`` when X declares that dim static and
    equal to it (a declared dim is checked when the model runs); an unknown dim or rank,
    an axis past the rank, a different length, or a trip count of -1 against a dynamic
    dim (-1 in the IR), do not."""
    net = Net()
    net.param("other", "f32", None)  # X's layer id is not its port's
    x = net.param("X", "f32", x_dims)
    loop = _loop_over(net, x, net.const(np.int64(trip)))
    assert trip_matches(net.graph, loop, src(x), axis) is matches
    assert trip_matches(net.graph, loop, (x.layer, 99), axis) is False  # no such port


def _clamped_length(net: Net, x: Value, bound: object, *, first: bool = False) -> Value:
    """``Maximum(len(X), bound)`` (or ``Maximum(bound, len(X))`` when ``first``; a bound
    of None is a Parameter)."""
    shape = net.op("ShapeOf", "opset3", [x], {"output_type": "i64"}, et="i64", shape=(2,))
    length = net.op("Gather", "opset8", [shape, net.const(np.int64(0)), net.const(np.int64(0))],
                    {"batch_dims": "0"}, et="i64", shape=())
    other = net.const(np.int64(bound)) if bound is not None else net.param("b", "i64", ())
    pair = [other, length] if first else [length, other]
    return net.op("Maximum", "opset1", pair, {"auto_broadcast": "numpy"}, et="i64", shape=())


@pytest.mark.parametrize("bound, first, matches", [
    (0, False, True), (1, False, False), (-1, False, False), (None, False, False),
    (0, True, False)])
def test_only_a_clamp_of_the_length_at_zero_is_the_length(bound: object, first: bool,
                                                          matches: bool) -> None:
    """``Maximum(len, 0)`` is ``len`` (a length is never negative); a clamp at 1 is 1 for
    an empty X, one at -1 or at a run-time bound is not looked through, nor a clamp with
    the length second (the form the converter never writes: not proven)."""
    net = Net()
    x = net.param("X", "f32", (-1, 2))
    trip = _clamped_length(net, x, bound, first=first)
    loop = _loop_over(net, x, trip)
    assert trip_matches(net.graph, loop, src(x), 0) is matches
    assert trip_matches(net.graph, loop, src(x), 1) is False
    if not matches:
        assert unclamped(net.graph, src(trip)) == src(trip)


def test_unclamped_of_nothing_is_nothing() -> None:
    assert unclamped(Net().graph, None) is None


@pytest.mark.parametrize("batch_dims, proven", [(None, True), ("0", True), ("1", False)])
def test_gather_of_the_shape_with_batch_dims(batch_dims: str | None, proven: bool) -> None:
    """``batch_dims`` absent is 0 (Gather-8's default); 1 over the shape's one axis is no
    gather of a dim (OpenVINO refuses a gather axis below batch_dims)."""
    net, x, picked = _shape_gather((4, 5), 1, batch_dims=batch_dims or "0")
    if batch_dims is None:
        del net.graph.layer(picked.layer).attrs["batch_dims"]
    assert shape_index(net.graph, src(picked)) == ((src(x), 1) if proven else None)


@pytest.mark.parametrize("axis, proven", [(0, True), (-1, True), (1, False), (-2, False)])
def test_gather_of_the_shape_along_its_one_axis(axis: int, proven: bool) -> None:
    """The shape has one axis, 0 or -1; Gather along any other is invalid and proves
    nothing."""
    net, x, picked = _shape_gather((4, 5), 1, axis=axis)
    assert shape_index(net.graph, src(picked)) == ((src(x), 1) if proven else None)


@pytest.mark.parametrize("value, expected", [
    (np.array(7, I64), 7), (np.array([[7]], np.uint8), 7), (np.array([-2], np.int32), -2),
    (np.array([1, 2], I64), None), (np.array([], I64), None), (np.array([2.0]), None),
    (np.array(True), None), (None, None)])
def test_scalar_int_is_the_one_integer(value: np.ndarray | None, expected: int | None) -> None:
    assert scalar_int(value) == expected


@pytest.mark.parametrize("broken", ["ShapeOf without its output port",
                                    "ShapeOf fed from a port X lacks"])
def test_edges_from_missing_ports_prove_nothing(broken: str) -> None:
    """A graph whose edges name ports their layers do not have (which validate refuses)
    gives no length, and no error in the prover."""
    net, x, picked = _shape_gather((4, 5), 1, shape_et="i32")
    graph = net.graph
    shape_src = graph.source(picked.layer, graph.layer(picked.layer).inputs[0].id)
    assert shape_src is not None
    shape_of = graph.layer(shape_src[0])
    if broken == "ShapeOf without its output port":
        shape_of.outputs.clear()
    else:
        graph.disconnect_input(shape_of.id, shape_of.inputs[0].id)
        graph.connect(x.layer, 99, shape_of.id, shape_of.inputs[0].id)
    assert shape_index(graph, src(picked)) is None
