"""``convert`` and ``check`` over a folder or a glob: one row per model in one report, the
folders kept in the output, a model that fails one row, usage errors exit 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import openvino as ov
import pytest
from support import SAMPLES
from support.gate import irtool


@pytest.fixture()
def onnx_zoo(tmp_path: Path) -> Path:
    """zoo/predict_net.onnx, zoo/nested/scan_cumsum.onnx, zoo/broken.onnx (not protobuf)."""
    zoo = tmp_path / "zoo"
    (zoo / "nested").mkdir(parents=True)
    shutil.copyfile(SAMPLES / "predict_net.onnx", zoo / "predict_net.onnx")
    shutil.copyfile(SAMPLES / "scan_cumsum.onnx", zoo / "nested" / "scan_cumsum.onnx")
    (zoo / "broken.onnx").write_bytes(b"\xff\xff\xff\xff not a model")
    return zoo


def test_convert_a_folder_keeps_its_folders_and_reports_each_model(onnx_zoo: Path,
                                                                  tmp_path: Path) -> None:
    out = tmp_path / "irs"
    proc = irtool("convert", onnx_zoo, "-o", out, "--format", "json")
    assert proc.returncode == 1, proc.stderr  # broken.onnx
    rows = {Path(f["file"]).name: f for f in json.loads(proc.stdout)["files"]}
    assert list(rows) == ["broken.onnx", "predict_net.onnx", "scan_cumsum.onnx"]
    assert [d["code"] for d in rows["broken.onnx"]["diagnostics"]] == ["CONVERSION_FAILED"]
    assert rows["predict_net.onnx"]["ok"] and rows["scan_cumsum.onnx"]["ok"]
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.xml"))
    assert written == ["nested/scan_cumsum.xml", "predict_net.xml"]
    assert rows["scan_cumsum.onnx"]["details"]["output"] == str(out / "nested" /
                                                                 "scan_cumsum.xml")
    # OpenVINO reads what was written and computes the sample's expected outputs.
    with np.load(SAMPLES / "scan_cumsum.inputs.npz") as data:
        feed = {k: data[k] for k in data.files}
    compiled = ov.Core().compile_model(str(out / "nested" / "scan_cumsum.xml"), "CPU")
    result = compiled(feed)
    import onnxruntime as ort

    session = ort.InferenceSession(str(SAMPLES / "scan_cumsum.onnx"))
    for name, expected in zip([o.name for o in session.get_outputs()],
                              session.run(None, feed)):
        np.testing.assert_allclose(result[name], expected, rtol=1e-5, atol=1e-6)


def test_convert_a_glob_needs_an_output_folder(onnx_zoo: Path) -> None:
    proc = irtool("convert", "*.onnx", cwd=onnx_zoo)
    assert proc.returncode == 2 and "-o OUTDIR/" in proc.stderr, proc.stderr
    proc = irtool("convert", "nothing/*.onnx", "-o", "out", cwd=onnx_zoo)
    assert proc.returncode == 2 and "no ONNX model" in proc.stderr


@pytest.mark.slow
def test_check_a_folder_as_junit(onnx_zoo: Path, tmp_path: Path) -> None:
    junitparser = pytest.importorskip("junitparser")
    report = tmp_path / "check.xml"
    proc = irtool("check", onnx_zoo, "--report", report, "--jobs", "2")
    assert proc.returncode == 1, proc.stderr
    [suite] = list(junitparser.JUnitXml.fromfile(str(report)))
    cases = {Path(c.name).name: c for c in suite}
    assert cases["predict_net.onnx"].is_passed and cases["scan_cumsum.onnx"].is_passed
    [failure] = cases["broken.onnx"].result
    assert failure.type == "CONVERSION_FAILED"
    assert "predict_net.onnx: PASS: " in proc.stdout  # the text lines, as models finish
    assert irtool("check", onnx_zoo, SAMPLES / "predict_net.inputs.npz").returncode == 2
