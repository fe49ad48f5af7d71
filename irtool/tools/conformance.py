"""Run ONNX backend node cases through three paths, one case at a time, in worker processes.

Paths (``PATHS``):

* ``openvino``: OpenVINO's own ONNX frontend (``read_model`` on the ``.onnx``), CPU;
* ``irtool-openvino``: ``irtool.convert`` -> IR files -> OpenVINO CPU;
* ``irtool``: ``irtool.convert`` -> IR files -> irtool's runtime.

OpenVINO runs with f32 inference precision (``irtool.engines.openvino.run_ir``), which
feeds and reads bf16, f8 and 4-bit tensors as the raw bits its Python API uses.
Each result is compared with the case's expected outputs under the case's
``rtol``/``atol`` (integers, booleans and strings exactly). A status is one of
``pass``, ``mismatch`` (it ran; a value, shape or dtype differs), ``error``
(conversion or execution failed), ``crash`` (the worker process died, on each of
``CRASH_ATTEMPTS`` tries),
``timeout`` or ``n/a`` (the case feeds or returns sequences/optionals, which no
path can be fed with or return).

OpenVINO can abort the process or hang, so ``run_cases`` hands (case, path)
jobs to worker processes (``python -m irtool.tools.conformance --worker``, a
pool of ``irtool.core.workers``); a worker that dies or overruns is killed
and replaced. Reasons are single lines made deterministic (no temporary paths,
addresses or OpenVINO's process-wide node counters), so a report generated
twice from the same installed versions is identical.

The one runner behind ``bench/conformance.py`` (docs/conformance.md) and the slow
tests ``tests/frontends/onnx/test_onnx_node_suite.py`` and ``tests/api/test_backend.py``::

    from irtool.tools.conformance import node_case_names, run_cases
    results = run_cases(node_case_names(control_flow_only=True))
"""

from __future__ import annotations

import re
import sys
import tempfile
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from ..core.workers import Outcome, Pool, exit_reason, serve

PATHS = ("openvino", "irtool-openvino", "irtool")
PATH_TITLES = {
    "openvino": "OpenVINO ONNX frontend",
    "irtool-openvino": "irtool convert -> OpenVINO",
    "irtool": "irtool convert -> irtool runtime",
}
STATUSES = ("pass", "mismatch", "error", "crash", "timeout", "n/a")
CONTROL_FLOW_OPS = frozenset({"Loop", "Scan", "If"})
# A node case takes well under a second on every path; a minute means it hangs.
CASE_TIMEOUT_S = 120.0
# irtool's runtime stops a loop after this many iterations (an error, not a hang); the node
# cases need a few dozen.
MAX_ITERATIONS = 100_000
# A (case, path) whose worker dies is tried this many times before it counts as a crash.
CRASH_ATTEMPTS = 3


@dataclass(frozen=True)
class CaseResult:
    """One case on one path."""

    case: str
    path: str
    status: str
    reason: str = ""

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


# -- the cases --------------------------------------------------------------------------------


@cache
def _cases() -> dict[str, Any]:
    with warnings.catch_warnings():
        # The cases' numpy reference code warns a lot (overflow, invalid value); none matters.
        warnings.simplefilter("ignore")
        from onnx.backend.test.case.node import collect_testcases

        return {c.name: c for c in collect_testcases()}


def is_control_flow(case: Any) -> bool:
    """Whether the case's model holds a Loop, Scan or If (bodies and functions included)."""
    from ..frontends.onnx.protos import op_types

    ops = op_types(case.model.graph)
    for fn in case.model.functions:
        ops |= {n.op_type for n in fn.node}
    return bool(ops & CONTROL_FLOW_OPS)


def node_case_names(control_flow_only: bool = False) -> list[str]:
    """Names of ``collect_testcases()``'s node cases, sorted."""
    cases = _cases()
    return sorted(n for n, c in cases.items() if not control_flow_only or is_control_flow(c))


# -- one case, in this process ------------------------------------------------------------------


class _NotApplicable(Exception):
    pass


class _Failed(Exception):
    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def _as_array(value: Any) -> np.ndarray:
    import onnx
    from onnx import numpy_helper

    if isinstance(value, onnx.TensorProto):
        value = numpy_helper.to_array(value)
    if isinstance(value, np.generic):
        value = np.asarray(value)
    if not isinstance(value, np.ndarray):
        kind = "optional" if value is None else type(value).__name__
        raise _NotApplicable(f"{kind} value: only tensors can be fed or compared")
    return value


def _feed_and_expected(case: Any) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    inputs, outputs = case.data_sets[0]
    ins = [_as_array(v) for v in inputs]
    outs = [_as_array(v) for v in outputs]
    graph = case.model.graph
    for vi in [*graph.input, *graph.output]:
        if not vi.type.HasField("tensor_type"):
            kind = (vi.type.WhichOneof("value") or "untyped").removesuffix("_type")
            raise _NotApplicable(f"graph input/output {vi.name!r} is a {kind}: only tensors "
                                 "can be fed or compared")
    initialized = {t.name for t in graph.initializer}
    names = [vi.name for vi in graph.input if vi.name not in initialized]
    if len(names) != len(ins):
        names = [vi.name for vi in graph.input]
    if len(names) != len(ins) or len(graph.output) != len(outs):
        raise _NotApplicable("the data set does not match the graph's inputs/outputs")
    return dict(zip(names, ins)), dict(zip((vi.name for vi in graph.output), outs))


# "/tmp/x/model.xml: message" (an error's location) -> "message"; other temp paths -> <tmp>.
_TMP_WHERE = re.compile(r"(/tmp|/var/folders)/\S*?:\s+")
_TMP = re.compile(r"(/tmp|/var/folders)/[^\s'\"]*")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
# OpenVINO names nodes it creates with a process-wide counter ("Add_1234").
_OV_COUNTER = re.compile(r"(?<=[A-Za-z])_\d+\b")


def clean_reason(text: str, openvino: bool = False) -> str:
    """A deterministic single line: first line, no temp paths, addresses or OV counters."""
    line = next((ln.strip() for ln in str(text).splitlines() if ln.strip()), "")
    line = _ADDRESS.sub("0x…", _TMP.sub("<tmp>", _TMP_WHERE.sub("", line)))
    if openvino:
        line = _OV_COUNTER.sub("_#", line)
    return line[:200]


def run_one(name: str, path: str) -> CaseResult:
    """Run case ``name`` on ``path`` in this process and compare with its expected outputs."""
    from ..core.errors import IRToolError
    from ..engines.base import first_line

    if path not in PATHS:
        raise ValueError(f"unknown path {path!r}; one of {', '.join(PATHS)}")
    case = _cases()[name]
    ov_reason = path != "irtool"
    try:
        feed, expected = _feed_and_expected(case)
        with tempfile.TemporaryDirectory(prefix="irtool-conf-") as tmp:
            got = _run_path(case.model, path, feed, Path(tmp))
        return _judge(name, path, got, expected, case.rtol, case.atol)
    except _NotApplicable as err:
        return CaseResult(name, path, "n/a", clean_reason(str(err)))
    except _Failed as err:
        return CaseResult(name, path, err.status, clean_reason(err.reason, ov_reason))
    except IRToolError as err:
        return CaseResult(name, path, "error", clean_reason(str(err), ov_reason))
    except Exception as err:  # any other failure of a path is that path's error
        return CaseResult(name, path, "error", clean_reason(first_line(err), ov_reason))


def _run_path(model: Any, path: str, feed: dict[str, np.ndarray],
              tmp: Path) -> dict[str, np.ndarray]:
    import onnx

    from ..core.errors import IRToolError
    from ..engines.base import first_line
    from ..engines.openvino import OpenVINOEngine, OpenVINOFrontendEngine
    from ..engines.runtime import IrtoolEngine
    from ..frontends.onnx import convert_model
    from ..ir import write_model

    if path == "openvino":
        onnx_path = tmp / "model.onnx"
        onnx.save(model, str(onnx_path))
        return _stage("run", lambda: OpenVINOFrontendEngine(onnx_path).run(feed))
    try:
        ir = convert_model(model)
        xml, _ = write_model(ir, tmp / "model.xml")
    except IRToolError as err:
        raise _Failed("error", f"convert: {err}") from None
    except Exception as err:
        raise _Failed("error", f"convert: {first_line(err)}") from None
    ir_feed = {n: feed[n] for n in ir.input_names() if n in feed}
    backend = OpenVINOEngine(xml) if path == "irtool-openvino" else \
        IrtoolEngine(xml, max_iterations=MAX_ITERATIONS)
    return _stage("run", lambda: backend.run(ir_feed))


def _stage(stage: str, fn: Callable[[], dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    from ..engines.base import first_line

    try:
        return fn()
    except Exception as err:
        text = str(err) if hasattr(err, "message") else first_line(err)
        raise _Failed("error", f"{stage}: {text}") from None


def _judge(name: str, path: str, got: dict[str, np.ndarray], expected: dict[str, np.ndarray],
           rtol: float, atol: float) -> CaseResult:
    from .compare import compare

    for out, ref in expected.items():
        if out not in got:
            return CaseResult(name, path, "mismatch", f"output {out!r} missing; got "
                              f"{', '.join(sorted(got)) or 'none'}")
        row = compare(out, got[out], ref, rtol=rtol, atol=atol)
        if not row.ok:
            # No counts or error sizes: cases with random ops (Dropout, Bernoulli) and
            # kernels reading uninitialised memory would make the report differ run to run.
            what = row.describe() if row.verdict != "mismatch" else \
                f"values differ beyond rtol={rtol:g} atol={atol:g}"
            return CaseResult(name, path, "mismatch", f"output {out!r}: {what}")
    return CaseResult(name, path, "pass")


# -- worker processes ---------------------------------------------------------------------------


def _worker_main() -> int:
    """A worker of ``run_cases``: the cases loaded once, then ``(case, path)`` jobs."""
    return serve(lambda job: run_one(*job).to_dict(), setup=_cases)  # type: ignore[arg-type]


def _describe_exit(rc: int) -> str:
    return f"process died: {exit_reason(rc)}" if rc < 0 else f"process exited with status {rc}"


def run_cases(names: Iterable[str], paths: Sequence[str] = PATHS, *, workers: int = 2,
              timeout: float = CASE_TIMEOUT_S,
              progress: Callable[[int, int, CaseResult], None] | None = None
              ) -> list[CaseResult]:
    """Every (case, path) in worker processes; results sorted by case, then path order."""
    jobs = [(n, p) for n in names for p in paths]
    results: list[CaseResult] = []

    def record(outcome: Outcome) -> None:
        name, path = outcome.job
        if outcome.ok:
            result = CaseResult(**outcome.value)
        elif outcome.status == "crash":
            result = CaseResult(name, path, "crash", _describe_exit(outcome.returncode or 0))
        else:  # a timeout, or run_one itself failed
            result = CaseResult(name, path, "timeout" if outcome.status == "timeout" else "error",
                                outcome.reason)
        results.append(result)
        if progress is not None:
            progress(len(results), len(jobs), result)

    # One thread per worker: the workers share the cores instead of fighting over them.
    with Pool("irtool.tools.conformance", ["--worker"], workers=workers, timeout=timeout,
              attempts=CRASH_ATTEMPTS, env={"OMP_NUM_THREADS": "1"},
              name="conformance workers") as pool:
        pool.run(jobs, record)
    order = {p: i for i, p in enumerate(paths)}
    return sorted(results, key=lambda r: (r.case, order[r.path]))


# -- summaries ---------------------------------------------------------------------------------


Counts = dict[str, dict[str, int]]


def count_statuses(results: Iterable[CaseResult], paths: Sequence[str] = PATHS) -> Counts:
    """``{path: {status: count}}`` with every path and status present (zeros included)."""
    tally = Counter((r.path, r.status) for r in results)
    return {p: {s: tally[(p, s)] for s in STATUSES} for p in paths}


def not_passing(results: Iterable[CaseResult], paths: Sequence[str],
                limit: int = 20) -> str:
    """Up to ``limit`` lines ``case path: status: reason`` of results on ``paths`` that are
    neither ``pass`` nor ``n/a``, for assertion messages."""
    bad = [f"{r.case} {r.path}: {r.status}: {r.reason}" for r in results
           if r.path in paths and r.status not in ("pass", "n/a")]
    more = [f"... and {len(bad) - limit} more"] if len(bad) > limit else []
    return "\n".join(bad[:limit] + more)


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("-k", default="", help="only cases whose name contains this")
    parser.add_argument("--control-flow", action="store_true", help="only Loop/Scan/If cases")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    if args.worker:
        return _worker_main()
    names = [n for n in node_case_names(args.control_flow) if args.k in n]
    for r in run_cases(names, workers=args.workers):
        print(f"{r.case}\t{r.path}\t{r.status}\t{r.reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
