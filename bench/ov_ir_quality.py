"""IR quality for OpenVINO: OpenVINO's CPU runtime on irtool's IR next to OpenVINO on its own
conversion of the same ONNX model, on every loop case.

Cases: the samples (``samples/*.onnx``, built by ``samples/make_samples.py`` if missing),
the loop bodies of ``bench/loop_overhead.py``, the map loops of ``bench/map_loops.py``,
the exporter fixtures with control flow (``tests/fixtures/onnx_exporters``: list-stack
loops, decode loops, scans, conds) and the ONNX backend node cases with Loop, Scan or If.
Per case both models are compiled once ("INFERENCE_PRECISION_HINT": f32), their outputs
compared (a difference is reported, not timed), and then run interleaved, one run each per
round, until each has ``--repeats`` runs or spent its time budget; the table gives the
medians and the ratio irtool IR / OpenVINO's own (and, where ``--slice-inputs`` changes
the IR, the ratio of that form: the reason Gather(X, i) stays the default). Target
(issue 12): ratio <= 1.05 on every case. Cases that either side cannot convert or run
are listed with the reason.

    python bench/ov_ir_quality.py [--repeats N] [--budget S] [--only SUBSTRING] [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import onnx

import irtool

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "onnx_exporters"
TARGET = 1.05
CONTROL_FLOW = {"Loop", "Scan", "If"}


def _ops(graph: onnx.GraphProto) -> set[str]:
    ops = set()
    for node in graph.node:
        ops.add(node.op_type)
        for attr in node.attribute:
            if attr.g.node:
                ops |= _ops(attr.g)
            for g in attr.graphs:
                ops |= _ops(g)
    return ops


Case = tuple[str, onnx.ModelProto, dict[str, np.ndarray], dict[str, bool]]


def cases(quick: bool) -> Iterator[Case]:
    """(name, ONNX model, feeds, irtool.convert options) for every case."""
    samples = REPO / "samples"
    if not (samples / "predict_net.onnx").exists():
        import subprocess

        subprocess.run([sys.executable, str(samples / "make_samples.py")], check=True,
                       cwd=samples, capture_output=True)
    for path in sorted(samples.glob("*.onnx")):
        feeds = dict(np.load(path.with_suffix(".inputs.npz")))
        yield f"sample {path.stem}", onnx.load(path), feeds, {}
    sys.path.insert(0, str(REPO / "bench"))
    from loop_overhead import nest_case, rnn_case
    from map_loops import map_model

    for case in ([rnn_case(200, 8), rnn_case(50, 256), nest_case(10, 10)] if quick else
                 [rnn_case(10_000, 8), rnn_case(1_000, 256), nest_case(100, 100)]):
        yield f"loop body {case.title}", case.model, case.feeds, {}
    rng = np.random.default_rng(0)
    for width in (16, 256):
        model, _, _ = map_model(width)
        x = rng.standard_normal((1000, width)).astype(np.float32)
        yield f"map loop width {width}", model, {"X": x}, {}
        # The loop form (--no-vectorize): Gather(X, i) against the sliced input.
        yield f"map loop width {width}, --no-vectorize", model, {"X": x}, {"vectorize": False}
    for path in sorted(FIXTURES.glob("*.onnx")):
        model = onnx.load(path)
        if _ops(model.graph) & CONTROL_FLOW:
            yield f"exporter {path.stem}", model, dict(np.load(path.with_suffix(
                ".inputs.npz"))), {}
    from irtool.tools import conformance

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in conformance.node_case_names(control_flow_only=True):
            case = conformance._cases()[name]
            try:
                feeds, _ = conformance._feed_and_expected(case)
            except Exception:  # sequences / optionals: nothing to time on tensors
                continue
            yield f"node {name}", case.model, feeds, {}


def reason(err: Exception) -> str:
    """The informative line of an error (OpenVINO's first line only says where)."""
    lines = [ln.strip() for ln in str(err).splitlines()
             if ln.strip() and not ln.startswith("Exception from")]
    return (lines[0] if lines else type(err).__name__).replace("|", "/")[:110]


def _sliced_loop_inputs(ir: irtool.Model) -> int:
    return sum(1 for _, layer in ir.graph.walk() if layer.type == "Loop"
               for e in layer.port_maps.get("port_map", [])
               if e.kind == "input" and e.axis is not None)


def compiled(path: Path, feeds: dict[str, np.ndarray]) -> Callable[[], list[np.ndarray]]:
    import openvino as ov

    core = ov.Core()
    model = core.compile_model(core.read_model(str(path)), "CPU",
                               {"INFERENCE_PRECISION_HINT": "f32"})
    request = model.create_infer_request()
    names = [p.any_name for p in model.inputs]
    data = {n: np.require(feeds[n], requirements="C") for n in names if n in feeds}
    outputs = model.outputs

    def run() -> list[np.ndarray]:
        result = request.infer(data)
        return [np.array(result[o]) for o in outputs]

    return run


def same(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return len(a) == len(b) and all(
        x.shape == y.shape and (np.allclose(x, y, rtol=1e-4, atol=1e-5, equal_nan=True)
                                if x.dtype.kind in "fc" else np.array_equal(x, y))
        for x, y in zip(a, b))


def timed(runs: dict[str, Callable[[], object]], repeats: int, budget: float
          ) -> dict[str, float]:
    """Median seconds per runner, interleaved one round each (a burst of back-to-back runs
    for a runner faster than ``loop_overhead.BURST``, timed as their mean)."""
    sys.path.insert(0, str(REPO / "bench"))
    from loop_overhead import burst_size

    times: dict[str, list[float]] = {k: [] for k in runs}
    bursts = {name: burst_size(fn) for name, fn in runs.items()}
    start = time.perf_counter()
    while min(len(v) for v in times.values()) < repeats and \
            time.perf_counter() - start < budget:
        for name, fn in runs.items():
            n = bursts[name]
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            times[name].append((time.perf_counter() - t0) / n)
    return {k: statistics.median(v) for k, v in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--budget", type=float, default=None, help="seconds per case")
    parser.add_argument("--only", default="", help="cases whose name contains this")
    parser.add_argument("--quick", action="store_true", help="small loop cases, few runs")
    args = parser.parse_args(argv)
    repeats = args.repeats or (5 if args.quick else 41)
    budget = args.budget or (1.0 if args.quick else 6.0)
    rows, skipped, ratios = [], [], []
    with tempfile.TemporaryDirectory(prefix="irtool-ovq-") as tmp:
        for i, (name, model, feeds, options) in enumerate(cases(args.quick)):
            if args.only not in name:
                continue
            folder = Path(tmp) / str(i)
            folder.mkdir()
            onnx_path = folder / "model.onnx"
            onnx.save(model, onnx_path)
            try:
                ir = irtool.convert(model, **options)
                loops = sum(1 for _, layer in ir.graph.walk()
                            if layer.type in ("Loop", "TensorIterator", "If"))
                xml = irtool.save(ir, folder / "model.xml")
                ours = compiled(Path(xml), feeds)
                sliced_ir = irtool.convert(model, slice_inputs=True, **options)
                sliced = None
                if _sliced_loop_inputs(sliced_ir) > _sliced_loop_inputs(ir):
                    sliced = compiled(Path(irtool.save(sliced_ir, folder / "sliced.xml")),
                                      feeds)
            except Exception as err:
                skipped.append((name, f"irtool: {reason(err)}"))
                continue
            try:
                own = compiled(onnx_path, feeds)
                want = own()
            except Exception as err:
                skipped.append((name, f"OpenVINO own: {reason(err)}"))
                continue
            if not same(ours(), want):
                skipped.append((name, "outputs differ from OpenVINO's own conversion"))
                continue
            runs = {"own": own, "irtool": ours}
            if sliced is not None:
                runs["sliced"] = sliced
            t = timed(runs, repeats, budget)
            ratio = t["irtool"] / t["own"]
            ratios.append(ratio)
            alt = f"{t['sliced'] / t['own']:.2f}" if "sliced" in t else "-"
            rows.append((name, t["own"], t["irtool"], ratio, loops, alt))
    print(f"OpenVINO CPU on irtool's IR vs on its own ONNX conversion: median of up to "
          f"{repeats} interleaved runs per case (budget {budget:g} s)")
    print(f"| case | OpenVINO own | on irtool's IR | ratio | control-flow layers in "
          f"irtool's IR | ratio with --slice-inputs | target <= {TARGET} |")
    print("|---|---|---|---|---|---|---|")
    for name, own, ours, ratio, loops, alt in rows:
        print(f"| {name} | {own * 1e3:.3f} ms | {ours * 1e3:.3f} ms | {ratio:.2f} | {loops} | "
              f"{alt} | {'met' if ratio <= TARGET else 'missed'} |")
    for name, why in skipped:
        print(f"| {name} | - | - | - | - | - | not timed: {why} |")
    if ratios:
        missed = [r for r in rows if r[3] > TARGET]
        print(f"{len(rows)} cases timed: median ratio {statistics.median(ratios):.2f}, "
              f"max {max(ratios):.2f}; target <= {TARGET} met on {len(rows) - len(missed)}, "
              f"missed on {len(missed)}" + (": " + ", ".join(r[0] for r in missed)
                                            if missed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
