"""``irtool.check`` / ``irtool check``: conversion, three backends, comparison, verdicts.

The reference is always onnxruntime (or hand-written numpy for the comparison
rules); a planted kernel bug must make the check fail and name the output.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from support import SAMPLES
from support.onnx_models import predict_net_feed, predict_net_model

import irtool
from irtool.cli import main
from irtool.opset import lookup
from irtool.tools.check import check
from irtool.tools.compare import compare
from irtool.tools.inputs import CheckInputError, make_inputs, trip_count_inputs


def counting_loop_model(dynamic_x: bool = False) -> onnx.ModelProto:
    """y = x + 1 + 2 + ... per iteration; trip count M is a graph input (through Identity)."""
    body = h.make_graph(
        [h.make_node("Identity", ["cond_in"], ["cond_out"]),
         h.make_node("Cast", ["i"], ["i_f"], to=T.FLOAT),
         h.make_node("Add", ["x_in", "i_f"], ["x_out"]),
         h.make_node("Mul", ["x_out", "x_out"], ["sq"])],
        "body",
        [h.make_tensor_value_info("i", T.INT64, []),
         h.make_tensor_value_info("cond_in", T.BOOL, []),
         h.make_tensor_value_info("x_in", T.FLOAT, ["N", 3] if dynamic_x else [2, 3])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []),
         h.make_tensor_value_info("x_out", T.FLOAT, ["N", 3] if dynamic_x else [2, 3]),
         h.make_tensor_value_info("sq", T.FLOAT, ["N", 3] if dynamic_x else [2, 3])])
    graph = h.make_graph(
        [h.make_node("Identity", ["M"], ["m_id"]),
         h.make_node("Loop", ["m_id", "", "x"], ["y", "squares"], body=body)],
        "counting",
        [h.make_tensor_value_info("M", T.INT64, []),
         h.make_tensor_value_info("x", T.FLOAT, ["N", 3] if dynamic_x else [2, 3])],
        [h.make_tensor_value_info("y", T.FLOAT, None),
         h.make_tensor_value_info("squares", T.FLOAT, None)])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 16)])


@pytest.fixture()
def predict_net(tmp_path: Path) -> Path:
    path = tmp_path / "predict_net.onnx"
    onnx.save(predict_net_model(), str(path))
    return path


@pytest.fixture()
def predict_npz(tmp_path: Path) -> Path:
    path = tmp_path / "predict_net.inputs.npz"
    np.savez(path, **predict_net_feed())
    return path


# -- comparison rules (numpy by hand is the oracle) -------------------------------------------


def test_float_tolerance_by_dtype_and_overrides() -> None:
    ref = np.array([1.0, 2.0, 100.0], np.float32)
    assert compare("y", ref * (1 + 5e-5), ref).ok  # inside f32's rtol 1e-4
    row = compare("y", ref + np.array([0, 0, 1], np.float32), ref)
    assert row.verdict == "mismatch" and row.mismatched == 1 and row.total == 3
    assert row.max_abs == pytest.approx(1.0) and row.max_rel == pytest.approx(0.01)
    assert compare("y", ref + np.array([0, 0, 1], np.float32), ref, rtol=0.02).ok
    half = np.array([1.0, 2.0], np.float16)
    assert compare("y", half * np.float16(1.004), half).ok  # f16 is looser
    assert not compare("y", half * np.float16(1.05), half).ok
    assert not compare("y", ref * (1 + 5e-5), ref, rtol=0.0, atol=0.0).ok


def test_exact_types_nan_positions_shape_and_dtype() -> None:
    ints = np.array([1, 2, 3], np.int64)
    assert not compare("i", ints + np.array([0, 0, 1]), ints, rtol=1.0, atol=1.0).ok
    assert compare("b", np.array([True, False]), np.array([True, False])).ok
    assert compare("b", np.array([True, True]), np.array([True, False])).mismatched == 1
    nan = np.array([np.nan, 1.0, np.inf], np.float32)
    assert compare("f", nan.copy(), nan).ok
    moved = compare("f", np.array([1.0, np.nan, np.inf], np.float32), nan)
    assert moved.verdict == "mismatch" and moved.mismatched == 2
    assert not compare("f", np.array([np.nan, 1.0, -np.inf], np.float32), nan).ok
    assert compare("y", np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32)).verdict \
        == "shape"
    assert compare("y", np.zeros(3, np.float64), np.zeros(3, np.float32)).verdict == "dtype"
    assert compare("s", np.array(["a", "b"]), np.array(["a", "b"], dtype=object)).ok


def test_raw_bytes_compare_exactly(tmp_path: Path) -> None:
    """float8 values saved to .npz come back as raw bytes (void); comparing them raised
    TypeError (a fuzz case: a Cast to float8e4m3fn run on both engines)."""
    import ml_dtypes

    values = np.array([0.5, 1.0, -2.0], ml_dtypes.float8_e4m3fn)
    np.savez(tmp_path / "o.npz", y=values)
    with np.load(tmp_path / "o.npz") as got:
        raw = got["y"]
    assert raw.dtype.kind == "V"
    assert compare("y", raw, raw.copy()).ok
    other = raw.copy()
    other[1] = np.array([3.0], ml_dtypes.float8_e4m3fn).view(raw.dtype)[0]
    row = compare("y", other, raw)
    assert (row.verdict, row.mismatched) == ("mismatch", 1)


# -- inputs -----------------------------------------------------------------------------------


def test_random_inputs_are_deterministic_and_trip_counts_small_positive() -> None:
    model = counting_loop_model()
    assert trip_count_inputs(model) == {"M"}
    a, generated = make_inputs(model, seed=3)
    b, _ = make_inputs(model, seed=3)
    c, _ = make_inputs(model, seed=4)
    assert generated == ["M", "x"]
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["x"], c["x"])
    assert a["x"].dtype == np.float32 and a["x"].shape == (2, 3)
    trips = {int(make_inputs(model, seed=s)[0]["M"]) for s in range(40)}
    assert trips <= {1, 2, 3, 4, 5} and len(trips) > 2


def test_dynamic_dimension_needs_a_shape() -> None:
    model = counting_loop_model(dynamic_x=True)
    with pytest.raises(CheckInputError, match=r"'x'.*--shape x=2,3"):
        make_inputs(model)
    feed, _ = make_inputs(model, shapes={"x": (4, 3)})
    assert feed["x"].shape == (4, 3)
    with pytest.raises(CheckInputError, match="does not fit"):
        make_inputs(model, shapes={"x": (4, 5)})
    with pytest.raises(CheckInputError, match="no such input"):
        make_inputs(model, shapes={"nope": (1,)})


def test_given_inputs_are_checked() -> None:
    model = counting_loop_model()
    with pytest.raises(CheckInputError, match="'x' is float64"):
        make_inputs(model, {"x": np.zeros((2, 3))})
    with pytest.raises(CheckInputError, match=r"unknown input\(s\) z; the model takes"):
        make_inputs(model, {"z": np.zeros(1)})


# -- check ------------------------------------------------------------------------------------


def test_check_predict_net_passes(predict_net: Path) -> None:
    report = irtool.check(predict_net, predict_net_feed())
    assert report.reference == "onnxruntime"
    assert [b.name for b in report.backends] == ["onnxruntime", "irtool", "openvino"]
    for name in ("irtool", "openvino"):
        rows = report.backend(name).rows
        assert [r.output for r in rows] == ["b_final", "user_defined_vals"], name
        assert all(r.ok for r in rows), report.format_table()
    assert report.ok
    table = report.format_table()
    assert "user_defined_vals" in table and table.splitlines()[-1].startswith("PASS")
    json.dumps(report.to_dict())  # serialisable


def test_check_with_given_inputs_and_trip_count(tmp_path: Path) -> None:
    model = counting_loop_model()
    feed = {"M": np.array(4, np.int64), "x": np.arange(6, dtype=np.float32).reshape(2, 3)}
    report = check(model, feed, keep_dir=tmp_path / "kept")
    assert report.ok, report.format_table()
    assert {i["name"]: i["source"] for i in report.inputs} == {"M": "given", "x": "given"}
    kept = sorted(p.name for p in (tmp_path / "kept").iterdir())
    assert kept == ["inputs.npz", "model.bin", "model.xml"]
    with np.load(tmp_path / "kept" / "inputs.npz") as data:
        assert int(data["M"]) == 4


def test_planted_kernel_bug_is_caught(predict_net: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    add = lookup("Add", "opset1")
    original = add.compute

    def wrong(self, inputs):  # type: ignore[no-untyped-def]
        return [out + np.ones((), out.dtype) for out in original(self, inputs)]

    monkeypatch.setattr(add, "compute", wrong)
    report = irtool.check(predict_net, predict_net_feed())
    assert not report.ok
    bad = [r.output for r in report.backend("irtool").rows if not r.ok]
    assert "user_defined_vals" in bad
    assert report.backend("openvino").ok  # OpenVINO runs the same files correctly
    assert any("irtool: output 'user_defined_vals'" in line for line in report.failures())
    assert report.verdict().startswith("FAIL: irtool")


def test_failing_backend_is_reported_and_others_run(
        predict_net: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self, inputs):  # type: ignore[no-untyped-def]
        raise RuntimeError("planted kernel failure\nsecond line")

    monkeypatch.setattr(lookup("Subtract", "opset1"), "compute", broken)
    report = irtool.check(predict_net, predict_net_feed())
    irt = report.backend("irtool")
    assert irt.error is not None and "planted kernel failure" in irt.error
    assert "second line" not in irt.error
    assert report.backend("openvino").ok and report.backend("onnxruntime").error is None
    assert "failed: " in report.format_table()
    assert not report.ok


# -- the command ------------------------------------------------------------------------------


def test_cli_pass_json_and_exit_codes(predict_net: Path, predict_npz: Path,
                                      capsys: pytest.CaptureFixture) -> None:
    assert main(["check", str(predict_net), str(predict_npz)]) == 0
    out, err = capsys.readouterr()
    assert out.strip().splitlines()[-1].startswith("PASS")
    assert err == ""  # a passing check says nothing on stderr (no terminal: no bar)
    assert main(["check", str(predict_net), str(predict_npz), "-v"]) == 0
    out, err = capsys.readouterr()
    assert "irtool: running openvino..." in err.splitlines()  # -v: each stage logged
    assert main(["check", str(predict_net), "--json", "--seed", "5"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is True and data["reference"] == "onnxruntime"
    assert {b["name"] for b in data["backends"]} == {"onnxruntime", "irtool", "openvino"}


def test_cli_planted_bug_exits_1_naming_output(
        predict_net: Path, predict_npz: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture) -> None:
    add = lookup("Add", "opset1")
    original = add.compute
    monkeypatch.setattr(add, "compute",
                        lambda self, inputs: [o + 1 for o in original(self, inputs)])
    assert main(["check", str(predict_net), str(predict_npz)]) == 1
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("user_defined_vals"))
    irtool_cell, openvino_cell = row.split(" | ")[1:3]
    assert "MISMATCH" in irtool_cell and "ok" in openvino_cell
    assert out.strip().splitlines()[-1].startswith("FAIL")


def test_cli_dynamic_input_and_npz(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "dyn.onnx"
    onnx.save(counting_loop_model(dynamic_x=True), str(path))
    assert main(["check", str(path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "'x'" in err and "--shape" in err
    assert main(["check", str(path), "--shape", "x=4,3", "--seed", "7"]) == 0
    capsys.readouterr()
    npz = tmp_path / "in.npz"
    np.savez(npz, x=np.ones((5, 3), np.float32), M=np.array(2, np.int64))
    assert main(["check", str(path), str(npz), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {i["name"]: i["shape"] for i in data["inputs"]} == {"M": [], "x": [5, 3]}


def test_cli_failed_conversion_is_one_line(tmp_path: Path) -> None:
    graph = h.make_graph([h.make_node("NoSuchOp", ["x"], ["y"], domain="")], "bad",
                         [h.make_tensor_value_info("x", T.FLOAT, [2])],
                         [h.make_tensor_value_info("y", T.FLOAT, [2])])
    path = tmp_path / "bad.onnx"
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 16)]), str(path))
    proc = subprocess.run([sys.executable, "-m", "irtool", "check", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("irtool check:") and "NoSuchOp" in last
    assert proc.stdout == ""


@pytest.mark.parametrize("sample", sorted(p.name for p in SAMPLES.glob("*.onnx")))
def test_samples_pass(sample: str) -> None:
    """Every shipped sample, with its own inputs when it has them, agrees everywhere."""
    path = SAMPLES / sample
    npz = path.with_name(path.stem + ".inputs.npz")
    given = dict(np.load(npz)) if npz.is_file() else None
    report = check(path, given)
    assert report.ok, report.format_table()


def test_loop_condition_inputs_start_true() -> None:
    model = predict_net_model()
    assert all(bool(make_inputs(model, seed=s)[0]["keepgoing"]) for s in range(10))


def test_openvino_float64_mismatch_names_the_likely_cause() -> None:
    """scikit-learn's GaussianProcessRegressor in float64 (a checked-in exporter fixture):
    onnxruntime and irtool compute in float64, OpenVINO's CPU plugin in float32, and its
    predicted std misses the tolerance. The report says why, on the row and the verdict."""
    from support import REPO

    folder = REPO / "tests" / "fixtures" / "onnx_exporters"
    name = "skl_gaussian_process_f64_small_noise"
    with np.load(folder / f"{name}.inputs.npz") as npz:
        feed = {k: npz[k] for k in npz.files}
    report = check(folder / f"{name}.onnx", feed)
    assert report.backend("irtool").ok
    wrong = [r for r in report.backend("openvino").rows if not r.ok]
    assert [(r.output, r.ref_dtype, r.verdict) for r in wrong] == \
        [("GPcovstd", "float64", "mismatch")]
    cause = "OpenVINO's CPU plugin computes float64 in float32"
    assert cause in wrong[0].describe()
    assert report.verdict().startswith("FAIL: openvino does not agree on float64 output(s)")
    assert cause in report.verdict()


def test_float64_note_is_for_float64_mismatches_only() -> None:
    """A float32 mismatch, or a float64 output of the wrong shape, keeps its plain words."""
    from irtool.tools.check import BackendReport, CheckReport, _explain_f64
    from irtool.tools.compare import Comparison

    rows = [Comparison("a", "mismatch", ref_dtype="float32", mismatched=1, total=4),
            Comparison("b", "shape", shape=(2,), ref_shape=(3,), ref_dtype="float64")]
    report = BackendReport("openvino", None, 0.0, rows)
    _explain_f64(report)
    assert all("float64" not in r.describe() for r in rows)
    full = CheckReport("m", "onnxruntime", [BackendReport("onnxruntime", None, 0.0), report],
                       ["a", "b"], [])
    assert full.verdict() == "FAIL: openvino does not agree"
