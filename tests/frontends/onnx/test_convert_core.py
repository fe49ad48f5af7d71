"""The converter around the translators: loading (paths, external data, local functions),
names of inputs and outputs, unsupported operators and types, node order, fp16
compression, the ``irtool convert`` command and ``irtool.convert``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from support import SAMPLES
from support.conversion import (
    check_conversion,
    const_node,
    make_model,
    run_onnxruntime,
    run_openvino,
    vi,
)

import irtool

F32, I64, BOOL = np.float32, np.int64, np.bool_
X = np.array([[1.0, -2.0, 3.0], [0.5, 0.0, -1.5]], F32)


def test_output_names_when_outputs_share_values(tmp_path: Path) -> None:
    """An output that is a graph input, one that is an Identity of it, two outputs of one
    value, an initializer as output: every IR output carries exactly its ONNX name."""
    model = make_model(
        [helper.make_node("Identity", ["x"], ["y"]), helper.make_node("Add", ["x", "w"], ["z"]),
         helper.make_node("Identity", ["z"], ["z2"])],
        [vi("x", F32, [2, 3])],
        [vi("x", F32, [2, 3]), vi("y", F32, [2, 3]), vi("z", F32, [2, 3]),
         vi("z2", F32, [2, 3]), vi("w", F32, [3])],
        initializers=[numpy_helper.from_array(np.array([1, 2, 3], F32), "w")])
    ir = check_conversion(model, {"x": X}, tmp_path)
    assert ir.input_names() == ["x"]
    assert ir.output_names() == ["x", "y", "z", "z2", "w"]


def test_input_that_is_an_initializer_is_a_constant(tmp_path: Path) -> None:
    model = make_model([helper.make_node("Mul", ["x", "k"], ["y"])],
                       [vi("x", F32, [2, 3]), vi("k", F32, [])], [vi("y", F32, [2, 3])],
                       initializers=[numpy_helper.from_array(np.array(3, F32), "k")])
    ir = check_conversion(model, {"x": X}, tmp_path)
    assert ir.input_names() == ["x"]


def test_unsorted_nodes_and_body_reading_a_later_node(tmp_path: Path) -> None:
    """Nodes listed out of order, the Loop first although its body reads ``a``."""
    body = helper.make_graph([helper.make_node("Identity", ["c"], ["c_out"]),
                              helper.make_node("Add", ["v_in", "a"], ["v_out"])], "body",
                             [vi("i", I64, []), vi("c", BOOL, []), vi("v_in", F32, [2, 3])],
                             [vi("c_out", BOOL, []), vi("v_out", F32, [2, 3])])
    model = make_model([helper.make_node("Loop", ["M", "", "x"], ["y"], body=body),
                        helper.make_node("Neg", ["x"], ["a"]), const_node("M", 3, I64)],
                       [vi("x", F32, [2, 3])], [vi("y", F32, [2, 3])])
    # onnx.checker and onnxruntime reject unsorted graphs: the expected value by hand.
    check_conversion(model, {"x": X}, tmp_path, expected={"y": X + 3 * -X}, checker=False)


def test_external_data(tmp_path: Path) -> None:
    weights = np.arange(4096, dtype=F32).reshape(1024, 4)
    model = make_model([helper.make_node("MatMul", ["x", "w"], ["y"])],
                       [vi("x", F32, [2, 1024])], [vi("y", F32, [2, 4])],
                       initializers=[numpy_helper.from_array(weights, "w")])
    onnx.save(model, tmp_path / "m.onnx", save_as_external_data=True,
              all_tensors_to_one_file=True, location="m.data", size_threshold=0)
    x = np.random.default_rng(0).standard_normal((2, 1024)).astype(F32)
    expected = x @ weights
    by_path = irtool.convert(tmp_path / "m.onnx")
    np.testing.assert_allclose(irtool.run(by_path, {"x": x})["y"], expected, rtol=1e-4)
    proto = onnx.load(tmp_path / "m.onnx", load_external_data=False)
    by_proto = irtool.convert(proto, base_dir=tmp_path)
    xml = irtool.save(by_proto, tmp_path / "ir.xml")
    np.testing.assert_allclose(run_openvino(xml, {"x": x})["y"], expected, rtol=1e-4)
    with pytest.raises(irtool.ConversionError, match="external data"):
        irtool.convert(proto, base_dir=tmp_path / "nowhere")


def test_local_functions_are_inlined(tmp_path: Path) -> None:
    fn = helper.make_function("local", "AddTwice", ["a", "b"], ["c"],
                              [helper.make_node("Add", ["a", "b"], ["t"]),
                               helper.make_node("Add", ["t", "b"], ["c"])],
                              [helper.make_opsetid("", 17)])
    model = make_model([helper.make_node("AddTwice", ["x", "x"], ["y"], domain="local")],
                       [vi("x", F32, [2, 3])], [vi("y", F32, [2, 3])])
    model.functions.append(fn)
    model.opset_import.append(helper.make_opsetid("local", 1))
    check_conversion(model, {"x": X}, tmp_path)


def _unsupported_model() -> onnx.ModelProto:
    body = helper.make_graph([helper.make_node("Identity", ["c"], ["c_out"]),
                              helper.make_node("NoSuchOp", ["v_in"], ["v_out"], name="in_body")],
                             "body", [vi("i", I64, []), vi("c", BOOL, []), vi("v_in", F32, [3])],
                             [vi("c_out", BOOL, []), vi("v_out", F32, [3])])
    model = make_model([
        helper.make_node("NoSuchOp", ["x"], ["a"], name="first"),
        helper.make_node("NoSuchOp", ["a"], ["b"], name="second"),
        helper.make_node("Fancy", ["b"], ["c"], name="vendor", domain="com.example"),
        const_node("M", 2, I64),
        helper.make_node("Loop", ["M", "", "c"], ["y"], body=body)],
        [vi("x", F32, [3])], [vi("y", F32, [3])])
    model.opset_import.append(helper.make_opsetid("com.example", 1))
    return model


def test_unsupported_ops_are_listed_all_at_once() -> None:
    with pytest.raises(irtool.UnsupportedOpError) as err:
        irtool.convert(_unsupported_model())
    message = str(err.value)
    assert "\n" not in message
    assert "NoSuchOp x3 (nodes first, second, in_body)" in message
    assert "com.example:Fancy x1 (node vendor)" in message


def test_cli_unsupported_ops_exit_1_one_line_nothing_written(tmp_path: Path) -> None:
    onnx.save(_unsupported_model(), tmp_path / "bad.onnx")
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.run([sys.executable, "-m", "irtool", "convert", str(tmp_path / "bad.onnx"),
                           "-o", str(out / "bad.xml")], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "NoSuchOp x3" in lines[0] and "Traceback" not in proc.stderr
    assert list(out.iterdir()) == []


def test_cli_convert_and_run_a_sample(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(SAMPLES / "make_samples.py"),
                           str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    model = tmp_path / "predict_net.onnx"
    # The committed sample is what the script makes.
    assert model.read_bytes() == (SAMPLES / "predict_net.onnx").read_bytes()
    xml = tmp_path / "pn.xml"
    proc = subprocess.run([sys.executable, "-m", "irtool", "convert", str(model), "-o", str(xml),
                           "--opset"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "ai.onnx:17" in proc.stdout
    assert xml.exists() and xml.with_suffix(".bin").exists()
    inputs = tmp_path / "predict_net.inputs.npz"
    outs = tmp_path / "out.npz"
    for backend in ("irtool", "openvino"):
        proc = subprocess.run([sys.executable, "-m", "irtool", "run", str(xml), str(inputs),
                               "-o", str(outs), "--backend", backend],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        with np.load(outs) as got:
            # The spec's example: b=6 -> b_out=-3 (keepgoing 9 > -3), then b_out=6 and
            # keepgoing 0 > 6 is false; scan values b_in + b_in = 12, -6.
            assert got["b_final"].tolist() == 6
            assert got["user_defined_vals"].tolist() == [12, -6]


def test_cli_missing_model_is_one_line(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "irtool", "convert", str(tmp_path / "no.onnx"),
                           "-o", str(tmp_path / "no.xml")], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1
    assert len(proc.stderr.strip().splitlines()) == 1 and "no such file" in proc.stderr
    assert not (tmp_path / "no.xml").exists()


@pytest.mark.parametrize("what", ["input", "output"])
def test_optional_graph_io_is_unsupported_type(what: str) -> None:
    opt = helper.make_value_info("o", helper.make_optional_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, [2])))
    if what == "input":
        model = make_model([helper.make_node("OptionalGetElement", ["o"], ["y"])], [opt],
                           [vi("y", F32, [2])])
    else:
        model = make_model([helper.make_node("Optional", ["x"], ["o"])], [vi("x", F32, [2])],
                           [opt])
    with pytest.raises(irtool.ConversionError,
                       match=f"graph {what} 'o' has an unsupported type \\(optional"):
        irtool.convert(model)


def test_errors_name_the_node() -> None:
    body = helper.make_graph([helper.make_node("Identity", ["c"], ["c_out"])], "body",
                             [vi("i", I64, []), vi("c", BOOL, []), vi("v", F32, [3])],
                             [vi("c_out", BOOL, [])])
    model = make_model([helper.make_node("Loop", ["", "", "x"], ["y"], body=body,
                                         name="broken_loop")],
                       [vi("x", F32, [3])], [vi("y", F32, [3])])
    with pytest.raises(irtool.ConversionError, match="node broken_loop: Loop: the body has 1"):
        irtool.convert(model)


def test_compress_to_fp16(tmp_path: Path) -> None:
    """f32 constants (in bodies too) become f16 + Convert, OpenVINO still loads the IR and
    the results stay within f16 rounding; the in-memory model is left as it was."""
    w = np.random.default_rng(1).standard_normal((3, 3)).astype(F32)
    body = helper.make_graph([helper.make_node("Identity", ["c"], ["c_out"]),
                              helper.make_node("MatMul", ["v_in", "w"], ["m"]),
                              helper.make_node("Add", ["m", "bias"], ["v_out"])], "body",
                             [vi("i", I64, []), vi("c", BOOL, []), vi("v_in", F32, [2, 3])],
                             [vi("c_out", BOOL, []), vi("v_out", F32, [2, 3])],
                             initializer=[numpy_helper.from_array(np.full(3, 0.1, F32), "bias")])
    model = make_model([const_node("M", 3, I64),
                        helper.make_node("Loop", ["M", "", "x"], ["y"], body=body)],
                       [vi("x", F32, [2, 3])], [vi("y", F32, [2, 3])],
                       initializers=[numpy_helper.from_array(w, "w")])
    ir = irtool.convert(model)
    before = irtool.save(ir, tmp_path / "f32.xml").read_text()
    xml = irtool.save(ir, tmp_path / "f16.xml", compress_to_fp16=True)
    assert irtool.save(ir, tmp_path / "again.xml").read_text() == before
    text = xml.read_text()
    assert text.count('element_type="f16"') == 2 and 'name="decompression"' in text
    assert xml.with_suffix(".bin").stat().st_size < (tmp_path / "f32.bin").stat().st_size
    expected = run_onnxruntime(model, {"x": X})["y"]
    np.testing.assert_allclose(run_openvino(xml, {"x": X})["y"], expected, rtol=2e-3,
                               atol=2e-3)
    np.testing.assert_allclose(irtool.run(irtool.load(xml), {"x": X})["y"], expected,
                               rtol=2e-3, atol=2e-3)


def test_untyped_graph_output_takes_the_inferred_type(tmp_path: Path) -> None:
    """onnxscript writes graph outputs without a type: shape inference gives them one
    before the output is judged."""
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Add", ["r", "x"], ["y"])]
    model = make_model(nodes, [vi("x", np.float32, [2, 3])], [])
    model.graph.output.append(onnx.ValueInfoProto(name="y"))
    x = np.random.default_rng(2).standard_normal((2, 3)).astype(np.float32)
    # ONNX's checker wants every value_info typed; onnxruntime (the reference) does not.
    check_conversion(model, {"x": x}, tmp_path, checker=False,
                     expected=run_onnxruntime(model, {"x": x}))


def test_declared_graph_output_shape_is_not_held_against_the_computation(tmp_path: Path
                                                                         ) -> None:
    """onnxmltools declares a classifier's label output ``[1]`` whatever the number of rows;
    onnxruntime computes ``[N]`` regardless, and so must irtool (and OpenVINO on its IR)."""
    nodes = [helper.make_node("ReduceSum", ["x", "axes"], ["s"], keepdims=0),
             helper.make_node("Cast", ["s"], ["label"], to=TensorProto.INT64)]
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    model = make_model(nodes, [vi("x", F32, ["N", 3])], [vi("label", I64, [1])],
                       initializers=[axes])
    x = np.arange(21, dtype=F32).reshape(7, 3)
    expected = {"label": x.sum(axis=1).astype(np.int64)}
    np.testing.assert_array_equal(run_onnxruntime(model, {"x": x})["label"], expected["label"])
    check_conversion(model, {"x": x}, tmp_path, expected=expected)


def test_untyped_sequence_graph_output_is_refused_once_inferred() -> None:
    model = make_model([helper.make_node("SequenceConstruct", ["x"], ["s"])],
                       [vi("x", np.float32, [2])], [])
    model.graph.output.append(onnx.ValueInfoProto(name="s"))
    with pytest.raises(irtool.ConversionError,
                       match=r"graph output 's' has an unsupported type \(sequence of"):
        irtool.convert(model)
