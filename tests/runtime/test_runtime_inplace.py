"""Inlined elementwise steps that write into a dead input's buffer (``plan.Reuse``).

What must never be written: the caller's input arrays, Const data, values returned to
the caller, views of any of those, and what a loop carries or collects. Each case runs
a model several times and compares every run with onnxruntime (or numpy by hand), and
checks that the inputs and constants are unchanged afterwards. The generated code is
also checked for the in-place calls (``f2(v4, c3, v4)``: the buffer after the inputs), so
that the cases exercise the in-place path.
"""

from __future__ import annotations

import inspect
import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from support.conversion import make_model, run_onnxruntime, vi
from support.ir_builders import Net, check, counted_loop, finish, info, true_result, unsqueeze

import irtool
from irtool.runtime import Executor, compile_graph

F32 = np.float32
RNG = np.random.default_rng(12)
n = helper.make_node


def all_consts(graph) -> list:  # type: ignore[no-untyped-def]
    """Every Const layer, loop bodies included."""
    found = []
    for layer in graph.layers:
        if layer.type == "Const":
            found.append(layer)
        for body in layer.bodies.values():
            found += all_consts(body)
    return found


def source(ex: Executor) -> str:
    return inspect.getsource(ex.plan.execute)


def inplace(ex: Executor) -> list[str]:
    """The layer types of the generated calls that pass a buffer after their inputs."""
    steps = ex.plan.steps
    found = []
    for match in re.finditer(r"= f(\d+)\(([^()=]*(?:out=v\d+)?)\)", source(ex)):
        step = steps[int(match.group(1))]
        if len(match.group(2).split(",")) == len(step.inputs) + 1:
            found.append(step.layer.type)
    return found


def run_checked(model: onnx.ModelProto, feeds: dict[str, np.ndarray], runs: int = 3,
                **options: bool) -> Executor:
    """Run ``model`` ``runs`` times with irtool against onnxruntime; the feeds and the
    IR's Const data must come out unchanged."""
    want = run_onnxruntime(model, feeds)
    ir = irtool.convert(model)
    consts = [(layer, layer.const_value().copy()) for layer in all_consts(ir.graph)]
    kept = {k: v.copy() for k, v in feeds.items()}
    ex = Executor(ir, **options)
    for _ in range(runs):
        got = ex.run(feeds)
        assert set(got) == set(want)
        for name, value in want.items():
            np.testing.assert_allclose(got[name], value, rtol=1e-5, atol=1e-6, err_msg=name)
    for name, value in kept.items():
        assert np.array_equal(feeds[name], value), f"input {name} was written"
    for layer, value in consts:
        assert np.array_equal(layer.const_value(), value), f"Const {layer.name} was written"
    return ex


def test_elementwise_chain_reuses_its_buffers() -> None:
    nodes = [n("Mul", ["x", "a"], ["t0"]), n("Add", ["t0", "b"], ["t1"]),
             n("Sigmoid", ["t1"], ["t2"]), n("Mul", ["t2", "x"], ["t3"]),
             n("Tanh", ["t3"], ["t4"]), n("Add", ["t4", "x"], ["y"])]
    inits = [numpy_helper.from_array(np.array(0.5, F32), "a"),
             numpy_helper.from_array(np.array([0.1, -0.2, 0.3], F32), "b")]
    model = make_model(nodes, [vi("x", F32, [4, 3])], [vi("y", F32, [4, 3])],
                       initializers=inits)
    ex = run_checked(model, {"x": RNG.standard_normal((4, 3)).astype(F32)})
    # every step but the first writes in place
    assert sorted(inplace(ex)) == ["Add", "Add", "Multiply", "Sigmoid", "Tanh"], source(ex)


def test_fan_out_waits_for_the_last_reader() -> None:
    """t0 has four readers; t1 is also returned: neither may be written early."""
    nodes = [n("Mul", ["x", "two"], ["t0"]), n("Add", ["t0", "x"], ["t1"]),
             n("Mul", ["t0", "t1"], ["t2"]), n("Tanh", ["t0"], ["t3"]),
             n("Sub", ["t2", "t3"], ["t4"]), n("Abs", ["t1"], ["t5"]),
             n("Add", ["t4", "t0"], ["t6"]), n("Mul", ["t6", "t5"], ["y"])]
    model = make_model(nodes, [vi("x", F32, [5])], [vi("y", F32, [5]), vi("t1", F32, [5])],
                       initializers=[numpy_helper.from_array(np.array(2, F32), "two")])
    x = RNG.standard_normal(5).astype(F32)
    ex = run_checked(model, {"x": x})
    t0 = x * 2
    t1 = t0 + x
    y = ((t0 * t1 - np.tanh(t0)) + t0) * np.abs(t1)
    got = ex.run({"x": x})
    np.testing.assert_allclose(got["y"], y, rtol=1e-6)
    np.testing.assert_allclose(got["t1"], t1, rtol=1e-6)
    assert inplace(ex), source(ex)


def test_views_of_chain_values_and_of_inputs_are_not_written() -> None:
    """Reshape and Squeeze return views: r (a view of t1, returned), then a chain reading
    t1 again; q (a view of the input x) read by a chain; s (a view of a Const)."""
    nodes = [n("Mul", ["x", "two"], ["t0"]), n("Add", ["t0", "one"], ["t1"]),
             n("Reshape", ["t1", "shape"], ["r"]),
             n("Mul", ["t1", "two"], ["u0"]), n("Sigmoid", ["u0"], ["u1"]),
             n("Squeeze", ["x3", "axes"], ["q"]), n("Mul", ["q", "q"], ["w0"]),
             n("Neg", ["w0"], ["w1"]), n("Add", ["w1", "q"], ["w2"]),
             n("Reshape", ["c", "shape"], ["s"]), n("Add", ["s", "r"], ["v0"]),
             n("Tanh", ["v0"], ["v1"]), n("Add", ["v1", "s"], ["v2"])]
    inits = [numpy_helper.from_array(np.array(2, F32), "two"),
             numpy_helper.from_array(np.array(1, F32), "one"),
             numpy_helper.from_array(np.array([6], np.int64), "shape"),
             numpy_helper.from_array(np.array([1], np.int64), "axes"),
             numpy_helper.from_array(RNG.standard_normal((2, 3)).astype(F32), "c")]
    model = make_model(nodes, [vi("x", F32, [2, 3]), vi("x3", F32, [6, 1])],
                       [vi("r", F32, [6]), vi("u1", F32, [2, 3]), vi("w2", F32, [6]),
                        vi("v2", F32, [6])], initializers=inits)
    ex = run_checked(model, {"x": RNG.standard_normal((2, 3)).astype(F32),
                             "x3": RNG.standard_normal((6, 1)).astype(F32)})
    assert inplace(ex), source(ex)


def test_broadcasting_writes_only_into_a_buffer_of_the_result_shape() -> None:
    """Results bigger than their dead input get a new array: q0 (3, 1) + z (3, 4),
    p0 (3, 1) * e (1, 4) (a constant of the same rank), p2 (3, 4) * c (2, 1, 4) (a
    constant of higher rank). p1 + b (1, 4) and p3 - d (4,) fit the dead input."""
    nodes = [n("Neg", ["x"], ["q0"]), n("Add", ["q0", "z"], ["q1"]),
             n("Mul", ["x", "two"], ["p0"]), n("Mul", ["p0", "e"], ["p1"]),
             n("Add", ["p1", "b"], ["p2"]), n("Mul", ["p2", "c"], ["p3"]),
             n("Sub", ["p3", "d"], ["p4"]), n("Sub", ["p4", "q1"], ["y"])]
    inits = [numpy_helper.from_array(np.array(2, F32), "two"),
             numpy_helper.from_array(RNG.standard_normal((1, 4)).astype(F32), "e"),
             numpy_helper.from_array(RNG.standard_normal((1, 4)).astype(F32), "b"),
             numpy_helper.from_array(RNG.standard_normal((2, 1, 4)).astype(F32), "c"),
             numpy_helper.from_array(RNG.standard_normal(4).astype(F32), "d")]
    model = make_model(nodes, [vi("x", F32, [3, 1]), vi("z", F32, [3, 4])],
                       [vi("y", F32, [2, 3, 4])], initializers=inits)
    ex = run_checked(model, {"x": RNG.standard_normal((3, 1)).astype(F32),
                             "z": RNG.standard_normal((3, 4)).astype(F32)})
    assert inplace(ex), source(ex)


def test_comparisons_and_logical_ops_reuse_boolean_buffers() -> None:
    nodes = [n("Greater", ["x", "zero"], ["p"]), n("Less", ["x", "one"], ["q"]),
             n("And", ["p", "q"], ["r"]), n("Not", ["r"], ["y"])]
    inits = [numpy_helper.from_array(np.array(0, F32), "zero"),
             numpy_helper.from_array(np.array(1, F32), "one")]
    model = make_model(nodes, [vi("x", F32, [7])], [vi("y", np.bool_, [7])],
                       initializers=inits)
    ex = run_checked(model, {"x": np.linspace(-1, 2, 7).astype(F32)})
    assert inplace(ex), source(ex)


def _rows_loop(body_nodes: list, scans: list[str]) -> onnx.ModelProto:
    """A Loop of 5 iterations over ``body_nodes`` (which read the outer x [5, 3], the
    iteration i and the Constants two and one) carrying s (s_in -> s_out, f32[3]) and
    collecting ``scans`` (f32[3] each)."""
    consts = [helper.make_node("Constant", [], [k], value=numpy_helper.from_array(
        np.array(v, F32), k)) for k, v in [("two", 2), ("one", 1)]]
    f3 = [helper.make_tensor_value_info(name, TensorProto.FLOAT, [3])
          for name in ("s_out", *scans)]
    body = helper.make_graph(
        [*consts, *body_nodes, n("Identity", ["c_in"], ["c_out"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("s_in", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []), *f3])
    outs = ["s", *(f"{name}_all" for name in scans)]
    loop = n("Loop", ["trip", "cond", "s0"], outs, body=body)
    return make_model([loop], [vi("x", F32, [5, 3]), vi("s0", F32, [3])],
                      [vi("s", F32, [3]), *(vi(name, F32, [5, 3]) for name in outs[1:])],
                      initializers=[numpy_helper.from_array(np.array(5, np.int64), "trip"),
                                    numpy_helper.from_array(np.array(True), "cond")])


def _loop_model(carried: bool) -> onnx.ModelProto:
    """Loop over the rows of x: a = x_i * 2 + 1 (scan output), t = tanh(a) * a; with
    ``carried``, s = s + t is carried (so the loop stays a loop) and returned."""
    return _rows_loop([
        n("Gather", ["x", "i"], ["xi"], axis=0), n("Mul", ["xi", "two"], ["a0"]),
        n("Add", ["a0", "one"], ["a"]), n("Tanh", ["a"], ["t0"]), n("Mul", ["t0", "a"], ["t"]),
        n("Add", ["s_in", "t"] if carried else ["t", "one"], ["s_out"]),
        n("Add", ["a", "one"], ["scan_a"]), n("Relu", ["scan_a"], ["scan_r"]),
    ], ["a", "scan_r"])


@pytest.mark.parametrize("carried", [True, False], ids=["carried", "independent"])
@pytest.mark.parametrize("vectorize", [True, False], ids=["vectorize", "loop"])
def test_loop_bodies_keep_carried_and_collected_values(carried: bool, vectorize: bool) -> None:
    """The body's collected values (a, scan_r) and its carried sum stay intact while the
    body's other elementwise steps write in place."""
    feeds = {"x": RNG.standard_normal((5, 3)).astype(F32),
             "s0": RNG.standard_normal(3).astype(F32)}
    ex = run_checked(_loop_model(carried), feeds, vectorize=vectorize)
    if carried or not vectorize:  # the Loop stays: its generated body writes in place too
        loop = next(s for s in ex.plan.steps if s.layer.type == "Loop")
        body = loop.kernel.iteration.iterate.source
        calls = [args.split(", ") for args in re.findall(r"= f\d+\(([^()]*)\)", body)]
        assert any(len(a) > 1 and a[-1] in a[:-1] for a in calls), body


def test_a_chain_before_a_counter_gather_writes_in_place() -> None:
    """s = tanh(s * 2 + 1) + x[i]: the chain on the carried s runs before the body's
    Gather(x, i) (which the generated loop turns into a row of x); its steps still write
    in place, and x and the carried values stay intact."""
    model = _rows_loop([n("Mul", ["s_in", "two"], ["a0"]), n("Add", ["a0", "one"], ["a1"]),
                        n("Tanh", ["a1"], ["t"]), n("Gather", ["x", "i"], ["xi"], axis=0),
                        n("Add", ["t", "xi"], ["s_out"])], [])
    feeds = {"x": RNG.standard_normal((5, 3)).astype(F32),
             "s0": RNG.standard_normal(3).astype(F32)}
    ex = run_checked(model, feeds, vectorize=False)
    loop = next(s for s in ex.plan.steps if s.layer.type == "Loop")
    source = loop.kernel.iteration.iterate.source
    before_gather = source.split("if i < n")[0]  # the counter Gather's row of x
    calls = [args.split(", ") for args in re.findall(r"= f\d+\(([^()]*)\)", before_gather)]
    assert any(len(a) > 1 and a[-1] in a[:-1] for a in calls), source


def test_plan_with_results_read_by_later_steps() -> None:
    """A value that is both a Result and read by a later step keeps its values."""
    net = Net()
    x = net.param("x", "f32", (4,))
    one = net.const(np.array(1, F32))
    a = net.op("Add", "opset1", [x, one], {"auto_broadcast": "numpy"})
    b = net.op("Tanh", "opset1", [a])
    c = net.op("Multiply", "opset1", [b, a], {"auto_broadcast": "numpy"})
    d = net.op("Exp", "opset1", [c])
    net.result(a)
    net.result(d)
    plan = compile_graph(net.graph)
    xv = np.array([0.5, -1, 2, 0], F32)
    for _ in range(2):
        got_a, got_d = plan.execute([xv])
        np.testing.assert_array_equal(got_a, xv + 1)
        np.testing.assert_allclose(got_d, np.exp(np.tanh(xv + 1) * (xv + 1)), rtol=1e-6)
    np.testing.assert_array_equal(xv, [0.5, -1, 2, 0])


def test_a_stacked_value_read_after_its_unsqueeze_is_not_written() -> None:
    """The loop code collects ``a`` itself (its Unsqueeze is skipped for stacking); a step
    after that Unsqueeze is a's last reader and must still not write into it. Nor may
    ``sq`` write into the carried ``acc``, a Result it is the last reader of."""
    body = Net()
    acc = body.param("acc_in", "f32", (2, 3))
    bc = {"auto_broadcast": "numpy"}
    a = body.op("Add", "opset1", [body.op("Multiply", "opset1", [acc, body.const(F32(0.5))],
                                          bc), body.const(F32(1))], bc)
    r_scan = body.result(unsqueeze(body, a))
    b = body.op("Tanh", "opset1", [a])
    nxt = body.op("Add", "opset1", [a, b], bc)  # a's last reader, after the Unsqueeze
    r_acc = body.result(nxt)
    r_sq = body.result(body.op("Multiply", "opset1", [nxt, nxt], bc))  # reads a Result
    net = Net()
    lp = counted_loop(net, body)
    a0 = net.param("a0", "f32", (2, 3))
    lp.carried(a0, acc, r_acc)
    lp.execution_condition(true_result(body))
    lp.output(r_acc, info("f32", (2, 3)), names=["acc"])
    lp.output(r_scan, info("f32", (-1, 2, 3)), names=["scan"], axis=0)
    lp.output(r_sq, info("f32", (2, 3)), names=["sq"])
    model = finish(net, lp)
    start = RNG.standard_normal((2, 3)).astype(F32)
    value, scans = start.copy(), []
    for _ in range(4):
        a_hand = value * F32(0.5) + F32(1)
        scans.append(a_hand)
        value = np.tanh(a_hand) + a_hand
    feeds = {"trip": np.array(4, np.int64), "cond": np.array(True), "a0": start.copy()}
    for _ in range(2):
        check(model, feeds, {"acc": value, "scan": np.stack(scans), "sq": value * value},
              openvino=False)
    np.testing.assert_array_equal(feeds["a0"], start)


def _conv_model(extra_outputs: list[str], extra_nodes: list) -> onnx.ModelProto:  # type: ignore[type-arg]
    """Conv (no bias input) -> Add(bias, reshaped to (1, 4, 1, 1) at run time) -> Relu;
    the Conv output ``c`` may also be returned or read by ``extra_nodes`` (which come
    before the Add, so that the Add is its last reader)."""
    w = RNG.standard_normal((4, 2, 3, 3)).astype(F32)
    nodes = [n("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), *extra_nodes,
             n("Reshape", ["bias", "bshape"], ["b"]),
             n("Add", ["c", "b"], ["a"]), n("Relu", ["a"], ["y"])]
    inits = [numpy_helper.from_array(w, "w"),
             numpy_helper.from_array(np.array([1, 4, 1, 1], np.int64), "bshape")]
    outs = [vi("y", F32, [2, 4, 5, 5])] + [vi(o, F32, None) for o in extra_outputs]
    return make_model(nodes, [vi("x", F32, [2, 2, 5, 5]), vi("bias", F32, [4])], outs,
                      initializers=inits)


CONV_FEEDS = {"x": RNG.standard_normal((2, 2, 5, 5)).astype(F32),
              "bias": RNG.standard_normal(4).astype(F32)}


def test_an_op_making_its_outputs_lends_its_buffer_to_the_next_chain() -> None:
    """Convolution returns an array of its own: the bias Add writes into it (the bias
    broadcast (1, 4, 1, 1) is checked at run time), and Relu into that."""
    ex = run_checked(_conv_model([], []), CONV_FEEDS)
    assert inplace(ex) == ["Add", "ReLU"], source(ex)
    assert any("fits(" in line for line in source(ex).splitlines() if '"Add' in line)


@pytest.mark.parametrize("outputs,nodes", [
    (["c"], []),  # returned
    (["r"], [n("Reshape", ["c", "flat"], ["r"])]),  # a view of it returned
    (["t"], [n("Transpose", ["c"], ["t"], perm=[0, 1, 3, 2])]),  # a view read later
], ids=["returned", "reshaped view", "transposed view"])
def test_a_made_output_with_other_readers_is_not_written(outputs: list[str],
                                                         nodes: list) -> None:  # type: ignore[type-arg]
    model = _conv_model(outputs, nodes)
    model.graph.initializer.append(numpy_helper.from_array(np.array([2, -1], np.int64), "flat"))
    run_checked(model, CONV_FEEDS)


def test_only_the_class_defining_compute_vouches_for_its_outputs() -> None:
    from irtool.opset import make_op
    from irtool.opset.convolution import Convolution
    from irtool.runtime.codegen.toolkit import _makes_its_outputs

    attrs = {"strides": "1,1", "dilations": "1,1", "pads_begin": "0,0", "pads_end": "0,0"}

    class PassThrough(Convolution):
        def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
            return [inputs[0]]

    assert _makes_its_outputs(make_op("Convolution", "opset1", attrs).compute)
    assert _makes_its_outputs(make_op("GroupConvolution", "opset1", attrs).compute)
    assert not _makes_its_outputs(PassThrough(attrs).compute)
    assert not _makes_its_outputs(make_op("Transpose", "opset1", {}).compute)


def test_maximum_and_minimum_write_in_place_without_numpy_deprecations() -> None:
    """numpy deprecates a third positional argument of maximum/minimum: they pass out=."""
    import warnings

    nodes = [n("Mul", ["x", "two"], ["t0"]), n("Max", ["t0", "x"], ["t1"]),
             n("Min", ["t1", "one"], ["t2"]), n("Add", ["t2", "x"], ["y"])]
    inits = [numpy_helper.from_array(np.array(2, F32), "two"),
             numpy_helper.from_array(np.array(1, F32), "one")]
    model = make_model(nodes, [vi("x", F32, [6])], [vi("y", F32, [6])], initializers=inits)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ex = run_checked(model, {"x": np.linspace(-2, 2, 6).astype(F32)})
    assert sorted(inplace(ex)) == ["Add", "Maximum", "Minimum"], source(ex)


def test_unaligned_constants_are_aligned_once_when_the_plan_is_compiled(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """OpenVINO's save_model packs a 1-byte constant before an f32 one, and irtool's
    reader gives Consts as views of the mapped .bin: the f32 Const is unaligned, which
    sends every numpy call on it through slow buffered loops. The plan keeps an aligned,
    read-only copy; results match onnxruntime."""
    import openvino as ov

    c = np.linspace(-1, 1, 8, dtype=F32)
    nodes = [n("Identity", ["cond"], ["ok"]), n("Add", ["x", "c"], ["s"]), n("Tanh", ["s"], ["y"])]
    model = make_model(nodes, [vi("x", F32, [8]), vi("cond", np.bool_, [1])],
                       [vi("y", F32, [8]), vi("ok", np.bool_, [1])],
                       initializers=[numpy_helper.from_array(np.array([True]), "flag"),
                                     numpy_helper.from_array(c, "c")])
    model.graph.node[0].input[0] = "flag"
    del model.graph.input[1]
    onnx_path, xml = tmp_path / "m.onnx", tmp_path / "m.xml"
    onnx.save(model, onnx_path)
    ov.save_model(ov.Core().read_model(str(onnx_path)), str(xml), compress_to_fp16=False)
    ir = irtool.load(xml)
    raw = [layer.const_value() for layer in all_consts(ir.graph)
           if layer.const_value().dtype == F32]
    assert len(raw) == 1 and not raw[0].flags.aligned  # the case this test is about
    ex = Executor(ir)
    (kept,) = [v for v in ex.plan.constants.values() if v.dtype == F32]
    assert kept.flags.aligned and not kept.flags.writeable
    x = np.arange(8, dtype=F32) / 4
    np.testing.assert_allclose(ex.run({"x": x})["y"], np.tanh(x + c), rtol=1e-6)
