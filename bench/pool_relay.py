"""What the worker pool's parent costs (``irtool.core.workers.Pool``, as ``validate --jobs N``
and each Dask worker use it): ``irtool validate``'s worker over the 1,372 IRs of the
OpenVINO-written node corpus (``python -m irtool.tools.corpus --build``) in a pool of 1 and
of 2 workers, the parent napping between reads of a chunk's replies (``NAP_S``, the
default) and waking for each reply (``NAP_S`` = 0), interleaved over ``--repeats`` rounds.

Per way, medians: wall time; the parent's CPU time (this process: sending chunks, reading
and unpickling replies); the workers' CPU time; their idle time (wall x workers - their
CPU: a worker waiting to be fed). The parent runs on the cores the workers need, so its
CPU is what the naps save; the idle time is what they may cost (a chunk finished while the
parent slept). Every pass must find the corpus clean.

    python bench/pool_relay.py [--repeats N]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()

    import psutil  # Dask distributed's own dependency (the test extra)

    from irtool.cli._batch import WORKER
    from irtool.core import workers
    from irtool.tools.batch import Task, row_of, worker_pool
    from irtool.tools.corpus import corpus_dir

    files = sorted(str(p) for p in corpus_dir().glob("*/model.xml"))
    if not files:
        raise SystemExit("no corpus: python -m irtool.tools.corpus --build")
    tasks = [Task("validate", f, f, {"openvino": None, "extensions": []}) for f in files]
    default_nap = workers.NAP_S

    def own_cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    results: dict[tuple[int, float], list[tuple[float, float, float]]] = {}
    for jobs in (1, 2):
        with worker_pool(WORKER, jobs=jobs, timeout=None) as pool:
            pool.run(tasks[:200])  # start the workers; the pool learns a job's time
            procs = [psutil.Process(w.proc.pid) for w in pool._pool]

            def workers_cpu(procs: list = procs) -> float:
                return sum(sum(p.cpu_times()[:2]) for p in procs)

            for _ in range(args.repeats):
                for nap in (default_nap, 0.0):
                    workers.NAP_S = nap
                    parent, busy, started = own_cpu(), workers_cpu(), time.perf_counter()
                    rows = [row_of(o.job, o) for o in pool.run(tasks)]
                    wall = time.perf_counter() - started
                    if any(r.status != "done" or r.diagnostics for r in rows):
                        raise SystemExit("the corpus is not clean")
                    results.setdefault((jobs, nap), []).append(
                        (wall, own_cpu() - parent, workers_cpu() - busy))
    workers.NAP_S = default_nap

    print(f"{len(files)} IR files; {args.repeats} interleaved rounds; medians\n")
    print("| workers | parent | wall s | parent CPU s | workers' CPU s | workers idle s |")
    print("|---|---|---|---|---|---|")
    for (jobs, nap), values in results.items():
        wall, parent, busy = (statistics.median(v[i] for v in values) for i in range(3))
        idle = statistics.median(v[0] * jobs - v[2] for v in values)
        way = f"naps (NAP_S {nap:g} s)" if nap else "wakes for each reply"
        print(f"| {jobs} | {way} | {wall:.3f} | {parent:.3f} | {busy:.3f} | {idle:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
