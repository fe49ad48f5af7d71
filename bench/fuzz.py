"""Fuzz irtool with mutated inputs and count what becomes of each case, per target.

    python bench/fuzz.py [--cases N] [--seed S] [--target NAME ...] [--workers 2]
                         [--timeout SECONDS] [--case K --keep DIR]

A target turns case number K into a hostile input (a seed file and mutations drawn
from ``random.Random((seed, K))``) and runs it through irtool's command line, stage
by stage. Every case runs in a worker process of ``irtool.core.workers``, so that a crash
or a hang is counted, not suffered. Outcomes per stage (``tests/support/fuzzing.py``):

  refused   exit 1, one line on stderr naming the problem, nothing written
  ran       exit 0
  internal  exit 3, a traceback, a message of more than one line, or (convert) an IR
            that ``irtool validate`` rejects
  crash     the worker died of a signal
  hang      no result within --timeout seconds
  partial   a failed command left an output file

Targets:

  onnx      a mutated ONNX model: ``irtool convert``; when it converts, ``irtool run``
            with random inputs of the declared shapes on irtool's runtime and on
            OpenVINO (where both run, how often their outputs disagree is counted too)
  ir        a mutated IR (tests/support/fuzz_ir.py: attributes, ports, edges, element
            types, dims, port maps, back edges, a truncated or foreign .bin, cut XML):
            ``irtool validate``, then ``irtool run`` on irtool's runtime and on OpenVINO
            (an IR validate rejects must be refused by run: the gate; where both engines
            run it, how often they disagree)

Each worker limits its address space (--memory GiB) so that a case asking for absurd
memory fails in it instead of in the machine. Prints a table of counts and the first
cases of every bad outcome with their number (re-run one with ``--case K --keep DIR``
to keep its files). Exit status 1 when any internal error, crash, hang or partial
output was seen.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the shared mutations: tests/support/fuzz_*.py

from support.fuzzing import BAD, OUTCOMES, RandomChooser, classify, pick  # noqa: E402

# -- running irtool's command line inside a worker --------------------------------------------


def cli(*args: str | Path) -> tuple[int, str]:
    """``irtool ARGS`` in this process: its exit status and what it printed on stderr."""
    from irtool.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main([str(a) for a in args])
    return rc, err.getvalue()


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


@dataclass
class CaseResult:
    """What happened to one case: an outcome per stage that ran, and notes."""

    stages: dict[str, str] = field(default_factory=dict)
    messages: dict[str, str] = field(default_factory=dict)
    disagree: bool | None = None  # irtool and OpenVINO both ran: did they differ?
    describe: str = ""


def stage(result: CaseResult, work: Path, name: str, command: str, *args: str | Path,
          out: Path | None = None) -> str:
    """Run one command as stage ``name``; record and return its outcome."""
    (work / "stage").write_text(name)  # which stage a crash or hang hit
    rc, stderr = cli(command, *args)
    left = leftovers(out) if out is not None and rc != 0 else []
    outcome = classify(command, rc, stderr, left)
    result.stages[name] = outcome
    if outcome != "ran":
        result.messages[name] = stderr.strip().splitlines()[-1][:300] if stderr.strip() else \
            f"exit {rc}"
    return outcome


# -- targets ----------------------------------------------------------------------------------


def onnx_case(seed: int, index: int, work: Path) -> CaseResult:
    """A mutated ONNX model: convert, validate, run on irtool and on OpenVINO."""
    import numpy as np
    import onnx
    from support.fuzz_onnx import describe, mutate, seed_models

    from irtool.tools.inputs import make_inputs

    chooser = RandomChooser(seed * 1_000_003 + index)
    name, model = pick(chooser, seed_models())
    data = mutate(model, chooser)
    path = work / "case.onnx"
    path.write_bytes(data)
    result = CaseResult(describe=f"{name}: {describe(data)}")
    out = work / "ir"
    if stage(result, work, "convert", "convert", path, "-o", out / "case.xml", out=out) != "ran":
        return result
    rc, _ = cli("validate", out / "case.xml")
    if rc != 0:
        result.stages["convert"] = "internal"
        result.messages["convert"] = "irtool validate rejects the IR convert wrote"
        return result
    try:  # random inputs of the declared shapes, dynamic dims 2
        feed, _ = make_inputs(onnx.load_from_string(data), default_dim=2)
    except Exception:  # sequences, unknown ranks...: nothing to run it on
        return result
    np.savez(work / "inputs.npz", **feed)
    outputs = {}
    for backend in ("irtool", "openvino"):
        target = work / f"out-{backend}"
        if stage(result, work, f"run-{backend}", "run", out / "case.xml", work / "inputs.npz",
                 "-o", target / "outputs.npz", "--backend", backend, "--timeout", "60",
                 out=target) == "ran":
            with np.load(target / "outputs.npz") as got:
                outputs[backend] = {k: got[k] for k in got.files}
    result.disagree = _disagree(outputs)
    return result


_DUPLICATE = re.compile(r"_\d+$")


def _disagree(outputs: dict[str, dict]) -> bool | None:
    """Do irtool's and OpenVINO's outputs differ (None unless both ran)?"""
    if len(outputs) != 2:
        return None
    from irtool.tools.compare import compare

    ours, theirs = outputs["irtool"], outputs["openvino"]
    # A graph output listed twice is one name to irtool and two to OpenVINO, which calls the
    # second <name>_1: the same value, compared with irtool's <name>.
    pairs = []
    for name, value in theirs.items():
        base = name if name in ours else _DUPLICATE.sub("", name)
        if base not in ours:
            return True
        pairs.append((base, value))
    return {base for base, _ in pairs} != set(ours) or \
        not all(compare(base, ours[base], value).ok for base, value in pairs)


def ir_case(seed: int, index: int, work: Path) -> CaseResult:
    """A mutated IR (.xml and .bin): validate; run on irtool's runtime and on OpenVINO with
    inputs of the declared shapes. IR that validate rejects must be refused by run (the
    gate); IR both engines run is compared."""
    import numpy as np
    from support.fuzz_ir import feed_for, mutate, seed_irs

    chooser = RandomChooser(seed * 1_000_003 + index)
    name, xml_bytes, bin_bytes = pick(chooser, seed_irs())
    xml_data, bin_data = mutate(xml_bytes, bin_bytes, chooser)
    xml = work / "case.xml"
    xml.write_bytes(xml_data)
    xml.with_suffix(".bin").write_bytes(bin_data)
    result = CaseResult(describe=f"{name}: {len(xml_data)} + {len(bin_data)} bytes")
    valid = stage(result, work, "validate", "validate", xml) == "ran"
    feed = feed_for(xml, seed=index) if valid else {}
    if feed is None:  # valid, but nothing to feed it (dynamic rank, strings...)
        return result
    np.savez(work / "inputs.npz", **feed)
    outputs = {}
    for backend in ("irtool", "openvino"):
        target = work / f"out-{backend}"
        kind = stage(result, work, f"run-{backend}", "run", xml, work / "inputs.npz", "-o",
                     target / "outputs.npz", "--backend", backend, "--timeout", "60",
                     "--max-iterations", "100000", out=target)
        if kind == "ran" and not valid:  # the gate let through what validate rejects
            result.stages[f"run-{backend}"] = "internal"
            result.messages[f"run-{backend}"] = "ran an IR that validate rejects"
        elif kind == "ran":
            with np.load(target / "outputs.npz") as got:
                outputs[backend] = {k: got[k] for k in got.files}
    result.disagree = _disagree(outputs)
    return result


TARGETS: dict[str, Callable[[int, int, Path], CaseResult]] = {"onnx": onnx_case, "ir": ir_case}


# -- the worker -------------------------------------------------------------------------------


def serve() -> int:
    import resource

    from irtool.core.workers import serve as serve_jobs

    limit = int(float(os.environ.get("IRTOOL_FUZZ_MEMORY_GIB", "6")) * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    def handle(job: tuple[str, int, int, str]) -> dict[str, Any]:
        target, seed, index, work = job
        return asdict(TARGETS[target](seed, index, Path(work)))  # plain data for the parent

    return serve_jobs(handle, setup=_warm_up)


def _warm_up() -> None:
    import irtool.cli  # noqa: F401  (the first case should not pay for the imports)

    for target in os.environ.get("IRTOOL_FUZZ_TARGETS", "").split(","):
        if target == "onnx":
            from support.fuzz_onnx import seed_models

            seed_models()
        elif target == "ir":
            from support.fuzz_ir import seed_irs

            seed_irs()


# -- the parent -------------------------------------------------------------------------------


def run(targets: list[str], cases: int, seed: int, workers: int, timeout: float,
        memory: float, keep: Path | None, only: int | None) -> int:
    from irtool.core.workers import Pool

    base = keep or Path(tempfile.mkdtemp(prefix="irtool-fuzz-"))
    indices = [only] if only is not None else list(range(cases))
    jobs = []
    for target in targets:
        for index in indices:
            work = base / target / str(index)
            work.mkdir(parents=True, exist_ok=True)
            jobs.append((target, seed, index, str(work)))
    counts: dict[tuple[str, str], Counter] = defaultdict(Counter)
    examples: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    compared: Counter = Counter()
    disagreements: list[str] = []
    started = time.monotonic()
    done = 0

    def on_outcome(outcome: Any) -> None:
        nonlocal done
        target, _, index, work = outcome.job
        done += 1
        if outcome.ok:
            result = CaseResult(**outcome.value)
            for name, kind in result.stages.items():
                counts[(target, name)][kind] += 1
                if kind in BAD:
                    examples[(target, name, kind)].append(
                        f"#{index} {result.describe}: {result.messages.get(name, '')}")
            if result.disagree is not None:
                compared[(target, "disagree" if result.disagree else "agree")] += 1
                if result.disagree:
                    disagreements.append(f"{target} #{index} {result.describe}")
        else:  # the worker died (crash) or overran (hang) in the stage it last named
            where = Path(work, "stage")
            name = where.read_text() if where.exists() else "?"
            kind = "hang" if outcome.status == "timeout" else (
                "crash" if outcome.status == "crash" else "internal")
            counts[(target, name)][kind] += 1
            examples[(target, name, kind)].append(f"#{index}: {outcome.reason}")
        if keep is None and outcome.ok and not any(
                k in BAD for k in outcome.value["stages"].values()):
            shutil.rmtree(work, ignore_errors=True)
        if done % 250 == 0:
            print(f"... {done}/{len(jobs)} cases, {time.monotonic() - started:.0f} s",
                  file=sys.stderr, flush=True)

    if "ir" in targets:  # made once here, read by every worker
        from support.fuzz_ir import write_seeds

        write_seeds(base / "ir-seeds")
    env = {"IRTOOL_FUZZ_IR_SEEDS": str(base / "ir-seeds"),
           "PYTHONPATH": os.pathsep.join([str(ROOT / "bench"), str(ROOT / "tests"),
                                          os.environ.get("PYTHONPATH", "")]),
           "IRTOOL_FUZZ_MEMORY_GIB": str(memory), "OMP_NUM_THREADS": "1",
           "IRTOOL_FUZZ_TARGETS": ",".join(targets)}
    with Pool("fuzz", ["--serve"], workers=workers, timeout=timeout, env=env,
              jobs_per_worker=200, name="the fuzz workers") as pool:
        pool.run(jobs, on_outcome)

    print(f"irtool fuzz: seed {seed}, {len(indices)} case(s) per target, "
          f"{time.monotonic() - started:.0f} s, cases kept in {base}" if keep else
          f"irtool fuzz: seed {seed}, {len(indices)} case(s) per target, "
          f"{time.monotonic() - started:.0f} s")
    header = f"{'target':8} {'stage':14} " + " ".join(f"{k:>8}" for k in OUTCOMES)
    print(header)
    bad_total = 0
    for (target, name), counter in sorted(counts.items()):
        print(f"{target:8} {name:14} " + " ".join(f"{counter[k]:>8}" for k in OUTCOMES))
        bad_total += sum(counter[k] for k in BAD)
    if compared:
        for target in sorted({t for t, _ in compared}):
            print(f"{target}: irtool vs OpenVINO where both ran: "
                  f"{compared[(target, 'agree')]} agree, {compared[(target, 'disagree')]} "
                  "disagree")
        for line in disagreements[:20]:
            print(f"  disagree: {line}")
    for (target, name, kind), lines in sorted(examples.items()):
        print(f"\n{kind} in {target}/{name} ({len(lines)}):")
        for line in lines[:10]:
            print(f"  {line}")
    if keep is None:
        shutil.rmtree(base, ignore_errors=True)
    return 1 if bad_total else 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--serve"]:
        return serve()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=500, help="cases per target")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target", action="append", choices=sorted(TARGETS),
                        help="repeatable (default: all)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="seconds one case may take before it counts as a hang")
    parser.add_argument("--memory", type=float, default=6.0,
                        help="GiB of address space per worker")
    parser.add_argument("--case", type=int, help="run only case K")
    parser.add_argument("--keep", type=Path, help="keep every case's files here")
    args = parser.parse_args(argv)
    return run(args.target or sorted(TARGETS), args.cases, args.seed, args.workers,
               args.timeout, args.memory, args.keep, args.case)


if __name__ == "__main__":
    sys.exit(main())
