"""Every ONNX backend node case through irtool and through OpenVINO's own ONNX frontend.

Three paths per case, each compared with the case's expected outputs (the
case's rtol/atol; integers, booleans and strings exactly):

* ``irtool_ov``: ``irtool.convert`` -> ``irtool.save`` -> OpenVINO CPU,
* ``irtool_rt``: ``irtool.convert`` -> ``irtool.run`` (irtool's runtime),
* ``ov_frontend``: ``ov.Core().read_model(model.onnx)`` -> OpenVINO CPU.

OpenVINO runs with f32 inference precision; bf16, float8 and 4-bit tensors cross
its Python API as the raw bits it uses for them. OpenVINO can crash or hang on
odd inputs, so cases run in worker processes that report one JSON line per
path; a worker that dies is restarted after the path it died on (recorded as
``crash``), a path that runs too long is killed (``timeout``). Cases whose
inputs or outputs are sequences or optionals are ``skip`` on every path (they
count as not correct). Run from the command line for the table and a summary::

    python tests/test_onnx_node_suite.py [-k SUBSTRING] [--workers 2] [--out table.json]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

HERE = Path(__file__).resolve()
CONTROL_FLOW = frozenset({"Loop", "Scan", "If"})
PATHS = ("irtool_ov", "irtool_rt", "ov_frontend")
# No single node case needs more than a few seconds on any path; longer means hung.
CASE_TIMEOUT_S = 120.0  # per path of a case
# f32 inference: OpenVINO's CPU default may compute in bf16 on CPUs that have it, which
# says nothing about the IR. One thread per worker: the workers share the machine.
OV_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": "1"}

# Correct cases measured with onnx 1.23.2 / openvino 2026.4.1 (OpenVINO's own frontend:
# 1452). The test asserts the counts stay at least this high, minus a margin that absorbs
# numeric noise near the tolerances (random-data cases, OpenVINO kernel choices).
MEASURED = {"irtool_ov": 1598, "irtool_rt": 1632}
MARGIN = 15


# -- one case ----------------------------------------------------------------------------
class CaseSkip(Exception):
    """The case cannot be run on this path (e.g. a non-tensor input)."""


def _collect() -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from onnx.backend.test.case.node import collect_testcases

        return list(collect_testcases())


def _ops(graph: Any) -> set[str]:
    import onnx

    found = set()
    for node in graph.node:
        found.add(node.op_type)
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                found |= _ops(attr.g)
            for g in attr.graphs:
                found |= _ops(g)
    return found


def _as_array(value: Any) -> np.ndarray | None:
    """A data-set value as an ndarray, or None when it is not a tensor (sequence, optional)."""
    import onnx
    from onnx import numpy_helper

    if isinstance(value, onnx.TensorProto):
        value = numpy_helper.to_array(value)
    if isinstance(value, np.generic):
        value = np.asarray(value)
    if not isinstance(value, np.ndarray):
        return None
    return np.require(value, requirements="C")


def _is_tensor_type(type_proto: Any) -> bool:
    return type_proto.HasField("tensor_type")


def _compare(actual: Any, expected: np.ndarray, rtol: float, atol: float) -> str | None:
    """Why ``actual`` differs from ``expected``, or None when it matches."""
    actual = np.asarray(actual)
    if actual.shape != expected.shape:
        return f"shape {list(actual.shape)} != expected {list(expected.shape)}"
    if expected.dtype.kind in "USO":
        if actual.dtype.kind not in "USO" or actual.tolist() != expected.tolist():
            return "string values differ"
        return None
    if actual.dtype != expected.dtype:
        return f"dtype {actual.dtype} != expected {expected.dtype}"
    if expected.dtype.kind in "biu":
        if not np.array_equal(actual, expected):
            return f"{int(np.count_nonzero(actual != expected))} integer values differ"
        return None
    a = actual.astype(np.float64)
    e = expected.astype(np.float64)
    try:
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
    except AssertionError:
        with np.errstate(all="ignore"):
            err = np.nanmax(np.abs(a - e)) if a.size else 0.0
        return f"values differ (max abs err {err:.3g}, rtol={rtol}, atol={atol})"
    return None


def _check(outputs: dict[str, Any], expected: dict[str, np.ndarray], rtol: float,
           atol: float) -> None:
    for name, ref in expected.items():
        if name not in outputs:
            raise AssertionError(f"no output named {name!r}")
        why = _compare(outputs[name], ref, rtol, atol)
        if why:
            raise AssertionError(f"output {name!r}: {why}")


def _one_line(err: BaseException) -> str:
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    skip = ("Exception from", "Check '", "[ ", "Summary:", "FrontEnd API failed",
            "Model wasn't fully converted", "-- Conversion is failed")
    useful = [ln for ln in lines if not ln.startswith(skip)]
    text = (useful or lines or [""])[0]
    if text.endswith("with a message:") and len(useful) > 1:
        text += " " + useful[1]
    return f"{type(err).__name__}: {text}"[:240]


# OpenVINO's Python API carries these types as raw bits (bf16 as float16, f8 as uint8,
# 4-bit types packed two to a byte, low nibble first); the case data uses ml_dtypes.
_ML_TO_OV = {"bfloat16": "bf16", "float8_e4m3fn": "f8e4m3", "float8_e5m2": "f8e5m2",
             "int4": "i4", "uint4": "u4"}


def _to_openvino(value: np.ndarray) -> Any:
    import openvino as ov

    kind = _ML_TO_OV.get(value.dtype.name)
    if kind is None:
        return value
    tensor = ov.Tensor(getattr(ov.Type, kind), list(value.shape))
    target = tensor.data
    if kind in ("i4", "u4"):
        nibbles = (value.astype(np.int8).ravel().view(np.uint8) & 0x0F)
        if nibbles.size % 2:
            nibbles = np.append(nibbles, np.uint8(0))
        packed = (nibbles[0::2] | (nibbles[1::2] << 4)).astype(np.uint8)
        target[...] = packed.view(target.dtype)
    else:
        target[...] = np.ascontiguousarray(value).view(target.dtype)
    return tensor


def _from_openvino(tensor: Any) -> np.ndarray:
    import ml_dtypes

    kind = tensor.get_element_type().get_type_name()
    data = np.array(tensor.data)
    shape = tuple(tensor.get_shape())
    by_kind = {"bf16": ml_dtypes.bfloat16, "f8e4m3": ml_dtypes.float8_e4m3fn,
               "f8e5m2": ml_dtypes.float8_e5m2}
    if kind in by_kind:
        return data.view(by_kind[kind]).reshape(shape)
    if kind in ("i4", "u4"):
        raw = data.view(np.uint8).ravel()
        nibbles = np.empty(raw.size * 2, dtype=np.uint8)
        nibbles[0::2], nibbles[1::2] = raw & 0x0F, raw >> 4
        count = int(np.prod(shape))
        values = nibbles[:count]
        if kind == "i4":
            return ((values.astype(np.int8) ^ 8) - 8).astype(ml_dtypes.int4).reshape(shape)
        return values.astype(ml_dtypes.uint4).reshape(shape)
    return data.reshape(shape)


def _run_openvino(core: Any, model: Any, feed: dict[str, np.ndarray]) -> dict[str, Any]:
    compiled = core.compile_model(model, "CPU", OV_CONFIG)
    by_port = {}
    positional = list(feed.values()) if len(feed) == len(compiled.inputs) else None
    for index, port in enumerate(compiled.inputs):
        hits = sorted(n for n in port.get_names() if n in feed)
        if hits:
            by_port[port] = _to_openvino(feed[hits[0]])
        elif positional is not None:
            # OpenVINO renames the input of a pass-through graph after its output.
            by_port[port] = _to_openvino(positional[index])
        else:
            raise AssertionError(f"no data for OpenVINO input {sorted(port.get_names())}")
    request = compiled.create_infer_request()
    request.infer(by_port)
    outputs: dict[str, Any] = {}
    for port in compiled.outputs:
        value = _from_openvino(request.get_tensor(port))
        for name in port.get_names():
            outputs[name] = value
    return outputs


class CaseRunner:
    """The three paths of one case, run one at a time (so a crash costs only one path)."""

    def __init__(self, case: Any, workdir: Path, core: Any) -> None:
        import onnx

        self.case, self.workdir, self.core = case, workdir, core
        graph = case.model.graph
        self.meta: dict[str, Any] = {"name": case.name,
                                     "control_flow": bool(_ops(graph) & CONTROL_FLOW)}
        inputs, outputs = case.data_sets[0]
        in_arrays = [_as_array(v) for v in inputs]
        out_arrays = [_as_array(v) for v in outputs]
        initialized = {t.name for t in graph.initializer}
        in_names = [vi.name for vi in graph.input if vi.name not in initialized]
        if len(in_names) != len(in_arrays):
            in_names = [vi.name for vi in graph.input]
        tensors = list(graph.input) + list(graph.output)
        self.meta["tensor_io"] = (all(a is not None for a in in_arrays + out_arrays)
                                  and all(_is_tensor_type(vi.type) for vi in tensors)
                                  and len(in_names) == len(in_arrays)
                                  and len(graph.output) == len(out_arrays))
        self.feed = dict(zip(in_names, in_arrays))
        self.expected = {vi.name: arr for vi, arr in zip(graph.output, out_arrays)}
        self.onnx_path = workdir / "model.onnx"
        onnx.save_model(case.model, self.onnx_path)
        self._converted: Any = None

    def _convert(self) -> Any:
        import irtool

        if self._converted is None:
            try:
                self._converted = irtool.convert(self.case.model)
            except Exception as err:
                self._converted = err
        if isinstance(self._converted, Exception):
            raise self._converted
        return self._converted

    def _outputs(self, path: str) -> dict[str, Any]:
        import irtool

        if path == "irtool_ov":
            xml = irtool.save(self._convert(), self.workdir / "model.xml")
            return _run_openvino(self.core, self.core.read_model(str(xml)), self.feed)
        if path == "irtool_rt":
            return irtool.run(self._convert(), self.feed, max_iterations=100_000)
        return _run_openvino(self.core, self.core.read_model(str(self.onnx_path)), self.feed)

    def run(self, path: str) -> tuple[str, str | None]:
        """``(status, reason)`` of one path: pass, wrong (ran, bad values), error, skip."""
        if not self.meta["tensor_io"]:
            return "skip", "non-tensor inputs or outputs (sequence/optional)"
        try:
            _check(self._outputs(path), self.expected, self.case.rtol, self.case.atol)
        except AssertionError as err:
            return "wrong", str(err)[:240]
        except Exception as err:
            return "error", _one_line(err)
        return "pass", None


# -- worker processes ----------------------------------------------------------------------
def _worker(todo: Path, progress: Path) -> int:
    import openvino as ov

    items = json.loads(todo.read_text())
    cases = {c.name: c for c in _collect()}
    core = ov.Core()

    with tempfile.TemporaryDirectory(prefix="irtool-node-") as tmp, progress.open("a") as out:
        def emit(item: dict[str, Any]) -> None:
            out.write(json.dumps(item) + "\n")
            out.flush()

        for name, paths in items:
            emit({"begin": name})
            workdir = Path(tmp) / name
            workdir.mkdir(exist_ok=True)
            try:
                runner = CaseRunner(cases[name], workdir, core)
            except Exception as err:  # a broken case must not lose the run
                emit({"meta": {"name": name, "control_flow": False, "tensor_io": False}})
                for path in paths:
                    emit({"part": name, "path": path, "status": "error",
                          "reason": f"runner: {_one_line(err)}"})
                emit({"done": name})
                continue
            emit({"meta": runner.meta})
            for path in paths:
                emit({"start": name, "path": path})
                status, reason = runner.run(path)
                emit({"part": name, "path": path, "status": status, "reason": reason})
            emit({"done": name})
    return 0


def run_suite(names: list[str], workdir: Path, workers: int = 2) -> dict[str, dict[str, Any]]:
    """Run ``names`` in ``workers`` processes; one record per case, crashes included.

    A worker that dies (or hangs past ``CASE_TIMEOUT_S``) on a path of a case gets that
    path recorded as ``crash`` (``timeout``) and is restarted with the rest of the work.
    """
    results: dict[str, dict[str, Any]] = {}
    slots = [{"id": k, "todo": [[n, list(PATHS)] for n in names[k::workers]]}
             for k in range(workers)]
    slots = [slot for slot in slots if slot["todo"]]
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")

    def spawn(slot: dict[str, Any]) -> None:
        todo = workdir / f"todo-{slot['id']}.json"
        progress = workdir / f"progress-{slot['id']}.jsonl"
        todo.write_text(json.dumps(slot["todo"]))
        progress.write_text("")
        slot.update(progress=progress, seen=0, current=None, case=None,
                    since=time.monotonic())
        slot["proc"] = subprocess.Popen(
            [sys.executable, str(HERE), "--_worker", str(todo), str(progress)],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def record(name: str, path: str, status: str, reason: str | None) -> None:
        entry = results.setdefault(name, {"name": name})
        entry[path], entry[f"{path}_reason"] = status, reason

    def finish_path(slot: dict[str, Any], name: str, path: str) -> None:
        for item in slot["todo"]:
            if item[0] == name and path in item[1]:
                item[1].remove(path)

    for slot in slots:
        spawn(slot)
    while slots:
        time.sleep(0.2)
        for slot in list(slots):
            lines = slot["progress"].read_text().splitlines()
            for line in lines[slot["seen"]:]:
                if not line.endswith("}"):
                    break
                slot["seen"] += 1
                item = json.loads(line)
                if "begin" in item:
                    slot["case"] = item["begin"]
                elif "meta" in item:
                    results.setdefault(item["meta"]["name"], {}).update(item["meta"])
                elif "start" in item:
                    slot["current"] = (item["start"], item["path"])
                    slot["since"] = time.monotonic()
                elif "part" in item:
                    record(item["part"], item["path"], item["status"], item["reason"])
                    finish_path(slot, item["part"], item["path"])
                    slot["current"] = None
                elif "done" in item:
                    slot["todo"] = [t for t in slot["todo"] if t[0] != item["done"]]
                    slot["case"] = None
            proc = slot["proc"]
            hung = slot["current"] is not None and \
                time.monotonic() - slot["since"] > CASE_TIMEOUT_S
            if hung:
                proc.kill()
                proc.wait()
            if proc.poll() is None:
                continue
            if slot["current"] is not None:
                name, path = slot["current"]
                status = "timeout" if hung else "crash"
                record(name, path, status, f"worker {status} (exit {proc.returncode})")
                finish_path(slot, name, path)
            elif slot["case"] is not None and proc.returncode:
                # Died while loading the case, before any path: the whole case crashed.
                for item in slot["todo"]:
                    if item[0] == slot["case"]:
                        for path in list(item[1]):
                            record(item[0], path, "crash", f"worker crash (exit "
                                                           f"{proc.returncode})")
                        item[1].clear()
            elif proc.returncode:
                raise RuntimeError(f"node-suite worker failed to start (exit {proc.returncode})")
            slot["todo"] = [t for t in slot["todo"] if t[1]]
            if slot["todo"]:
                spawn(slot)
            else:
                slots.remove(slot)
    return results


# -- summary ------------------------------------------------------------------------------
def summarize(results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    total = len(results)
    summary: dict[str, Any] = {"total": total}
    for path in PATHS:
        summary[path] = sum(1 for r in results.values() if r.get(path) == "pass")
    cf = [r for r in results.values() if r.get("control_flow")]
    cf_tensor = [r for r in cf if r.get("tensor_io")]
    summary["control_flow"] = len(cf)
    summary["control_flow_tensor_io"] = len(cf_tensor)
    for path in PATHS:
        summary[f"control_flow_{path}"] = sum(1 for r in cf_tensor if r.get(path) == "pass")
    return summary


def top_reasons(results: dict[str, dict[str, Any]], path: str, n: int = 15) -> list[tuple]:
    import re

    counter: collections.Counter[str] = collections.Counter()
    for r in results.values():
        if r.get(path) != "pass":
            reason = r.get(f"{path}_reason") or r.get(path) or ""
            # Group by the message shape: names and numbers vary per case.
            key = re.sub(r"'[^']*'|\"[^\"]*\"|\d+(\.\d+)?(e-?\d+)?", "_", reason)[:110]
            counter[key] += 1
    return counter.most_common(n)


def format_summary(results: dict[str, dict[str, Any]]) -> str:
    s = summarize(results)
    lines = [f"ONNX node cases: {s['total']}"]
    for path in PATHS:
        lines.append(f"  {path:12s} correct: {s[path]}")
    lines.append(f"  control-flow cases: {s['control_flow']} "
                 f"({s['control_flow_tensor_io']} with tensor-only inputs/outputs); correct: "
                 + ", ".join(f"{p} {s['control_flow_' + p]}" for p in PATHS))
    for path in PATHS:
        lines.append(f"  top failure reasons, {path}:")
        for reason, count in top_reasons(results, path, 12):
            lines.append(f"    {count:4d}  {reason}")
    return "\n".join(lines)


# -- the test ------------------------------------------------------------------------------
@pytest.mark.slow
def test_onnx_node_suite(tmp_path_factory: pytest.TempPathFactory) -> None:
    workdir = tmp_path_factory.mktemp("node-suite")
    names = [c.name for c in _collect()]
    results = run_suite(names, workdir, workers=2)
    table = workdir / "node_suite.json"
    table.write_text(json.dumps({"summary": summarize(results), "cases": results}, indent=1,
                                sort_keys=True))
    print(format_summary(results))
    print(f"per-case table: {table}")
    s = summarize(results)
    assert s["total"] == len(names)
    # Every control-flow case whose inputs and outputs are tensors converts and runs
    # correctly on both backends.
    assert s["control_flow_irtool_rt"] == s["control_flow_tensor_io"], _failing(results, True)
    assert s["control_flow_irtool_ov"] == s["control_flow_tensor_io"], _failing(results, True)
    for path, floor in MEASURED.items():
        assert s[path] >= floor - MARGIN, f"{path}: {s[path]} correct, expected >= {floor} - " \
                                          f"{MARGIN}"


def _failing(results: dict[str, dict[str, Any]], control_flow: bool) -> str:
    bad = [f"{r['name']}: {r.get('irtool_rt_reason') or r.get('irtool_ov_reason')}"
           for r in results.values()
           if r.get("control_flow") == control_flow and r.get("tensor_io")
           and (r.get("irtool_rt") != "pass" or r.get("irtool_ov") != "pass")]
    return "\n".join(bad[:20])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", action="append", default=[], help="only cases containing this")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, help="write the per-case table here (JSON)")
    parser.add_argument("--_worker", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args._worker:
        return _worker(*args._worker)
    names = [c.name for c in _collect()]
    if args.k:
        names = [n for n in names if any(k in n for k in args.k)]
    with tempfile.TemporaryDirectory(prefix="irtool-suite-") as tmp:
        results = run_suite(names, Path(tmp), workers=args.workers)
    if args.out:
        args.out.write_text(json.dumps({"summary": summarize(results), "cases": results},
                                       indent=1, sort_keys=True))
    print(format_summary(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
