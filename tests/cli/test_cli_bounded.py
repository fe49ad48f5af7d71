"""Every run is bounded: onnxruntime and OpenVINO run in worker processes with time limits
(``check``, ``run --backend openvino``), so that a crash or a hang of theirs is one line
or one column, never the end of irtool or a wait without end."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import irtool
from irtool import api
from irtool.cli import main as cli_main
from irtool.tools.check import DEFAULT_TIMEOUT_S as CHECK_TIMEOUT_S


def _forever() -> onnx.ModelProto:
    """A Loop without a trip count whose condition stays true: onnxruntime and OpenVINO run
    it until stopped; irtool stops it at its iteration cap."""
    body = h.make_graph([h.make_node("Identity", ["c"], ["c_out"]),
                         h.make_node("Add", ["x_in", "one"], ["x_out"])], "body",
                        [h.make_tensor_value_info("i", T.INT64, []),
                         h.make_tensor_value_info("c", T.BOOL, []),
                         h.make_tensor_value_info("x_in", T.FLOAT, [1])],
                        [h.make_tensor_value_info("c_out", T.BOOL, []),
                         h.make_tensor_value_info("x_out", T.FLOAT, [1])],
                        [h.make_tensor("one", T.FLOAT, [1], [1.0])])
    graph = h.make_graph([h.make_node("Loop", ["", "cond", "x"], ["y"], body=body,
                                      name="forever")], "forever",
                         [h.make_tensor_value_info("cond", T.BOOL, []),
                          h.make_tensor_value_info("x", T.FLOAT, [1])],
                         [h.make_tensor_value_info("y", T.FLOAT, [1])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 16)])


def test_check_stops_onnxruntime_and_openvino_at_the_time_limit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It used to run onnxruntime in-process with no limit (over 300 s on such a loop)."""
    path = tmp_path / "forever.onnx"
    onnx.save(_forever(), path)
    np.savez(tmp_path / "in.npz", cond=np.array(True), x=np.zeros(1, np.float32))
    rc = cli_main(["check", str(path), str(tmp_path / "in.npz"), "--timeout", "4",
                   "--max-iterations", "1000"])
    out = capsys.readouterr().out
    assert rc == 1
    assert "onnxruntime failed: onnxruntime gave no result within 4 s (stopped)" in out
    assert "openvino failed: openvino gave no result within 4 s (stopped)" in out
    assert "loop stopped: it would run more than 1000 iterations" in out  # irtool's column


def _col2im_that_openvino_aborts_on() -> onnx.ModelProto:
    """Col2Im, fed a block of 0 x 3: OpenVINO 2026.4's CPU plugin divides by it and dies of
    SIGFPE (every time) instead of refusing."""
    graph = h.make_graph([h.make_node("Col2Im", ["x", "image", "block"], ["y"], name="c2i")],
                         "col2im", [h.make_tensor_value_info("x", T.FLOAT, [1, 5, 5]),
                                    h.make_tensor_value_info("image", T.INT64, [2]),
                                    h.make_tensor_value_info("block", T.INT64, [2])],
                         [h.make_tensor_value_info("y", T.FLOAT, None)])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])


def test_run_on_openvino_survives_a_crash_of_openvino(tmp_path: Path) -> None:
    """``irtool run --backend openvino`` used to die with OpenVINO (no message)."""
    xml = irtool.save(irtool.convert(_col2im_that_openvino_aborts_on()), tmp_path / "m.xml")
    np.savez(tmp_path / "in.npz", x=np.ones((1, 5, 5), np.float32),
             image=np.array([2, 3], np.int64), block=np.array([0, 3], np.int64))
    out = tmp_path / "out.npz"
    proc = subprocess.run([sys.executable, "-m", "irtool", "run", str(xml),
                           str(tmp_path / "in.npz"), "-o", str(out), "--backend", "openvino"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.splitlines() == [f"irtool run: OpenVINO crashed (SIGFPE) running {xml}"]
    assert not out.exists()


def test_run_on_openvino_stops_at_the_time_limit(tmp_path: Path) -> None:
    xml = irtool.save(irtool.convert(_forever()), tmp_path / "forever.xml")
    feed = {"cond": np.array(True), "x": np.zeros(1, np.float32)}
    with pytest.raises(irtool.BackendError,
                       match=r"^OpenVINO gave no result within 3 s \(stopped\) running "):
        irtool.run(xml, feed, backend="openvino", timeout=3)
    # The same IR with the condition false runs (in a fresh worker) and gives x.
    got = irtool.run(xml, {**feed, "cond": np.array(False)}, backend="openvino")
    assert got["y"].tolist() == [0.0]


def test_the_command_line_defaults_are_the_api_s(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("run", "check"):
        with pytest.raises(SystemExit):
            cli_main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "(default 300)" in text
    assert api.OPENVINO_TIMEOUT_S == CHECK_TIMEOUT_S == 300.0


def _nested_ifs(depth: int) -> onnx.ModelProto:
    """``depth`` Ifs, each in the then-branch of the next (Neg at the bottom, x + x in
    every else-branch)."""
    vi = h.make_tensor_value_info
    branch = h.make_graph([h.make_node("Neg", ["x"], ["o0"])], "leaf", [],
                          [vi("o0", T.FLOAT, [2])])
    for d in range(1, depth + 1):
        other = h.make_graph([h.make_node("Add", ["x", "x"], [f"e{d}"])], f"else{d}", [],
                             [vi(f"e{d}", T.FLOAT, [2])])
        node = h.make_node("If", ["c"], [f"o{d}"], then_branch=branch, else_branch=other,
                           name=f"if{d}")
        branch = h.make_graph([node], f"then{d}", [], [vi(f"o{d}", T.FLOAT, [2])])
    graph = h.make_graph(list(branch.node), "nested", [vi("c", T.BOOL, []),
                                                       vi("x", T.FLOAT, [2])],
                         [vi(f"o{depth}", T.FLOAT, [2])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


@pytest.mark.parametrize("cond", [True, False])
def test_check_on_30_nested_ifs_is_bounded(cond: bool, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """It took over 300 s (OpenVINO compiling 30 nested Ifs runs on and on); now OpenVINO
    is stopped at --timeout, and irtool's column still matches onnxruntime (-x, or 2x)."""
    import time

    path = tmp_path / "nested.onnx"
    onnx.save(_nested_ifs(30), path)
    x = np.array([1.5, -2.0], np.float32)
    np.savez(tmp_path / "in.npz", c=np.array(cond), x=x)
    want = -x if cond else x + x
    started = time.monotonic()
    rc = cli_main(["check", str(path), str(tmp_path / "in.npz"), "--timeout", "5", "--json"])
    elapsed = time.monotonic() - started
    assert elapsed < 120, elapsed
    import json

    report = json.loads(capsys.readouterr().out)
    backends = {b["name"]: b for b in report["backends"]}
    assert backends["onnxruntime"]["ok"] and backends["irtool"]["ok"], backends
    assert [o["verdict"] for o in backends["irtool"]["outputs"]] == ["ok"]
    openvino = backends["openvino"]
    assert openvino["ok"] or openvino["error"] == "openvino gave no result within 5 s (stopped)"
    assert rc == (0 if openvino["ok"] else 1)
    ours = irtool.run(irtool.convert(path), {"c": np.array(cond), "x": x})["o30"]
    np.testing.assert_array_equal(ours, want)  # hand numpy, the check's reference aside


def test_run_help_states_the_default_iteration_cap(capsys: pytest.CaptureFixture[str]
                                                   ) -> None:
    """The cap bounds every loop, a trip count of 10**12 included, and --help says so."""
    with pytest.raises(SystemExit):
        cli_main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default 1,000,000, whatever the trip count)" in text
