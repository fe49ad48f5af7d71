"""What the loop vectoriser (``irtool.passes.vectorize``) may take as proven, and what it
must not (``irtool.passes.loop_facts``): a trip count is the length of an input only
through value-preserving steps, a constant trip count only when it equals the declared
length, a clamp only when it is ``Maximum(M, 0)``, and a body only when nothing in it,
at any depth, gives another value on every call.

Expected values come from onnxruntime (ONNX models) or from OpenVINO running the IR
before the pass (IR built with irtool's builder); irtool's default path (``convert`` +
``run``) and OpenVINO on irtool's IR must give them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper
from support.compare import assert_same
from support.conversion import (
    check_conversion,
    loop_layers,
    make_model,
    run_onnxruntime,
    run_openvino,
    vi,
)
from support.ir_builders import Net, finish, info, true_result, unsqueeze
from support.ir_builders import run_openvino as run_openvino_model

import irtool
from irtool.ir.types import element_type
from irtool.passes.vectorize import VectorizeLoops, why_not
from irtool.runtime import Executor

F32, I64, BOOL = np.float32, np.int64, np.bool_
RNG = np.random.default_rng(21)


def rows_loop(trip_nodes: list, x_shape: list, *, trip_name: str = "trip",
              extra_inputs: tuple = ()) -> object:
    """A Loop whose body emits ``tanh(X[i])`` for each iteration ``i``; the trip count is
    what ``trip_nodes`` compute (into ``trip_name``) from ``X``."""
    body = helper.make_graph(
        [helper.make_node("Gather", ["X", "i"], ["x_i"], axis=0),
         helper.make_node("Tanh", ["x_i"], ["y"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
        [vi("i", I64, []), vi("cond_in", BOOL, [])],
        [vi("cond_out", BOOL, []), vi("y", F32, [x_shape[1]])])
    cond = helper.make_node("Constant", [], ["cond"],
                            value=helper.make_tensor("c", TensorProto.BOOL, [], [True]))
    loop = helper.make_node("Loop", [trip_name, "cond"], ["Y"], body=body)
    return make_model([*trip_nodes, cond, loop], [vi("X", F32, x_shape), *extra_inputs],
                      [vi("Y", F32, [None, x_shape[1]])])


def length_of_x() -> list:
    return [helper.make_node("Shape", ["X"], ["shape"]),
            helper.make_node("Constant", [], ["zero"], value_int=0),
            helper.make_node("Gather", ["shape", "zero"], ["len"], axis=0)]


def cast_chain(*types: int) -> list:
    """``len`` cast through ``types`` and back to int64 into ``trip``."""
    nodes, prev = [], "len"
    for k, to in enumerate(types):
        nodes.append(helper.make_node("Cast", [prev], [f"cast{k}"], to=to))
        prev = f"cast{k}"
    return [*nodes, helper.make_node("Cast", [prev], ["trip"], to=TensorProto.INT64)]


def _check_all_forms(model: object, feeds: dict, tmp_path: Path) -> irtool.Model:
    """onnxruntime's values from irtool's default convert + run, from OpenVINO on the IR
    (with and without vectorisation); returns the default IR."""
    ir = check_conversion(model, feeds, tmp_path, atol=1e-6)
    check_conversion(model, feeds, tmp_path, vectorize=False, atol=1e-6)
    return ir


# rows of X, the casts of the trip count, onnxruntime's number of rows
CASTS = {
    "uint8 wraps": (260, [TensorProto.UINT8], 4),
    "int8 wraps": (257, [TensorProto.INT8], 1),
    "float16 rounds": (2049, [TensorProto.FLOAT16], 2048),
    "bool is 1": (5, [TensorProto.BOOL], 1),
    "uint16 wraps": (65537, [TensorProto.UINT16], 1),
    "int32 then float16": (2049, [TensorProto.INT32, TensorProto.FLOAT16], 2048),
}


@pytest.mark.parametrize("case", list(CASTS))
def test_a_narrowing_cast_of_the_length_is_not_the_length(case: str, tmp_path: Path) -> None:
    """``Cast(Cast(len(X), t), int64)`` through a type that cannot hold every length is
    not ``len(X)``: the loop stays and irtool gives onnxruntime's number of rows, vectorised
    or not. (OpenVINO's own difference, recorded: ``test_openvino_takes_a_cast_length``.)"""
    n, types, rows = CASTS[case]
    model = rows_loop([*length_of_x(), *cast_chain(*types)], [None, 2])
    feeds = {"X": RNG.standard_normal((n, 2)).astype(F32)}
    expected = run_onnxruntime(model, feeds)
    assert expected["Y"].shape == (rows, 2)  # the case is what it says
    ir = irtool.convert(model)
    assert len(loop_layers(ir)) == 1
    assert_same(irtool.run(ir, feeds), expected, "irtool", atol=1e-6)
    kept = irtool.convert(model, vectorize=False)
    assert_same(Executor(kept, vectorize=False).run(feeds), expected, "irtool, loops as loops",
                atol=1e-6)


@pytest.mark.parametrize("case", ["uint8 wraps", "float16 rounds", "bool is 1"])
def test_openvino_takes_a_cast_length(case: str, tmp_path: Path) -> None:
    """OpenVINO's CPU plugin runs such a loop ``len(X)`` times, on irtool's IR and on its
    own conversion of the ONNX alike (docs/openvino-quirks.md): recorded here, an xfail
    where it does so, a pass where it matches onnxruntime."""
    import openvino as ov

    n, types, rows = CASTS[case]
    model = rows_loop([*length_of_x(), *cast_chain(*types)], [None, 2])
    feeds = {"X": RNG.standard_normal((n, 2)).astype(F32)}
    expected = run_onnxruntime(model, feeds)["Y"]
    xml = irtool.save(irtool.convert(model), tmp_path / "model.xml")
    core = ov.Core()
    own = core.compile_model(core.read_model(model.SerializeToString(), b""), "CPU")(feeds)
    shapes = {"irtool's IR": run_openvino(xml, feeds)["Y"].shape,
              "its own conversion": next(iter(own.values())).shape}
    if all(shape == expected.shape for shape in shapes.values()):
        return
    assert all(shape in (expected.shape, (n, 2)) for shape in shapes.values()), shapes
    pytest.xfail(f"OpenVINO runs the loop len(X) = {n} times, not {rows}: {shapes}")


def test_a_cast_to_the_same_type_keeps_the_length(tmp_path: Path) -> None:
    """``Cast(len, int64)`` changes nothing: the loop is still vectorised."""
    model = rows_loop([*length_of_x(), *cast_chain()], [None, 3])
    feeds = {"X": RNG.standard_normal((6, 3)).astype(F32)}
    ir = _check_all_forms(model, feeds, tmp_path)
    assert not loop_layers(ir)


def test_a_constant_trip_count_shorter_than_the_rows(tmp_path: Path) -> None:
    """A constant trip count of 3 over an X of 5 declared rows reads rows 0..2 only."""
    trip = [helper.make_node("Constant", [], ["trip"], value=helper.make_tensor(
        "t", TensorProto.INT64, [], [3]))]
    model = rows_loop(trip, [5, 2])
    feeds = {"X": RNG.standard_normal((5, 2)).astype(F32)}
    assert run_onnxruntime(model, feeds)["Y"].shape == (3, 2)
    ir = _check_all_forms(model, feeds, tmp_path)
    assert len(loop_layers(ir)) == 1


def _sliced_length_loop(start: int, stop: int) -> irtool.Model:
    """IR: a Loop of trip count ``Squeeze(Slice(ShapeOf(X), start, stop))`` whose body emits
    ``tanh`` of column ``i`` of the X it reads whole."""
    body = Net()
    i = body.param("i", "i64", ())
    xb = body.param("xb", "f32", (2, 3))
    col = body.op("Gather", "opset8", [xb, i, body.const(np.int64(1))], {"batch_dims": "0"},
                  shape=(2,))
    r_scan = body.result(unsqueeze(body, body.op("Tanh", "opset1", [col])))
    net = Net()
    x = net.param("X", "f32", (2, 3))
    shape = net.op("ShapeOf", "opset3", [x], {"output_type": "i64"}, et="i64", shape=(2,))
    picked = net.op("Slice", "opset8", [shape, net.const(np.array([start], np.int64)),
                                        net.const(np.array([stop], np.int64)),
                                        net.const(np.array([1], np.int64))], shape=(-1,))
    trip = net.op("Squeeze", "opset1", [picked], shape=())
    lp = net.loop(body)
    lp.trip_count(trip)
    lp.condition(net.const(np.array(True)))
    lp.current_iteration(i)
    lp.invariant(x, xb)
    lp.execution_condition(true_result(body))
    lp.output(r_scan, info("f32", (-1, 2)), names=["Y"], axis=0)
    return finish(net, lp)


def test_slice_to_zero_of_the_last_dim_is_empty() -> None:
    """``Slice(shape, -1, 0)`` is empty, not the last dim: the trip count holds no value,
    so the loop fails (as in onnxruntime, whose converter check refuses the ONNX form)
    instead of being replaced by something that runs; ``Slice(shape, -1, 2)`` is the
    last dim, and its loop is vectorised to OpenVINO's values."""
    x = RNG.standard_normal((2, 3)).astype(F32)
    empty = _sliced_length_loop(-1, 0)
    assert VectorizeLoops()(empty).changes == 0
    with pytest.raises(irtool.ExecutionError, match="trip count"):
        irtool.run(empty, {"X": x})
    expected = run_openvino_model(_sliced_length_loop(-1, 2), {"X": x})
    last = _sliced_length_loop(-1, 2)
    assert VectorizeLoops()(last).changes == 1
    np.testing.assert_allclose(irtool.run(last, {"X": x})["Y"], expected["Y"], rtol=1e-6)


@pytest.mark.parametrize("source, target, exact", [
    ("i32", "i64", True), ("u8", "i16", True), ("u32", "i64", True), ("i8", "f16", True),
    ("u8", "bf16", True), ("i16", "f32", True), ("i32", "f64", True), ("f16", "f32", True),
    ("bf16", "f32", True), ("i64", "i32", False), ("u8", "i8", False), ("i8", "u64", False),
    ("u64", "i64", False), ("i64", "f64", False), ("i32", "f32", False), ("u16", "f16", False),
    ("f32", "i64", False), ("f64", "f32", False), ("f32", "bf16", False),
    ("boolean", "i64", False), ("i64", "boolean", False)])
def test_exact_convert_rules(source: str, target: str, exact: bool) -> None:
    """Every value of the source type fits the target exactly (numpy agrees on the
    extremes of the source's range)."""
    from irtool.passes.loop_facts import exact_convert

    assert exact_convert(element_type(source), element_type(target)) is exact
    src, dst = element_type(source).dtype, element_type(target).dtype
    if src.kind in "iu" and exact:
        info_ = np.iinfo(src)
        extremes = np.array([info_.min, info_.max], src)
        assert (extremes.astype(dst).astype(src) == extremes).all()


def _clamped_rows_loop(bound: int) -> irtool.Model:
    """IR: a Loop of trip count ``Maximum(len(X), bound)`` whose body emits row ``i`` of
    the X it reads whole (an out-of-range row is zeros, in OpenVINO and in irtool)."""
    body = Net()
    i = body.param("i", "i64", ())
    xb = body.param("xb", "f32", (-1, 3))
    row = body.op("Gather", "opset8", [xb, i, body.const(np.int64(0))], {"batch_dims": "0"},
                  shape=(3,))
    r_scan = body.result(unsqueeze(body, body.op("Tanh", "opset1", [row])))
    net = Net()
    x = net.param("X", "f32", (-1, 3))
    shape = net.op("ShapeOf", "opset3", [x], {"output_type": "i64"}, et="i64", shape=(2,))
    length = net.op("Gather", "opset8", [shape, net.const(np.int64(0)), net.const(np.int64(0))],
                    {"batch_dims": "0"}, et="i64", shape=())
    trip = net.op("Maximum", "opset1", [length, net.const(np.int64(bound))],
                  {"auto_broadcast": "numpy"}, et="i64", shape=())
    lp = net.loop(body)
    lp.trip_count(trip)
    lp.condition(net.const(np.array(True)))
    lp.current_iteration(i)
    lp.invariant(x, xb)
    lp.execution_condition(true_result(body))
    lp.output(r_scan, info("f32", (-1, 3)), names=["Y"], axis=0)
    return finish(net, lp)


@pytest.mark.parametrize("bound, vectorised", [(0, True), (2, False)])
def test_only_a_clamp_at_zero_keeps_the_length(bound: int, vectorised: bool) -> None:
    """``Maximum(len, 0)`` is ``len``; ``Maximum(len, 2)`` is 2 for one row, so the loop
    stays and gives what OpenVINO gives on the IR before the pass."""
    x = RNG.standard_normal((1, 3)).astype(F32)
    expected = run_openvino_model(_clamped_rows_loop(bound), {"X": x})
    model = _clamped_rows_loop(bound)
    assert VectorizeLoops()(model).changes == (1 if vectorised else 0)
    for who, got in (("irtool", irtool.run(model, {"X": x})),
                     ("openvino", run_openvino_model(model, {"X": x}))):
        assert_same(got, expected, who)


def _nested_dropout_loop(depth: str) -> object:
    """Outer Loop over the rows of X (trip count len(X)) whose body adds row ``i`` of X to
    what an inner ``depth`` gives (``"loop"``: a Loop of one iteration; ``"if"``: an If on
    a graph input): half of a vector of ones dropped out in training mode. Nothing the
    inner layer reads changes per outer iteration, but its values must."""
    ones = helper.make_node("Constant", [], ["ones"], value=helper.make_tensor(
        "o", TensorProto.FLOAT, [16], [1.0] * 16))
    ratio = helper.make_node("Constant", [], ["ratio"], value=helper.make_tensor(
        "r", TensorProto.FLOAT, [], [0.5]))
    train = helper.make_node("Constant", [], ["train"], value=helper.make_tensor(
        "t", TensorProto.BOOL, [], [True]))
    drop = helper.make_node("Dropout", ["ones", "ratio", "train"], ["dropped"], seed=7)
    if depth == "loop":
        inner_body = helper.make_graph(
            [ones, ratio, train, drop, helper.make_node("Identity", ["c_in"], ["c_out"])],
            "inner", [vi("j", I64, []), vi("c_in", BOOL, [])],
            [vi("c_out", BOOL, []), vi("dropped", F32, [16])])
        one = helper.make_node("Constant", [], ["one"], value=helper.make_tensor(
            "n", TensorProto.INT64, [], [1]))
        inner = [one, helper.make_node("Loop", ["one", "cond_in"], ["drops"], body=inner_body),
                 helper.make_node("Squeeze", ["drops", "zero_axis"], ["mask"])]
        axis = [helper.make_node("Constant", [], ["zero_axis"], value=helper.make_tensor(
            "a", TensorProto.INT64, [1], [0]))]
    else:
        branch = helper.make_graph([ones, ratio, train, drop], "then", [],
                                   [vi("dropped", F32, [16])])
        other = helper.make_graph([helper.make_node("Constant", [], ["z"], value=helper
                                                    .make_tensor("z", TensorProto.FLOAT, [16],
                                                                 [0.0] * 16))],
                                  "else", [], [vi("z", F32, [16])])
        inner = [helper.make_node("If", ["flag"], ["mask"], then_branch=branch,
                                  else_branch=other)]
        axis = []
    row = [helper.make_node("Gather", ["X", "i"], ["x_i"], axis=0),
           helper.make_node("Add", ["mask", "x_i"], ["y"])]
    body = helper.make_graph(
        [*axis, *inner, *row, helper.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
        [vi("i", I64, []), vi("cond_in", BOOL, [])],
        [vi("cond_out", BOOL, []), vi("y", F32, [16])])
    cond = helper.make_node("Constant", [], ["cond"],
                            value=helper.make_tensor("c", TensorProto.BOOL, [], [True]))
    loop = helper.make_node("Loop", ["len", "cond"], ["Y"], body=body)
    inputs = [vi("X", F32, [None, 16])] + ([vi("flag", BOOL, [])] if depth == "if" else [])
    return make_model([*length_of_x(), cond, loop], inputs, [vi("Y", F32, [None, 16])],
                      opset=17)


@pytest.mark.parametrize("depth", ["loop", "if"])
def test_random_draws_in_a_nested_body_are_not_hoisted(depth: str, tmp_path: Path) -> None:
    """Each row of onnxruntime's output is its own random mask; irtool (default path) and
    OpenVINO on irtool's IR give different rows too (values differ between engines: only
    the scale, 0 or 2, and that rows differ are compared)."""
    model = _nested_dropout_loop(depth)
    feeds = {"X": np.zeros((6, 16), F32)}
    if depth == "if":
        feeds["flag"] = np.array(True)
    ir = irtool.convert(model)
    (loop,) = [layer for layer in ir.graph.layers if layer.type == "Loop"]
    assert "RandomUniform" in (why_not(loop) or "")
    xml = irtool.save(ir, tmp_path / "model.xml")
    for who, got in (("onnxruntime", run_onnxruntime(model, feeds)),
                     ("irtool", irtool.run(ir, feeds)),
                     ("openvino", run_openvino(xml, feeds))):
        y = got["Y"]
        assert y.shape == (6, 16), who
        assert set(np.unique(y)) <= {0.0, 2.0}, who
        assert len({row.tobytes() for row in y}) > 1, f"{who}: every row is the same draw"


def test_an_iteration_number_fed_by_a_back_edge_is_not_the_counter() -> None:
    """IR the validator refuses (BACK_EDGE_NO_INIT), so no engine runs it: a back edge into
    the current_iteration Parameter makes its value after iteration 0 the edge's, not
    the counter's, and neither the vectoriser nor the sliced-input pass takes it for
    the counter."""
    from irtool.passes.slice_inputs import SliceLoopInputs

    body = Net()
    i = body.param("i", "i64", ())
    xb = body.param("xb", "f32", (4, 3))
    row = body.op("Gather", "opset8", [xb, i, body.const(np.int64(0))], {"batch_dims": "0"},
                  shape=(3,))
    r_scan = body.result(unsqueeze(body, body.op("Tanh", "opset1", [row])))
    r_next = body.result(body.op("Add", "opset1", [i, body.const(np.int64(0))],
                                 {"auto_broadcast": "numpy"}))
    net = Net()
    x = net.param("X", "f32", (4, 3))
    lp = net.loop(body)
    lp.trip_count(net.const(np.int64(4)))
    lp.condition(net.const(np.array(True)))
    lp.current_iteration(i)
    lp.back_edge(r_next, i)
    lp.invariant(x, xb)
    lp.execution_condition(true_result(body))
    lp.output(r_scan, info("f32", (-1, 3)), names=["Y"], axis=0)
    model = finish(net, lp)
    (loop,) = model.graph.layers_of_type("Loop")
    assert "back edge feeds the iteration number" in (why_not(loop) or "")
    assert VectorizeLoops()(model).changes == 0
    assert SliceLoopInputs()(model).changes == 0
