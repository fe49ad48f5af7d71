"""The switch that turns every optimisation off: ``convert(..., optimize=False)`` /
``convert --no-optimize`` and ``run``/``compile``/``check`` with ``optimize=False`` /
``--no-optimize``. Each optimisation is observed on and off (the IR keeps its Loop and its
Identity layers; the plan keeps its steps, folds nothing, inlines nothing, batches no
loop), results on and off equal onnxruntime's, and ``check`` says what was applied.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from support.compare import assert_same
from support.conversion import make_model, run_onnxruntime, vi

import irtool
from irtool.runtime import Executor

F32, I64, BOOL = np.float32, np.int64, np.bool_
RNG = np.random.default_rng(4)


def cnn_and_loop() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """Conv (with bias) -> Relu -> MaxPool on X, and a Loop over the rows of R that emits
    ``Identity(tanh(2 * R[i]))``."""
    w = RNG.standard_normal((3, 2, 3, 3)).astype(F32)
    b = RNG.standard_normal(3).astype(F32)
    cnn = [helper.make_node("Conv", ["X", "W", "B"], ["conv"], pads=[1, 1, 1, 1]),
           helper.make_node("Relu", ["conv"], ["relu"]),
           helper.make_node("MaxPool", ["relu"], ["P"], kernel_shape=[2, 2], strides=[2, 2])]
    body = helper.make_graph(
        [helper.make_node("Gather", ["R", "i"], ["r_i"], axis=0),
         helper.make_node("Constant", [], ["two"], value=numpy_helper.from_array(
             np.array(2, F32))),
         helper.make_node("Mul", ["r_i", "two"], ["m"]),
         helper.make_node("Tanh", ["m"], ["t"]),
         helper.make_node("Identity", ["t"], ["y"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
        [vi("i", I64, []), vi("cond_in", BOOL, [])],
        [vi("cond_out", BOOL, []), vi("y", F32, [4])])
    loop = [helper.make_node("Shape", ["R"], ["shape"]),
            helper.make_node("Constant", [], ["zero"], value_int=0),
            helper.make_node("Gather", ["shape", "zero"], ["trip"], axis=0),
            helper.make_node("Constant", [], ["cond"], value=helper.make_tensor(
                "c", TensorProto.BOOL, [], [True])),
            helper.make_node("Loop", ["trip", "cond"], ["Y"], body=body)]
    model = make_model([*cnn, *loop], [vi("X", F32, [1, 2, 6, 6]), vi("R", F32, [None, 4])],
                       [vi("P", F32, [1, 3, 3, 3]), vi("Y", F32, [None, 4])],
                       initializers=[numpy_helper.from_array(w, "W"),
                                     numpy_helper.from_array(b, "B")])
    feeds = {"X": RNG.standard_normal((1, 2, 6, 6)).astype(F32),
             "R": RNG.standard_normal((5, 4)).astype(F32)}
    return model, feeds


def _count(model: irtool.Model, layer_type: str) -> int:
    return sum(1 for _, layer in model.graph.walk() if layer.type == layer_type)


def test_convert_without_optimisations_keeps_the_loop_and_identities() -> None:
    model, _ = cnn_and_loop()
    applied: dict[str, int] = {}
    from irtool.frontends.onnx import convert_model

    optimised = convert_model(model, applied=applied)
    assert _count(optimised, "Loop") == 0 and applied["vectorised loops"] == 1
    plain = irtool.convert(model, optimize=False)
    assert _count(plain, "Loop") == 1
    assert _count(plain, "Identity") == 1  # the body's copy stays
    kept = irtool.convert(model, vectorize=False)
    assert _count(kept, "Loop") == 1 and _count(kept, "Identity") == 0
    with pytest.raises(irtool.ConversionError, match="optimisation"):
        irtool.convert(model, optimize=False, slice_inputs=True)


def _steps(executor: Executor) -> list[str]:
    return [step.layer.type for step in executor.plan.steps]


def test_the_executor_without_optimisations_keeps_every_step() -> None:
    """On the IR converted without optimisations: the optimised plan fuses the ReLU into
    the MaxPool, folds the bias's Unsqueeze, inlines numpy calls and has a batched form for
    the loop; the plan with ``optimize=False`` has none of them."""
    model, _ = cnn_and_loop()
    ir = irtool.convert(model, optimize=False)
    fast, plain = Executor(ir), Executor(ir, optimize=False)
    assert fast.optimizations["fused pools"] == 1
    assert fast.optimizations["folded constant steps"] >= 1
    assert fast.optimizations["inlined numpy calls"] >= 1
    assert fast.optimizations["batched loops"] == 1
    assert plain.optimizations == {}
    assert "Relu" not in _steps(fast) and "ReLU" not in _steps(fast)
    assert "ReLU" in _steps(plain) and "Unsqueeze" in _steps(plain)
    assert all(step.inlined is None for step in plain.plan.steps)
    assert all(getattr(step.kernel, "__self__", None) is not None for step in plain.plan.steps
               if step.layer.type not in ("Loop",))  # each op's own compute
    loops = {}
    for name, executor in (("fast", fast), ("plain", plain)):
        (loops[name],) = [s.kernel for s in executor.plan.steps if s.layer.type == "Loop"]
    assert loops["plain"].batched is None and loops["fast"].batched is not None
    # The loop's generated code: the optimised one indexes R by the counter and stacks the
    # rows without their Unsqueeze; the plain one calls every body step's kernel, and no
    # step runs as a direct numpy call (nor writes into an input's buffer).
    fast_loop, plain_loop = (loops[k].iteration.iterate.source for k in ("fast", "plain"))
    assert "d0[i]" in fast_loop and '"Unsqueeze' not in fast_loop
    assert "d0[i]" not in plain_loop and '"Unsqueeze' in plain_loop
    for source in (plain_loop, plain.plan.execute.source):
        assert " = f" not in source and "out=" not in source


@pytest.mark.parametrize("optimize", [True, False])
def test_results_on_and_off_equal_onnxruntime(optimize: bool, tmp_path: Path) -> None:
    model, feeds = cnn_and_loop()
    expected = run_onnxruntime(model, feeds)
    ir = irtool.convert(model, optimize=optimize)
    assert_same(irtool.run(ir, feeds, optimize=optimize), expected, "irtool", atol=1e-5)
    assert_same(irtool.compile(ir, optimize=optimize).run(feeds), expected, "session",
                atol=1e-5)
    xml = irtool.save(ir, tmp_path / "model.xml")
    assert_same(irtool.run(xml, feeds, backend="openvino"), expected, "openvino", atol=1e-5)
    onnx.save(model, tmp_path / "model.onnx")
    assert_same(irtool.run(tmp_path / "model.onnx", feeds, optimize=optimize), expected,
                "irtool on the .onnx", atol=1e-5)


def test_check_says_what_was_applied(tmp_path: Path) -> None:
    model, feeds = cnn_and_loop()
    on = irtool.check(model, feeds)
    assert on.ok, on.failures()
    assert on.optimizations["convert"]["vectorised loops"] == 1
    assert on.optimizations["irtool"]["fused pools"] == 1
    text = on.format_table()
    assert "vectorised 1 loop" in text and "fused 1 pool" in text
    off = irtool.check(model, feeds, optimize=False)
    assert off.ok, off.failures()
    assert off.optimizations == {"convert": {}, "irtool": {}}
    assert off.to_dict()["optimize"] is False
    assert "optimisations (--no-optimize): convert: none; irtool: none" in off.format_table()


def cli(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "irtool", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def test_the_command_line_switch(tmp_path: Path) -> None:
    model, feeds = cnn_and_loop()
    onnx_path = tmp_path / "m.onnx"
    onnx.save(model, onnx_path)
    np.savez(tmp_path / "in.npz", **feeds)
    proc = cli("convert", onnx_path, "-o", tmp_path / "plain.xml", "--no-optimize")
    assert proc.returncode == 0, proc.stderr
    assert _count(irtool.load(tmp_path / "plain.xml"), "Loop") == 1
    proc = cli("convert", onnx_path, "-o", tmp_path / "x.xml", "--no-optimize",
               "--slice-inputs")
    assert proc.returncode == 1 and "--no-optimize" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "x.xml").exists()
    proc = cli("run", tmp_path / "plain.xml", tmp_path / "in.npz", "--no-optimize", "-o",
               tmp_path / "out.npz")
    assert proc.returncode == 0, proc.stderr
    with np.load(tmp_path / "out.npz") as out:
        assert_same(dict(out), run_onnxruntime(model, feeds), "irtool run --no-optimize",
                    atol=1e-5)
    proc = cli("check", onnx_path, tmp_path / "in.npz", "--no-optimize", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["optimize"] is False and report["optimizations"]["irtool"] == {}
    proc = cli("check", onnx_path, tmp_path / "in.npz")
    assert proc.returncode == 0, proc.stderr
    assert "vectorised 1 loop" in proc.stdout and "fused 1 pool" in proc.stdout
