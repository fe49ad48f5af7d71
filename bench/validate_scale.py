"""Validating a model zoo (issue 24, item 4): ``irtool validate`` over the 1,372 IRs of the
OpenVINO-written node corpus (``irtool.tools.corpus``; ``python -m irtool.tools.corpus
--build`` makes it) against OpenVINO's ``read_model`` of the same files, and on a Dask
LocalCluster of 1 and 2 workers.

Each way is one fresh command, timed by wall clock from start to exit (start-up included:
what a CI job pays), the ways interleaved over ``--repeats`` rounds, medians:

* ``openvino read_model``: ``ov.Core().read_model`` of every file, one process;
* ``irtool --jobs 1`` / ``--jobs 2``: ``irtool validate DIR -q --jobs N`` (1: in this
  process; 2: two worker processes);
* ``dask 1 worker`` / ``dask 2 workers``: ``irtool validate DIR -q --scheduler ADDR`` on a
  LocalCluster started before the rounds (its start-up not timed, nor the first run on it,
  which starts each Dask worker's own worker process): worker processes (each with its
  nanny) of one thread each, so that a Dask worker is what a ``--jobs`` worker is here,
  and with Dask's monitoring made lighter (``LEAN_DASK``; ``--dask-defaults`` keeps
  Dask's): its statistical profiler off (it samples every thread of a worker each 10 ms
  for the dashboard) and its event-loop, system and memory monitors sampled less often,
  CPU the validating processes beside them on a small machine would otherwise have
  (docs/user-guide.md says how to set this on a cluster);
* ``cluster, N worker(s)``: the cluster's own throughput, without the command's fixed
  cost (a Python process, irtool's and Dask's client imports, ~1 s, which no number of
  workers shortens): ``batch_dask.run_on_dask`` of the same models called from this
  process, from its connecting to the scheduler to the last row; its CPU column is that
  of every process of the cluster and of this one (which hosts the client and the
  scheduler), and a line per cluster splits it by kind of process: on a machine with as
  many cores as workers, the client, the scheduler and the Dask workers' relaying take
  cores the validating processes would otherwise have.

irtool's modules are compiled to bytecode first (``compileall``), as an installed package
has them: with ``PYTHONDONTWRITEBYTECODE`` set, a source checkout would otherwise compile
them again in every process (0.2-0.4 s each, parent and workers), which OpenVINO's
installed wheel never pays.

Every irtool run must find the corpus clean (exit 0; the corpus is IR OpenVINO wrote and
reads). Targets: ``--jobs 2`` no slower than OpenVINO's read_model; 2 Dask workers at least
1.7x the throughput of 1 (both ratios are printed: whole commands, and the clusters'
own). The CPU time of each way (user + system, children included)
shows what it costs on a busy machine, where wall times stretch.

    python bench/validate_scale.py [--repeats N] [--dir CORPUS] [--no-dask]
"""

from __future__ import annotations

import argparse
import compileall
import logging
import math
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

OV_READ = """
import sys, openvino as ov
core = ov.Core()
for path in sys.argv[1:]:
    core.read_model(path)
"""


LEAN_DASK = {
    "distributed.worker.profile.enabled": False,  # stack samples every 10 ms
    "distributed.admin.tick.interval": "200ms",  # event-loop latency checks, 20 ms
    "distributed.admin.system-monitor.interval": "2s",  # CPU/memory/network, 500 ms
    "distributed.worker.memory.monitor-interval": "1s",  # memory limits, 100 ms
}
"""Dask's monitoring made lighter for the clusters measured here (docs/user-guide.md): what
the dashboard shows, sampled less often; nothing that decides where or whether tasks run."""


def irtool_command() -> list[str]:
    script = Path(sys.executable).with_name("irtool")
    return [str(script)] if script.exists() else [sys.executable, "-m", "irtool"]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str]) -> tuple[float, float]:
    cpu, started = _cpu(), time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command[:4])} ... failed ({proc.returncode}): "
                         f"{proc.stderr[-2000:]}")
    return wall, _cpu() - cpu


def cluster_run(address: str, files: list[str],
                cpu_split: dict[str, list[float]]) -> tuple[float, float]:
    """Every file validated on the Dask cluster at ``address`` from this process: the
    wall time from connecting to the last row (the rows must all be clean), and the CPU
    time of every process of the LocalCluster (they are this process's children) and of
    this process, which hosts the client and the scheduler. ``cpu_split`` gets the CPU
    time per kind of process: where a cluster on this machine's cores spends them."""
    from irtool.cli._batch import WORKER
    from irtool.tools.batch import Row, Task
    from irtool.tools.batch_dask import run_on_dask

    tasks = [Task("validate", f, f, {"openvino": None, "extensions": []}) for f in files]
    rows: list[Row] = []
    before = _tree_cpu()
    started = time.perf_counter()
    run_on_dask(tasks, rows.append, worker=WORKER, scheduler=address, timeout=None)
    wall = time.perf_counter() - started
    after = _tree_cpu()
    if len(rows) != len(tasks) or any(r.status != "done" or r.diagnostics for r in rows):
        raise SystemExit(f"the cluster at {address} did not find the corpus clean")
    split: dict[str, float] = {}
    for pid, (kind, cpu) in after.items():
        split[kind] = split.get(kind, 0.0) + cpu - before.get(pid, (kind, 0.0))[1]
    for kind, cpu in split.items():
        cpu_split.setdefault(kind, []).append(cpu)
    return wall, sum(split.values())


def _tree_cpu() -> dict[int, tuple[str, float]]:
    """CPU seconds so far of this process and of each process under it, by pid, with its
    kind: this process (client and scheduler), Dask's nannies and workers, or irtool's
    worker processes (which validate)."""
    import psutil  # Dask distributed's own dependency

    me = psutil.Process()
    out = {}
    for proc in [me, *me.children(recursive=True)]:
        try:
            times = proc.cpu_times()
            command = " ".join(proc.cmdline())
        except psutil.Error:
            continue
        kind = ("client and scheduler" if proc.pid == me.pid else
                "irtool workers (validating)" if "irtool" in command else
                "Dask nannies and workers")
        out[proc.pid] = (kind, times.user + times.system)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", help="the corpus folder (default: irtool.tools.corpus's)")
    parser.add_argument("--dask-defaults", action="store_true",
                        help="run the LocalClusters with Dask's own monitoring settings, not "
                             "LEAN_DASK's")
    parser.add_argument("--no-dask", action="store_true", help="leave out the Dask rows")
    args = parser.parse_args()

    if args.dir:
        root = Path(args.dir)
    else:
        from irtool.tools.corpus import corpus_dir

        root = corpus_dir()
    files = sorted(str(p) for p in root.glob("*/model.xml"))
    if not files:
        raise SystemExit(f"no corpus in {root}: python -m irtool.tools.corpus --build")
    import irtool

    compileall.compile_dir(Path(irtool.__file__).parent, quiet=1)
    load_before = os.getloadavg()[0]
    irtool_validate = [*irtool_command(), "validate", str(root), "-q"]
    ways: dict[str, Callable[[], tuple[float, float]]] = {
        "openvino read_model": lambda: timed([sys.executable, "-c", OV_READ, *files]),
        "irtool --jobs 1": lambda: timed(irtool_validate),
        "irtool --jobs 2": lambda: timed([*irtool_validate, "--jobs", "2"]),
    }
    clusters = {}
    cpu_split: dict[int, dict[str, list[float]]] = {}
    if not args.no_dask:
        import dask
        from distributed import LocalCluster

        for n in (1, 2):
            # The workers get this process's Dask config (their nannies pass it on).
            with dask.config.set({} if args.dask_defaults else LEAN_DASK):
                clusters[n] = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                           dashboard_address=None, silence_logs=logging.ERROR)
            workers = f"{n} worker{'s' * (n > 1)}"
            address = clusters[n].scheduler_address
            ways[f"dask {workers}"] = lambda a=address: timed([*irtool_validate,
                                                              "--scheduler", a])
            split = cpu_split[n] = {}
            ways[f"cluster, {workers}"] = lambda a=address, c=split: cluster_run(a, files, c)
            ways[f"dask {workers}"]()  # warm: each Dask worker starts its worker process
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
    try:
        for _ in range(args.repeats):
            for name, way in ways.items():
                results[name].append(way())
    finally:
        for cluster in clusters.values():
            cluster.close()
    load = os.getloadavg()[0]
    print(f"{len(files)} IR files of {root.name}; {args.repeats} interleaved rounds; load "
          f"average {load_before:.2f} at the start, {load:.2f} at the end, on "
          f"{os.cpu_count()} cores" + ("" if args.no_dask else
                                           "; Dask's monitoring: " + ("its defaults" if
                                           args.dask_defaults else "LEAN_DASK")) + "\n")
    print("| way | wall median s | wall min s | files/s (median) | CPU median s |")
    print("|---|---|---|---|---|")
    medians = {}
    for name, values in results.items():
        walls = [w for w, _ in values]
        medians[name] = statistics.median(walls)
        cpu = statistics.median(c for _, c in values)
        print(f"| {name} | {medians[name]:.2f} | {min(walls):.2f} | "
              f"{len(files) / medians[name]:.0f} | {'-' if math.isnan(cpu) else f'{cpu:.2f}'} |")
    print(f"\nirtool --jobs 2 / openvino read_model: "
          f"{medians['irtool --jobs 2'] / medians['openvino read_model']:.2f} (target <= 1)")
    if clusters:
        # Each round's own ratio too: this machine's speed drifts by 10-30% over minutes,
        # and a ratio of one round's neighbouring runs is less exposed to it.
        rounds = sorted(one / two for (one, _), (two, _) in
                        zip(results["cluster, 1 worker"], results["cluster, 2 workers"]))
        print(f"dask throughput, 2 workers / 1 worker: "
              f"{medians['dask 1 worker'] / medians['dask 2 workers']:.2f} whole commands, "
              f"{medians['cluster, 1 worker'] / medians['cluster, 2 workers']:.2f} the "
              f"clusters' own (target >= 1.7); the clusters' own, round by round: median "
              f"{statistics.median(rounds):.2f}, from {rounds[0]:.2f} to {rounds[-1]:.2f}")
        cores = os.cpu_count() or 1
        for n, split in sorted(cpu_split.items()):
            kinds = {kind: statistics.median(values) for kind, values in split.items()}
            total = sum(kinds.values())
            print(f"cluster, {n} worker(s), CPU per kind of process (medians): " +
                  ", ".join(f"{kind} {cpu:.2f} s" for kind, cpu in sorted(kinds.items())) +
                  f"; in all {total:.2f} s, which {cores} cores run in no less than "
                  f"{total / cores:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
