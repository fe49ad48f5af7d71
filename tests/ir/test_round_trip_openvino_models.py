"""Round trip of IRs OpenVINO writes here, at test time, with the rt_info its flows add:
``ov.convert_model`` of an ONNX model with a Loop (its conversion rt_info), models with
model-level rt_info as optimum and NNCF write it (nested sections), f16-compressed weights
(the layer-level ``decompression`` rt_info), port layouts, and one port feeding many
layers (edge order). ``irtool.save(irtool.load(x))`` must be canonically equal XML with a
byte-identical .bin, and validate-clean; OpenVINO must compute the same bits on the copy.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import openvino as ov
import openvino.opset13 as ops
import pytest
from onnx import TensorProto, helper

import irtool
from irtool.ir import round_trip_difference

RNG = np.random.default_rng(0)


def _conv_with_rt_info(tmp_path: Path) -> tuple[ov.Model, bool]:
    x = ops.parameter([1, 3, 8, 8], ov.Type.f32, name="x")
    x.set_layout(ov.Layout("NCHW"))
    w = ops.constant(RNG.standard_normal((4, 3, 3, 3)).astype(np.float32))
    y = ops.relu(ops.convolution(x, w, [1, 1], [1, 1], [1, 1], [1, 1]))
    model = ov.Model([y], [x], "conv")
    model.set_rt_info("u8", ["runtime_options", "KV_CACHE_PRECISION"])
    model.set_rt_info("64", ["runtime_options", "DYNAMIC_QUANTIZATION_GROUP_SIZE"])
    model.set_rt_info("8", ["nncf", "weight_compression", "group_size"])
    model.set_rt_info("int4_asym", ["nncf", "weight_compression", "mode"])
    model.set_rt_info("True", ["optimum", "transformers_version"])
    return model, True  # compress_to_fp16: Convert layers with rt_info "decompression"


def _fan_out(tmp_path: Path) -> tuple[ov.Model, bool]:
    """One port feeding layers made in an order unlike their ids."""
    x = ops.parameter([2, 5], ov.Type.f32, name="x")
    a = ops.exp(x)
    b = ops.sigmoid(x)
    c = ops.add(b, x)
    d = ops.multiply(x, a)
    e = ops.concat([d, x, c, x], 0)
    return ov.Model([e, a, ops.tanh(x)], [x], "fan_out"), False


def _onnx_loop(tmp_path: Path) -> tuple[ov.Model, bool]:
    """``ov.convert_model`` of an ONNX Loop: a body graph, port maps, back edges, and the
    rt_info the ONNX frontend writes."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x"], ["s_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Mul", ["s_out", "s_out"], ["scan"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("s_in", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("scan", TensorProto.FLOAT, [3])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["n", "c", "s0"], ["s", "scans"], body=body)], "loop",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("s0", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("scans", TensorProto.FLOAT, [None, 3])],
        [helper.make_tensor("n", TensorProto.INT64, [], [4]),
         helper.make_tensor("c", TensorProto.BOOL, [], [True])])
    path = tmp_path / "loop.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return ov.convert_model(str(path)), False


MODELS: dict[str, Callable[[Path], tuple[ov.Model, bool]]] = {
    "conv_rt_info_fp16": _conv_with_rt_info, "fan_out": _fan_out, "onnx_loop": _onnx_loop}


def _feed(model: ov.Model) -> dict[str, np.ndarray]:
    return {p.get_any_name(): RNG.standard_normal(list(p.get_shape())).astype(np.float32)
            for p in model.inputs}


def _infer(xml: Path, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
    compiled = ov.Core().compile_model(str(xml), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    result = compiled(feed)
    return [np.asarray(result[out]) for out in compiled.outputs]


@pytest.mark.parametrize("name", MODELS)
def test_openvino_written_ir_round_trips_exactly(name: str, tmp_path: Path) -> None:
    model, compress = MODELS[name](tmp_path)
    xml = tmp_path / f"{name}.xml"
    ov.save_model(model, str(xml), compress_to_fp16=compress)
    text = xml.read_text()
    if name == "conv_rt_info_fp16":  # what this case is for is in the file
        assert "<runtime_options>" in text and "<weight_compression>" in text
        assert 'name="decompression"' in text and 'name="layout"' in text
    copy = tmp_path / "copy" / xml.name
    irtool.save(irtool.load(xml), copy)
    assert round_trip_difference(xml, copy) is None
    assert [str(p) for p in irtool.validate(copy) if p.severity == "error"] == []
    feed = _feed(model)
    for ours, theirs in zip(_infer(copy, feed), _infer(xml, feed)):
        assert ours.tobytes() == theirs.tobytes()


def test_file_order_of_edges_and_layer_children_is_kept(tmp_path: Path) -> None:
    """OpenVINO's reader takes edges in any order and a layer's <rt_info> before or after
    its <data>; whatever order a file has, the round trip keeps it (the XML is edited by
    hand here: edges reversed, the decompression Convert's <rt_info> moved first)."""
    model, _ = _conv_with_rt_info(tmp_path)
    xml = tmp_path / "conv.xml"
    ov.save_model(model, str(xml))
    lines = xml.read_text().splitlines(keepends=True)
    edges = [i for i, line in enumerate(lines) if line.lstrip().startswith("<edge ")]
    assert len(edges) > 2
    for i, line in zip(edges, reversed([lines[i] for i in edges])):
        lines[i] = line
    text = "".join(lines)
    data = '\t\t\t<data destination_type="f32" />\n'
    rt_info = ('\t\t\t<rt_info>\n\t\t\t\t<attribute name="decompression" version="0" />\n'
               '\t\t\t</rt_info>\n')
    assert data + rt_info in text
    edited = tmp_path / "edited.xml"
    edited.write_text(text.replace(data + rt_info, rt_info + data))
    edited.with_suffix(".bin").write_bytes(xml.with_suffix(".bin").read_bytes())
    assert round_trip_difference(xml, edited) is not None  # the edit is a real difference
    copy = tmp_path / "copy" / "edited.xml"
    irtool.save(irtool.load(edited), copy)
    assert round_trip_difference(edited, copy) is None
