"""Vectorised independent loops (``irtool.passes.vectorize``): a Loop or Scan whose
iterations do not depend on each other becomes its body over all iterations at once, in
the converted IR (OpenVINO runs it) and in irtool's runtime. Every model is checked
against onnxruntime on OpenVINO and on irtool, vectorised and not; loops that must stay
loops (a carried value, an early exit, an op without a batched rule, an unproven trip
count) are shown to stay, and still match."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from support.conversion import check_conversion, loop_layers, make_model, run_onnxruntime, vi

import irtool
from irtool.passes.vectorize import VectorizeLoops, batched_form, why_not
from irtool.runtime import Executor

F32, I64, BOOL = np.float32, np.int64, np.bool_
RNG = np.random.default_rng(12)


def _body(nodes: list, inputs: list, outputs: list) -> object:
    return helper.make_graph(nodes, "body", inputs, outputs)


def map_loop(kind: str, n: int = 5) -> tuple[object, dict[str, np.ndarray]]:
    """A Loop over the rows of ``X`` (trip count ``Shape(X)[axis]`` unless said) whose
    body ``kind`` decides; scan output ``Y`` (and for some, a final value)."""
    x = RNG.standard_normal((n, 4)).astype(F32)
    w = RNG.standard_normal((4, 4)).astype(F32)
    b = RNG.standard_normal(4).astype(F32)
    inits = [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")]
    outer = [helper.make_node("Shape", ["X"], ["shape"]),
             helper.make_node("Constant", [], ["zero"], value_int=0),
             helper.make_node("Gather", ["shape", "zero"], ["trip"], axis=0),
             helper.make_node("Constant", [], ["cond"], value=helper.make_tensor(
                 "c", TensorProto.BOOL, [], [True]))]
    binputs = [vi("i", I64, []), vi("cond_in", BOOL, [])]
    cond = [helper.make_node("Identity", ["cond_in"], ["cond_out"])]
    loop_inputs, loop_outputs = ["trip", "cond"], ["Y"]
    boutputs = [vi("cond_out", BOOL, []), vi("y", F32, [None])]
    graph_inputs, feeds = [vi("X", F32, [None, 4])], {"X": x}
    graph_outputs = [vi("Y", F32, [None, None])]
    row = [helper.make_node("Gather", ["X", "i"], ["x_i"], axis=0)]
    if kind == "tanh_wx_b":  # y = tanh(W x_i + b)
        nodes = [*row,
                 helper.make_node("MatMul", ["W", "x_i"], ["wx"]),
                 helper.make_node("Add", ["wx", "B"], ["pre"]),
                 helper.make_node("Tanh", ["pre"], ["y"])]
    elif kind == "const_trip":  # the trip count a constant equal to len(X)
        outer[2] = helper.make_node("Constant", [], ["trip"], value=helper.make_tensor(
            "t", TensorProto.INT64, [], [n]))
        graph_inputs = [vi("X", F32, [n, 4])]
        nodes = [*row, helper.make_node("MatMul", ["x_i", "W"], ["y"])]
    elif kind == "iteration_number":  # y = x_i * float(i) + i
        nodes = [*row,
                 helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
                 helper.make_node("Mul", ["x_i", "fi"], ["xi"]),
                 helper.make_node("Add", ["xi", "fi"], ["y"])]
    elif kind == "shape_ops":  # transpose, reshape, softmax, reduce, concat, (un)squeeze
        x = RNG.standard_normal((n, 2, 3)).astype(F32)
        feeds = {"X": x}
        graph_inputs = [vi("X", F32, [None, 2, 3])]
        nodes = [*row,
                 helper.make_node("Transpose", ["x_i"], ["t"], perm=[1, 0]),
                 helper.make_node("Constant", [], ["flat"], value=numpy_helper.from_array(
                     np.array([6], I64))),
                 helper.make_node("Reshape", ["t", "flat"], ["r"]),
                 helper.make_node("Softmax", ["r"], ["s"], axis=0),
                 helper.make_node("Constant", [], ["ax0"], value=numpy_helper.from_array(
                     np.array([0], I64))),
                 helper.make_node("ReduceSum", ["x_i", "ax0"], ["sum"], keepdims=0),
                 helper.make_node("Concat", ["s", "sum"], ["cat"], axis=0),
                 helper.make_node("Unsqueeze", ["cat", "ax0"], ["u"]),
                 helper.make_node("Relu", ["u"], ["ru"]),
                 helper.make_node("Squeeze", ["ru", "ax0"], ["y"])]
    elif kind == "columns":  # Gather along axis 1; trip = Shape(X)[1]
        x = RNG.standard_normal((4, n)).astype(F32)
        feeds = {"X": x}
        graph_inputs = [vi("X", F32, [4, None])]
        outer[1] = helper.make_node("Constant", [], ["zero"], value_int=1)
        row = [helper.make_node("Gather", ["X", "i"], ["x_i"], axis=1)]
        nodes = [*row, helper.make_node("MatMul", ["x_i", "W"], ["y"])]
    elif kind == "invariant_out":  # a carried value passed through unchanged, and used
        loop_inputs.append("B")
        binputs.append(vi("b_in", F32, [4]))
        loop_outputs = ["B_out", "Y"]
        boutputs = [vi("cond_out", BOOL, []), vi("b_out", F32, [4]), vi("y", F32, [None])]
        graph_outputs = [vi("Z", F32, [4]), vi("Y", F32, [None, None])]
        nodes = [*row,
                 helper.make_node("Identity", ["b_in"], ["b_out"]),
                 helper.make_node("Add", ["x_i", "b_in"], ["y"])]
        outer_after = [helper.make_node("Mul", ["B_out", "B_out"], ["Z"])]
    # The cases that must stay loops:
    elif kind == "carried":  # acc += x_i: each iteration needs the last
        loop_inputs.append("B")
        binputs.append(vi("acc", F32, [4]))
        loop_outputs = ["ACC", "Y"]
        boutputs = [vi("cond_out", BOOL, []), vi("acc_out", F32, [4]), vi("y", F32, [None])]
        graph_outputs = [vi("ACC", F32, [4]), vi("Y", F32, [None, None])]
        nodes = [*row,
                 helper.make_node("Add", ["acc", "x_i"], ["acc_out"]),
                 helper.make_node("Tanh", ["acc_out"], ["y"])]
    elif kind == "early_exit":  # stops once i reaches 2
        cond = [helper.make_node("Constant", [], ["two"], value=numpy_helper.from_array(
                    np.array(2, I64))),
                helper.make_node("Less", ["i", "two"], ["cond_out"])]
        nodes = [*row, helper.make_node("Tanh", ["x_i"], ["y"])]
    elif kind == "unsupported_op":  # TopK has no batched rule
        nodes = [*row,
                 helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(
                     np.array([2], I64))),
                 helper.make_node("TopK", ["x_i", "k"], ["y", "idx"])]
    elif kind == "trip_input":  # a trip count from the caller: not provably len(X)
        outer = outer[3:]
        graph_inputs.append(vi("trip", I64, []))
        feeds["trip"] = np.array(n - 2, I64)
        nodes = [*row, helper.make_node("Tanh", ["x_i"], ["y"])]
    else:
        raise ValueError(kind)
    body = _body(nodes + cond, binputs, boutputs)
    loop = helper.make_node("Loop", loop_inputs, loop_outputs, body=body)
    tail = outer_after if kind == "invariant_out" else []
    model = make_model([*outer, loop, *tail], graph_inputs, graph_outputs,
                       initializers=inits)
    return model, feeds


VECTORISED = ["tanh_wx_b", "const_trip", "iteration_number", "shape_ops", "columns",
              "invariant_out"]
STAY_LOOPS = ["carried", "early_exit", "unsupported_op", "trip_input"]


@pytest.mark.parametrize("kind", VECTORISED)
def test_independent_loop_is_vectorised(kind: str, tmp_path: Path) -> None:
    """The converted IR has no Loop left; it validates, and OpenVINO and irtool match
    onnxruntime; with --no-vectorize the Loop stays and matches too."""
    model, feeds = map_loop(kind)
    ir = check_conversion(model, feeds, tmp_path, slice_inputs=False, atol=1e-5)
    assert not loop_layers(ir), kind
    kept = check_conversion(model, feeds, tmp_path, vectorize=False, slice_inputs=False,
                            atol=1e-5)
    assert len(loop_layers(kept)) == 1


@pytest.mark.parametrize("kind", ["tanh_wx_b", "columns"])
def test_vectorised_after_slicing_too(kind: str, tmp_path: Path) -> None:
    """With the sliced-input pass the Loop reads a sliced port-map input; the runtime
    batches that form (and the pass runs before slicing, so the IR has no Loop)."""
    model, feeds = map_loop(kind)
    kept = irtool.convert(model, vectorize=False, slice_inputs=True)
    (loop,) = loop_layers(kept)
    assert any(e.axis is not None for e in loop.port_maps["port_map"] if e.kind == "input")
    assert why_not(loop) is None
    expected = run_onnxruntime(model, feeds)
    for vectorize in (True, False):
        got = Executor(kept, vectorize=vectorize).run(feeds)
        np.testing.assert_allclose(got["Y"], expected["Y"], rtol=1e-5, atol=1e-5)
    assert not loop_layers(irtool.convert(model, slice_inputs=True))


@pytest.mark.parametrize("kind", STAY_LOOPS)
def test_dependent_or_unbatchable_loop_stays(kind: str, tmp_path: Path) -> None:
    """A carried value, an early exit, an op without a batched rule, or a trip count
    not proven to be len(X): the IR keeps the Loop and still matches onnxruntime."""
    model, feeds = map_loop(kind)
    ir = check_conversion(model, feeds, tmp_path, slice_inputs=False, atol=1e-5)
    (loop,) = loop_layers(ir)
    if kind == "trip_input":
        assert why_not(loop) is None  # batchable; only the trip count is unproven
    else:
        assert why_not(loop) is not None


def test_runtime_batches_a_loop_with_a_trip_count_input() -> None:
    """irtool's runtime checks at run time what convert could not prove: with the trip
    count a graph input, the batched form (which reads all of X) runs when the trip count
    is len(X), and the loop runs for any other (onnxruntime's answer every time)."""
    model, feeds = map_loop("trip_input")
    ir = irtool.convert(model)
    executor = Executor(ir)
    (step,) = [s for s in executor.plan.steps if s.layer.type == "Loop"]
    form, plan = step.kernel.batched
    assert form.whole == [(2, 0)]  # input 2 (X) read whole along axis 0
    batched_runs = []
    execute = plan.execute
    plan.execute = lambda inputs: batched_runs.append(1) or execute(inputs)
    n = len(feeds["X"])
    for trip, batched in ((n, True), (0, False), (1, False), (n - 1, False)):
        feeds["trip"] = np.array(trip, I64)
        expected = run_onnxruntime(model, feeds)
        before = len(batched_runs)
        got = executor.run(feeds)
        np.testing.assert_allclose(got["Y"], expected["Y"], rtol=1e-6)
        assert got["Y"].shape == expected["Y"].shape
        assert (len(batched_runs) > before) == batched, trip


def test_carried_loop_has_no_batched_form() -> None:
    model, _ = map_loop("carried")
    (loop,) = loop_layers(irtool.convert(model, vectorize=False))
    assert batched_form(loop) is None
    assert "changes from one iteration to the next" in (why_not(loop) or "")


def scan_model(reverse: bool) -> tuple[object, dict[str, np.ndarray]]:
    """Scan over X rows with no state: y_t = relu(x_t * 2) (a TensorIterator)."""
    x = RNG.standard_normal((6, 3)).astype(F32)
    body = _body([helper.make_node("Constant", [], ["two"], value=numpy_helper.from_array(
                      np.array(2.0, F32))),
                  helper.make_node("Mul", ["x_t", "two"], ["m"]),
                  helper.make_node("Relu", ["m"], ["y_t"])],
                 [vi("x_t", F32, [3])], [vi("y_t", F32, [3])])
    scan = helper.make_node("Scan", ["X"], ["Y"], body=body, num_scan_inputs=1,
                            scan_input_directions=[1 if reverse else 0])
    return make_model([scan], [vi("X", F32, [None, 3])], [vi("Y", F32, [None, None])]), {"X": x}


def test_scan_is_vectorised(tmp_path: Path) -> None:
    model, feeds = scan_model(reverse=False)
    ir = check_conversion(model, feeds, tmp_path)
    assert not loop_layers(ir, "TensorIterator")


def test_reversed_scan_stays(tmp_path: Path) -> None:
    """A reversed scan input is cut from the end: no batched rule, the iterator stays."""
    model, feeds = scan_model(reverse=True)
    ir = check_conversion(model, feeds, tmp_path)
    (ti,) = loop_layers(ir, "TensorIterator")
    assert "steps of one part" in (why_not(ti) or "")


def test_identities_go_from_bodies_and_stay_on_named_outputs(tmp_path: Path) -> None:
    """Emitted form for OpenVINO: a body's Identity layers are dropped (OpenVINO runs each
    as a node per iteration), an Identity naming a model output stays; the IR validates
    and OpenVINO and irtool match onnxruntime."""
    model, feeds = map_loop("carried")
    graph = model.graph
    graph.node.append(helper.make_node("Identity", ["Y"], ["Y_named"]))
    graph.output.append(vi("Y_named", F32, [None, None]))
    ir = check_conversion(model, feeds, tmp_path, atol=1e-5)
    (loop,) = loop_layers(ir)
    assert not loop.bodies["body"].layers_of_type("Identity")
    assert len(ir.graph.layers_of_type("Identity")) == 1
    kept = irtool.convert(model, vectorize=False)
    assert len([1 for _, layer in kept.graph.walk() if layer.type == "Identity"]) == 1


# -- body ops written in IR directly: forms the ONNX converter does not write, and refusals
def _scan_rows(x: np.ndarray, body_op, out_shape: tuple, *, extra: np.ndarray | None = None,
               extra_sliced: bool = False, axis: int = 0) -> irtool.Model:
    """A TensorIterator ``ti`` over the rows of ``x`` (each [1, ...]) whose body output is
    ``body_op(body, row, other)`` (``other``: the rows of ``extra`` when
    ``extra_sliced``, else ``extra`` whole, or None), of length 1 along ``axis``, joined
    along it."""
    from support.ir_builders import Net, finish, info

    body, net = Net(), Net()
    row = body.param("row", "f32", (1, *x.shape[1:]))
    ti = net.tensor_iterator(body, "ti")
    ti.sliced(net.param("x", "f32", x.shape), row, axis=0)
    other = None
    if extra is not None:
        et = "i64" if extra.dtype == np.int64 else "f32"
        shape = (1, *extra.shape[1:]) if extra_sliced else extra.shape
        other = body.param("other", et, shape)
        outer = net.param("extra", et, extra.shape)
        (ti.sliced(outer, other, axis=0) if extra_sliced else ti.invariant(outer, other))
    result = body.result(body_op(body, row, other))
    joined = tuple(x.shape[0] if k == axis else d for k, d in enumerate(out_shape))
    ti.output(result, info("f32", joined), axis=axis, names=["y"])
    return finish(net, ti)


def _ti(model: irtool.Model) -> object:
    (ti,) = [layer for layer in model.graph.layers if layer.type == "TensorIterator"]
    return ti


X3 = np.arange(24, dtype=F32).reshape(4, 2, 3) / 7


def _softmax(a: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("case", ["transpose, empty order", "squeeze, no axes",
                                  "squeeze of one of two 1-dims", "softmax, axis -1",
                                  "softmax, axis 1"])
def test_body_ops_in_ir_are_batched_as_the_spec_computes_them(case: str) -> None:
    """Body ops in the forms IR allows beyond what the ONNX converter writes: a Transpose
    with an empty order (the dims reversed, by the spec), a Squeeze without axes (every
    static 1 dim) and of one 1-dim of two, a Softmax along a negative axis or along
    axis 1 of a rank-3 row. Each loop has a batched form, whose values (irtool
    vectorised and as a loop, and OpenVINO but on the empty order) are hand numpy's."""
    from support.ir_builders import check, unsqueeze

    x, axis, openvino = X3, 0, True
    if case == "transpose, empty order":
        def op(b, row, _):  # type: ignore[no-untyped-def]
            return b.op("Transpose", "opset1", [row, b.const(np.zeros(0, np.int64))],
                        shape=(3, 2, 1))
        out, axis = (3, 2, 1), 2
        want = np.concatenate([x[k:k + 1].transpose() for k in range(len(x))], axis=2)
        openvino = False  # the CPU plugin does not read an empty order ("ptr is Null")
    elif case == "squeeze, no axes":
        x = X3[:, :1, :]  # rows [1, 1, 3]

        def op(b, row, _):  # type: ignore[no-untyped-def]
            return unsqueeze(b, b.op("Squeeze", "opset1", [row], shape=(3,)))
        out, want = (1, 3), x.reshape(-1, 3)
    elif case == "squeeze of one of two 1-dims":
        x = X3[:, :1, :]

        def op(b, row, _):  # type: ignore[no-untyped-def]
            return b.op("Squeeze", "opset1", [row, b.const(np.array([0], np.int64))],
                        shape=(1, 3))
        out, want = (1, 3), x.reshape(-1, 3)
    else:
        along = -1 if case.endswith("-1") else 1

        def op(b, row, _):  # type: ignore[no-untyped-def]
            return b.op("Softmax", "opset8", [row], {"axis": str(along)}, shape=(1, 2, 3))
        out, want = (1, 2, 3), _softmax(x, along)
    model = _scan_rows(x, op, out, axis=axis)
    assert why_not(_ti(model)) is None
    check(model, {"x": x}, {"y": want.astype(F32)}, openvino=openvino)
    # The batched form in place of the loop (irtool's runtime would fall back to the loop
    # where the batched form fails)
    assert VectorizeLoops()(model).changes == 1
    check(model, {"x": x}, {"y": want.astype(F32)}, openvino=openvino)


def test_a_reshape_to_a_static_0_dim_is_batched() -> None:
    """Rows [1, 0] reshaped to [1, 0, 1]: a static 0 is static, the loop has a batched
    form; four rows of nothing, [4, 0, 1] (irtool, vectorised and as a loop; OpenVINO's
    CPU plugin mishandles empty tensors in loops: not asked)."""
    from support.ir_builders import check

    x = np.zeros((4, 0), F32)

    def op(b, row, _):  # type: ignore[no-untyped-def]
        return b.op("Reshape", "opset1", [row, b.const(np.array([1, 0, 1], np.int64))],
                    {"special_zero": "false"}, shape=(1, 0, 1))
    model = _scan_rows(x, op, (1, 0, 1))
    assert why_not(_ti(model)) is None
    assert VectorizeLoops()(model).changes == 1
    check(model, {"x": x}, {"y": np.zeros((4, 0, 1), F32)}, openvino=False)


def _per_row_ints(b, other):  # type: ignore[no-untyped-def]
    """The row of ints ``other`` ([1, k]) as [k]: a value of each iteration."""
    return b.op("Squeeze", "opset1", [other, b.const(np.array([0], np.int64))],
                shape=other.shape[1:])


REFUSALS = {
    "concat of a row and a whole input": (
        lambda b, row, other: b.op("Concat", "opset1", [row, other], {"axis": "0"},
                                   shape=(2, 2, 3), name="cat"),
        X3[:1], False, "body Concat 'cat' joins per-iteration and invariant values"),
    "reshape to a target of each row": (
        lambda b, row, other: b.op("Reshape", "opset1", [row, _per_row_ints(b, other)],
                                   {"special_zero": "false"}, shape=(1, 6), name="r"),
        np.tile(np.array([[1, 6]], np.int64), (4, 1)), True,
        "the target shape of body Reshape 'r' differs per iteration"),
    "reshape to a dynamic shape": (
        lambda b, row, other: b.op("Reshape", "opset1",
                                   [row, b.const(np.array([-1], np.int64))],
                                   {"special_zero": "false"}, shape=(-1,), name="r"),
        None, False, "body Reshape 'r' to a dynamic shape"),
    "transpose by an order of each row": (
        lambda b, row, other: b.op("Transpose", "opset1", [row, _per_row_ints(b, other)],
                                   shape=(1, 3, 2), name="t"),
        np.tile(np.array([[0, 2, 1]], np.int64), (4, 1)), True,
        "the order of body Transpose 't' differs per iteration"),
    "transpose by an order given whole": (
        lambda b, row, other: b.op("Transpose", "opset1", [row, other], shape=(1, 3, 2),
                                   name="t"),
        np.array([0, 2, 1], np.int64), False, "the order of body layer 't' are not constant"),
    # IR that validate refuses (AXIS_RANGE) still gets a reason, not a failure
    "concat along an axis past the rank": (
        lambda b, row, other: b.op("Concat", "opset1", [row, row], {"axis": "5"},
                                   shape=(1, 4, 3), name="cat"),
        None, False, "axis 5 of body layer 'cat' is outside rank 3"),
    "transpose by an order past the rank": (
        lambda b, row, other: b.op("Transpose", "opset1",
                                   [row, b.const(np.array([0, 5, 1], np.int64))],
                                   shape=(1, 3, 2), name="t"),
        None, False, "axis 5 of body layer 't' is outside rank 3"),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_body_ops_without_a_batched_form_say_why(case: str) -> None:
    """Loops whose body op cannot take the iteration axis keep their iterations, and
    ``why_not`` names the op and the reason; irtool's runtime runs them as loops."""
    op, extra, sliced, why = REFUSALS[case]
    out = {"concat of a row and a whole input": (2, 2, 3), "reshape to a target of each row":
           (1, 6), "reshape to a dynamic shape": (-1,), "concat along an axis past the rank":
           (1, 4, 3)}.get(case, (1, 3, 2))
    model = _scan_rows(X3, op, out, extra=extra, extra_sliced=sliced)
    assert why_not(_ti(model)) == f"TensorIterator 'ti': {why}"
