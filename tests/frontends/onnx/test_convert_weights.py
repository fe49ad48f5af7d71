"""Large weights through convert and save: shape inference runs on a weightless copy, the
.bin is written from views, and equal payloads are stored once (only payloads that agree
in size and sampled bytes are compared). Expected values come from onnxruntime, ONNX's own
shape inference on the whole model, and the byte counts of the weights themselves."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import irtool
from irtool.frontends.onnx import analysis as onnx_analysis

F32 = np.float32
RNG = np.random.default_rng(7)


def _loop_model(weights: list[np.ndarray]) -> onnx.ModelProto:
    """x -> Loop(2 x tanh(h @ W_i)) per weight, W_i captured from the main graph, then a
    Reshape by a small shape initializer (data propagation needs its value)."""
    nodes, inits = [], [numpy_helper.from_array(np.array(2, np.int64), "trips"),
                        numpy_helper.from_array(np.array(True), "cond"),
                        numpy_helper.from_array(np.array([2, -1], np.int64), "shape")]
    x = "x"
    for i, w in enumerate(weights):
        inits.append(numpy_helper.from_array(w, f"W{i}"))
        body = helper.make_graph(
            [helper.make_node("Identity", ["c_in"], ["c_out"]),
             helper.make_node("MatMul", ["h_in", f"W{i}"], ["m"]),
             helper.make_node("Tanh", ["m"], ["h_out"])], f"body{i}",
            [helper.make_tensor_value_info("it", TensorProto.INT64, []),
             helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
             helper.make_tensor_value_info("h_in", TensorProto.FLOAT, None)],
            [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
             helper.make_tensor_value_info("h_out", TensorProto.FLOAT, None)])
        nodes.append(helper.make_node("Loop", ["trips", "cond", x], [f"y{i}"], body=body))
        x = f"y{i}"
    nodes.append(helper.make_node("Reshape", [x, "shape"], ["y"]))
    width = weights[0].shape[0]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, width])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _weights(n: int, width: int = 96) -> list[np.ndarray]:
    return [(RNG.standard_normal((width, width)) / width).astype(F32) for _ in range(n)]


def test_shape_inference_gets_no_weights_and_finds_the_same_types() -> None:
    model = _loop_model(_weights(3))
    light = onnx_analysis.weightless(model)
    assert light.ByteSize() < model.ByteSize() // 10
    full = onnx.shape_inference.infer_shapes(model, data_prop=True)
    verdict = onnx_analysis.analyse(model)
    assert verdict.failure is None and verdict.invalid is None
    mine = onnx.ModelProto()
    mine.CopyFrom(model)
    onnx_analysis.take_inferred(mine, verdict.inferred)
    assert {vi.name: vi.type for vi in mine.graph.value_info} == \
        {vi.name: vi.type for vi in full.graph.value_info}
    assert [o.type for o in mine.graph.output] == [o.type for o in full.graph.output]
    # The Reshape's output shape needs the small shape initializer's value: [2, ?].
    dims = mine.graph.output[0].type.tensor_type.shape.dim
    assert len(dims) == 2 and dims[0].dim_value == 2


def test_converted_model_matches_onnxruntime_and_the_callers_proto_is_untouched(
        tmp_path: Path) -> None:
    model = _loop_model(_weights(3))
    before = model.SerializeToString()
    ir = irtool.convert(model)
    assert model.SerializeToString() == before
    x = RNG.standard_normal((4, 96)).astype(F32)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(irtool.run(ir, {"x": x})["y"], want, rtol=1e-5, atol=1e-6)
    xml = irtool.save(ir, tmp_path / "m.xml")
    np.testing.assert_allclose(irtool.run(xml, {"x": x})["y"], want, rtol=1e-5, atol=1e-6)


def test_equal_payloads_are_stored_once_and_near_equal_ones_both(tmp_path: Path) -> None:
    """W0 == W2 share their bytes in the .bin; W1 equals W0 but for one byte that the
    de-duplication's sampled bytes do not cover, so it is stored on its own."""
    w0 = _weights(1)[0]
    w1 = w0.copy()
    w1.reshape(-1)[1000] += F32(0.5)  # not among the sampled bytes (offsets 8k.., ends)
    model = _loop_model([w0, w1, w0.copy()])
    x = RNG.standard_normal((4, 96)).astype(F32)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    xml = irtool.save(irtool.convert(model), tmp_path / "m.xml")
    size = xml.with_suffix(".bin").stat().st_size
    assert 2 * w0.nbytes <= size < 2 * w0.nbytes + 1024  # two weights and small constants
    np.testing.assert_allclose(irtool.run(xml, {"x": x})["y"], want, rtol=1e-5, atol=1e-6)
