"""How validate, load and run scale with the number of layers, next to OpenVINO's
read_model on the same files.

The IR is a chain: Parameter x (f32[1,4]) -> (Const c_i, Add) repeated -> Result, each
Const with its own 16 bytes in the .bin (all ones, so the output is x + the number of
Adds, checked exactly). It is written as text here, not through irtool.

Each measurement runs in a fresh child process, so its peak memory (the child's
maximum resident set, imports included) is its own; times are wall time of the call
alone (imports excluded: OpenVINO's and ``ov.Core()``, irtool's modules with those it
imports only when first used), the median of the repeats. Operations:

* ``ov read``: ``openvino.Core().read_model(xml)``;
* ``validate``: ``irtool.validate(xml)`` (XSD, reading, every semantic rule, the weights);
* ``load``: ``irtool.load(xml)`` (strict: the same checks, then the model);
* ``run``: ``irtool.run(xml, {"x": zeros})`` (load, compile the plan, run it).

Prints one table: time (wall and the process's CPU time, steadier on a loaded machine) and
peak memory per operation and size, and each irtool operation's ratios to ``ov read``. The
repeats go in rounds of every operation in turn; ``--ops`` picks some (``ov read`` is always
measured: the ratios are to it).
10^6 layers take minutes and several GB per process (OpenVINO's read alone about 100 s and
5 GB on a 2-core machine), so they run only with ``--million``.

    python bench/scale.py [--million] [--sizes 1000,10000] [--repeats N] [--keep DIR]
                          [--ops validate,load]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from tqdm import tqdm

_CHILD = r"""
import json, resource, sys, time
op, xml = sys.argv[1], sys.argv[2]
if op == "ov read":
    import openvino as ov
    core = ov.Core()
    t, c = time.perf_counter(), time.process_time()
    core.read_model(xml)
    out = None
else:
    import numpy as np
    import irtool
    # irtool imports its parts when first used; imported here, before the clock, as
    # OpenVINO's are above (networkx, lxml, the rules, the runtime: 0.2-0.3 s).
    import irtool.validation.checker, irtool.runtime  # noqa: E401
    t, c = time.perf_counter(), time.process_time()
    if op == "validate":
        found = irtool.validate(xml)
        assert not found, [d.format() for d in found[:3]]
        out = None
    elif op == "load":
        irtool.load(xml)
        out = None
    else:
        out = irtool.run(xml, {"x": np.zeros((1, 4), np.float32)})["y"].tolist()
elapsed, cpu = time.perf_counter() - t, time.process_time() - c
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"seconds": elapsed, "cpu": cpu, "peak": peak, "out": out}))
"""

OPS = ("ov read", "validate", "load", "run")


def write_chain(xml: Path, layers: int) -> int:
    """The chain IR of about ``layers`` layers; returns the number of Adds."""
    adds = max(1, (layers - 2) // 2)
    dims = "<dim>1</dim><dim>4</dim>"
    port = '<port id="{}" precision="FP32">' + dims + "</port>"
    with open(xml, "w", encoding="utf-8") as f:
        f.write('<?xml version="1.0"?>\n<net name="chain" version="11">\n<layers>\n')
        f.write('<layer id="0" name="x" type="Parameter" version="opset1">'
                '<data shape="1,4" element_type="f32"/><output><port id="0" precision="FP32" '
                f'names="x">{dims}</port></output></layer>\n')
        for u in range(adds):
            c, a = 1 + 2 * u, 2 + 2 * u
            f.write(f'<layer id="{c}" name="c{u}" type="Const" version="opset1"><data '
                    f'element_type="f32" shape="1,4" offset="{16 * u}" size="16"/><output>'
                    f'{port.format(0)}</output></layer>\n')
            f.write(f'<layer id="{a}" name="add{u}" type="Add" version="opset1"><data '
                    f'auto_broadcast="numpy"/><input>{port.format(0)}{port.format(1)}</input>'
                    f'<output>{port.format(2)}</output></layer>\n')
        last = 2 * adds + 1
        f.write(f'<layer id="{last}" name="y" type="Result" version="opset1"><input>'
                f'{port.format(0)}</input></layer>\n</layers>\n<edges>\n')
        prev, prev_port = 0, 0
        for u in range(adds):
            c, a = 1 + 2 * u, 2 + 2 * u
            f.write(f'<edge from-layer="{prev}" from-port="{prev_port}" to-layer="{a}" '
                    f'to-port="0"/>\n<edge from-layer="{c}" from-port="0" to-layer="{a}" '
                    'to-port="1"/>\n')
            prev, prev_port = a, 2
        f.write(f'<edge from-layer="{prev}" from-port="2" to-layer="{last}" to-port="0"/>\n'
                "</edges>\n</net>\n")
    np.ones(adds * 4, np.float32).tofile(xml.with_suffix(".bin"))
    return adds


def measure(op: str, xml: Path, timeout: float) -> dict:
    try:
        proc = subprocess.run([sys.executable, "-c", _CHILD, op, str(xml)], capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout:.0f} s"}
    if proc.returncode != 0:
        lines = (proc.stderr or proc.stdout).strip().splitlines() or ["?"]
        return {"error": f"exit {proc.returncode}: {lines[-1][:80]}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _mb(n: float) -> str:
    return f"{n / 2**20:,.0f} MB"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000",
                        help="layer counts, comma separated (default 10^3..10^5)")
    parser.add_argument("--million", action="store_true", help="also 10^6 layers (minutes)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="runs per measurement below 10^6 layers (10^6: one)")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per child")
    parser.add_argument("--keep", metavar="DIR", help="write the IRs here and keep them")
    parser.add_argument("--ops", default=",".join(OPS),
                        help=f"operations, comma separated (default {','.join(OPS)})")
    args = parser.parse_args(argv)
    ops = [op.strip() for op in args.ops.split(",") if op.strip()]
    unknown = sorted(set(ops) - set(OPS))
    if unknown:
        parser.error(f"unknown operation(s) {', '.join(unknown)}: choose from {', '.join(OPS)}")
    if "ov read" not in ops:
        ops.insert(0, "ov read")  # every ratio is to it
    sizes = [int(float(s)) for s in args.sizes.split(",") if s]
    if args.million and 1_000_000 not in sizes:
        sizes.append(1_000_000)
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="irtool-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"{'layers':>9} {'operation':<9} {'time':>9} {'cpu':>9} {'peak memory':>12} "
          f"{'time / ov':>9} {'cpu / ov':>9} {'memory / ov':>11}")
    wrong = False
    for size in tqdm(sizes, desc="scale", unit="size", leave=False,
                     disable=not sys.stderr.isatty()):
        xml = folder / f"chain{size}.xml"
        adds = write_chain(xml, size)
        repeats = 1 if size >= 1_000_000 else max(1, args.repeats)
        ov: dict = {}
        # Rounds of every operation in turn, so that a noisy stretch of a shared machine
        # falls on all of them alike.
        rounds = [{op: measure(op, xml, args.timeout) for op in ops} for _ in range(repeats)]
        for op in ops:
            runs = [r[op] for r in rounds]
            failed = next((r for r in runs if "error" in r), None)
            if failed is not None:
                print(f"{size:>9,} {op:<9} {failed['error']}")
                continue
            seconds = statistics.median(r["seconds"] for r in runs)
            cpu = statistics.median(r["cpu"] for r in runs)
            peak = max(r["peak"] for r in runs)
            if op == "ov read":
                ov = {"seconds": seconds, "cpu": cpu, "peak": peak}
                ratio = ""
            else:
                ratio = (f"{seconds / ov['seconds']:>9.2f} {cpu / ov['cpu']:>9.2f} "
                         f"{peak / ov['peak']:>11.2f}" if ov else "")
            if op == "run" and runs[0]["out"] != [[float(adds)] * 4]:
                wrong = True
                ratio += "  WRONG OUTPUT"
            print(f"{size:>9,} {op:<9} {seconds:>8.2f}s {cpu:>8.2f}s {_mb(peak):>12} {ratio}",
                  flush=True)
        if not args.keep:
            xml.unlink()
            xml.with_suffix(".bin").unlink()
    if not args.keep:
        folder.rmdir()
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
