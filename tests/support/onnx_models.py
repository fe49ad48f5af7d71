"""ONNX models shared by several test modules."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h

from support import SAMPLES

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
