"""What a repeated ``irtool.run(model, feed)`` costs next to a session's ``run`` on the same
compiled plan (issue 25): the price of telling that the model is unchanged.

Per model, interleaved (one call of each way per round, so load from elsewhere skews no
ratio), medians and minimums over ``--repeats`` rounds:

* ``session``: ``irtool.compile(model).run(feed)`` on a session made once;
* ``irtool.run``: ``irtool.run(model, feed)``, the plan taken from the cache, which reads
  the IR edit counter (``irtool.ir.edits``) instead of walking the model;
* ``fingerprint``: what the cache did before that counter on every call, one walk of the
  model (``irtool.runtime.cache.model_fingerprint``), timed alone.

Models: the chain of ``bench/scale.py`` (Parameter -> (Const, Add) x N -> Result) at
about 4,000 layers and at 8, and the GPT-2 decoder step of tests/fixtures/ir_producers.
The last column is ``irtool.run`` / ``session`` (the issue's target: at most 1.2).

    python bench/run_cache.py [--repeats N]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import irtool
from irtool.runtime.cache import model_fingerprint

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "tests" / "fixtures" / "ir_producers"
sys.path.insert(0, str(HERE))


def cases(folder: Path) -> list[tuple[str, irtool.Model, dict[str, np.ndarray]]]:
    from scale import write_chain

    out = []
    for layers in (4001, 8):
        xml = folder / f"chain{layers}.xml"
        write_chain(xml, layers)
        model = irtool.load(xml)
        out.append((f"chain, {len(model.graph)} layers", model,
                    {"x": np.zeros((1, 4), np.float32)}))
    with np.load(FIXTURES / "gpt2_stateful.step0.npz") as data:
        out.append(("GPT-2 decoder step", irtool.load(FIXTURES / "gpt2_stateful.xml"),
                    {k: data[k] for k in data.files}))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args()
    print(f"{'model':32} {'stat':6} {'session':>10} {'irtool.run':>11} {'fingerprint':>12} "
          f"{'run/session':>12}")
    with tempfile.TemporaryDirectory(prefix="irtool-run-cache-") as tmp:
        for title, model, feed in cases(Path(tmp)):
            session = irtool.compile(model)
            ways: dict[str, Callable[[], object]] = {
                "session": lambda s=session, f=feed: s.run(f),
                "irtool.run": lambda m=model, f=feed: irtool.run(m, f),
                "fingerprint": lambda m=model: model_fingerprint(m),
            }
            reference = session.run(feed)
            got = irtool.run(model, feed)
            assert all(np.array_equal(got[k], reference[k]) for k in reference), title
            times: dict[str, list[float]] = {way: [] for way in ways}
            for _ in range(args.repeats):
                for way, call in ways.items():
                    gc.collect()
                    start = time.perf_counter()
                    call()
                    times[way].append(time.perf_counter() - start)
            for stat, pick in (("median", statistics.median), ("min", min)):
                t = {way: pick(samples) * 1e3 for way, samples in times.items()}
                print(f"{title:32} {stat:6} {t['session']:9.3f}m {t['irtool.run']:10.3f}m "
                      f"{t['fingerprint']:11.3f}m {t['irtool.run'] / t['session']:11.2f}x")
    print("(times in ms; fingerprint: the walk each call paid before the edit counter)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
