"""A file given where another kind belongs, a typo in an input name, a missing .bin: each
answered with one line saying what happened and what to do (exit 1, nothing written)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support import SAMPLES

import irtool

ONNX = SAMPLES / "predict_net.onnx"
INPUTS = SAMPLES / "predict_net.inputs.npz"


def cli(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "irtool", *map(str, args)],
                          capture_output=True, text=True, timeout=300, cwd=cwd)


def one_line_error(proc: subprocess.CompletedProcess, *words: str) -> str:
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "Warning" not in proc.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def ir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return irtool.save(irtool.convert(ONNX), tmp_path_factory.mktemp("mix") / "p.xml")


def test_validate_an_onnx_model(ir: Path) -> None:
    proc = cli("validate", ONNX)
    assert proc.returncode == 1
    line = proc.stdout.strip().splitlines()[0]
    assert "this is an ONNX model" in line and "irtool convert" in line, line
    assert "XML_MALFORMED" not in proc.stdout


def test_run_an_onnx_model_converts_it(tmp_path: Path) -> None:
    """``run`` takes an .onnx as OpenVINO's read_model does: the outputs are onnxruntime's."""
    import onnxruntime as ort

    out = tmp_path / "o.npz"
    proc = cli("run", ONNX, INPUTS, "-o", out)
    assert proc.returncode == 0, proc.stderr
    with np.load(INPUTS) as given:
        feed = {k: given[k] for k in given.files}
    session = ort.InferenceSession(str(ONNX), providers=["CPUExecutionProvider"])
    want = dict(zip([o.name for o in session.get_outputs()], session.run(None, feed)))
    with np.load(out) as got:
        for name, value in want.items():
            np.testing.assert_array_equal(got[name], value)


def test_convert_given_ir(ir: Path) -> None:
    line = one_line_error(cli("convert", ir), "this is an OpenVINO IR .xml",
                          "not an ONNX model")
    assert "Wire format" not in line and "DecodeError" not in line


def test_check_given_ir_compares_irtool_with_openvino(ir: Path) -> None:
    """``check`` takes an IR too: irtool's executor is the reference, OpenVINO runs the
    same files (tools/ir_check.py)."""
    proc = cli("check", ir, INPUTS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "irtool (reference) | openvino" in proc.stdout
    assert proc.stdout.strip().splitlines()[-1].startswith("PASS: openvino match irtool")


def test_ir_without_its_bin(ir: Path, tmp_path: Path) -> None:
    xml = Path(shutil.copy(ir, tmp_path / "lonely.xml"))
    proc = cli("validate", xml)
    assert proc.returncode == 1
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1, proc.stdout  # once, not once per Const
    assert "weights file lonely.bin not found" in lines[0]
    one_line_error(cli("run", xml, INPUTS), "weights file lonely.bin not found")


def test_run_names_a_typo_and_its_likely_meaning(ir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "typo.npz"
    with np.load(INPUTS) as given:
        np.savez(bad, bb=given["b"], keepgoing=given["keepgoing"])
    for backend in ("irtool", "openvino"):
        one_line_error(cli("run", ir, bad, "--backend", backend),
                       "missing input(s) b", "unknown input(s) bb (did you mean b?)")
    one_line_error(cli("check", ONNX, bad), "unknown input(s) bb (did you mean b?)")


def test_positional_savez_keys_get_a_hint(ir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "positional.npz"
    with np.load(INPUTS) as given:
        np.savez(bad, given["b"], given["keepgoing"])
    for args in (("run", ir, bad), ("check", ONNX, bad)):
        one_line_error(cli(*args), "arr_0", "np.savez(path, **{")


def test_wrong_shape_on_openvino_names_the_input(ir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "shape.npz"
    with np.load(INPUTS) as given:
        np.savez(bad, b=np.zeros((2, 2), given["b"].dtype), keepgoing=given["keepgoing"])
    one_line_error(cli("run", ir, bad, "--backend", "openvino"), "input 'b'", "shape [2, 2]")


@pytest.mark.parametrize("command", ["run", "check"])
def test_a_model_given_as_inputs(ir: Path, command: str) -> None:
    model = ir if command == "run" else ONNX
    one_line_error(cli(command, model, ONNX), "this is an ONNX model, not a numpy .npz",
                   "give the model first")


def test_unwritable_output_names_the_target(tmp_path: Path) -> None:
    line = one_line_error(cli("convert", ONNX, "-o", "/proc/x.xml"), "/proc/x.")
    assert ".tmp" not in line


def test_a_name_in_another_case_is_what_it_probably_means() -> None:
    """``x`` for an input ``X``: difflib alone finds nothing for a one-letter name."""
    from irtool.core.feeds import input_mismatch

    assert input_mismatch(["X", "h0"], ["x", "h0"]) == (
        "missing input(s) X; unknown input(s) x (did you mean X?); the model takes X, h0")
    message = input_mismatch(["INPUT_IDS", "mask"], ["input_idz", "mask"])
    assert message is not None and "input_idz (did you mean INPUT_IDS?)" in message
