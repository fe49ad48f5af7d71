"""ONNX models shared by several test modules."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from support import SAMPLES
from support.conversion import make_model, vi

SAMPLE = SAMPLES / "predict_net.onnx"


def predict_net_model() -> onnx.ModelProto:
    """The ONNX spec's Loop example ("predict-net"): samples/predict_net.onnx when the
    frontend has written it, else built here the same way (b and keepgoing are inputs,
    a=3 is captured from the outer graph, trip count 10)."""
    if SAMPLE.is_file():
        return onnx.load(str(SAMPLE))
    body = h.make_graph(
        [h.make_node("Add", ["a", "b_in"], ["my_local"]),
         h.make_node("Sub", ["a", "b_in"], ["b_out"]),
         h.make_node("Greater", ["my_local", "b_out"], ["keepgoing_out"]),
         h.make_node("Add", ["b_in", "b_in"], ["user_defined_val"])],
        "body-net",
        [h.make_tensor_value_info("i", T.INT64, []),
         h.make_tensor_value_info("keepgoing_in", T.BOOL, []),
         h.make_tensor_value_info("b_in", T.INT32, [])],
        [h.make_tensor_value_info("keepgoing_out", T.BOOL, []),
         h.make_tensor_value_info("b_out", T.INT32, []),
         h.make_tensor_value_info("user_defined_val", T.INT32, [])])
    graph = h.make_graph(
        [h.make_node("Constant", [], ["a"], value=h.make_tensor("a", T.INT32, [], [3])),
         h.make_node("Constant", [], ["max_trip_count"],
                     value=h.make_tensor("max_trip_count", T.INT64, [], [10])),
         h.make_node("Loop", ["max_trip_count", "keepgoing", "b"],
                     ["b_final", "user_defined_vals"], body=body)],
        "predict-net",
        [h.make_tensor_value_info("b", T.INT32, []),
         h.make_tensor_value_info("keepgoing", T.BOOL, [])],
        [h.make_tensor_value_info("b_final", T.INT32, []),
         h.make_tensor_value_info("user_defined_vals", T.INT32, ["N"])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def predict_net_feed() -> dict[str, np.ndarray]:
    """b = 6 and keepgoing = true, so the loop body runs (the spec's example values)."""
    return {"b": np.array(6, np.int32), "keepgoing": np.array(True)}


def rnn_loop_model() -> onnx.ModelProto:
    """An RNN as a Loop over X's first axis: h <- tanh(X[i] @ W + h @ U), every h stacked;
    X [seq, batch, 8] and h0 [batch, 16] declared with symbolic dims, and so are the body's
    input and outputs (h_in [hb, 16]), as exporters write them."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((8, 16)).astype(np.float32)
    u = (rng.standard_normal((16, 16)) * 0.1).astype(np.float32)
    body = h.make_graph([
        h.make_node("Gather", ["X", "i"], ["x_i"], axis=0),
        h.make_node("MatMul", ["x_i", "W"], ["a"]),
        h.make_node("MatMul", ["h_in", "U"], ["b"]),
        h.make_node("Add", ["a", "b"], ["s"]),
        h.make_node("Tanh", ["s"], ["h_out"]),
        h.make_node("Identity", ["cond_in"], ["cond_out"]),
        h.make_node("Identity", ["h_out"], ["y_i"]),
    ], "body", [vi("i", np.int64, []), vi("cond_in", np.bool_, []), vi("h_in", np.float32,
                                                                      ["hb", 16])],
        [vi("cond_out", np.bool_, []), vi("h_out", np.float32, ["hb", 16]),
         vi("y_i", np.float32, ["hb", 16])])
    nodes = [h.make_node("Shape", ["X"], ["shape"]),
             h.make_node("Gather", ["shape", "zero"], ["n"], axis=0),
             h.make_node("Loop", ["n", "", "h0"], ["h_last", "ys"], body=body)]
    return make_model(nodes, [vi("X", np.float32, ["seq", "batch", 8]),
                              vi("h0", np.float32, ["batch2", 16])],
                      [vi("h_last", np.float32, ["ob", 16]),
                       vi("ys", np.float32, ["os", "ob", 16])],
                      initializers=[numpy_helper.from_array(w, "W"),
                                    numpy_helper.from_array(u, "U"),
                                    numpy_helper.from_array(np.array(0, np.int64), "zero")])


def if_on_a_random_draw(seed: float = 3.0) -> onnx.ModelProto:
    """``Y = 1.0 if U < 0.5 else 0.0`` of a draw ``U`` (``RandomUniform`` of shape [1],
    seeded), both outputs: an If whose branch each call's own draw picks (the If named
    ``pick``)."""
    def constant(name: str, value: float) -> onnx.GraphProto:
        node = h.make_node("Constant", [], [name], value=h.make_tensor(name + "_v", T.FLOAT,
                                                                       [], [value]))
        return h.make_graph([node], name, [], [vi(name, np.float32, [])])

    nodes = [h.make_node("RandomUniform", [], ["U"], shape=[1], seed=seed),
             h.make_node("Constant", [], ["half"], value=h.make_tensor("h", T.FLOAT, [], [0.5])),
             h.make_node("Less", ["U", "half"], ["c"]),
             h.make_node("If", ["c"], ["Y"], then_branch=constant("one", 1.0),
                         else_branch=constant("zero", 0.0), name="pick")]
    return make_model(nodes, [], [vi("Y", np.float32, []), vi("U", np.float32, [1])])
