"""``check --localize`` on the OpenVINO quirks of docs/openvino-quirks.md: it names the layer
where OpenVINO departs from irtool, which is where the quirk is, known from the quirk (the
doc says what the plugin does wrong; each expected value here is the spec's or numpy's).

OpenVINO's CPU plugin differs across CPUs and builds: where a quirk does not reproduce,
``check`` agrees and the test records that instead (it passes; the doc then needs an
update).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest
from onnx import TensorProto, helper
from support.conversion import make_model, vi
from support.onnx_models import if_on_a_random_draw

import irtool

F32, F64, I64, BOOL = np.float32, np.float64, np.int64, np.bool_


def _checked(xml: Path, inputs: object) -> irtool.tools.check.CheckReport:  # type: ignore[name-defined]
    return irtool.check(xml, inputs, localize=True)


def test_attention_with_no_key_to_attend_to(tmp_path: Path) -> None:
    """The attention NaN: OpenVINO's ReduceMax of a row whose every score is masked to -inf
    is not -inf (IEEE's and numpy's max of -infs), and the NaN of the output follows."""
    from onnx.backend.test.case.node import collect_testcases

    case = "test_attention_4d_causal_nonpad_batch_prefill_expanded"
    model = next(c.model for c in collect_testcases(None) if c.name == case)
    rng = np.random.default_rng(7)
    feeds = {"Q": rng.standard_normal((3, 2, 2, 8)).astype(F32),
             "K": rng.standard_normal((3, 2, 6, 8)).astype(F32),
             "V": rng.standard_normal((3, 2, 6, 8)).astype(F32),
             "nonpad_kv_seqlen": np.array([4, 0, 3], I64)}
    xml = irtool.save(irtool.convert(model), tmp_path / "attention.xml")
    report = _checked(xml, feeds)
    if report.ok:
        return  # this plugin gives the reference's values
    found = report.localization.finding
    assert found.type == "ReduceMax", report.localization.format()
    row, = found.outputs
    # Batch item 1 has no key: its row maximum is -inf; OpenVINO gives something else.
    assert row.first_mismatch is not None and row.first_mismatch[0] == 1
    ours, theirs = row.at_first[1], row.at_first[0]
    assert ours == -np.inf and theirs != -np.inf


def test_float64_computed_as_float32(tmp_path: Path) -> None:
    """``(x + 1) - x`` in f64 for x = 1e8 is 1; in f32 the sum rounds to x and the
    difference is 0. The sum itself is within tolerance (relative 1e-8): the Subtract is
    the first layer whose value departs."""
    net = ov.Model  # OpenVINO writes the IR, so the f64 ops are as a deployment gets them
    x = ops.parameter([3], F64, name="x")
    total = ops.add(x, ops.constant(np.array(1.0, F64)), name="plus_one")
    diff = ops.subtract(total, x, name="minus_x")
    diff.output(0).set_names({"y"})
    xml = tmp_path / "f64.xml"
    ov.save_model(net([ops.result(diff)], [x]), str(xml), compress_to_fp16=False)
    feeds = {"x": np.array([1e8, 2e8, 3e8], F64)}
    np.testing.assert_array_equal((feeds["x"] + 1) - feeds["x"], [1, 1, 1])  # f64's answer
    report = _checked(xml, feeds)
    if report.ok:
        return
    found = report.localization.finding
    assert (found.name, found.type) == ("minus_x", "Subtract"), report.localization.format()


def _swap_reproducer(path: Path) -> Path:
    """The doc's reproducer: a' = b, b' = a, each body Result reading the other Parameter."""
    a, b = ops.parameter([2], F32, name="a"), ops.parameter([2], F32, name="b")
    pa, pb = ops.parameter([2], F32), ops.parameter([2], F32)
    ra, rb = ops.result(pb), ops.result(pa)
    body = ov.Model([ops.result(ops.constant(np.array(True))), ra, rb], [pa, pb])
    loop = ops.loop(ops.constant(np.array(2, I64)), ops.constant(np.array(True)))
    loop.set_function(body)
    loop.set_special_body_ports([-1, 0])
    loop.set_merged_input(pa, a.output(0), ra.output(0))
    loop.set_merged_input(pb, b.output(0), rb.output(0))
    outs = [loop.get_iter_value(ra.output(0), -1), loop.get_iter_value(rb.output(0), -1)]
    ov.save_model(ov.Model(outs, [a, b]), str(path), compress_to_fp16=False)
    return path


def test_carried_values_that_swap(tmp_path: Path) -> None:
    """Two swaps give a = [1, 1], b = [2, 2]; the plugin passes the second iteration a
    wrong carried value: the Loop is named, at iteration 1, for a carried Parameter."""
    xml = _swap_reproducer(tmp_path / "swap.xml")
    feeds = {"a": np.full(2, 1, F32), "b": np.full(2, 2, F32)}
    report = _checked(xml, feeds)
    if report.ok:
        return
    found = report.localization.finding
    assert (found.type, found.kind) == ("Loop", "loop"), report.localization.format()
    assert found.iterations == (1,)
    assert "(carried) disagrees at iteration 1" in found.note


def test_a_loop_it_can_tell_runs_zero_times_crashes_it(tmp_path: Path) -> None:
    """The zero-trip SIGFPE: OpenVINO dies compiling a Loop whose constant trip count is 0
    with a concatenated output; the search over prefixes of the model names that Loop."""
    x = ops.parameter([2], F32, name="x")
    pre = ops.multiply(x, ops.constant(np.array(2, F32)), name="before")
    bx = ops.parameter([2], F32)
    scan = ops.result(ops.unsqueeze(bx, ops.constant(np.array([0], I64))))
    body = ov.Model([ops.result(ops.constant(np.array(True))), scan], [bx])
    loop = ops.loop(ops.constant(np.array(0, I64)), ops.constant(np.array(True)))
    loop.set_friendly_name("zero_trip")
    loop.set_function(body)
    loop.set_invariant_input(bx, pre.output(0))
    loop.set_special_body_ports([-1, 0])
    out = loop.get_concatenated_slices(scan.output(0), 0, 1, 1, -1, 0)
    after = ops.add(out, ops.constant(np.array(1, F32)), name="after")
    xml = tmp_path / "zero.xml"
    ov.save_model(ov.Model([ops.result(after)], [x]), str(xml), compress_to_fp16=False)
    report = _checked(xml, {"x": np.array([1, 2], F32)})
    openvino = report.backend("openvino")
    if openvino.error is None:
        return  # this plugin compiles it
    found = report.localization.finding
    assert (found.name, found.type, found.kind) == ("zero_trip", "Loop", "failure"), \
        report.localization.format()


def test_a_loop_whose_trip_count_is_a_cast_length(tmp_path: Path) -> None:
    """260 rows cast through uint8 are 4 iterations (onnxruntime, irtool); the plugin runs
    260. Where it departs shows why: the cast back to int64 gives it 260, the length
    itself (it drops the narrowing pair of Converts), where uint8 makes 260 % 256 = 4."""
    body = helper.make_graph(
        [helper.make_node("Gather", ["X", "i"], ["x_i"], axis=0),
         helper.make_node("Tanh", ["x_i"], ["y"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
        [vi("i", I64, []), vi("cond_in", BOOL, [])], [vi("cond_out", BOOL, []), vi("y", F32, [2])])
    nodes = [helper.make_node("Shape", ["X"], ["shape"]),
             helper.make_node("Constant", [], ["zero"], value_int=0),
             helper.make_node("Gather", ["shape", "zero"], ["len"], axis=0),
             helper.make_node("Cast", ["len"], ["narrow"], to=TensorProto.UINT8),
             helper.make_node("Cast", ["narrow"], ["trip"], to=TensorProto.INT64),
             helper.make_node("Constant", [], ["cond"],
                              value=helper.make_tensor("c", TensorProto.BOOL, [], [True])),
             helper.make_node("Loop", ["trip", "cond"], ["Y"], body=body, name="rows")]
    model = make_model(nodes, [vi("X", F32, [None, 2])], [vi("Y", F32, [None, 2])])
    xml = irtool.save(irtool.convert(model), tmp_path / "cast.xml")
    feeds = {"X": np.random.default_rng(3).standard_normal((260, 2)).astype(F32)}
    assert irtool.run(xml, feeds)["Y"].shape == (4, 2)  # 260 % 256
    report = _checked(xml, feeds)
    if report.ok:
        return
    found = report.localization.finding
    assert found.type == "Convert", report.localization.format()
    row, = found.outputs
    assert row.output == "trip" and row.at_first == (260, int(np.array(260).astype(np.uint8)))


def test_a_seeded_random_draw_in_a_loop_body(tmp_path: Path) -> None:
    """Iteration 0 draws the same values in both; the plugin steps its generator less per
    iteration (256 Philox blocks per 4 elements, irtool 256 per element), so iteration 1
    is where its draw departs."""
    body = helper.make_graph(
        [helper.make_node("RandomUniform", [], ["r"], shape=[4], seed=3.0, name="draw"),
         helper.make_node("Identity", ["c"], ["c_out"])], "body",
        [vi("i", I64, []), vi("c", BOOL, [])], [vi("c_out", BOOL, []), vi("r", F32, [4])])
    m = helper.make_node("Constant", [], ["M"], value=helper.make_tensor(
        "m", TensorProto.INT64, [], [3]))
    cond = helper.make_node("Constant", [], ["C"], value=helper.make_tensor(
        "c", TensorProto.BOOL, [], [True]))
    model = make_model([m, cond, helper.make_node("Loop", ["M", "C"], ["Y"], body=body)], [],
                       [vi("Y", F32, [3, 4])])
    xml = irtool.save(irtool.convert(model), tmp_path / "draws.xml")
    report = _checked(xml, {})
    if report.ok:
        return
    found = report.localization.finding
    assert (found.type, found.iterations) == ("RandomUniform", (1,)), \
        report.localization.format()


def test_an_if_on_a_random_draw(tmp_path: Path) -> None:
    """The plugin takes the then-branch whatever the draw: over the calls of a session,
    the first whose draw is 0.5 or more parts there, at the If (its condition agrees)."""
    model = if_on_a_random_draw(3.0)
    xml = irtool.save(irtool.convert(model), tmp_path / "pick.xml")
    steps = [{} for _ in range(8)]
    draws = [float(s["U"][0]) for s in irtool.run_steps(xml, steps)]
    report = _checked(xml, steps)
    if report.ok:
        return
    first_else = next(k for k, u in enumerate(draws) if u >= 0.5)  # numpy: u < 0.5 is false
    found = report.localization.finding
    assert found.step == first_else, report.localization.format()
    # Exposing the draw or the condition makes the plugin take the right branch: it is
    # named as where its rewrite starts; else the If itself, its condition agreeing.
    assert (found.type, found.kind) in (("If", "layer"), ("RandomUniform", "hidden"),
                                        ("Less", "hidden")), report.localization.format()


def test_reshape_of_an_empty_tensor_to_dims_read_from_shapeof(tmp_path: Path) -> None:
    """Reshape of a [0, 0] tensor to [ShapeOf(p)[0], ShapeOf(q)[1]] is [0, 3] (the spec,
    numpy); the plugin gives [0, 0], its target rewritten."""
    p = ops.parameter([-1, -1], F32, name="p")
    q = ops.parameter([-1, -1], F32, name="q")

    def i64(v: object) -> object:
        return ops.constant(np.array(v, I64))

    target = ops.concat([ops.gather(ops.shape_of(p), i64([0]), i64(0), name="p_dim"),
                         ops.gather(ops.shape_of(q), i64([1]), i64(0), name="q_dim")], 0,
                        name="target")
    reshaped = ops.reshape(p, target, False, name="reshape")
    shape = ops.shape_of(reshaped, name="dims")
    xml = tmp_path / "reshape.xml"
    ov.save_model(ov.Model([ops.result(shape)], [p, q]), str(xml), compress_to_fp16=False)
    assert np.zeros((0, 0), F32).reshape(0, 3).shape == (0, 3)
    report = _checked(xml, {"p": np.zeros((0, 0), F32), "q": np.zeros((1, 3), F32)})
    if report.ok:
        return
    found = report.localization.finding
    # Where the plugin's rewrite of the target shows: q's dim (read as 0 with its values
    # exposed), the target, or the Reshape; never p's side, which is right.
    assert found.name in ("q_dim", "target", "reshape"), report.localization.format()
    row, = found.outputs
    if found.name == "reshape":
        assert row.verdict == "shape" and row.ref_shape == (0, 3)
    else:
        assert row.at_first[1] == 3  # q's dim 1, as numpy reads it


@pytest.fixture(autouse=True)
def _quiet_numpy() -> None:
    np.seterr(all="ignore")
