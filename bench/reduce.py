"""How fast ``irtool reduce`` shrinks a problem buried in a large IR, and to how little.

The models are ``tests/support/buried.py``'s: a chain of elementwise layers with one
problem planted at a known place, in the middle:

* a wrong kernel (``tests/support/wrong_sin.py``, loaded as an extension: irtool's ``Sin``
  of opset16 adds 1 above 0.5, OpenVINO's does not): in the chain, in the innermost body of
  Loops nested 2 and 3 deep, in an If's branch, in a TensorIterator's last iteration;
  condition ``disagree``;
* the zero-trip Loop OpenVINO's CPU plugin dies of (SIGFPE, ``docs/openvino-quirks.md``);
  condition ``openvino-crash``;
* the Loop whose carried values swap, which the CPU plugin computes wrong (the same page);
  condition ``disagree``.

Each case runs in a fresh child process (the extension stays registered in the process
that loads it); the table gives the layers before and after (top graph / with bodies), the
computing layers left, the candidates tried and kept, and the wall time of ``reduce``
(the target: at most 10 layers, under 5 minutes, from 1,000 layers or more). A case whose
quirk does not reproduce on this machine says so instead.

    python bench/reduce.py [--layers 1000] [--only NAME,NAME]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CASES = {
    "wrong kernel, chain": ("wrong_kernel_chain", {}, "disagree"),
    "wrong kernel, Loops 2 deep": ("wrong_kernel_in_loops", {"depth": 2}, "disagree"),
    "wrong kernel, Loops 3 deep": ("wrong_kernel_in_loops", {"depth": 3}, "disagree"),
    "wrong kernel, If branch": ("wrong_kernel_in_if", {}, "disagree"),
    "wrong kernel, TensorIterator": ("wrong_kernel_in_tensor_iterator", {}, "disagree"),
    "zero-trip Loop (SIGFPE)": ("zero_trip_crash", {}, "openvino-crash"),
    "swapped carried values": ("swapped_carry", {}, "disagree"),
}

_CHILD = r"""
import json, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, str(Path(sys.argv[1]) / "tests"))
import numpy as np
import irtool
from irtool.tools.reduce import ReduceError
from irtool.tools.reduce.edits import operations
from support import buried

maker, kwargs, until, layers = sys.argv[2], json.loads(sys.argv[3]), sys.argv[4], int(sys.argv[5])
irtool.load_extension(buried.WRONG_SIN)
case = getattr(buried, maker)(layers, **kwargs)
with tempfile.TemporaryDirectory() as tmp:
    xml = irtool.save(case.model, Path(tmp) / "model.xml")
    np.savez(Path(tmp) / "in.npz", **case.feed)
    try:
        r = irtool.reduce(xml, Path(tmp) / "in.npz", until, Path(tmp) / "out")
    except ReduceError as err:
        print(json.dumps({"error": str(err).split(": ", 1)[-1]}))
        sys.exit(0)
    model = irtool.load(r.xml, strict=False)
    ops = [model.graph.layer(lid).type for lid in operations(model)]
    print(json.dumps({"before": r.before, "after": r.after, "ops": ops, "tried": r.tried,
                      "kept": r.kept, "seconds": r.seconds, "detail": r.detail,
                      "expected": case.minimal_ops}))
"""


def run_case(name: str, layers: int) -> dict:
    maker, kwargs, until = CASES[name]
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(ROOT), maker, json.dumps(kwargs),
                           until, str(layers)], capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=1000,
                        help="layers of the chain (default 1000)")
    parser.add_argument("--only", default="", help="comma-separated case names")
    args = parser.parse_args()
    names = [n for n in CASES if not args.only or n in args.only.split(",")]
    print(f"irtool reduce, chains of {args.layers} layers; layers: top graph (with bodies)\n")
    print("| case | condition | before | after | left | as planted | tried | kept | "
          "seconds |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in names:
        r = run_case(name, args.layers)
        until = CASES[name][2]
        if "error" in r:
            print(f"| {name} | {until} | - | - | - | - | - | - | {r['error']} |", flush=True)
            continue
        ok = "yes" if r["ops"] == r["expected"] else f"no ({', '.join(r['expected'])})"
        print(f"| {name} | {until} | {r['before'][0]} ({r['before'][1]}) | {r['after'][0]} "
              f"({r['after'][1]}) | {', '.join(r['ops'])} | {ok} | {r['tried']} | "
              f"{r['kept']} | {r['seconds']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
