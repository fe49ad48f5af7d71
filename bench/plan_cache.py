"""What ``irtool.run(model, feed)`` costs per call beyond running the plan, without and with
the plan cache (issue 12, item 5).

Per case, three ways to run one model on one feed, interleaved (one run of each per round,
so load from elsewhere skews no ratio), medians over ``--repeats`` rounds:

* ``compiled``: ``Executor.run`` on an executor built once (the plan's own time);
* ``uncached``: a new ``Executor(model)`` per call, i.e. check + compile + run, which is what
  ``irtool.run`` did on every call before the cache;
* ``cached``: ``irtool.run(model, feed)``, whose plan the cache keeps while the model is
  unchanged (a fingerprint of the model per call).

Before each timed call the cyclic collector runs (untimed), so that no call pays for the
garbage of the one before (a discarded executor's plan is cyclic garbage). The overhead is
the time beyond ``compiled``; the last column is uncached / cached. Each case prints a row
of medians and a row of minimums (on a busy machine the minimum shows the cost itself). Cases:
(a) a map-like Loop (1000 iterations of tanh(W x_i + b), width 16, converted from ONNX),
(b) the GPT-2 decoder of tests/fixtures/ir_producers (one stateless prefill step),
(c) the small CNN of the same folder. Outputs of the three ways are checked equal first.

    python bench/plan_cache.py [--repeats N]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import irtool
from irtool.runtime import Executor

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "tests" / "fixtures" / "ir_producers"
sys.path.insert(0, str(HERE))


def cases() -> list[tuple[str, irtool.Model, dict[str, np.ndarray]]]:
    from loop_overhead import rnn_case

    rnn = rnn_case(1000, 16)
    out = [("(a) map loop, 1000 it, width 16", irtool.convert(rnn.model), rnn.feeds)]
    for title, name, feed in (("(b) GPT-2 decoder step", "gpt2_stateful", "step0"),
                              ("(c) small CNN", "cnn_torch", "inputs")):
        with np.load(FIXTURES / f"{name}.{feed}.npz") as data:
            out.append((title, irtool.load(FIXTURES / f"{name}.xml"),
                        {k: data[k] for k in data.files}))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    print(f"{'case':40} {'compiled':>9} {'uncached':>9} {'cached':>9} "
          f"{'overhead before':>16} {'overhead after':>15} {'uncached/cached':>16}")
    for title, model, feed in cases():
        executor = Executor(model)
        ways: dict[str, Callable[[], dict[str, np.ndarray]]] = {
            "compiled": lambda e=executor, f=feed: e.run(f),
            "uncached": lambda m=model, f=feed: Executor(m).run(f),
            "cached": lambda m=model, f=feed: irtool.run(m, f),
        }
        reference = executor.run(feed)
        for way, run in ways.items():
            got = run()
            assert all(np.array_equal(got[k], reference[k]) for k in reference), way
        times: dict[str, list[float]] = {way: [] for way in ways}
        for _ in range(args.repeats):
            for way, run in ways.items():
                gc.collect()  # the garbage of the previous way's call is not this one's cost
                start = time.perf_counter()
                run()
                times[way].append(time.perf_counter() - start)
        for stat, pick in (("median", statistics.median), ("min", min)):
            t = {way: pick(samples) * 1e3 for way, samples in times.items()}
            print(f"{title + ' ' + stat:40} {t['compiled']:8.2f}m {t['uncached']:8.2f}m "
                  f"{t['cached']:8.2f}m {t['uncached'] - t['compiled']:15.2f}m "
                  f"{t['cached'] - t['compiled']:14.2f}m "
                  f"{t['uncached'] / t['cached']:15.1f}x")
    print("(times in ms, medians and minimums of the rounds; overhead = time beyond the "
          "compiled plan's own run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
