"""``irtool check --localize``: does it name the right layer, and what does it cost?

Three tables, from one run:

1. **planted**: divergences planted in irtool's kernels (``tests/support/planted.py``): a
   Tan wrong in one iteration of a body 1, 2 and 3 Loops deep, in a TensorIterator, in
   each branch of an If inside a Loop, at step 2 of a session, a NaN from a Log mid-graph.
   The expected layer, iterations and step are where the plant is (from how the model
   was built); the row says whether ``--localize`` named exactly that.
2. **quirks**: the OpenVINO quirks of docs/openvino-quirks.md (the tests of
   ``tests/tools/test_localize_quirks.py``): whether each reproduces on this CPU, and the
   layer named.
3. **cost**: ``check`` and ``check --localize`` of the same IR, with a Tan planted wrong,
   on a model of 2,000 layers and on a Loop of 10,000 iterations (and once more with a
   small ``--memory-budget``, to show the segments): each in a fresh process, runs
   interleaved, the median wall time of ``irtool.cli.main`` and each process's peak
   memory (its own and its OpenVINO worker's, ``ru_maxrss``). Targets: at most 3x the
   time and 2x the peak memory of the plain check.

    python bench/localize.py [--repeats N] [--only planted,quirks,cost] [--quick]

To time, run it with ``env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE`` on a quiet machine.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

F32 = np.float32


# -- 1. planted ------------------------------------------------------------------------------


def planted_rows() -> list[list[str]]:
    from support.planted import code, input_is, nested_loops, wrong_kernel
    from tools import test_localize as cases

    import irtool
    from irtool.opset.elementwise import Log, Tan

    rows = []
    x = np.array([1, 2, 3, 4], F32)

    def row(case: str, expected: tuple, report: object, seconds: float) -> list[str]:
        loc = report.localization  # type: ignore[attr-defined]
        found = loc.finding if loc is not None else None
        got = (found.path, found.iterations, found.step) if found else None
        runs = len(loc.runs) if loc is not None else 0
        return [case, _where(*expected), _where(*got) if got else "none",
                "yes" if got == expected else "NO", str(runs), f"{seconds:.2f}"]

    with tempfile.TemporaryDirectory() as tmp:
        for iterations in [(2,), (0,), (1, 2), (2, 0), (2, 1, 3), (0, 3, 4)]:
            model, where = nested_loops(len(iterations))
            xml = irtool.save(model, Path(tmp) / f"nested{len(iterations)}.xml")
            with wrong_kernel(Tan, input_is(code(iterations))):
                started = time.perf_counter()
                report = irtool.check(xml, {"x": x}, localize=True)
            rows.append(row(f"{len(iterations)} Loop(s) deep", (where.path, iterations, None),
                            report, time.perf_counter() - started))
        model, path = cases._tensor_iterator()
        xml = irtool.save(model, Path(tmp) / "ti.xml")
        xs = np.arange(20, dtype=F32).reshape(5, 4)
        with wrong_kernel(Tan, input_is(1.2)):
            started = time.perf_counter()
            report = irtool.check(xml, {"x": xs}, localize=True)
        rows.append(row("TensorIterator", (path, (3,), None), report,
                        time.perf_counter() - started))
        model, paths = cases._if_in_loop()
        xml = irtool.save(model, Path(tmp) / "if.xml")
        acc, reads = x.copy(), {}
        for i in range(6):
            reads[i] = acc.copy()
            acc = (np.tan(acc * F32(0.1)) if i % 2 else np.log(np.abs(acc))).astype(F32) + F32(1)
        for branch, iteration in (("then", 3), ("else", 4)):
            cls, arg = (Tan, reads[iteration] * F32(0.1)) if branch == "then" else \
                (Log, np.abs(reads[iteration]))
            with wrong_kernel(cls, lambda inputs, arg=arg: np.allclose(inputs[0], arg)):
                started = time.perf_counter()
                report = irtool.check(xml, {"x": x}, localize=True)
            rows.append(row(f"If {branch} branch in a Loop",
                            (paths["tan" if branch == "then" else "log"], (iteration,), None),
                            report, time.perf_counter() - started))
        model, tan_path, _ = cases._accumulator()
        xml = irtool.save(model, Path(tmp) / "session.xml")
        steps = [{"x": np.full(4, 0.1 * k, F32)} for k in range(4)]
        with wrong_kernel(Tan, input_is(0.2)):
            started = time.perf_counter()
            report = irtool.check(xml, steps, localize=True)
        rows.append(row("step 2 of a session", (tan_path, (), 2), report,
                        time.perf_counter() - started))
        model, log_path = cases._chain()
        xml = irtool.save(model, Path(tmp) / "nan.xml")

        def nan(v: np.ndarray) -> np.ndarray:
            v = v.copy()
            v[1, 2] = np.nan
            return v

        with wrong_kernel(Log, lambda inputs: True, nan):
            started = time.perf_counter()
            report = irtool.check(xml, {"x": np.linspace(-1, 1, 6, dtype=F32).reshape(2, 3)},
                                  localize=True)
        rows.append(row("a NaN mid-graph", (log_path, (), None), report,
                        time.perf_counter() - started))
    return rows


def _where(path: str, iterations: tuple, step: int | None) -> str:
    text = f"layer {path}"
    if iterations:
        text += f" iteration {','.join(map(str, iterations))}"
    if step is not None:
        text += f" step {step}"
    return text


# -- 2. quirks -------------------------------------------------------------------------------


def quirk_rows() -> list[list[str]]:
    from tools import test_localize_quirks as quirks

    rows = []
    seen: list = []
    original = quirks._checked

    def spy(xml: Path, inputs: object) -> object:
        report = original(xml, inputs)
        seen.append(report)
        return report

    quirks._checked = spy
    try:
        for name in [n for n in dir(quirks) if n.startswith("test_")]:
            seen.clear()
            with tempfile.TemporaryDirectory() as tmp, np.errstate(all="ignore"):
                try:
                    getattr(quirks, name)(Path(tmp))
                    verdict = "passes"
                except BaseException as err:
                    verdict = f"FAILS: {type(err).__name__}"
            report = seen[-1] if seen else None
            found = report.localization.finding if report is not None and \
                report.localization is not None else None
            reproduces = "no (agrees)" if report is not None and report.ok else "yes"
            named = (f'{found.type} "{found.name}" ({found.kind})' + (
                f" iteration {','.join(map(str, found.iterations))}" if found.iterations
                else "") + (f" step {found.step}" if found.step is not None else "")) \
                if found else "-"
            rows.append([name.removeprefix("test_").replace("_", " "), reproduces, named,
                         verdict])
    finally:
        quirks._checked = original
    return rows


# -- 3. cost ---------------------------------------------------------------------------------


def layers_model(blocks: int) -> object:
    """A chain of ``blocks`` blocks of 5 layers (MatMul, Add, Sin/Tan, Add, Multiply by 0.5)
    over x [32, 64]; the fifth block from the end has a Tan instead of its Sin (nearer the
    start, the halvings would wash a planted error out of the output)."""
    from support.ir_builders import Net

    rng = np.random.default_rng(0)
    net = Net()
    h = net.param("x", "f32", (32, 64))
    for k in range(blocks):
        w = net.const((rng.standard_normal((64, 64)) / 8).astype(F32))
        b = net.const((rng.standard_normal(64) / 8).astype(F32))
        m = net.op("MatMul", "opset1", [h, w], {"transpose_a": "false", "transpose_b": "false"})
        a = net.op("Add", "opset1", [m, b], {"auto_broadcast": "numpy"})
        act = net.op("Tan" if k == blocks - 5 else "Sin", "opset1", [a],
                     name="planted_tan" if k == blocks - 5 else None)
        r = net.op("Add", "opset1", [act, h], {"auto_broadcast": "numpy"})
        h = net.op("Multiply", "opset1", [r, net.const(F32(0.5))], {"auto_broadcast": "numpy"})
    net.result(h)
    return net.model()


def loop_model(trip: int) -> object:
    """A Loop of ``trip`` iterations carrying h [1, 32]: h = tanh(h @ W + b + tan(i * 1e-4));
    outputs the last h and every iteration's (a sequence, as an RNN gives)."""
    from support.ir_builders import Net, info, true_result, unsqueeze

    rng = np.random.default_rng(1)
    body = Net()
    i = body.param("i", "i64", ())
    h = body.param("h", "f32", (1, 32))
    fi = body.op("Convert", "opset1", [i], {"destination_type": "f32"}, et="f32")
    t = body.op("Tan", "opset1", [body.op("Multiply", "opset1", [fi, body.const(F32(1e-4))],
                                          {"auto_broadcast": "numpy"})], name="planted_tan")
    w = body.const((rng.standard_normal((32, 32)) / 6).astype(F32))
    m = body.op("MatMul", "opset1", [h, w], {"transpose_a": "false", "transpose_b": "false"})
    a = body.op("Add", "opset1", [m, body.const((rng.standard_normal(32) / 8).astype(F32))],
                {"auto_broadcast": "numpy"})
    a = body.op("Add", "opset1", [a, t], {"auto_broadcast": "numpy"})
    out = body.op("Tanh", "opset1", [a])
    r = body.result(out)
    scan = body.result(unsqueeze(body, out))
    net = Net()
    x = net.param("x", "f32", (1, 32))
    lp = net.loop(body, name="long_loop")
    lp.trip_count(net.const(np.int64(trip)))
    lp.condition(net.const(np.bool_(True)))
    lp.carried(x, h, r)
    lp.current_iteration(i)
    lp.execution_condition(true_result(body))
    lp.output(r, info("f32", (1, 32)), names=["h"])
    lp.output(scan, info("f32", (-1, 1, 32)), names=["hs"], axis=0)
    _, outs = lp.build()
    net.result(outs[0])
    net.result(outs[1])
    return net.model()


def child(args: argparse.Namespace) -> int:
    """One check in this process, the plant on; prints seconds and peak memory."""
    import resource

    from support.planted import input_is, wrong_kernel

    from irtool.cli import main
    from irtool.engines.isolate import _stop_child
    from irtool.opset.elementwise import Tan

    when = (lambda inputs: True) if args.plant == "always" else input_is(float(args.plant))
    argv = ["check", args.xml, args.npz, "-q"] + (["--localize"] if args.localize else []) + \
        (["--memory-budget", args.budget] if args.budget else [])
    out = io.StringIO()
    with wrong_kernel(Tan, when), contextlib.redirect_stdout(out):
        started = time.perf_counter()
        rc = main(argv)
        seconds = time.perf_counter() - started
    _stop_child()
    found = ""
    if args.localize:
        found = next((ln for ln in out.getvalue().splitlines() if ln.startswith("localize")), "")
    print(json.dumps({"rc": rc, "seconds": seconds,
                      "self_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "worker_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
                      "found": found, "segmented": "segments" in out.getvalue()}))
    return 0


def cost_rows(repeats: int, quick: bool) -> list[list[str]]:
    import irtool

    cases = [("2,000 layers", layers_model(100 if quick else 400), "always", None),
             ("Loop of 10,000 iterations", loop_model(1000 if quick else 10_000),
              "0.07" if quick else "0.7", None),
             ("2,000 layers, --memory-budget 8M", layers_model(100 if quick else 400),
              "always", "8M")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, model, plant, budget in cases:
            xml = irtool.save(model, Path(tmp) / "m.xml")
            npz = Path(tmp) / "x.npz"
            shape = (32, 64) if "layers" in name else (1, 32)
            np.savez(npz, x=np.random.default_rng(2).standard_normal(shape).astype(F32))
            runs: dict[bool, list[dict]] = {False: [], True: []}
            for _ in range(repeats):
                for localize in (False, True):  # interleaved
                    cmd = [sys.executable, __file__, "--child", str(xml), str(npz), plant]
                    if localize:
                        cmd.append("--localize")
                    if budget:
                        cmd += ["--budget", budget]
                    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600,
                                          env={**os.environ, "PYTHONWARNINGS": "ignore"})
                    if proc.returncode != 0:
                        raise SystemExit(f"{name}: the child failed:\n{proc.stderr[-2000:]}")
                    runs[localize].append(json.loads(proc.stdout.strip().splitlines()[-1]))
            plain, found = runs[False], runs[True]

            def median(key: str, rs: list[dict]) -> float:
                return statistics.median(r[key] for r in rs)

            t0, t1 = median("seconds", plain), median("seconds", found)
            m0, m1 = median("self_mib", plain), median("self_mib", found)
            w0, w1 = median("worker_mib", plain), median("worker_mib", found)
            rows.append([name, f"{t0:.2f}", f"{t1:.2f}", f"{t1 / t0:.2f}x",
                         f"{m0:.0f}", f"{m1:.0f}", f"{m1 / m0:.2f}x",
                         f"{w0:.0f}", f"{w1:.0f}", f"{w1 / w0:.2f}x",
                         "yes" if found[-1]["segmented"] else "no",
                         found[-1]["found"].split(" at ", 1)[-1][:60]])
    return rows


def table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |"
              for r in rows]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default="planted,quirks,cost")
    parser.add_argument("--quick", action="store_true",
                        help="smaller cost models (500 layers, 1,000 iterations), 1 repeat")
    parser.add_argument("--child", nargs=3, metavar=("XML", "NPZ", "PLANT"))
    parser.add_argument("--localize", action="store_true")
    parser.add_argument("--budget")
    args = parser.parse_args()
    if args.child:
        args.xml, args.npz, args.plant = args.child
        return child(args)
    wanted = set(args.only.split(","))
    wrong = False
    if "planted" in wanted:
        rows = planted_rows()
        print("planted divergences")
        print(table(["case", "planted at", "--localize names", "right?", "runs", "seconds"],
                    rows))
        wrong |= any(r[3] != "yes" for r in rows)
        print()
    if "quirks" in wanted:
        rows = quirk_rows()
        print("OpenVINO's quirks (docs/openvino-quirks.md)")
        print(table(["quirk", "reproduces here", "--localize names", "test"], rows))
        wrong |= any(r[3] != "passes" for r in rows)
        print()
    if "cost" in wanted:
        repeats = 1 if args.quick else args.repeats
        rows = cost_rows(repeats, args.quick)
        print(f"cost: check vs check --localize, median of {repeats} interleaved run(s), "
              "a fresh process each")
        print(table(["model", "check s", "--localize s", "time", "peak MiB", "--localize MiB",
                     "memory", "OV worker MiB", "--localize MiB", "memory", "segments",
                     "named"], rows))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
