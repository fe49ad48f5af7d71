"""Every run is bounded: onnxruntime and OpenVINO run in worker processes with time limits
(``check``, ``run --backend openvino``), so that a crash or a hang of theirs is one line
or one column, never the end of irtool or a wait without end."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from support.processes import descendants, left_after, processes
from support.quirks import QuirkRecorder

import irtool
from irtool import api
from irtool.cli import main as cli_main
from irtool.tools.check import CAP_GRACE_S
from irtool.tools.check import DEFAULT_TIMEOUT_S as CHECK_TIMEOUT_S


def _adding_one() -> onnx.GraphProto:
    """A Loop body: x + 1, its condition passed on."""
    return h.make_graph([h.make_node("Identity", ["c"], ["c_out"]),
                         h.make_node("Add", ["x_in", "one"], ["x_out"])], "body",
                        [h.make_tensor_value_info("i", T.INT64, []),
                         h.make_tensor_value_info("c", T.BOOL, []),
                         h.make_tensor_value_info("x_in", T.FLOAT, [1])],
                        [h.make_tensor_value_info("c_out", T.BOOL, []),
                         h.make_tensor_value_info("x_out", T.FLOAT, [1])],
                        [h.make_tensor("one", T.FLOAT, [1], [1.0])])


def _forever() -> onnx.ModelProto:
    """A Loop without a trip count whose condition stays true: onnxruntime and OpenVINO run
    it until stopped; irtool stops it at its iteration cap."""
    body = _adding_one()
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


def _trillion_iterations() -> onnx.ModelProto:
    """The issue's runaway: a Loop of trip count 10**12 adding 1 each time."""
    body = _adding_one()
    graph = h.make_graph([h.make_node("Loop", ["M", "", "x"], ["y"], body=body, name="runaway")],
                         "runaway", [h.make_tensor_value_info("x", T.FLOAT, [1])],
                         [h.make_tensor_value_info("y", T.FLOAT, [1])],
                         [h.make_tensor("M", T.INT64, [], [10**12])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 16)])


def test_check_does_not_wait_for_a_loop_irtool_stopped_at_its_cap(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """irtool's run stops the loop at the default cap and says so at once; onnxruntime and
    OpenVINO then get CAP_GRACE_S (10 s) each, not the default 300 s, and their columns say
    why (it used to wait 300 s for onnxruntime, printing nothing)."""
    path = tmp_path / "runaway.onnx"
    onnx.save(_trillion_iterations(), path)
    rc = cli_main(["check", str(path)])
    captured = capsys.readouterr()
    assert rc == 1
    assert "irtool: warning: irtool's run stopped at the iteration cap; onnxruntime and " \
           "OpenVINO get 10 s each, not 300 s" in captured.err
    assert "irtool failed: " in captured.out
    assert "loop stopped: it would run more than 1000000 iterations" in captured.out
    for engine in ("onnxruntime", "openvino"):
        assert f"{engine} failed: stopped after 10 s (not 300): irtool's run stopped at the " \
               f"iteration cap, so the loop most likely never ends" in captured.out, engine
    assert CAP_GRACE_S == 10


def _col2im_that_openvino_aborts_on() -> onnx.ModelProto:
    """Col2Im, fed a block of 0 x 3: OpenVINO 2026.4's CPU plugin divides by it and dies of
    SIGFPE (on the CPUs seen so far) instead of refusing."""
    graph = h.make_graph([h.make_node("Col2Im", ["x", "image", "block"], ["y"], name="c2i")],
                         "col2im", [h.make_tensor_value_info("x", T.FLOAT, [1, 5, 5]),
                                    h.make_tensor_value_info("image", T.INT64, [2]),
                                    h.make_tensor_value_info("block", T.INT64, [2])],
                         [h.make_tensor_value_info("y", T.FLOAT, None)])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])


def _col2im_run(tmp_path: Path, env: dict[str, str] | None = None
                ) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    xml = irtool.save(irtool.convert(_col2im_that_openvino_aborts_on()), tmp_path / "m.xml")
    np.savez(tmp_path / "in.npz", x=np.ones((1, 5, 5), np.float32),
             image=np.array([2, 3], np.int64), block=np.array([0, 3], np.int64))
    out = tmp_path / "out.npz"
    proc = subprocess.run([sys.executable, "-m", "irtool", "run", str(xml),
                           str(tmp_path / "in.npz"), "-o", str(out), "--backend", "openvino"],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})
    return xml, out, proc


def _openvino_dying_of(sig: signal.Signals, folder: Path) -> dict[str, str]:
    """An environment whose processes (the OpenVINO worker included) die of ``sig`` as soon
    as OpenVINO compiles a model: a crash on every CPU, through the same worker and the
    same report as a real one (a ``sitecustomize`` that replaces ``Core.compile_model``)."""
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(
        "import os, signal\nimport openvino\n\n\n"
        "def _die(*args, **kwargs):\n"
        f"    os.kill(os.getpid(), signal.{sig.name})\n\n\n"
        "openvino.Core.compile_model = _die\n")
    path = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": str(folder) + (os.pathsep + path if path else "")}


def test_run_on_openvino_survives_a_crash_of_openvino(tmp_path: Path) -> None:
    """``irtool run --backend openvino`` used to die with OpenVINO (no message); a crash of
    its worker is one line, and no output file."""
    env = _openvino_dying_of(signal.SIGFPE, tmp_path / "site")
    xml, out, proc = _col2im_run(tmp_path, env)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.splitlines() == [f"irtool run: OpenVINO crashed (SIGFPE) running {xml}"]
    assert not out.exists()


def test_openvino_on_a_col2im_block_of_zero(tmp_path: Path, openvino_quirk: QuirkRecorder) -> None:
    """The real crash, recorded: this CPU's plugin dies of SIGFPE (the one line above), or
    it refuses the block with an error of its own, one line too."""
    xml, out, proc = _col2im_run(tmp_path)
    assert proc.returncode != 0 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert not out.exists()
    openvino_quirk("col2im-block-0-sigfpe",
                   reproduced=proc.stderr.strip() == f"irtool run: OpenVINO crashed (SIGFPE) "
                                                     f"running {xml}",
                   behaves=proc.stderr.startswith("irtool run: ") and "crashed" not in
                   proc.stderr, answer=proc.stderr.strip())


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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_check_leaves_no_worker(tmp_path: Path) -> None:
    """``kill -9`` of a ``check`` whose onnxruntime is in a runaway loop: a few seconds
    later no process it started is left (they used to run on for an hour with parent 1)."""
    path = tmp_path / "runaway.onnx"
    onnx.save(_trillion_iterations(), path)
    check = subprocess.Popen([sys.executable, "-m", "irtool", "check", str(path)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children: dict[int, str] = {}
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not any(
                "_isolate_child" in cmd for cmd in children.values()):
            time.sleep(0.2)
            children = descendants(check.pid)
        assert any("_isolate_child" in cmd for cmd in children.values()), children
        time.sleep(3)  # the worker loads onnxruntime and is well into the loop
        children = descendants(check.pid)
        worker = next(pid for pid, cmd in children.items() if "_isolate_child" in cmd)
        assert processes()[worker][0] == check.pid
    finally:
        check.kill()
        check.wait()
    left = left_after(children, 5)
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert not left, f"still running after the kill: {[children[p] for p in left]}"
