"""Every option of every subcommand has help; unknown flags show the subcommand's usage;
-v/-q; ``run -o`` .json or a clear refusal; ``inspect --json``."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support import SAMPLES

from irtool.cli import build_parser

ONNX = SAMPLES / "predict_net.onnx"
INPUTS = SAMPLES / "predict_net.inputs.npz"


def cli(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "irtool", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


@pytest.mark.parametrize("command", sorted(subparsers()))
def test_every_option_has_help(command: str) -> None:
    parser = subparsers()[command]
    assert parser.description, command
    for action in parser._actions:
        assert action.help and action.help != argparse.SUPPRESS, (command, action.dest)
        # an option with a default says what it is
        if action.option_strings and action.default not in (None, False, [], argparse.SUPPRESS) \
                and action.dest not in ("help", "verbose"):
            assert "default" in action.help.lower(), (command, action.dest, action.help)


def test_top_level_help_lists_commands_and_exit_codes() -> None:
    proc = cli("--help")
    assert proc.returncode == 0
    for word in ("convert", "validate", "run", "check", "inspect", "Exit status"):
        assert word in proc.stdout


@pytest.mark.parametrize("command", ["convert", "run", "check", "validate", "inspect"])
def test_unknown_flag_shows_the_subcommands_usage(command: str) -> None:
    proc = cli(command, "x", "--no-such-flag")
    assert proc.returncode == 2
    assert f"usage: irtool {command}" in proc.stderr, proc.stderr
    assert "--no-such-flag" in proc.stderr


def test_check_is_silent_when_it_passes_and_logs_with_v() -> None:
    proc = cli("check", ONNX)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert "PASS" in proc.stdout
    proc = cli("check", ONNX, "-v")
    assert proc.returncode == 0
    assert "irtool: converting to IR..." in proc.stderr.splitlines()
    assert "irtool: running openvino..." in proc.stderr.splitlines()


def test_quiet_and_verbose_exclude_each_other() -> None:
    proc = cli("validate", "x.xml", "-q", "-v")
    assert proc.returncode == 2 and "not allowed with" in proc.stderr


def test_run_writes_json(tmp_path: Path) -> None:
    import onnxruntime as ort

    out = tmp_path / "res.json"
    proc = cli("run", ONNX, INPUTS, "-o", out)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(out.read_text())
    with np.load(INPUTS) as given:
        feed = {k: given[k] for k in given.files}
    session = ort.InferenceSession(str(ONNX), providers=["CPUExecutionProvider"])
    for meta, want in zip(session.get_outputs(), session.run(None, feed)):
        entry = got[meta.name]
        assert entry["dtype"] == want.dtype.name and entry["shape"] == list(want.shape)
        np.testing.assert_array_equal(np.array(entry["data"], dtype=want.dtype), want)


def test_run_refuses_another_output_suffix(tmp_path: Path) -> None:
    out = tmp_path / "res.txt"
    proc = cli("run", ONNX, INPUTS, "-o", out)
    assert proc.returncode == 2  # a usage error
    assert ".npz" in proc.stderr and ".json" in proc.stderr and ".txt" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_inspect_json() -> None:
    proc = cli("inspect", SAMPLES / "scan_cumsum.onnx", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    import onnx

    proto = onnx.load(str(SAMPLES / "scan_cumsum.onnx"))
    assert [i["name"] for i in report["inputs"]] == [i.name for i in proto.graph.input]
    assert [o["name"] for o in report["outputs"]] == [o.name for o in proto.graph.output]
    assert report["ir_version"] == 11
    assert [c["type"] for c in report["control_flow"]] == ["TensorIterator-opset1"]
    assert any("back edge" in line for line in report["control_flow"][0]["description"])


def test_verbose_logs_what_each_step_did(tmp_path: Path) -> None:
    out = tmp_path / "p.xml"
    proc = cli("convert", ONNX, "-o", out)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    proc = cli("convert", ONNX, "-o", out, "-v")
    assert proc.returncode == 0
    lines = proc.stderr.splitlines()
    assert any(ln.startswith("irtool.api: converted ") for ln in lines), lines
    assert f"irtool.api: wrote {out} and its .bin" in lines
    proc = cli("validate", out, "-v")
    assert proc.stderr.splitlines() == [
        f"irtool: {out}: 0 error(s), 0 warning(s)",
        "irtool validate: 1 file(s): 1 valid, 0 failed; 0 error(s), 0 warning(s), 0 baselined"]
    proc = cli("validate", out, "-vv")
    assert any(ln.startswith(f"irtool.api: validated {out} in ") for ln in
               proc.stderr.splitlines())
