"""ovc's conventions on ``convert`` (``-o`` / ``--output_model`` for the file, ``--output``
for the tensors to cut at, ``--compress_to_fp16=False``), one shape syntax (``--input
"x[1,?]"``) for convert, run and check, dynamic dims defaulted to 1 with one warning
(``check``, ``run --random``), and the exit code of each kind of outcome.

Values come from onnxruntime on the same inputs (for a cut model: onnxruntime asked for
the intermediate tensor), never from irtool.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from support import SAMPLES
from support.conversion import run_onnxruntime
from support.onnx_models import rnn_loop_model

import irtool
from irtool.tools.inputs import make_inputs

ONNX = SAMPLES / "predict_net.onnx"
INPUTS = SAMPLES / "predict_net.inputs.npz"


def cli(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "irtool", *map(str, args)],
                          capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.fixture(scope="module")
def rnn(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rnn") / "rnn.onnx"
    onnx.save(rnn_loop_model(), path)
    return path


def _one_line(proc: subprocess.CompletedProcess, code: int, *words: str) -> None:
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    assert any(all(w in line for w in words) for line in proc.stderr.splitlines()), proc.stderr


# -- exit codes -------------------------------------------------------------------------

USAGE_ERRORS = {
    "unknown flag": (("convert", ONNX, "--no-such-flag"), "--no-such-flag"),
    "refused -o suffix": (("run", ONNX, INPUTS, "-o", "{tmp}/out.txt"), ".txt"),
    "malformed --input": (("convert", ONNX, "--input", "b[1,"), "expected NAME[D0,D1,...]"),
    "malformed --shape": (("check", ONNX, "--shape", "b"), "expected NAME=D0,D1,..."),
    "--output given a file": (("convert", ONNX, "--output", "{tmp}/p.xml"), "-o / --output_model"),
    "not a boolean": (("convert", ONNX, "--compress_to_fp16=maybe"), "not True or False"),
    "options that contradict": (("convert", ONNX, "--slice-inputs", "--no-optimize"),
                                "--no-optimize"),
    "--input on run without --random": (("run", ONNX, "--input", "b[]"), "--random"),
    "--random over steps": (("run", ONNX, INPUTS, INPUTS, "--random"), "one run"),
    "steps sharing a file name": (("run", ONNX, INPUTS, INPUTS, "-o", "{tmp}"), "share the name"),
}


@pytest.mark.parametrize("kind", sorted(USAGE_ERRORS))
def test_usage_errors_exit_2(kind: str, tmp_path: Path) -> None:
    args, words = USAGE_ERRORS[kind]
    proc = cli(*(str(a).format(tmp=tmp_path) for a in args))
    _one_line(proc, 2, words)
    assert not list(tmp_path.iterdir())  # nothing written


def test_bad_input_exits_1_and_success_0(tmp_path: Path) -> None:
    _one_line(cli("convert", tmp_path / "missing.onnx"), 1, "no such file")
    _one_line(cli("run", ONNX, ONNX), 1, "this is an ONNX model, not a numpy .npz")
    assert cli("convert", ONNX, "-o", tmp_path / "p.xml").returncode == 0


def test_an_internal_error_exits_3(monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """irtool's own bug (here: the converter raising something no input explains) is one
    line and exit 3."""
    from irtool import api
    from irtool.cli import main

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(api, "convert", broken)
    monkeypatch.delenv("IRTOOL_DEBUG", raising=False)
    assert main(["convert", str(ONNX), "--output_model", str(Path.cwd() / "never.xml")]) == 3
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: a bug" in err and "Traceback" not in err
    assert not (Path.cwd() / "never.xml").exists()


# -- ovc's options on convert -----------------------------------------------------------

def test_output_model_is_o(tmp_path: Path) -> None:
    for flag in ("-o", "--output_model", "--output-model"):
        out = tmp_path / flag.strip("-") / "m.xml"
        proc = cli("convert", ONNX, flag, out)
        assert proc.returncode == 0, proc.stderr
        assert out.is_file() and out.with_suffix(".bin").is_file()


@pytest.mark.parametrize("spelling, compressed", [
    (("--compress_to_fp16=False",), False), (("--compress_to_fp16=True",), True),
    (("--compress_to_fp16",), True), (("--compress-to-fp16",), True),
    (("--no-compress-to-fp16",), False), ((), False)])
def test_compress_to_fp16_as_ovc_spells_it(spelling: tuple[str, ...], compressed: bool,
                                           rnn: Path, tmp_path: Path) -> None:
    out = tmp_path / "m.xml"
    proc = cli("convert", rnn, "-o", out, *spelling)
    assert proc.returncode == 0, proc.stderr
    types = {layer.attrs.get("element_type") for _, layer in irtool.load(out).graph.walk()
             if layer.type == "Const"}
    assert ("f16" in types) == compressed, types


def test_output_cuts_the_model_at_main_graph_tensors(rnn: Path, tmp_path: Path) -> None:
    """``--output n,h_last``: the trip count n (an intermediate tensor) and h_last become
    the outputs, in that order; ys is gone. Values: onnxruntime, asked for n as an output."""
    out = tmp_path / "cut.xml"
    proc = cli("convert", rnn, "-o", out, "--output", "n, h_last")
    assert proc.returncode == 0, proc.stderr
    model = irtool.load(out)
    assert model.output_names() == ["n", "h_last"]
    proto = onnx.load(str(rnn))
    proto.graph.output.append(onnx.helper.make_tensor_value_info("n", onnx.TensorProto.INT64,
                                                                 []))
    rng = np.random.default_rng(2)
    feed = {"X": rng.standard_normal((4, 2, 8)).astype(np.float32),
            "h0": rng.standard_normal((2, 16)).astype(np.float32)}
    want = run_onnxruntime(proto, feed)
    got = irtool.run(model, feed)
    np.testing.assert_array_equal(got["n"], want["n"])
    np.testing.assert_allclose(got["h_last"], want["h_last"], rtol=1e-5, atol=1e-6)


def test_output_cut_drops_what_only_other_outputs_need(tmp_path: Path) -> None:
    """Nodes past the cut are never translated: an operator irtool lacks there does not
    stop the conversion."""
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]),
         helper.make_node("NoSuchOp", ["r"], ["z"], domain="custom.domain")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("custom.domain", 1)])
    with pytest.raises(irtool.UnsupportedOpError):
        irtool.convert(model)
    cut = irtool.convert(model, outputs=["r"])
    x = np.array([-1.0, 0.5, 2.0], np.float32)
    np.testing.assert_array_equal(irtool.run(cut, {"x": x})["r"], np.maximum(x, 0))


@pytest.mark.parametrize("name, words", [
    ("x_i", ("inside the body of node Loop", "main graph")),
    ("h_lst", ("no tensor of that name", "did you mean h_last?"))])
def test_output_refuses_body_tensors_and_unknown_names(rnn: Path, name: str,
                                                       words: tuple[str, ...]) -> None:
    _one_line(cli("convert", rnn, "--output", name), 1, f"--output {name}", *words)


# -- one shape syntax; dynamic dims defaulted ------------------------------------------

def test_check_defaults_dynamic_dims_to_1_with_one_warning(rnn: Path) -> None:
    proc = cli("check", rnn)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1, proc.stderr
    assert "X float32[seq, batch, 8] -> [1, 1, 8]" in warnings[0]
    assert "h0 float32[batch2, 16] -> [1, 16]" in warnings[0]
    assert "ys      float32[1, 1, 16]" in proc.stdout
    # Shapes given in ovc's syntax or the older --shape: no warning for what they give.
    proc = cli("check", rnn, "--input", "X[3,2,8]", "--shape", "h0=2,16")
    assert proc.returncode == 0 and "warning" not in proc.stderr, proc.stderr
    assert "ys      float32[3, 2, 16]" in proc.stdout
    proc = cli("check", rnn, "--input", "X[3,?,8]")  # a ? left: defaulted, and said
    assert "X float32[seq, batch, 8] -> [3, 1, 8]" in proc.stderr
    _one_line(cli("check", rnn, "--input", "X[3,2,9]"), 1, "--input X[3,2,9] does not fit")


def test_run_without_inputs_says_how_to_make_them(rnn: Path) -> None:
    _one_line(cli("run", rnn), 1, "missing input(s) X, h0", "--random")


def test_run_random_makes_the_inputs_check_would(rnn: Path, tmp_path: Path) -> None:
    """``run --random``: the random feed of check's generator for the same seed and shapes,
    run by irtool; onnxruntime on that feed gives the expected values."""
    out = tmp_path / "o.npz"
    proc = cli("run", rnn, "--random", "--seed", "5", "--input", "X[3,2,8],h0[2,16]", "-o", out)
    assert proc.returncode == 0 and "warning" not in proc.stderr, proc.stderr
    proto = onnx.load(str(rnn))
    feed, generated = make_inputs(proto, seed=5, shapes={"X": (3, 2, 8), "h0": (2, 16)})
    assert generated == ["X", "h0"]
    want = run_onnxruntime(proto, feed)
    with np.load(out) as got:
        for name, value in want.items():
            np.testing.assert_allclose(got[name], value, rtol=1e-5, atol=1e-6)
    # On an IR: the same, its shapes read from the IR; h0 from an .npz, X made up.
    xml = irtool.save(irtool.convert(proto), tmp_path / "rnn.xml")
    np.savez(tmp_path / "h0.npz", h0=feed["h0"])
    proc = cli("run", xml, tmp_path / "h0.npz", "--random", "--seed", "5", "--input",
               "X[3,?,8]", "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert "X f32[?, ?, 8] -> [3, 1, 8]" in proc.stderr.replace("float32", "f32") or \
        "-> [3, 1, 8]" in proc.stderr
