"""Map-like loops: 1000 independent iterations of y_i = tanh(W x_i + b), widths 16 and 256.

The ONNX model is a Loop whose trip count is ``Shape(X)[0]`` and whose body gathers row
``i`` of ``X`` (as exporters write a ``for`` over the rows), built here with onnx.helper.
Columns, each the median of N interleaved runs (see ``loop_overhead.measure``), checked
against numpy before timing:

* ``numpy batched``: the one batched op, ``np.tanh(X @ W.T + b)``, with BLAS on one
  thread as irtool's runtime runs it (``IRTOOL_BLAS_THREADS``, default 1);
* ``irtool``: irtool's runtime on the IR ``irtool convert`` writes (vectorised: the Loop
  is gone from the IR); ``irtool loop``: the same with ``--no-vectorize`` and the
  runtime's batching off, the loop as it was;
* ``onnxruntime`` on the ONNX model;
* ``OpenVINO own``: OpenVINO on its own conversion of the ONNX model (read_model);
  ``OpenVINO irtool``: OpenVINO on irtool's IR.

Targets (issue 12): irtool within 2x of the batched numpy op at both widths; OpenVINO on
irtool's IR at least 2x faster than OpenVINO on its own conversion at width 16.

    python bench/map_loops.py [--repeats N] [--iterations N] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from loop_overhead import Timing, fmt, measure, openvino_runner
from onnx import TensorProto, helper, numpy_helper
from threadpoolctl import threadpool_limits

import irtool
from irtool.runtime import Executor

F32 = np.float32
COLUMNS = ("numpy batched", "irtool", "irtool loop", "onnxruntime", "OpenVINO own",
           "OpenVINO irtool")


def map_model(width: int, seed: int = 0) -> tuple[onnx.ModelProto, np.ndarray, np.ndarray]:
    """The ONNX map loop over the rows of ``X`` [N, width]; returns it, W and b."""
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((width, width)) / np.sqrt(width)).astype(F32)
    b = rng.standard_normal(width).astype(F32)
    body = helper.make_graph(
        [helper.make_node("Gather", ["X", "i"], ["x_i"], axis=0),
         helper.make_node("MatMul", ["W", "x_i"], ["wx"]),
         helper.make_node("Add", ["wx", "b"], ["pre"]),
         helper.make_node("Tanh", ["pre"], ["y"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "map_body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [width])])
    graph = helper.make_graph(
        [helper.make_node("Shape", ["X"], ["shape"]),
         helper.make_node("Constant", [], ["zero"], value_int=0),
         helper.make_node("Gather", ["shape", "zero"], ["trip"], axis=0),
         helper.make_node("Constant", [], ["cond"], value=helper.make_tensor(
             "true", TensorProto.BOOL, [], [True])),
         helper.make_node("Loop", ["trip", "cond"], ["Y"], body=body)],
        f"map_w{width}",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", width])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", width])],
        initializer=[numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = min(model.ir_version, 10)
    return model, w, b


def runners(width: int, iterations: int, tmp: Path) -> tuple[dict, dict]:
    import onnxruntime as ort

    model, w, b = map_model(width)
    x = np.random.default_rng(1).standard_normal((iterations, width)).astype(F32)
    feeds = {"X": x}
    onnx_path = tmp / f"map_w{width}.onnx"
    onnx.save(model, onnx_path)
    ours, kept = tmp / f"irtool_w{width}.xml", tmp / f"loop_w{width}.xml"
    irtool.save(irtool.convert(model), ours)
    irtool.save(irtool.convert(model, vectorize=False), kept)
    vectorised = Executor(irtool.load(ours))
    looping = Executor(irtool.load(kept), vectorize=False)
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), opts,
                                   providers=["CPUExecutionProvider"])
    wt = np.ascontiguousarray(w.T)
    run = {
        "numpy batched": lambda: {"Y": np.tanh(x @ wt + b)},
        "irtool": lambda: vectorised.run(feeds),
        "irtool loop": lambda: looping.run(feeds),
        "onnxruntime": lambda: {"Y": session.run(None, feeds)[0]},
        "OpenVINO own": openvino_runner(onnx_path, feeds),
        "OpenVINO irtool": openvino_runner(ours, feeds),
    }
    return run, {"Y": np.tanh(x @ wt + b)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="few repeats (a smoke run)")
    args = parser.parse_args(argv)
    repeats = args.repeats or (3 if args.quick else 31)
    rows: list[tuple[int, dict[str, Timing]]] = []
    with tempfile.TemporaryDirectory(prefix="irtool-map-") as tmp:
        for width in (16, 256):
            run, expected = runners(width, args.iterations, Path(tmp))
            with threadpool_limits(limits=1, user_api="blas"):  # numpy batched as irtool runs
                rows.append((width, measure(run, expected, repeats, 30.0)))
    print(f"map-like loop y_i = tanh(W x_i + b), {args.iterations} iterations: median of "
          f"{repeats} interleaved runs, ratio to numpy batched")
    print("width " + "".join(c.ljust(24) for c in COLUMNS))
    for width, timings in rows:
        base = timings["numpy batched"].median
        print(f"{width:<6}" + "".join(fmt(timings[c], base).ljust(24) for c in COLUMNS))
    print("targets:")
    for width, timings in rows:
        t = {c: timings[c].median for c in COLUMNS}
        if t["irtool"] and t["numpy batched"]:
            ratio = t["irtool"] / t["numpy batched"]
            print(f"  width {width}: irtool / numpy batched = {ratio:.2f} (target <= 2) "
                  f"[{'met' if ratio <= 2 else 'missed'}]")
        if t["OpenVINO own"] and t["OpenVINO irtool"]:
            speedup = t["OpenVINO own"] / t["OpenVINO irtool"]
            goal = " (target >= 2)" if width == 16 else ""
            verdict = (" [met]" if speedup >= 2 else " [missed]") if width == 16 else ""
            print(f"  width {width}: OpenVINO own / OpenVINO on irtool's IR = "
                  f"{speedup:.2f}{goal}{verdict}")
        if t["irtool loop"] and t["irtool"]:
            print(f"  width {width}: irtool loop / irtool vectorised = "
                  f"{t['irtool loop'] / t['irtool']:.1f}")
    wrong = [c for _, ts in rows for c, x in ts.items() if x.note.startswith(("WRONG", "fail"))]
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
