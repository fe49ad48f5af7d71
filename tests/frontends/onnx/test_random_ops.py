"""Random generators: ONNX RandomUniform / RandomNormal (and -Like, and Bernoulli through
its function body) and what a seeded generator gives from call to call.

Where onnxruntime and OpenVINO agree, irtool follows (each is checked here on all three):
a session gives new values on every call and in every loop iteration, a fresh session
gives the first call's values again, two nodes with the same seed give the same values,
and the values have the distribution asked for. onnxruntime's numbers come from another
generator and are never matched; OpenVINO's are, bit for bit: irtool lowers the ONNX ops
as OpenVINO's frontend does and its runtime moves each generator on as OpenVINO's CPU
plugin does at the top level of a model. Inside a Loop that plugin does otherwise
(docs/openvino-quirks.md): recorded by ``test_openvino_in_a_loop``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import openvino as ov
import pytest
from onnx import TensorProto, helper
from support.conversion import make_model, run_onnxruntime, vi

import irtool

F32, I64, BOOL = np.float32, np.int64, np.bool_
SEED = 3.0


def generator(op: str, n: int = 4, seed: float | None = SEED, **attrs: object) -> onnx.ModelProto:
    """``Y = op(...)`` of ``n`` values (a -Like op takes its shape from input X)."""
    if seed is not None:
        attrs["seed"] = seed
    if op.endswith("Like"):
        node = helper.make_node(op, ["X"], ["Y"], **attrs)
        inputs = [vi("X", F32, [n])]
    else:
        node = helper.make_node(op, [], ["Y"], shape=[n], **attrs)
        inputs = []
    return make_model([node], inputs, [vi("Y", F32, [n])])


def _feeds(model: onnx.ModelProto, n: int = 4) -> dict[str, np.ndarray]:
    return {"X": np.zeros(n, F32)} if model.graph.input else {}


class Sessions:
    """One session of each engine over ``model``: onnxruntime's InferenceSession,
    OpenVINO's compiled model (one infer request) on irtool's IR, irtool's ``compile``."""

    def __init__(self, model: onnx.ModelProto, tmp_path: Path) -> None:
        import onnxruntime as ort

        self.feeds = _feeds(model)
        self.ort = ort.InferenceSession(model.SerializeToString(),
                                        providers=["CPUExecutionProvider"])
        xml = irtool.save(irtool.convert(model), tmp_path / "model.xml")
        core = ov.Core()
        self.ov = core.compile_model(core.read_model(str(xml)), "CPU",
                                     {"INFERENCE_PRECISION_HINT": "f32"}).create_infer_request()
        self.irtool = irtool.compile(irtool.load(xml))

    def calls(self, count: int) -> dict[str, list[np.ndarray]]:
        out: dict[str, list[np.ndarray]] = {"onnxruntime": [], "openvino": [], "irtool": []}
        for _ in range(count):
            out["onnxruntime"].append(self.ort.run(None, self.feeds)[0])
            out["openvino"].append(np.array(self.ov.infer(self.feeds)[0]))
            out["irtool"].append(self.irtool.run(self.feeds)["Y"])
        return out


OPS = ["RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike"]


@pytest.mark.parametrize("op", OPS)
def test_each_call_of_a_session_draws_anew_and_a_fresh_session_repeats(op: str,
                                                                        tmp_path: Path) -> None:
    model = generator(op)
    first = Sessions(model, tmp_path).calls(3)
    again = Sessions(model, tmp_path).calls(1)
    for who, calls in first.items():
        assert len({c.tobytes() for c in calls}) == 3, f"{who}: a call repeated the last"
        np.testing.assert_array_equal(again[who][0], calls[0], err_msg=who)


@pytest.mark.parametrize("op", OPS)
def test_irtool_draws_what_openvino_draws(op: str, tmp_path: Path) -> None:
    """Call after call, irtool's session gives what OpenVINO's CPU plugin gives on the same
    IR, and OpenVINO gives the same on its own conversion of the ONNX (uniform values bit
    for bit; normal ones through log, sqrt and cos, within a few ulps)."""
    model = generator(op)
    calls = Sessions(model, tmp_path).calls(3)
    core = ov.Core()
    own = core.compile_model(core.read_model(model.SerializeToString(), b""), "CPU",
                             {"INFERENCE_PRECISION_HINT": "f32"}).create_infer_request()
    feeds = _feeds(model)
    for k, ours in enumerate(calls["irtool"]):
        theirs = np.array(own.infer(feeds)[0])
        if "Uniform" in op:
            np.testing.assert_array_equal(ours, calls["openvino"][k])
            np.testing.assert_array_equal(theirs, calls["openvino"][k])
        else:
            np.testing.assert_allclose(ours, calls["openvino"][k], rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(theirs, calls["openvino"][k], rtol=1e-5, atol=1e-6)


def test_irtool_run_is_a_fresh_session_each_time() -> None:
    """``irtool.run`` (stateless) gives the first call's values every time; a session
    moves on."""
    ir = irtool.convert(generator("RandomUniform"))
    runs = [irtool.run(ir, {})["Y"] for _ in range(2)]
    np.testing.assert_array_equal(runs[0], runs[1])
    session = irtool.compile(ir)
    np.testing.assert_array_equal(session.run({})["Y"], runs[0])
    assert not np.array_equal(session.run({})["Y"], runs[0])


def test_two_nodes_with_one_seed_draw_alike(tmp_path: Path) -> None:
    """Each node is its own generator: two of the same seed give the same values, in every
    engine, call after call."""
    nodes = [helper.make_node("RandomUniform", [], [name], shape=[5], seed=SEED)
             for name in ("Y", "Z")]
    model = make_model(nodes, [], [vi("Y", F32, [5]), vi("Z", F32, [5])])
    import onnxruntime as ort

    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    xml = irtool.save(irtool.convert(model), tmp_path / "model.xml")
    core = ov.Core()
    request = core.compile_model(core.read_model(str(xml)), "CPU").create_infer_request()
    session = irtool.compile(irtool.load(xml))
    for _ in range(2):
        for who, (y, z) in (("onnxruntime", sess.run(None, {})),
                            ("openvino", list(request.infer({}).values())),
                            ("irtool", list(session.run({}).values()))):
            np.testing.assert_array_equal(y, z, err_msg=who)


def _loop_of_draws(op: str, trip: int, n: int = 4) -> onnx.ModelProto:
    """A Loop of ``trip`` iterations whose body draws ``n`` values (seeded); scan output Y."""
    body = helper.make_graph(
        [helper.make_node(op, [], ["r"], shape=[n], seed=SEED),
         helper.make_node("Identity", ["c"], ["c_out"])], "body",
        [vi("i", I64, []), vi("c", BOOL, [])], [vi("c_out", BOOL, []), vi("r", F32, [n])])
    m = helper.make_node("Constant", [], ["M"], value=helper.make_tensor(
        "m", TensorProto.INT64, [], [trip]))
    cond = helper.make_node("Constant", [], ["C"], value=helper.make_tensor(
        "c", TensorProto.BOOL, [], [True]))
    loop = helper.make_node("Loop", ["M", "C"], ["Y"], body=body)
    return make_model([m, cond, loop], [], [vi("Y", F32, [trip, n])])


@pytest.mark.parametrize("op", ["RandomUniform", "RandomNormal"])
def test_every_iteration_draws_anew(op: str, tmp_path: Path) -> None:
    """Each iteration of a loop gets its own draw, in every engine; the loop stays a loop
    (nothing hoists the draw out of it)."""
    model = _loop_of_draws(op, trip=5)
    ir = irtool.convert(model)
    assert [layer.type for layer in ir.graph.layers if layer.type == "Loop"] == ["Loop"]
    calls = Sessions(model, tmp_path).calls(1)
    for who, (y,) in calls.items():
        assert y.shape == (5, 4), who
        assert len({row.tobytes() for row in y}) == 5, f"{who}: an iteration repeated a draw"


def test_openvino_in_a_loop(tmp_path: Path) -> None:
    """What OpenVINO's CPU plugin does with a seeded RandomUniform in a Loop body, recorded:
    irtool moves each generator on by 256 Philox blocks per element per execution, in a
    loop as at the top (so iteration 0 of the first call is OpenVINO's, bit for bit). This
    CPU plugin moves by 256 blocks per 4 elements per iteration, and starts again from the
    first draw on every call: an xfail where it does so, a pass where it agrees with irtool
    (the doc then needs an update)."""
    model = _loop_of_draws("RandomUniform", trip=3)
    sessions = Sessions(model, tmp_path)
    calls = sessions.calls(2)
    ours, theirs = calls["irtool"], calls["openvino"]
    np.testing.assert_array_equal(ours[0][0], theirs[0][0])  # the first draw: the same
    if all(np.array_equal(a, b) for a, b in zip(ours, theirs)):
        return
    from irtool.ir.types import element_type
    from irtool.opset.math_random import DRAW_STRIDE, random_uniform

    def draw(position: int) -> np.ndarray:
        return random_uniform([4], element_type("f32"), np.float32(0), np.float32(1), 0,
                              int(np.float32(SEED).view(np.uint32)), position)

    restarting = np.stack([draw(k * DRAW_STRIDE) for k in range(3)])  # 4 elements: 1 block
    assert all(np.array_equal(call, restarting) for call in theirs), theirs
    pytest.xfail("OpenVINO's CPU plugin steps 256 blocks per 4 elements in a Loop body and "
                 "restarts every call")


def test_reset_state_leaves_the_generators(tmp_path: Path) -> None:
    """OpenVINO's ``reset_state`` resets variables, not generators; so does irtool's."""
    sessions = Sessions(generator("RandomUniform"), tmp_path)
    sessions.calls(1)
    sessions.ov.reset_state()
    sessions.irtool.reset_state()
    after = sessions.calls(1)
    np.testing.assert_array_equal(after["irtool"][0], after["openvino"][0])


@pytest.mark.parametrize("op, low, high, mean, scale", [
    ("RandomUniform", -2.0, 3.0, None, None), ("RandomNormal", None, None, 1.5, 0.5)])
def test_distribution(op: str, low: float | None, high: float | None, mean: float | None,
                      scale: float | None, tmp_path: Path) -> None:
    """20,000 draws per engine have the distribution asked for: uniform in [low, high)
    with the uniform's mean and variance, or normal of the given mean and scale (moments
    within 5 standard errors)."""
    n = 20000
    attrs = {k: v for k, v in (("low", low), ("high", high), ("mean", mean),
                               ("scale", scale)) if v is not None}
    model = generator(op, n, **attrs)
    calls = Sessions(model, tmp_path).calls(1)
    for who, (y,) in calls.items():
        y = y.astype(np.float64)
        if op == "RandomUniform":
            assert low <= y.min() and y.max() < high, who  # type: ignore[operator]
            want_mean, want_var = (low + high) / 2, (high - low) ** 2 / 12  # type: ignore[operator]
        else:
            want_mean, want_var = mean, scale ** 2  # type: ignore[operator]
        assert abs(y.mean() - want_mean) < 5 * np.sqrt(want_var / n), (who, y.mean())
        assert abs(y.var() / want_var - 1) < 5 * np.sqrt(2 / n) * (1 if op == "RandomNormal"
                                                                   else 0.9), (who, y.var())


def test_bernoulli_expands_to_a_uniform_draw(tmp_path: Path) -> None:
    """Bernoulli(p) (an ONNX function over RandomUniformLike) converts. The spec's text
    says an output of 1 has probability p, and ONNX's reference evaluator gives that; its
    own function body (``Greater(RandomUniformLike(p), p)``) gives 1 with probability
    1 - p, and so do onnxruntime (1.32), OpenVINO and irtool, which expands that body:
    the engines agree, the spec is recorded here as the odd one out."""
    from onnx.reference import ReferenceEvaluator

    p = np.full(20000, 0.3, F32)
    model = make_model([helper.make_node("Bernoulli", ["P"], ["Y"], seed=SEED)],
                       [vi("P", F32, [20000])], [vi("Y", F32, [20000])], opset=15)
    ir = irtool.convert(model)
    xml = irtool.save(ir, tmp_path / "model.xml")
    from support.conversion import run_openvino

    bound = 5 * np.sqrt(0.3 * 0.7 / p.size)
    for who, y in (("onnxruntime", run_onnxruntime(model, {"P": p})["Y"]),
                   ("irtool", irtool.run(ir, {"P": p})["Y"]),
                   ("openvino", run_openvino(xml, {"P": p})["Y"])):
        assert set(np.unique(y)) <= {0.0, 1.0}, who
        assert abs(y.mean() - 0.7) < bound, (who, y.mean())
    reference = ReferenceEvaluator(model).run(None, {"P": p})[0]
    assert abs(reference.mean() - 0.3) < bound, reference.mean()


@pytest.mark.parametrize("et, low, high", [("f32", 0, 1), ("f16", 0, 1), ("f64", -1, 1),
                                           ("i32", -5, 7), ("i64", 0, 100)])
def test_a_session_follows_openvino_call_after_call(et: str, low: int, high: int,
                                                    tmp_path: Path) -> None:
    """IR built with OpenVINO's API: a RandomUniform whose shape is an input, called with
    changing sizes: irtool's session gives OpenVINO's CPU plugin's values call after call,
    bit for bit (each call moves the generator by 256 blocks per element drawn)."""
    import openvino.opset13 as ops

    from irtool.ir.types import element_type

    dtype = element_type(et).dtype
    shape = ops.parameter([1], np.int64, name="s")
    node = ops.random_uniform(shape, ops.constant(np.array(low, dtype)),
                              ops.constant(np.array(high, dtype)), et, 3, 5)
    node.output(0).set_names({"y"})
    model = ov.Model([ops.result(node)], [shape])
    ov.save_model(model, str(tmp_path / "m.xml"), compress_to_fp16=False)
    request = ov.Core().compile_model(model, "CPU").create_infer_request()
    session = irtool.compile(irtool.load(tmp_path / "m.xml"))
    for n in (4, 4, 3, 5, 1):
        feed = {"s": np.array([n], np.int64)}
        np.testing.assert_array_equal(session.run(feed)["y"], request.infer(feed)[0])


def test_an_if_on_a_random_draw_is_decided_on_every_call(tmp_path: Path) -> None:
    """``If(u < 0.5)`` of a draw ``u`` is not decided once at conversion (the first draw
    picking one branch for good): in irtool's session, as in onnxruntime's, each call
    takes the branch its own draw picks (the draws are OpenVINO's). OpenVINO's CPU plugin
    takes the then-branch on every call whatever the draw, on irtool's IR and on its own
    conversion: recorded, an xfail where it does so (docs/openvino-quirks.md)."""
    then = helper.make_graph([helper.make_node("Constant", [], ["one"], value=helper
                                               .make_tensor("o", TensorProto.FLOAT, [], [1.0]))],
                             "then", [], [vi("one", F32, [])])
    other = helper.make_graph([helper.make_node("Constant", [], ["zero"], value=helper
                                                .make_tensor("z", TensorProto.FLOAT, [], [0.0]))],
                              "else", [], [vi("zero", F32, [])])
    half = helper.make_node("Constant", [], ["half"], value=helper.make_tensor(
        "h", TensorProto.FLOAT, [], [0.5]))
    nodes = [helper.make_node("RandomUniform", [], ["U"], shape=[1], seed=SEED), half,
             helper.make_node("Less", ["U", "half"], ["c"]),
             helper.make_node("If", ["c"], ["Y"], then_branch=then, else_branch=other)]
    model = make_model(nodes, [], [vi("Y", F32, []), vi("U", F32, [1])])
    ir = irtool.convert(model)
    assert [layer.type for layer in ir.graph.layers if layer.type == "If"] == ["If"]
    import onnxruntime as ort

    xml = irtool.save(ir, tmp_path / "model.xml")
    sessions = {"onnxruntime": ort.InferenceSession(model.SerializeToString(),
                                                    providers=["CPUExecutionProvider"]),
                "irtool": irtool.compile(irtool.load(xml))}
    request = ov.Core().compile_model(str(xml), "CPU").create_infer_request()
    picked: dict[str, list[tuple[float, float]]] = {k: [] for k in (*sessions, "openvino")}
    for _ in range(8):
        y, u = sessions["onnxruntime"].run(["Y", "U"], {})
        picked["onnxruntime"].append((float(y), float(u[0])))
        out = sessions["irtool"].run({})
        picked["irtool"].append((float(out["Y"]), float(out["U"][0])))
        got = {port.any_name: np.array(value) for port, value in request.infer({}).items()}
        picked["openvino"].append((float(got["Y"]), float(got["U"][0])))
    assert [u for _, u in picked["irtool"]] == [u for _, u in picked["openvino"]]
    for who in ("onnxruntime", "irtool"):
        assert {y for y, _ in picked[who]} == {0.0, 1.0}, (who, picked[who])
        assert all(y == float(u < 0.5) for y, u in picked[who]), (who, picked[who])
    if all(y == float(u < 0.5) for y, u in picked["openvino"]):
        return
    assert all(y == 1.0 for y, _ in picked["openvino"]), picked["openvino"]
    pytest.xfail("OpenVINO's CPU plugin takes the then-branch whatever the draw")
