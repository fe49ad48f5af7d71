"""The vectoriser's batching core (``irtool.passes.vectorize``: ``_Batcher`` and
``_splice``): how a loop's scan outputs are stacked or joined, how its sliced inputs are
cut, what the helper layers it adds are named, and when splicing keeps the loop to keep a
model output's name.

TensorIterators written in IR give the forms the ONNX converter does not write (negative
axes, dynamic dims, Unsqueeze of other axes than the joined one); their expected values
are hand numpy's, on irtool (the loop, then the batched form spliced into the IR, where no
fallback to the loop hides a wrong form) and OpenVINO. ONNX Loops are checked against
onnxruntime (``check_conversion``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from onnx import helper
from support.conversion import check_conversion, const_node, loop_layers, make_model, vi
from support.ir_builders import Net, check, finish, info

import irtool
from irtool.frontends.onnx.converter import convert_model
from irtool.ir import element_type
from irtool.passes.vectorize import VectorizeLoops, why_not

F32, I64, BOOL = np.float32, np.int64, np.bool_
X43 = (np.arange(12, dtype=F32).reshape(4, 3) - 5) / 3


def _relu(a: np.ndarray) -> np.ndarray:
    return np.maximum(a, 0)


def _axes(b: Net, axes: object) -> object:
    return b.const(np.array(axes, np.int64))


def _squeeze0(b: Net, row):  # type: ignore[no-untyped-def]
    """The row [1, ...] as [...]."""
    return b.op("Squeeze", "opset1", [row, _axes(b, [0])], shape=row.shape[1:])


def _relu_op(b: Net, v):  # type: ignore[no-untyped-def]
    return b.op("Relu", "opset1", [v])


def _unsqueezed(axes: object, shape: tuple) -> Callable:
    """Body: Unsqueeze(Relu(row without its axis 0), ``axes``) of output ``shape``."""
    def body(b: Net, row):  # type: ignore[no-untyped-def]
        return b.op("Unsqueeze", "opset1", [_relu_op(b, _squeeze0(b, row)), _axes(b, axes)],
                    shape=shape)
    return body


def _scan(x_decl: tuple, body_op: Callable, joined: tuple, *, in_axis: int = 0,
          out_axis: int = 0) -> irtool.Model:
    """A TensorIterator ``ti`` over the parts of input ``x`` (declared ``x_decl``) along
    ``in_axis``: body Parameter ``row`` (the part, its axis kept at 1), output ``y``
    (declared ``joined``) = ``body_op(body, row)`` of every iteration joined along
    ``out_axis``."""
    body, net = Net(), Net()
    axis = in_axis % len(x_decl)
    row = body.param("row", "f32", tuple(1 if k == axis else d for k, d in enumerate(x_decl)))
    ti = net.tensor_iterator(body, "ti")
    ti.sliced(net.param("x", "f32", x_decl), row, axis=in_axis)
    ti.output(body.result(body_op(body, row)), info("f32", joined), axis=out_axis, names=["y"])
    return finish(net, ti)


def _ti(model: irtool.Model):  # type: ignore[no-untyped-def]
    (ti,) = loop_layers(model, "TensorIterator")
    return ti


# name: (x declared, x fed, body, y declared, input axis, output axis, y by hand numpy,
#        stacked: the form is the body's values with no Reshape, what OpenVINO runs: the
#        loop and the form, the "form" only, or neither)
CASES = {
    # Unsqueeze(v, [axis]) joined along axis is v stacked: with dynamic dims only that form
    # exists (a Reshape of two unknown dims cannot be written)
    "unsqueeze 0, joined along 0, dynamic dims": (
        (-1, -1), X43, _unsqueezed([0], (1, -1)), (-1, -1), 0, 0, _relu(X43), True, True),
    "unsqueeze -2, joined along 0, dynamic dims": (
        (-1, -1), X43, _unsqueezed([-2], (1, -1)), (-1, -1), 0, 0, _relu(X43), True, True),
    "unsqueeze scalar 0, joined along 0, dynamic dims": (
        (-1, -1), X43, _unsqueezed(0, (1, -1)), (-1, -1), 0, 0, _relu(X43), True, True),
    "unsqueeze -1, joined along 1, dynamic dims": (
        (-1, -1), X43, _unsqueezed([-1], (-1, 1)), (-1, -1), 0, 1, _relu(X43).T, True, True),
    "unsqueeze 1, joined along -1, dynamic dims": (
        (-1, -1), X43, _unsqueezed([1], (-1, 1)), (-1, -1), 0, -1, _relu(X43).T, True, "form"),
    # a Squeeze without axes of a value with no 1-dim: no axes to squeeze (an empty i64 list)
    "squeeze without axes of [3], stacked": (
        (4, 3), X43, lambda b, row: b.op("Unsqueeze", "opset1", [
            b.op("Squeeze", "opset1", [_relu_op(b, _squeeze0(b, row))]), _axes(b, [0])],
            shape=(1, 3)), (4, 3), 0, 0, _relu(X43), True, True),
    # ... over one row: OpenVINO reads Squeeze(x, []) as squeezing every 1-dim (the
    # iteration axis of one row too), so the form has no such Squeeze
    "squeeze without axes of [3], one row": (
        (1, 3), X43[:1], lambda b, row: b.op("Unsqueeze", "opset1", [
            b.op("Squeeze", "opset1", [_relu_op(b, _squeeze0(b, row))]), _axes(b, [0])],
            shape=(1, 3)), (1, 3), 0, 0, _relu(X43[:1]), True, True),
    # Unsqueeze of another axis, or of two: not a stacking, the parts are joined
    "unsqueeze 1, joined along 0": (
        (4, 3), X43, _unsqueezed([1], (3, 1)), (12, 1), 0, 0, _relu(X43).reshape(12, 1),
        False, "form"),
    "unsqueeze 0 and 1, joined along 0": (
        (4, 3), X43, _unsqueezed([0, 1], (1, 1, 3)), (4, 1, 3), 0, 0,
        _relu(X43).reshape(4, 1, 3), False, True),
    "unsqueeze -2, joined along 1": (
        (4, 3), X43, _unsqueezed([-2], (1, 3)), (1, 12), 0, 1, _relu(X43).reshape(1, 12),
        False, "form"),
    # sliced along another axis than 0: the input is transposed, each part keeps its axis
    "sliced along 1, joined along 1": (
        (3, 4), X43.T, _relu_op, (3, 4), 1, 1, _relu(X43.T), False, True),
    "sliced along 1, joined along 0": (
        (3, 4), X43.T, _relu_op, (12, 1), 1, 0,
        np.concatenate([_relu(X43.T[:, k:k + 1]) for k in range(4)], axis=0), False, "form"),
    "sliced along -1 of rank 3, joined along -1": (
        (2, 2, 3), X43.reshape(2, 2, 3), _relu_op, (2, 2, 3), -1, -1,
        _relu(X43.reshape(2, 2, 3)), False, "form"),
    "sliced along 1 of rank 3, joined along 2": (
        (2, 2, 3), X43.reshape(2, 2, 3), _relu_op, (2, 1, 6), 1, 2,
        np.concatenate([_relu(X43.reshape(2, 2, 3)[:, k:k + 1]) for k in range(2)], axis=2),
        False, "form"),
    # parts of [1, 0, 0] joined: a Reshape to two static 0 dims is static (OpenVINO's CPU
    # plugin mishandles empty tensors in loops: not asked)
    "rows of nothing": (
        (4, 0, 0), np.zeros((4, 0, 0), F32), _relu_op, (4, 0, 0), 0, 0,
        np.zeros((4, 0, 0), F32), False, False),
    # ... joined along 1, a part of length 0 (-1 there could not be written next to the
    # other 0)
    "rows of nothing, joined along 1": (
        (4, 0, 0), np.zeros((4, 0, 0), F32), _relu_op, (1, 0, 0), 0, 1,
        np.zeros((1, 0, 0), F32), False, False),
    # rows of a dynamic count joined: a Reshape to (-1, 3)
    "rows of a dynamic count": (
        (-1, 3), X43, _relu_op, (-1, 3), 0, 0, _relu(X43), False, True),
    "rows of a dynamic count, joined along 1": (
        (-1, 3), X43, _relu_op, (1, -1), 0, 1, _relu(X43).reshape(1, 12), False, "form"),
    # Unsqueeze(v, [1]) of a [2, 3] v joined along 1: v stacked, its iteration axis moved
    # between the two others
    "unsqueeze 1 of [2, 3], joined along 1": (
        (4, 2, 3), X43.reshape(4, 1, 3).repeat(2, axis=1), _unsqueezed([1], (2, 1, 3)),
        (2, 4, 3), 0, 1, _relu(X43.reshape(4, 1, 3).repeat(2, axis=1)).transpose(1, 0, 2),
        True, "form"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_outputs_are_stacked_or_joined_as_the_loop_joins_them(case: str) -> None:
    """Each loop has a batched form; spliced into the IR (the TensorIterator gone) it
    gives hand numpy's values on irtool and OpenVINO, as the loop does; an Unsqueeze
    joined along its own axis becomes the body's values stacked (no Reshape). OpenVINO's
    CPU plugin joins a TensorIterator's output along ``axis="-1"`` wrong (the last part
    alone, or "not initialized"), refuses one along ``axis="-1"`` and a part longer
    than 1 along the joined axis ("Shape mismatch for tensor iterator port"): there it
    runs the batched form only."""
    x_decl, x, body_op, joined, in_axis, out_axis, want, stacked, openvino = CASES[case]
    model = _scan(x_decl, body_op, joined, in_axis=in_axis, out_axis=out_axis)
    assert why_not(_ti(model)) is None
    check(model, {"x": x}, {"y": want}, openvino=openvino is True)
    assert VectorizeLoops()(model).changes == 1
    assert not loop_layers(model, "TensorIterator")
    check(model, {"x": x}, {"y": want}, openvino=bool(openvino))
    reshapes = model.graph.layers_of_type("Reshape")
    assert (not reshapes) == stacked, [layer.name for layer in reshapes]
    # axes, orders and shapes the form adds are i64 lists, an empty one too
    assert {c.attrs["element_type"] for c in model.graph.layers_of_type("Const")} <= \
        {"i64", "f32"}


def test_helper_layers_are_named_after_the_loop_and_what_they_serve() -> None:
    """The layers the form adds say where they come from: the loop, then the body
    Parameter they cut (``/transpose``, ``/part``) or the output they join
    (``outputN/transpose``, ``outputN``), and each is what its name says."""
    model = _scan((2, 2, 3), _relu_op, (2, 1, 6), in_axis=1, out_axis=2)
    assert VectorizeLoops()(model).changes == 1
    added = {layer.name: layer.type for layer in model.graph.layers
             if layer.type not in ("Parameter", "Result", "Const")}
    assert added == {"ti/row/transpose": "Transpose", "ti/row/part": "Unsqueeze",
                     "ti/Relu_1": "Relu", "ti/output0/transpose": "Transpose",
                     "ti/output0": "Reshape"}
    (reshape,) = model.graph.layers_of_type("Reshape")
    assert reshape.attrs == {"special_zero": "false"}
    # the values stacked, then their iteration axis moved to where the output joins them
    stacked = _scan((-1, -1), _unsqueezed([-1], (-1, 1)), (-1, -1), out_axis=1)
    assert VectorizeLoops()(stacked).changes == 1
    (transpose,) = stacked.graph.layers_of_type("Transpose")
    assert transpose.name == "ti/output0/transpose"


REFUSALS = {
    # joined by a Reshape to (count, n) where both are unknown: -1 twice cannot be written
    "two dynamic dims, not a stacking": (
        (-1, -1), _relu_op, (-1, -1), 0, 0,
        "cannot reshape to (-1, -1) with a dynamic iteration count"),
    # (count, 0): -1 next to a 0 dim could be any count
    "a dynamic count and a static 0": (
        (-1, 0), _relu_op, (-1, 0), 0, 0,
        "cannot reshape to (-1, 0) with a dynamic iteration count"),
    # IR that validate refuses (a slicing axis past the rank) still gets a reason
    "sliced along an axis past the rank": (
        (4, 3), _relu_op, (4, 3), 2, 0, "sliced input axis 2 is outside rank 2"),
    "sliced along an axis before the rank": (
        (4, 3), _relu_op, (4, 3), -3, 0, "sliced input axis -3 is outside rank 2"),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_forms_that_cannot_be_written_keep_the_loop_and_say_why(case: str) -> None:
    x_decl, body_op, joined, in_axis, out_axis, why = REFUSALS[case]
    body, net = Net(), Net()
    row = body.param("row", "f32", (1, *x_decl[1:]))
    ti = net.tensor_iterator(body, "ti")
    ti.sliced(net.param("x", "f32", x_decl), row, axis=in_axis)
    ti.output(body.result(body_op(body, row)), info("f32", joined), axis=out_axis,
              names=["y"])
    model = finish(net, ti)
    assert why_not(_ti(model)) == f"TensorIterator 'ti': {why}"
    assert VectorizeLoops()(model).changes == 0


# -- the iteration number of a Loop, counted from its trip count


def _numbered_loop(trip_et: str, trip_shape: tuple, iter_et: str, iter_shape: tuple,
                   trip: int = 5) -> irtool.Model:
    """A Loop ``lp`` of constant trip count ``trip`` (of type ``trip_et``, shape
    ``trip_shape``) whose body computes y = float(i) * 0.5 + 1 from its iteration number
    ``i`` (``iter_et``, ``iter_shape``), joined along 0 into [trip]."""
    body, net = Net(), Net()
    i = body.param("i", iter_et, iter_shape)
    fi = body.op("Convert", "opset1", [i], {"destination_type": "f32"}, et="f32")
    y = body.op("Add", "opset1", [body.op("Multiply", "opset1", [fi, body.const(F32(0.5))],
                                          {"auto_broadcast": "numpy"}),
                                  body.const(F32(1))], {"auto_broadcast": "numpy"})
    if iter_shape == ():
        y = body.op("Unsqueeze", "opset1", [y, _axes(body, [0])], shape=(1,))
    lp = net.loop(body, "lp")
    lp.trip_count(net.const(np.full(trip_shape, trip, np.dtype(trip_et.replace("i", "int")))))
    lp.condition(net.const(np.array(True)))
    lp.current_iteration(i)
    lp.execution_condition(body.result(body.const(np.array(True))))
    lp.output(body.result(y), info("f32", (trip,)), axis=0, names=["y"])
    return finish(net, lp)


NUMBERED = [("i64", (), "i64", ()), ("i64", (1,), "i64", ()), ("i32", (), "i64", ()),
            ("i32", (1,), "i32", (1,)), ("i64", (), "i32", ()), ("i64", (1,), "i64", (1,))]


@pytest.mark.parametrize("trip_et, trip_shape, iter_et, iter_shape", NUMBERED)
def test_iteration_numbers_come_from_the_trip_count_of_any_int_type_and_shape(
        trip_et: str, trip_shape: tuple, iter_et: str, iter_shape: tuple) -> None:
    """A trip count of i32 or i64, scalar or [1], and an iteration number of i32 or i64,
    scalar or [1]: the batched form counts 0..4 as the loop does (hand numpy, on irtool
    and OpenVINO, the loop and the form spliced in), and names its layers after the loop
    and what they compute."""
    model = _numbered_loop(trip_et, trip_shape, iter_et, iter_shape)
    want = {"y": np.arange(5, dtype=F32) * F32(0.5) + F32(1)}
    check(model, {}, want)
    assert VectorizeLoops()(model).changes == 1
    assert not loop_layers(model)
    check(model, {}, want)
    added = {layer.name: layer.type for layer in model.graph.layers
             if layer.type in ("Squeeze", "Convert", "Range", "Unsqueeze")}
    want_names = {"lp/iterations": "Range", "lp/Convert_1": "Convert"}
    if trip_shape == (1,):
        want_names["lp/count/squeeze"] = "Squeeze"
    if trip_et != "i64":
        want_names["lp/count/convert"] = "Convert"
    if iter_shape == (1,):
        want_names["lp/iterations/unsqueeze"] = "Unsqueeze"
    assert added == want_names
    (numbers,) = model.graph.layers_of_type("Range")
    assert numbers.attrs["output_type"] == iter_et
    # the count is a scalar of the trip count's type, then i64 (spelt as OpenVINO does)
    counted = {layer.name: [(p.precision.name, p.dims) for p in layer.outputs]
               for layer in model.graph.layers if layer.name.startswith("lp/count/")}
    assert counted == {name: [("i64" if name.endswith("convert") else trip_et, ())]
                       for name in want_names if name.startswith("lp/count/")}
    for convert in model.graph.layers_of_type("Convert"):
        if convert.name == "lp/count/convert":
            assert convert.attrs == {"destination_type": "i64"}


@pytest.mark.parametrize("trip_shape, iter_et, iter_shape, why", [
    ((2,), "i64", (), "the trip count is not a scalar"),
    ((), "f32", (), "current_iteration is not an i32/i64 scalar or [1]"),
    ((), "i64", (2,), "current_iteration is not an i32/i64 scalar or [1]"),
])
def test_counts_and_numbers_of_other_shapes_or_types_are_refused(
        trip_shape: tuple, iter_et: str, iter_shape: tuple, why: str) -> None:
    """A trip count of shape [2], an iteration number of f32 or of shape [2] (IR that
    validate refuses): no batched form, and why_not says which."""
    model = _numbered_loop("i64", trip_shape, iter_et, iter_shape)
    (lp,) = loop_layers(model)
    assert why_not(lp) == f"Loop 'lp': {why}"


def _output_refused(out: str) -> irtool.Model:
    """A TensorIterator ``ti`` over the rows of x [4, 3] whose output 0 is ``out``."""
    body, net = Net(), Net()
    row = body.param("row", "f32", (1, 3))
    ti = net.tensor_iterator(body, "ti")
    ti.sliced(net.param("x", "f32", (4, 3)), row, axis=0)
    relu = _relu_op(body, row)
    result = body.result(relu)
    if out == "not a Result":
        ti.output(relu.layer, info("f32", (4, 3)), axis=0)
    elif out == "last value of a row":
        ti.output(result, info("f32", (1, 3)))
    elif out == "rows of a constant":
        ti.output(body.result(body.const(np.ones((1, 3), F32))), info("f32", (4, 3)), axis=0)
    elif out == "joined in steps of 2":
        ti.output(result, info("f32", (4, 3)), axis=0, stride=2)
    elif out == "joined backwards":
        ti.output(result, info("f32", (4, 3)), axis=0, start=-1, end=0, stride=-1)
    else:  # "joined along axis N"
        axis = int(out.rsplit(" ", 1)[1])
        ti.output(result, info("f32", (4, 3)), axis=axis)
    return finish(net, ti)


@pytest.mark.parametrize("out, why", [
    ("not a Result", "port_map output names body layer 1, not a Result"),
    ("last value of a row", "output 0 is the last iteration's value of a per-iteration value"),
    ("rows of a constant", "output 0 concatenates a value that is the same in every iteration"),
    ("joined in steps of 2", "output 0 is not joined in steps of one part"),
    ("joined backwards", "output 0 is not joined in steps of one part"),
    ("joined along axis 2", "output 0 concatenates along axis 2 of a rank-2 value"),
    ("joined along axis -3", "output 0 concatenates along axis -3 of a rank-2 value"),
])
def test_outputs_the_form_cannot_give_keep_the_loop_and_say_why(out: str, why: str) -> None:
    """Outputs that are no Result, the last value of a value of each iteration, the
    parts of a constant joined, parts joined in other steps than one part forward, or
    along an axis outside the value (IR validate refuses some): the loop keeps its
    iterations, and why_not says which output and why."""
    model = _output_refused(out)
    assert why_not(_ti(model)) == f"TensorIterator 'ti': {why}"
    assert VectorizeLoops()(model).changes == 0


# -- splicing ONNX Loops: what keeps a model output's name


def _loop_model(outputs: str) -> tuple[object, dict[str, np.ndarray]]:
    """A Loop of 4 iterations over the rows of X (y = relu(x_i)) carrying B unchanged;
    ``outputs`` says what the graph outputs: "B_out" (the carried value straight from the
    body Parameter), "Neg(B_out)" (and Concat(B, B, B, B)), or "Y twice" (two scan outputs
    of the same body value), or "Y twice, summed" (the two read by an Add only)."""
    nodes = [helper.make_node("Gather", ["X", "i"], ["x_i"], axis=0),
             helper.make_node("Relu", ["x_i"], ["y"]),
             helper.make_node("Identity", ["c_in"], ["c_out"])]
    binputs = [vi("i", I64, []), vi("c_in", BOOL, []), vi("b_in", F32, [2])]
    boutputs = [vi("c_out", BOOL, []), vi("b_in", F32, [2]), vi("y", F32, [3])]
    loop_outputs, tail = ["B_out", "Y"], []
    graph_outputs = [vi("B_out", F32, [2]), vi("Y", F32, [4, 3])]
    if outputs == "Neg(B_out)":
        # and a model output W of a layer of 4 inputs: its output port has the number of
        # the Loop's first (trip, cond, B and X in), so only the layer tells them apart
        tail = [helper.make_node("Neg", ["B_out"], ["Z"]),
                helper.make_node("Concat", ["B", "B", "B", "B"], ["W"], axis=0)]
        graph_outputs[0] = vi("Z", F32, [2])
        graph_outputs.append(vi("W", F32, [8]))
    elif outputs == "Y twice":
        boutputs.append(vi("y", F32, [3]))
        loop_outputs.append("Y2")
        graph_outputs = [vi("Y", F32, [4, 3]), vi("Y2", F32, [4, 3])]
    elif outputs == "Y twice, summed":
        # Y and Y2 read by an Add only, the model outputs its sum, a third scan output
        # N = -x_i, and W of a layer of 5 inputs: its output port has the number of the
        # Loop's Y (trip, cond, B and X in, B_out out), so only the layer tells them apart
        nodes.append(helper.make_node("Neg", ["x_i"], ["n"]))
        boutputs += [vi("y", F32, [3]), vi("n", F32, [3])]
        loop_outputs += ["Y2", "N"]
        tail = [helper.make_node("Add", ["Y", "Y2"], ["Z"]),
                helper.make_node("Concat", ["B"] * 5, ["W"], axis=0)]
        graph_outputs = [vi("Z", F32, [4, 3]), vi("N", F32, [4, 3]), vi("W", F32, [10])]
    body = helper.make_graph(nodes, "body", binputs, boutputs)
    loop = helper.make_node("Loop", ["trip", "cond", "B"], loop_outputs, body=body)
    model = make_model([const_node("trip", 4, I64), const_node("cond", True), loop, *tail],
                       [vi("B", F32, [2]), vi("X", F32, [4, 3])], graph_outputs)
    return model, {"B": np.array([1.5, -2.0], F32), "X": X43}


@pytest.mark.parametrize("outputs, vectorised", [("B_out", False), ("Y twice", False),
                                                 ("Neg(B_out)", True),
                                                 ("Y twice, summed", True)])
def test_splicing_keeps_the_names_of_model_inputs_and_outputs(
        outputs: str, vectorised: bool, tmp_path: Path) -> None:
    """A loop whose batched form would give a model output no port of its own (a value
    passed straight through from a model input, or one value for two outputs) stays a
    loop, though it has a batched form; one whose pass-through output is read inside the
    graph, or whose two outputs of one value are read inside the graph only, is
    vectorised, and the model input keeps its name. OpenVINO and irtool match
    onnxruntime, under the ONNX names."""
    model, feeds = _loop_model(outputs)
    applied: dict[str, int] = {}
    ir = convert_model(model, applied=applied)
    assert applied["vectorised loops"] == int(vectorised)
    assert len(loop_layers(ir)) == int(not vectorised)
    if not vectorised:
        assert why_not(loop_layers(ir)[0]) is None
    assert [p.outputs[0].names for p in ir.graph.parameters()] == [("B",), ("X",)]
    check_conversion(model, feeds, tmp_path)


# -- axes shifted by one keep their type and shape


@pytest.mark.parametrize("et, axes", [("i64", np.int64(1)), ("i32", np.array([-1], np.int32)),
                                      ("u8", np.uint8(2)), ("i64", np.array([1, 2]))])
def test_shifted_axes_keep_the_type_and_shape_of_the_body_axes(et: str, axes: object) -> None:
    """ReduceSum over rows [1, 2, 3] by axes of i64, i32 or u8, scalar or a list: the
    batched ReduceSum reads the same axes one further on, in a Const of the body's axes'
    element type and shape, and sums as hand numpy does (irtool, OpenVINO)."""
    x = X43.reshape(2, 2, 3)[[0, 1, 1, 0]]

    def body_op(b: Net, row):  # type: ignore[no-untyped-def]
        out = tuple(1 if k in np.atleast_1d(axes) % 3 else d for k, d in enumerate((1, 2, 3)))
        return b.op("ReduceSum", "opset1", [row, b.builder.const(axes, element_type(et))],
                    {"keep_dims": "true"}, shape=out, name="sum")

    want = x.sum(axis=tuple(int(a) % 3 for a in np.atleast_1d(axes)), keepdims=True)
    model = _scan((4, 2, 3), body_op, want.shape)
    check(model, {"x": x}, {"y": want})
    assert VectorizeLoops()(model).changes == 1
    assert not loop_layers(model, "TensorIterator")
    check(model, {"x": x}, {"y": want})
    (reduce,) = model.graph.layers_of_type("ReduceSum")
    src, _ = model.graph.sources()[(reduce.id, reduce.inputs[1].id)]
    const = model.graph.layer(src)
    assert const.type == "Const"
    assert (const.attrs["element_type"], const.const_value().shape) == (et, np.shape(axes))
    # axis a of a row is axis a + 1 of the rows (a negative one counted from rank 3 first)
    np.testing.assert_array_equal(const.const_value(), np.asarray(axes) % 3 + 1)
