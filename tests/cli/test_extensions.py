"""User-defined operations: ``--extension FILE.py`` on run, validate, check and inspect, with
the worked example of ``samples/extensions/rms_norm.py`` (expected values by hand in numpy),
and one-line errors for an extension that cannot load and an op nobody registered."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import irtool
from irtool.ir import GraphBuilder, Model, TensorInfo, element_type

REPO = Path(__file__).resolve().parents[2]
RMS_NORM = REPO / "samples" / "extensions" / "rms_norm.py"
F32 = element_type("f32")


def irtool_cli(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "irtool", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def _rms_norm_ir(path: Path) -> Path:
    """x [2, 4] -> RMSNorm(x, scale) (epsilon 1e-3) -> Relu -> y. Built without the
    extension loaded: the builder is told the output type, as a producer writes it."""
    b = GraphBuilder()
    x = b.parameter(TensorInfo(F32, (2, 4)), "x", ["x"])
    scale = b.const(np.array([1.0, 2.0, 0.5, -1.0], np.float32), name="scale")
    norm = b.op("RMSNorm", "extension", [x, scale], {"epsilon": "0.001"},
                outputs=[TensorInfo(F32, (2, 4))], name="norm")[0]
    relu = b.op("ReLU", "opset1", [norm], outputs=[TensorInfo(F32, (2, 4))],
                output_names=[["y"]], name="relu")[0]
    b.result(relu, "y_result")
    return irtool.save(Model(b.graph, name="rms_norm"), path)


def _expected(x: np.ndarray) -> np.ndarray:
    scale = np.array([1.0, 2.0, 0.5, -1.0])
    rms = np.sqrt(np.mean(x.astype(np.float64) ** 2, axis=-1, keepdims=True) + 1e-3)
    return np.maximum(x / rms * scale, 0).astype(np.float32)


@pytest.fixture
def model_and_inputs(tmp_path: Path) -> tuple[Path, Path, np.ndarray]:
    x = np.array([[1.0, -2.0, 3.0, 0.5], [0.0, 0.1, -0.2, 4.0]], np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    return _rms_norm_ir(tmp_path / "m.xml"), tmp_path / "in.npz", x


def test_run_with_the_extension_matches_hand_numpy(model_and_inputs, tmp_path: Path) -> None:
    xml, inputs, x = model_and_inputs
    out = tmp_path / "out.npz"
    proc = irtool_cli("run", xml, inputs, "--extension", RMS_NORM, "-o", out)
    assert proc.returncode == 0, proc.stderr
    with np.load(out) as data:
        np.testing.assert_allclose(data["y"], _expected(x), rtol=1e-6, atol=1e-7)


def test_validate_knows_the_op_only_with_the_extension(model_and_inputs) -> None:
    xml, _, _ = model_and_inputs
    without = irtool_cli("validate", xml)
    assert without.returncode == 0  # a warning only
    assert "UNKNOWN_OP" in without.stdout and "RMSNorm-extension" in without.stdout
    with_it = irtool_cli("validate", xml, "--extension", RMS_NORM)
    assert with_it.returncode == 0, with_it.stderr
    assert "UNKNOWN_OP" not in with_it.stdout
    assert "1 file(s): 1 valid" in with_it.stderr


def test_inspect_loads_the_extension(model_and_inputs) -> None:
    xml, _, _ = model_and_inputs
    proc = irtool_cli("inspect", xml, "--extension", RMS_NORM)
    assert proc.returncode == 0, proc.stderr
    assert "RMSNorm" in proc.stdout


def test_check_accepts_extensions(tmp_path: Path) -> None:
    """``check`` loads the file too (an ONNX model of its own needs none of it)."""
    proc = irtool_cli("check", REPO / "samples" / "predict_net.onnx",
                      REPO / "samples" / "predict_net.inputs.npz", "--extension", RMS_NORM)
    assert proc.returncode == 0, proc.stderr


def test_op_nobody_registered_is_one_line_naming_layer_and_op(model_and_inputs,
                                                              tmp_path: Path) -> None:
    xml, inputs, _ = model_and_inputs
    out = tmp_path / "out.npz"
    proc = irtool_cli("run", xml, inputs, "-o", out)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert 'layer 2 "norm" (RMSNorm-extension)' in lines[0]
    assert "not supported" in lines[0]
    assert not out.exists()


@pytest.mark.parametrize(("text", "line", "says"), [
    ("import numpy\nraise RuntimeError('no licence')\n", 2, "RuntimeError: no licence"),
    ("def broken(:\n", 1, "SyntaxError"),
    ("import not_a_module_anywhere\n", 1, "ModuleNotFoundError"),
    ("from irtool.opset import Op, register\n\n@register('Add', 'opset1')\n"
     "class Add(Op):\n    pass\n", 3, "Add-opset1 is registered twice"),
])
def test_extension_that_fails_to_load_is_one_line_naming_the_file(
        model_and_inputs, tmp_path: Path, text: str, line: int, says: str) -> None:
    xml, inputs, _ = model_and_inputs
    bad = tmp_path / "bad_ext.py"
    bad.write_text(text)
    for command in (["run", xml, inputs], ["validate", xml], ["inspect", xml]):
        proc = irtool_cli(*command, "--extension", bad)
        assert proc.returncode == 1, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert f"{bad}:{line}: cannot load extension" in lines[0], lines[0]
        assert says in lines[0], lines[0]


def test_missing_extension_file(model_and_inputs, tmp_path: Path) -> None:
    xml, _, _ = model_and_inputs
    proc = irtool_cli("validate", xml, "--extension", tmp_path / "nope.py")
    assert proc.returncode == 1
    assert f"{tmp_path / 'nope.py'}: cannot load extension" in proc.stderr


def test_python_api_loads_extensions_once(model_and_inputs) -> None:
    xml, _, x = model_and_inputs
    module = irtool.load_extension(RMS_NORM)
    assert irtool.load_extension(RMS_NORM) is module
    np.testing.assert_allclose(irtool.run(irtool.load(xml), {"x": x})["y"], _expected(x),
                               rtol=1e-6, atol=1e-7)
