"""ONNX Loop -> Loop-5: every mode of the spec's table, every Loop version, nesting,
captures, zero iterations, growing carried values, static shapes.

Each case runs on onnxruntime (the expected values), then the converted IR runs
on OpenVINO's CPU plugin and on irtool's runtime (``check_conversion``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper
from support import SAMPLES
from support.compare import assert_same
from support.conversion import (
    check_conversion,
    const_node,
    loop_layers,
    make_model,
    run_onnxruntime,
    vi,
)
from support.onnx_models import rnn_loop_model

import irtool

F32, I64, BOOL = np.float32, np.int64, np.bool_


def counting_body(cond: str = "keep_going") -> object:
    """x_out = x_in + (i as float); scan output x_out * 2; cond per ``cond``.

    ``keep_going``: x_out < limit (limit captured from the outer graph);
    ``true``: a constant true; ``same``: the incoming condition passed through.
    """
    nodes = [
        helper.make_node("Cast", ["i"], ["i_f"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["x_in", "i_f"], ["x_out"]),
        helper.make_node("Mul", ["x_out", "two"], ["scan"]),
    ]
    if cond == "keep_going":
        nodes.append(helper.make_node("ReduceSum", ["x_out"], ["total"], keepdims=0))
        nodes.append(helper.make_node("Less", ["total", "limit"], ["c_out"]))
    elif cond == "true":
        nodes.append(const_node("c_out", True))
    else:
        nodes.append(helper.make_node("Identity", ["c_in"], ["c_out"]))
    return helper.make_graph(
        nodes, "body",
        [vi("i", I64, []), vi("c_in", BOOL, []), vi("x_in", F32, [2])],
        [vi("c_out", BOOL, []), vi("x_out", F32, [2]), vi("scan", F32, [2])])


def loop_model(m: str, cond: str, body_cond: str = "keep_going", opset: int = 17,
               extra_inputs: tuple = ()) -> object:
    inputs = [vi("x", F32, [2]), vi("limit", F32, []), *extra_inputs]
    nodes = [const_node("two", np.float32(2)),
             helper.make_node("Loop", [m, cond, "x"], ["x_final", "scans"],
                              body=counting_body(body_cond), name="loop")]
    return make_model(nodes, inputs, [vi("x_final", F32, [2]), vi("scans", F32, [None, 2])],
                      opset=opset)


X = np.array([1.0, 2.0], dtype=F32)


@pytest.mark.parametrize("mode", ["for", "while", "do-while", "for+cond", "infinite+cond"])
def test_loop_modes(mode: str, tmp_path: Path) -> None:
    """The five rows of the ONNX spec's table of (M, cond) combinations."""
    M = vi("M", I64, [])
    C = vi("cond", BOOL, [])
    if mode == "for":  # (M, ""): M iterations; the body condition is ignored
        model = loop_model("M", "", body_cond="true", extra_inputs=(M,))
        feeds = [{"M": np.array(n, I64)} for n in (0, 1, 4)]
    elif mode == "while":  # ("", cond)
        model = loop_model("", "cond", extra_inputs=(C,))
        feeds = [{"cond": np.array(c)} for c in (True, False)]
    elif mode == "do-while":  # ("", true): the first iteration always runs
        model = make_model([const_node("t", True), *loop_model("", "t").graph.node],
                           loop_model("", "t").graph.input, loop_model("", "t").graph.output)
        feeds = [{}]
    elif mode == "for+cond":  # (M, cond): whichever ends first
        model = loop_model("M", "cond", extra_inputs=(M, C))
        feeds = [{"M": np.array(n, I64), "cond": np.array(c)}
                 for n, c in ((2, True), (50, True), (3, False))]
    else:  # ("", ""): unbounded, the body's condition ends it
        model = loop_model("", "")
        feeds = [{}]
    for i, extra in enumerate(feeds):
        for limit in (5.0, 40.0):
            where = tmp_path / str(i) / str(limit)
            where.mkdir(parents=True)
            check_conversion(model, {"x": X, "limit": np.array(limit, F32), **extra}, where)


@pytest.mark.parametrize("opset", [9, 11, 13, 16, 19, 21, 23])
def test_loop_versions(opset: int, tmp_path: Path) -> None:
    """Loop-1 (opset 9), 11, 13, 16, 19, 21 and 23 convert alike."""
    model = loop_model("M", "cond", opset=opset,
                       extra_inputs=(vi("M", I64, []), vi("cond", BOOL, [])))
    ir = check_conversion(model, {"x": X, "limit": np.array(20, F32), "M": np.array(6, I64),
                                  "cond": np.array(True)}, tmp_path)
    (loop,) = loop_layers(ir)
    assert (loop.type, loop.version) == ("Loop", "opset5")


def test_loop_port_map_follows_the_design(tmp_path: Path) -> None:
    """Port 0 trip count, 1 condition, then carried values, then captures; the
    iteration number and condition output are marked with their purposes."""
    model = loop_model("M", "cond", extra_inputs=(vi("M", I64, []), vi("cond", BOOL, [])))
    ir = check_conversion(model, {"x": X, "limit": np.array(9, F32), "M": np.array(5, I64),
                                  "cond": np.array(True)}, tmp_path)
    (loop,) = loop_layers(ir)
    entries = loop.port_maps["port_map"]
    purposes = {e.purpose: e for e in entries if e.purpose}
    assert purposes["current_iteration"].external_port_id == -1
    assert purposes["execution_condition"].external_port_id == -1
    inputs = sorted(e.external_port_id for e in entries if e.kind == "input" and not e.purpose)
    # x, then the captured limit (the small constant 2 is copied into the body instead)
    assert inputs == [2, 3]
    outputs = {e.external_port_id: e.axis for e in entries if e.kind == "output"
               and not e.purpose}
    assert outputs == {4: None, 5: 0}  # final value, scan output concatenated on axis 0
    assert len(loop.back_edges) == 1
    trip, cond = (ir.graph.layer(ir.graph.source(loop.id, p.id)[0]) for p in loop.inputs[:2])
    assert cond.name == "cond"
    # ONNX runs ``for i < M`` (a negative M: no iteration); a negative IR trip count is
    # "no limit", so port 0 gets max(M, 0), and 0 when the condition given at run time is
    # false (OpenVINO would keep the rows of a constant M: docs/openvino-quirks.md).
    assert trip.type == "Select"
    given, clamp, none = (ir.graph.layer(ir.graph.source(trip.id, p.id)[0])
                          for p in trip.inputs)
    assert given.name == "cond" and none.const_value().tolist() == 0
    assert clamp.type == "Maximum"
    m, zero = (ir.graph.layer(ir.graph.source(clamp.id, p.id)[0]) for p in clamp.inputs)
    assert m.name == "M" and zero.type == "Const" and zero.const_value().tolist() == 0


def test_body_reads_incoming_condition(tmp_path: Path) -> None:
    """A body that uses cond_in gets it as a merged input of port 1 with a back edge."""
    body = helper.make_graph([
        helper.make_node("Cast", ["c_in"], ["c_f"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["x_in", "c_f"], ["x_out"]),
        helper.make_node("Less", ["x_out", "limit"], ["c_out"]),
    ], "body", [vi("i", I64, []), vi("c_in", BOOL, []), vi("x_in", F32, [])],
        [vi("c_out", BOOL, []), vi("x_out", F32, [])])
    model = make_model([helper.make_node("Loop", ["M", "cond", "x"], ["x_final"], body=body)],
                       [vi("M", I64, []), vi("cond", BOOL, []), vi("x", F32, []),
                        vi("limit", F32, [])], [vi("x_final", F32, [])])
    for m, c in ((10, True), (10, False), (2, True)):
        where = tmp_path / f"{m}{c}"
        where.mkdir()
        ir = check_conversion(model, {"M": np.array(m, I64), "cond": np.array(c),
                                      "x": np.array(0.5, F32), "limit": np.array(4, F32)},
                              where)
    (loop,) = loop_layers(ir)
    cond_param = next(e.internal_layer_id for e in loop.port_maps["port_map"]
                      if e.kind == "input" and e.external_port_id == 1)
    assert cond_param in {edge.to_layer for edge in loop.back_edges}


def test_zero_iterations(tmp_path: Path) -> None:
    """M = 0: carried outputs are the initial values, scan outputs have length 0."""
    model = loop_model("M", "", body_cond="true", extra_inputs=(vi("M", I64, []),))
    check_conversion(model, {"x": X, "limit": np.array(1, F32), "M": np.array(0, I64)},
                     tmp_path)


def test_constant_false_condition_runs_no_iteration(tmp_path: Path) -> None:
    model = loop_model("M", "f", extra_inputs=(vi("M", I64, []),))
    model.graph.node.insert(0, const_node("f", False))
    check_conversion(model, {"x": X, "limit": np.array(100, F32), "M": np.array(3, I64)},
                     tmp_path)


def test_int64_max_trip_count_means_unbounded(tmp_path: Path) -> None:
    model = loop_model("M", "")
    model.graph.node.insert(0, const_node("M", np.iinfo(np.int64).max, I64))
    ir = check_conversion(model, {"x": X, "limit": np.array(30, F32)}, tmp_path)
    (loop,) = loop_layers(ir)
    src = ir.graph.source(loop.id, loop.inputs[0].id)
    assert ir.graph.layer(src[0]).const_value().tolist() == [-1]


def test_growing_carried_value(tmp_path: Path) -> None:
    """A carried value that grows by a Concat each iteration: its dim becomes dynamic,
    the other stays static."""
    body = helper.make_graph([
        helper.make_node("Identity", ["c_in"], ["c_out"]),
        helper.make_node("Cast", ["i"], ["i_f"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["i_f", "axes"], ["i_1"]),
        helper.make_node("Unsqueeze", ["i_1", "axes"], ["i_11"]),
        helper.make_node("Expand", ["i_11", "row_shape"], ["row"]),
        helper.make_node("Concat", ["acc_in", "row"], ["acc_out"], axis=0),
    ], "body", [vi("i", I64, []), vi("c_in", BOOL, []), vi("acc_in", F32, [None, 3])],
        [vi("c_out", BOOL, []), vi("acc_out", F32, [None, 3])])
    model = make_model([
        const_node("axes", [0], I64), const_node("row_shape", [1, 3], I64),
        helper.make_node("Loop", ["M", "", "acc0"], ["acc"], body=body)],
        [vi("M", I64, []), vi("acc0", F32, [1, 3])], [vi("acc", F32, [None, 3])])
    for m in (0, 1, 4):
        where = tmp_path / str(m)
        where.mkdir()
        ir = check_conversion(model, {"M": np.array(m, I64), "acc0": np.ones((1, 3), F32)},
                              where)
    (loop,) = loop_layers(ir)
    body_ir = loop.bodies["body"]
    carried = body_ir.layer(loop.back_edges[-1].to_layer)
    assert carried.outputs[0].dims == (-1, 3)


def test_body_ports_keep_static_shapes() -> None:
    """Where ONNX shape inference knows a body's shapes, the IR ports say so too."""
    import irtool

    model = loop_model("M", "cond", extra_inputs=(vi("M", I64, []), vi("cond", BOOL, [])))
    (loop,) = loop_layers(irtool.convert(model))
    dims = [p.dims for layer in loop.bodies["body"].layers for p in layer.outputs]
    assert (2,) in dims
    assert all(d is not None and -1 not in d for d in dims)
    assert loop.outputs[0].dims == (2,)
    assert loop.outputs[1].dims == (-1, 2)


def _nested_capture_model() -> object:
    """Outer Loop -> inner Loop whose body reads ``a`` (main graph) and ``b`` (outer body)."""
    inner = helper.make_graph([
        helper.make_node("Identity", ["c2"], ["c2_out"]),
        helper.make_node("Add", ["y_in", "a"], ["t"]),
        helper.make_node("Mul", ["t", "b"], ["y_out"]),
    ], "inner", [vi("j", I64, []), vi("c2", BOOL, []), vi("y_in", F32, [2])],
        [vi("c2_out", BOOL, []), vi("y_out", F32, [2])])
    outer = helper.make_graph([
        helper.make_node("Identity", ["c1"], ["c1_out"]),
        helper.make_node("Cast", ["i"], ["b0"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["b0", "half"], ["b"]),
        helper.make_node("Loop", ["N", "", "x_in"], ["x_out"], body=inner, name="inner_loop"),
    ], "outer", [vi("i", I64, []), vi("c1", BOOL, []), vi("x_in", F32, [2])],
        [vi("c1_out", BOOL, []), vi("x_out", F32, [2])])
    return make_model([
        const_node("half", np.float32(0.5)),
        helper.make_node("Loop", ["M", "", "x"], ["x_final"], body=outer, name="outer_loop")],
        [vi("M", I64, []), vi("N", I64, []), vi("x", F32, [2]), vi("a", F32, [2])],
        [vi("x_final", F32, [2])])


def test_nested_captures_two_levels_deep(tmp_path: Path) -> None:
    """``a`` and ``N`` come from the main graph into the inner body through the outer
    Loop's inputs; ``b`` from the outer body."""
    ir = check_conversion(_nested_capture_model(),
                          {"M": np.array(3, I64), "N": np.array(2, I64), "x": X,
                           "a": np.array([0.25, -1.0], F32)}, tmp_path)
    outer, inner = sorted(loop_layers(ir), key=lambda layer: layer.name != "outer_loop")
    assert outer.name == "outer_loop" and inner.name == "inner_loop"
    # The outer Loop takes x plus the captures a and N (the constant `half` is copied).
    assert len(outer.inputs) == 2 + 1 + 2
    # The inner Loop's captures (a, b) come from the outer body: a via its Parameter.
    assert len(inner.inputs) == 2 + 1 + 2


def test_if_inside_loop(tmp_path: Path) -> None:
    """An If in a Loop body whose branches capture body and main-graph values."""
    then = helper.make_graph([helper.make_node("Add", ["x_in", "a"], ["r"])], "then", [],
                             [vi("r", F32, [2])])
    other = helper.make_graph([helper.make_node("Mul", ["x_in", "i_f"], ["r2"])], "else", [],
                              [vi("r2", F32, [2])])
    body = helper.make_graph([
        helper.make_node("Identity", ["c"], ["c_out"]),
        helper.make_node("Cast", ["i"], ["i_f"], to=TensorProto.FLOAT),
        helper.make_node("Mod", ["i", "two"], ["odd"]),
        helper.make_node("Cast", ["odd"], ["is_odd"], to=TensorProto.BOOL),
        helper.make_node("If", ["is_odd"], ["x_out"], then_branch=then, else_branch=other),
    ], "body", [vi("i", I64, []), vi("c", BOOL, []), vi("x_in", F32, [2])],
        [vi("c_out", BOOL, []), vi("x_out", F32, [2])])
    model = make_model([const_node("two", 2, I64),
                        helper.make_node("Loop", ["M", "", "x"], ["x_final"], body=body)],
                       [vi("M", I64, []), vi("x", F32, [2]), vi("a", F32, [2])],
                       [vi("x_final", F32, [2])])
    check_conversion(model, {"M": np.array(5, I64), "x": X, "a": np.array([1, -2], F32)},
                     tmp_path)


def test_loop_inside_if(tmp_path: Path) -> None:
    """A Loop in an If branch, its body capturing a main-graph value."""
    body = helper.make_graph([
        helper.make_node("Identity", ["c"], ["c_out"]),
        helper.make_node("Add", ["x_in", "a"], ["x_out"]),
    ], "body", [vi("i", I64, []), vi("c", BOOL, []), vi("x_in", F32, [2])],
        [vi("c_out", BOOL, []), vi("x_out", F32, [2])])
    then = helper.make_graph([helper.make_node("Loop", ["M", "", "x"], ["looped"], body=body)],
                             "then", [], [vi("looped", F32, [2])])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["negated"])], "else", [],
                              [vi("negated", F32, [2])])
    model = make_model([helper.make_node("If", ["flag"], ["y"], then_branch=then,
                                         else_branch=other)],
                       [vi("flag", BOOL, []), vi("M", I64, []), vi("x", F32, [2]),
                        vi("a", F32, [2])], [vi("y", F32, [2])])
    for flag in (True, False):
        where = tmp_path / str(flag)
        where.mkdir()
        check_conversion(model, {"flag": np.array(flag), "M": np.array(3, I64), "x": X,
                                 "a": np.array([0.5, 1.5], F32)}, where)


def test_spec_example_predict_net(tmp_path: Path) -> None:
    """The ONNX Loop spec's sample (a=3, b=6, keepgoing, max_trip_count=10)."""
    import importlib.util

    samples = SAMPLES / "make_samples.py"
    spec = importlib.util.spec_from_file_location("make_samples", samples)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    model = module.predict_net()
    for b, keep in ((6, True), (-2, True), (1, True), (6, False)):
        where = tmp_path / f"{b}{keep}"
        where.mkdir()
        check_conversion(model, {"b": np.array(b, np.int32), "keepgoing": np.array(keep)},
                         where)


def test_fixed_input_shapes_reach_the_loop_outputs(tmp_path: Path) -> None:
    """``--input "X[?,1,8],h0[1,16]"``: h stays [1,16] through every iteration (its initial
    value is [1,16], and tanh(x_i @ W + h @ U) of [1,8] and [1,16] is [1,16] again), so the
    outputs are h_last [1,16] and ys [?,1,16], not the body's declared [?,16]. Values:
    onnxruntime (check_conversion), for two sequence lengths."""
    model = rnn_loop_model()
    ir = irtool.convert(model, input_shapes={"X": (None, 1, 8), "h0": (1, 16)})
    outputs = dict(zip(ir.output_names(), (layer.inputs[0].dims for layer in ir.outputs)))
    assert outputs == {"h_last": (1, 16), "ys": (-1, 1, 16)}
    rng = np.random.default_rng(1)
    for seq in (1, 5):
        feeds = {"X": rng.standard_normal((seq, 1, 8)).astype(np.float32),
                 "h0": rng.standard_normal((1, 16)).astype(np.float32)}
        check_conversion(model, feeds, tmp_path)
        xml = irtool.save(ir, tmp_path / "fixed.xml")
        assert_same(irtool.run(irtool.load(xml), feeds), run_onnxruntime(model, feeds), "fixed",
                    1e-5, 1e-6, float_dtypes=False)
    # Without fixed shapes, the batch stays dynamic, as declared.
    free = irtool.convert(model)
    assert dict(zip(free.output_names(), (layer.inputs[0].dims for layer in free.outputs))) \
        == {"h_last": (-1, 16), "ys": (-1, -1, 16)}
