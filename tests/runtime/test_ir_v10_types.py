"""An IR v10 file's inputs and outputs have the types OpenVINO gives them: its model reader
makes a v10 file's i64/u64/i32/u32 outputs i32 and every other output type but f32 f32
(bool, f16, f64, u8, i8), and takes an f16 input as f32 (``to_legacy_type`` in OpenVINO's
src/inference/src/model_reader.cpp). The IR is written by OpenVINO's own serializer
(``ov.serialize(..., version="IR_V10")``); OpenVINO's infer request gives the expected
types and values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops

import irtool
from irtool.runtime.executor import legacy_output_dtype


def _loop_model() -> ov.Model:
    """A Loop counting its iterations (i64, carried) and whether x grew past 3 (bool), as
    the PyTorch frontend writes loops; beside it outputs of f16, f64, u8, i8, i32 and f32,
    and an f16 input. Outputs in this order: grown (f32), count (i64), big (bool), half
    (f16), wide (f64), byte (u8), signed_byte (i8), int (i32)."""
    x = ops.parameter([2], np.float32, name="x")
    h = ops.parameter([2], np.float16, name="h")
    n = ops.parameter([], np.int64, name="n")
    bx, bcount = ops.parameter([2], np.float32), ops.parameter([], np.int64)
    grown = ops.add(bx, ops.constant(np.float32(1)))
    count = ops.add(bcount, ops.constant(np.int64(1)))
    big = ops.result(ops.greater(grown, ops.constant(np.float32(3))))
    body = ov.Model([ops.result(ops.constant(np.array(True))), ops.result(grown),
                     ops.result(count), big], [bx, bcount])
    loop = ops.loop(n, ops.constant(np.array(True)))
    loop.set_function(body)
    loop.set_special_body_ports([-1, 0])
    loop.set_merged_input(bx, x.output(0), body.outputs[1])
    loop.set_merged_input(bcount, ops.constant(np.int64(0)).output(0), body.outputs[2])
    outs = {"grown": loop.get_iter_value(body.outputs[1], -1),
            "count": loop.get_iter_value(body.outputs[2], -1),
            "big": loop.get_iter_value(big.output(0), -1),
            "half": ops.add(h, h).output(0),
            "wide": ops.convert(x, "f64").output(0),
            "byte": ops.convert(x, "u8").output(0),
            "signed_byte": ops.convert(x, "i8").output(0),
            "int": ops.convert(x, "i32").output(0)}
    results = []
    for name, out in outs.items():
        out.set_names({name})
        results.append(ops.result(out))
    return ov.Model(results, [x, h, n], "v10")


def test_outputs_have_openvino_s_v10_types(tmp_path: Path) -> None:
    xml = tmp_path / "v10.xml"
    ov.serialize(_loop_model(), str(xml), version="IR_V10")
    assert 'version="10"' in xml.read_text()[:300]
    # OpenVINO's inputs of a v10 file: f32 for the f16 input, the declared types else.
    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(xml)), "CPU")
    feed = {"x": np.array([1.5, 2.5], np.float32), "h": np.array([0.5, 1.25], np.float32),
            "n": np.array(2, np.int64)}
    assert {i.any_name: i.element_type.to_dtype() for i in compiled.inputs} == \
        {"x": np.float32, "h": np.float32, "n": np.int64}
    request = compiled.create_infer_request()
    request.infer(feed)
    # OpenVINO adds each output's layer name ("Add_26") to its tensor names for v10; irtool
    # gives the first name in the file. Matched by name, in the model's order.
    got = irtool.run(xml, feed)
    assert len(got) == len(compiled.outputs)
    for port, name in zip(compiled.outputs, got):
        assert name in port.get_names(), (name, port.get_names())
        want = np.array(request.get_tensor(port).data)
        assert got[name].dtype == want.dtype, name
        assert got[name].shape == want.shape, name
        np.testing.assert_array_equal(got[name], want, err_msg=name)
    assert [v.dtype.name for v in got.values()] == [
        "float32", "int32", "float32", "float32", "float32", "float32", "float32", "int32"]
    # by hand: x + 2 = [3.5, 4.5] after the 2 iterations, both past 3
    assert got["grown"].tolist() == [3.5, 4.5] and got["count"].tolist() == 2
    assert got["big"].tolist() == [1.0, 1.0]
    # The f16 input as f16 runs too (the IR's own type).
    again = irtool.run(xml, {**feed, "h": feed["h"].astype(np.float16)})
    np.testing.assert_array_equal(again["half"], got["half"])


def test_the_same_model_as_ir_v11_keeps_its_types(tmp_path: Path) -> None:
    xml = tmp_path / "v11.xml"
    ov.save_model(_loop_model(), str(xml), compress_to_fp16=False)
    got = irtool.run(xml, {"x": np.array([1.5, 2.5], np.float32),
                           "h": np.array([0.5, 1.25], np.float16), "n": np.array(2, np.int64)})
    assert {k: v.dtype.name for k, v in got.items()} == {
        "grown": "float32", "count": "int64", "big": "bool", "half": "float16",
        "wide": "float64", "byte": "uint8", "signed_byte": "int8", "int": "int32"}


def test_the_rule() -> None:
    """OpenVINO's to_legacy_type for outputs, type by type."""
    rule = {np.int64: np.int32, np.uint64: np.int32, np.int32: np.int32, np.uint32: np.int32,
            np.float32: np.float32, np.float16: np.float32, np.float64: np.float32,
            np.bool_: np.float32, np.uint8: np.float32, np.int8: np.float32,
            np.int16: np.float32, np.uint16: np.float32}
    for source, target in rule.items():
        assert legacy_output_dtype(np.dtype(source)) == np.dtype(target), source
