"""``irtool convert`` places its output as ovc does, and ``--input`` fixes dynamic dims
(OpenVINO reads the IR to say what the inputs' shapes are)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from support import SAMPLES

ONNX = SAMPLES / "predict_net.onnx"


def cli(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "irtool", *map(str, args)],
                          capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.mark.parametrize(("output", "written"), [
    (None, "predict_net.xml"),              # no -o: the current folder, not beside the model
    ("out/", "out/predict_net.xml"),        # a folder to be made
    ("made", "made/predict_net.xml"),       # an existing folder
    ("out/p4", "out/p4.xml"),               # .xml added when missing
    ("out/p5.xml", "out/p5.xml"),
])
def test_output_paths(tmp_path: Path, output: str | None, written: str) -> None:
    (tmp_path / "made").mkdir()
    proc = cli("convert", ONNX, *(["-o", output] if output else []), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    xml = tmp_path / written
    assert xml.is_file() and xml.with_suffix(".bin").is_file()
    assert not (SAMPLES / "predict_net.xml").exists()
    import openvino as ov

    assert ov.Core().read_model(str(xml)).inputs  # OpenVINO reads what was written


def dynamic_model(path: Path) -> Path:
    """y = x + 1 with x: f32[batch, ?, 3]."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", None, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    one = helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])
    graph = helper.make_graph([helper.make_node("Add", ["x", "one"], ["y"])], "g", [x], [y],
                              initializer=[one])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def ov_input_shape(xml: Path) -> str:
    import openvino as ov

    return str(ov.Core().read_model(str(xml)).inputs[0].get_partial_shape())


def test_input_fixes_dims(tmp_path: Path) -> None:
    model = dynamic_model(tmp_path / "dyn.onnx")
    proc = cli("convert", model, "-o", tmp_path / "free.xml")
    assert proc.returncode == 0, proc.stderr
    assert ov_input_shape(tmp_path / "free.xml") == "[?,?,3]"
    proc = cli("convert", model, "--input", "x[2,?,3]", "-o", tmp_path / "fixed.xml")
    assert proc.returncode == 0, proc.stderr
    assert ov_input_shape(tmp_path / "fixed.xml") == "[2,?,3]"
    proc = cli("convert", model, "--input", "x[2,4,3]", "-o", tmp_path / "static.xml")
    assert proc.returncode == 0, proc.stderr
    assert ov_input_shape(tmp_path / "static.xml") == "[2,4,3]"
    # the output's shape follows (numpy: x + 1 keeps x's shape)
    import openvino as ov

    out = ov.Core().read_model(str(tmp_path / "static.xml")).outputs[0]
    assert list(out.get_shape()) == list(np.zeros((2, 4, 3)).shape)


@pytest.mark.parametrize(("option", "words", "code"), [
    ("z[1,2,3]", "no such input; the model takes x", 1),
    ("x[1,2]", "2 dims given, the model declares rank 3", 1),
    ("x[1,2,4]", "dim 2 is 3 in the model, not 4", 1),
    ("x[1,a,3]", "'a' is not a dimension", 2),  # not the syntax: a usage error
    ("x 1,2", "expected NAME[D0,D1,...]", 2),
])
def test_input_refused(tmp_path: Path, option: str, words: str, code: int) -> None:
    model = dynamic_model(tmp_path / "dyn.onnx")
    proc = cli("convert", model, "--input", option, "-o", tmp_path / "o.xml")
    assert proc.returncode == code, proc.stderr
    assert words in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not (tmp_path / "o.xml").exists()


def test_several_inputs(tmp_path: Path) -> None:
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [None, 2])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [None, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph([helper.make_node("Add", ["a", "b"], ["y"])], "g", [a, b], [y])
    model = tmp_path / "two.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)
    proc = cli("convert", model, "--input", "a[3,2],b[3,2]", "-o", tmp_path / "two.xml")
    assert proc.returncode == 0, proc.stderr
    import openvino as ov

    shapes = [str(i.get_partial_shape()) for i in ov.Core().read_model(
        str(tmp_path / "two.xml")).inputs]
    assert shapes == ["[3,2]", "[3,2]"]
