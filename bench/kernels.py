"""irtool's kernels next to onnxruntime on three non-loop models, single-threaded, and
irtool with its default threads next to BLAS left at the process's threads.

Models (built here with onnx.helper, converted with ``irtool.convert``):

- CNN, batch 32: Conv 3->16 3x3 pad 1, Relu, MaxPool 2x2, Conv 16->32 3x3 pad 1, Relu,
  MaxPool 2x2, Flatten, Gemm -> 10, on 32x3x32x32;
- transformer block: one head-split self-attention (4 heads, d=256, 128 tokens), residual,
  LayerNormalization, FFN 256->1024->256 with Sigmoid-gated activation, residual, LayerNorm;
- elementwise chain on 1e6 floats: Sigmoid(x * a + b) * x, Tanh, Add.

Every backend's outputs are checked against onnxruntime first. Timed runs are interleaved
(one run per backend per round) and the table gives medians. Single-threaded means
onnxruntime with one intra-op thread, and irtool as it runs by default: its runs limit
numpy's BLAS to one thread (``IRTOOL_BLAS_THREADS``, irtool/runtime/threads.py), so its
default is single-threaded and the "default threads no slower than single thread" target
holds by construction. "BLAS unlimited" runs irtool with ``IRTOOL_BLAS_THREADS=0`` (BLAS
at the process's default threads, irtool's behaviour before the limit); its ratio to the
default shows what the limit saves. onnxruntime's default-threads session runs with
spinning off so that its pool does not take the cores from the run after it.
Targets (issue 12): CNN within 3x of onnxruntime, transformer 1.5x, elementwise 1.3x,
default threads no slower than single-threaded.

    python bench/kernels.py [--repeats N] [--clock wall|cpu] [--columns-bytes N]

``--clock cpu`` times the process's CPU time instead of wall time (steadier on a machine
others load; the single-threaded columns only mean the same then). The CPU, its widest ISA
and the ISA caps in force are printed under the table (``bench/machine.py``). To see the
AVX2 kernels on an AVX-512 CPU: ``OPENBLAS_CORETYPE=Haswell`` (numpy's BLAS) and
``NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR"`` (numpy's own SIMD loops: exp,
tanh, the arithmetic); onnxruntime's MLAS has no such switch and keeps its AVX-512 kernels.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import irtool
from irtool.runtime import Executor

sys.path.insert(0, str(Path(__file__).resolve().parent))
import machine  # beside this script

F32 = np.float32
RNG = np.random.default_rng(0)
OPSET = [helper.make_opsetid("", 17)]


def _init(name: str, value: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value), name)


def _model(nodes: list, inits: list, inputs: list, outputs: list) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=OPSET)
    onnx.checker.check_model(model)
    return model


def cnn() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    n = helper.make_node
    w = lambda *s: (RNG.standard_normal(s) * 0.1).astype(F32)  # noqa: E731
    nodes = [
        n("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]), n("Relu", ["c1"], ["r1"]),
        n("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        n("Conv", ["p1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]), n("Relu", ["c2"], ["r2"]),
        n("MaxPool", ["r2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),
        n("Flatten", ["p2"], ["f"]), n("Gemm", ["f", "w3", "b3"], ["y"], transB=1),
    ]
    inits = [_init("w1", w(16, 3, 3, 3)), _init("b1", w(16)), _init("w2", w(32, 16, 3, 3)),
             _init("b2", w(32)), _init("w3", w(10, 32 * 8 * 8)), _init("b3", w(10))]
    model = _model(nodes, inits, [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                [32, 3, 32, 32])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [32, 10])])
    return model, {"x": RNG.standard_normal((32, 3, 32, 32)).astype(F32)}


def transformer(tokens: int = 128, d: int = 256, heads: int = 4
                ) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    n = helper.make_node
    w = lambda *s: (RNG.standard_normal(s) / np.sqrt(s[0])).astype(F32)  # noqa: E731
    hd = d // heads
    split = np.array([1, tokens, heads, hd], np.int64)
    nodes = []
    for p in "qkv":
        nodes += [n("MatMul", ["x", f"W{p}"], [f"{p}0"]),
                  n("Reshape", [f"{p}0", "split"], [f"{p}1"]),
                  n("Transpose", [f"{p}1"], [p], perm=[0, 2, 1, 3] if p != "k" else [0, 2, 3, 1])]
    nodes += [
        n("MatMul", ["q", "k"], ["s0"]), n("Mul", ["s0", "scale"], ["s1"]),
        n("Softmax", ["s1"], ["a"], axis=-1), n("MatMul", ["a", "v"], ["o0"]),
        n("Transpose", ["o0"], ["o1"], perm=[0, 2, 1, 3]), n("Reshape", ["o1", "merge"], ["o2"]),
        n("MatMul", ["o2", "Wo"], ["o3"]), n("Add", ["o3", "x"], ["h0"]),
        n("LayerNormalization", ["h0", "g1", "be1"], ["h1"], axis=-1),
        n("MatMul", ["h1", "W1"], ["f0"]), n("Add", ["f0", "c1"], ["f1"]),
        n("Sigmoid", ["f1"], ["f2"]), n("Mul", ["f1", "f2"], ["f3"]),
        n("MatMul", ["f3", "W2"], ["f4"]), n("Add", ["f4", "h1"], ["f5"]),
        n("LayerNormalization", ["f5", "g2", "be2"], ["y"], axis=-1),
    ]
    inits = [_init(f"W{p}", w(d, d)) for p in "qkvo"] + [
        _init("split", split), _init("merge", np.array([1, tokens, d], np.int64)),
        _init("scale", np.array(1 / np.sqrt(hd), F32)),
        _init("g1", np.ones(d, F32)), _init("be1", np.zeros(d, F32)),
        _init("W1", w(d, 4 * d)), _init("c1", np.zeros(4 * d, F32)), _init("W2", w(4 * d, d)),
        _init("g2", np.ones(d, F32)), _init("be2", np.zeros(d, F32))]
    model = _model(nodes, inits,
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, tokens, d])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, tokens, d])])
    return model, {"x": RNG.standard_normal((1, tokens, d)).astype(F32)}


def elementwise(size: int = 10**6) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    n = helper.make_node
    nodes = [n("Mul", ["x", "a"], ["t0"]), n("Add", ["t0", "b"], ["t1"]),
             n("Sigmoid", ["t1"], ["t2"]), n("Mul", ["t2", "x"], ["t3"]),
             n("Tanh", ["t3"], ["t4"]), n("Add", ["t4", "x"], ["y"])]
    inits = [_init("a", np.array(0.5, F32)), _init("b", np.array(0.1, F32))]
    model = _model(nodes, inits,
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [size])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [size])])
    return model, {"x": RNG.standard_normal(size).astype(F32)}


def _ort(model: onnx.ModelProto, threads: int) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    if threads:
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
    else:
        # Its pool's threads would spin after each run and slow the next backend's run
        # in the interleaving: no spinning, the ratios stay about each backend alone.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])


def _irtool(ex: Executor, feeds: dict, blas: str) -> Callable[[], object]:
    def call() -> object:
        os.environ["IRTOOL_BLAS_THREADS"] = blas
        return ex.run(feeds)
    return call


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    ap.add_argument("--columns-bytes", type=int, metavar="N",
                    help="the convolution's im2col columns made N bytes at a time (0: all "
                         "the batch's at once; default: irtool's COLUMNS_BYTES)")
    args = ap.parse_args()
    if args.columns_bytes is not None:
        from irtool.opset import convolution

        convolution.COLUMNS_BYTES = args.columns_bytes
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    targets = {"CNN batch 32": 3.0, "transformer block": 1.5, "elementwise chain 1e6": 1.3}
    rows = []
    for title, build in [("CNN batch 32", cnn), ("transformer block", transformer),
                         ("elementwise chain 1e6", elementwise)]:
        model, feeds = build()
        ex = Executor(irtool.convert(model))
        ort1, ortd = _ort(model, 1), _ort(model, 0)
        want = ort1.run(None, feeds)[0]
        backends = {"ort 1 thread": lambda s=ort1, f=feeds: s.run(None, f),
                    "ort default": lambda s=ortd, f=feeds: s.run(None, f),
                    "irtool 1 thread": _irtool(ex, feeds, "1"),
                    "irtool BLAS unlimited": _irtool(ex, feeds, "0")}
        for name, fn in backends.items():
            got = fn()
            got = next(iter(got.values())) if isinstance(got, dict) else got[0]
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4, err_msg=name)
        times: dict[str, list[float]] = {k: [] for k in backends}
        for _ in range(args.repeats):
            for name, fn in backends.items():
                t = clock()
                fn()
                times[name].append(clock() - t)
        os.environ.pop("IRTOOL_BLAS_THREADS", None)
        med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        rows.append((title, med))
    print(f"{'model':24} {'irtool ms':>9} {'ort 1t ms':>9} {'ratio':>6} {'target':>7} "
          f"{'irtool BLAS unlimited ms':>24} {'unlimited/default':>17} {'ort dflt ms':>11}")
    for title, med in rows:
        ratio = med["irtool 1 thread"] / med["ort 1 thread"]
        unlimited = med["irtool BLAS unlimited"] / med["irtool 1 thread"]
        target = targets[title]
        print(f"{title:24} {med['irtool 1 thread']:9.2f} {med['ort 1 thread']:9.2f} "
              f"{ratio:6.2f} {target:4.1f}x {'met' if ratio <= target else 'NOT met':>7} "
              f"{med['irtool BLAS unlimited']:24.2f} {unlimited:17.2f} "
              f"{med['ort default']:11.2f}")
    print(f"(medians of {args.repeats} interleaved runs, {args.clock} time; irtool = its "
          "default, BLAS at one thread, so default threads == single thread)")
    # The CNN and transformer ratios follow the BLAS's GEMM speed (see bench/README.md).
    print(machine.describe() + f"; NPY_DISABLE_CPU_FEATURES="
          f"{os.environ.get('NPY_DISABLE_CPU_FEATURES', 'unset')}")


if __name__ == "__main__":
    main()
