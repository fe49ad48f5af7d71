"""``check``: convert an ONNX model, run it three ways, compare every output.

onnxruntime on the ONNX model is the reference; irtool's runtime and OpenVINO's
CPU runtime both run the converted IR as written to disk (``.xml``/``.bin``), so
the files themselves are what is checked. A backend that fails is reported with
the first line of its error and the others still run; OpenVINO runs in a child
process, so even a crash of OpenVINO is just its column's reason.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.errors import ConversionError, IRToolError
from ..core.files import write_npz
from ..core.sniff import refuse_other_kind
from ..engines.base import Engine, EngineResult, first_line
from ..engines.isolate import Isolated
from ..engines.onnxruntime import OnnxRuntimeEngine
from ..engines.openvino import OpenVINOEngine, cpu_plugin_refusals
from ..engines.runtime import IrtoolEngine
from ..ir import write_model
from .compare import Comparison, compare_outputs
from .inputs import make_inputs

log = logging.getLogger("irtool")

F64_CAUSE = "likely cause: OpenVINO's CPU plugin computes float64 in float32"
"""Said of a float64 output OpenVINO gets wrong: its CPU plugin runs f64 ops in f32."""

DEFAULT_TIMEOUT_S = 300.0
"""Seconds onnxruntime and OpenVINO may each take in a check."""

if TYPE_CHECKING:
    import onnx

Progress = Callable[[str], None]


@dataclass
class BackendReport:
    """One backend's run: ``error`` if it failed, else one ``Comparison`` per output
    (empty for the reference itself)."""

    name: str
    error: str | None
    seconds: float
    rows: list[Comparison] = field(default_factory=list)
    compared_with: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and all(r.ok for r in self.rows)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "error": self.error,
                "seconds": round(self.seconds, 4), "compared_with": self.compared_with,
                "outputs": [r.to_dict() for r in self.rows]}


@dataclass
class CheckReport:
    """The result of ``check``: per backend, per output rows and a verdict."""

    model: str
    reference: str
    backends: list[BackendReport]
    outputs: list[str]
    inputs: list[dict[str, Any]]
    ir_path: str | None = None
    rtol: float | None = None
    atol: float | None = None
    optimize: bool = True
    optimizations: dict[str, dict[str, int]] = field(default_factory=dict)
    """What was applied to the IR checked: ``{"convert": {...}, "irtool": {...}}``, each
    rewrite's name and how often it applied (see ``describe_optimizations``)."""

    @property
    def ok(self) -> bool:
        """Every backend ran and every output agrees with onnxruntime."""
        return (self.reference == "onnxruntime"
                and all(b.ok for b in self.backends))

    def backend(self, name: str) -> BackendReport:
        return next(b for b in self.backends if b.name == name)

    def failures(self) -> list[str]:
        """One line per problem: a failed backend, or an output that disagrees."""
        lines = []
        for b in self.backends:
            if b.error is not None:
                lines.append(f"{b.name} failed: {b.error}")
            for r in b.rows:
                if not r.ok:
                    lines.append(f"{b.name}: output {r.output!r}: {r.describe()} "
                                 f"(vs {b.compared_with})")
        return lines

    def verdict(self) -> str:
        """The one-line summary the CLI ends with."""
        others = [b.name for b in self.backends if b.name != self.reference]
        if self.ok:
            return (f"PASS: {' and '.join(others)} match {self.reference} on all "
                    f"{len(self.outputs)} output(s)")
        bad = sorted({b.name for b in self.backends if not b.ok})
        text = f"FAIL: {', '.join(bad)} {'does' if len(bad) == 1 else 'do'} not agree"
        if bad == ["openvino"] and _only_f64(self.backend("openvino")):
            text += f" on float64 output(s) only ({F64_CAUSE})"
        if self.reference != "onnxruntime":
            text += f" (onnxruntime failed; values compared with {self.reference})"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "ok": self.ok, "reference": self.reference,
                "outputs": list(self.outputs), "inputs": self.inputs,
                "ir": self.ir_path, "rtol": self.rtol, "atol": self.atol,
                "optimize": self.optimize,
                "optimizations": {k: dict(v) for k, v in self.optimizations.items()},
                "backends": [b.to_dict() for b in self.backends],
                "failures": self.failures(), "verdict": self.verdict()}

    def format_table(self) -> str:
        """A table: one row per output, one column group per backend (max abs / max rel /
        verdict), then the problems and the verdict line."""
        return _format_table(self)


def check(model: onnx.ModelProto | str | os.PathLike[str],
          inputs: Mapping[str, Any] | None = None, *, seed: int = 0,
          shapes: Mapping[str, tuple[int, ...]] | None = None, rtol: float | None = None,
          atol: float | None = None, keep_dir: str | os.PathLike[str] | None = None,
          progress: Progress | None = None, timeout: float = DEFAULT_TIMEOUT_S,
          max_iterations: int | None = None, optimize: bool = True) -> CheckReport:
    """Convert ``model``, run onnxruntime, irtool and OpenVINO, and compare every output.

    ``inputs`` by tensor name; missing ones are random (``seed``) of the declared
    shapes, with ``shapes`` for dynamic dimensions. ``rtol``/``atol`` override the
    float tolerances. ``keep_dir`` keeps the IR (and ``inputs.npz``) there. onnxruntime and
    OpenVINO each run in a worker process stopped after ``timeout`` seconds (their column
    then says so); irtool's runtime stops any loop after ``max_iterations`` (default
    ``irtool.runtime.DEFAULT_MAX_ITERATIONS``). ``optimize=False`` converts without the
    optimising passes and runs irtool's executor without its rewrites; the report says
    what was applied either way (``optimizations``).
    Raises ``ConversionError`` when the model cannot be converted and
    ``CheckInputError`` when inputs cannot be made.
    """
    from ..frontends.onnx import convert_model  # loads onnx: only when a check runs

    say = progress or (lambda _msg: None)
    proto, label = _load_onnx(model)
    say("converting to IR")
    # First: a model the converter refuses gets its reason before inputs are made for it.
    converted: dict[str, int] = {}
    ir_model = convert_model(model, optimize=optimize, applied=converted)
    feed, generated = make_inputs(proto, inputs, seed=seed, shapes=shapes)

    with _ir_dir(keep_dir) as folder:
        stem = Path(label).stem if label != "<ModelProto>" else "model"
        xml = folder / f"{stem or 'model'}.xml"
        write_model(ir_model, xml)
        if keep_dir is not None:
            write_npz(folder / "inputs.npz", feed)
        ir_feed = _ir_feed(ir_model, proto, feed)
        irtool_engine = IrtoolEngine(xml, max_iterations=max_iterations, optimize=optimize)
        backends: list[tuple[Engine, Mapping[str, np.ndarray]]] = [
            # onnxruntime and OpenVINO run in a worker process with a time limit: either can
            # crash on a model or never end (a loop of 10**12 iterations), and a check must
            # then still report the other backends. irtool's own runtime caps every loop.
            (Isolated(OnnxRuntimeEngine(proto), timeout), feed),
            (irtool_engine, ir_feed),
            (Isolated(OpenVINOEngine(xml), timeout), ir_feed),
        ]
        outcomes: list[EngineResult] = []
        for backend, backend_feed in backends:
            say(f"running {backend.name}")
            outcome = backend.try_run(backend_feed)
            if outcome.error and keep_dir is None:
                # The temporary IR is gone after the check; its path would only be noise.
                outcome.error = outcome.error.replace(f"{xml}: ", "")
            if outcome.error and backend.name == "openvino":
                outcome.error = _openvino_reason(ir_model, outcome.error)
            outcomes.append(outcome)
        ir_path = str(xml) if keep_dir is not None else None

    outputs = [o.name for o in proto.graph.output]
    # onnxruntime is the reference; when it refuses the model, OpenVINO (independent of
    # irtool) stands in so the report still says whether the IR backends agree.
    ort, irt, ov = outcomes
    reference = ort if ort.ok else (ov if ov.ok else (irt if irt.ok else None))
    if reference is not None:
        _warn_declared_outputs(proto, reference.outputs or {})
    reports = []
    for outcome in outcomes:
        report = BackendReport(outcome.engine, outcome.error, outcome.seconds)
        if outcome.ok and reference is not None and outcome is not reference:
            report.compared_with = reference.engine
            report.rows = compare_outputs(outputs, outcome.outputs or {},
                                          reference.outputs or {}, rtol=rtol, atol=atol)
            if outcome.engine == "openvino":
                _explain_f64(report)
        reports.append(report)
    input_rows = [{"name": n, "dtype": _dtype(v), "shape": list(np.shape(v)),
                   "source": "random" if n in generated else "given"} for n, v in feed.items()]
    applied = {"convert": {k: v for k, v in converted.items() if v},
               "irtool": dict(irtool_engine.applied)}
    return CheckReport(label, reference.engine if reference else "none", reports, outputs,
                       input_rows, ir_path, rtol, atol, optimize, applied)


# How each optimisation's count reads: (verb, thing, things).
_APPLIED_WORDS = {
    "vectorised loops": ("vectorised", "loop", "loops"),
    "dropped Identity layers": ("dropped", "Identity layer", "Identity layers"),
    "sliced loop inputs": ("sliced", "loop input", "loop inputs"),
    "fused pools": ("fused", "pool", "pools"),
    "folded constant steps": ("folded", "constant step", "constant steps"),
    "specialised kernels": ("specialised", "kernel", "kernels"),
    "inlined numpy calls": ("inlined", "numpy call", "numpy calls"),
    "batched loops": ("batched", "loop at run time", "loops at run time"),
    "loop rewrites": ("rewrote", "loop body step", "loop body steps"),
}


def describe_optimizations(applied: Mapping[str, int]) -> str:
    """``{"vectorised loops": 2, "fused pools": 1}`` -> ``"vectorised 2 loops, fused 1
    pool"`` (``"none"`` when nothing applied)."""
    parts = []
    for name, count in applied.items():
        if not count:
            continue
        verb, one, many = _APPLIED_WORDS.get(name, (name + ":", "", ""))
        parts.append(f"{verb} {count} {one if count == 1 else many}".rstrip())
    return ", ".join(parts) or "none"


def _warn_declared_outputs(proto: onnx.ModelProto, outputs: Mapping[str, np.ndarray]) -> None:
    """One warning line per graph output whose computed shape its declaration contradicts
    (onnxmltools declares LightGBM's label [1] for any number of rows): the computed
    value is the output, for every backend, as for onnxruntime."""
    from ..frontends.onnx.tensor_types import (
        contradicts,
        declared_output_warning,
        tensor_info_from_type,
    )

    for vi in proto.graph.output:
        claimed = tensor_info_from_type(vi.type)
        shape = np.shape(outputs[vi.name]) if vi.name in outputs else None
        if claimed is not None and shape is not None and contradicts(claimed, shape):
            log.warning("warning: %s", declared_output_warning(vi.name, claimed, shape))


def _openvino_reason(ir_model: Any, error: str) -> str:
    """OpenVINO's failure, led by what irtool saw in the IR that its CPU plugin refuses
    (``cpu_plugin_refusals``: the ONNX node, and why), when there is such a thing."""
    refusals = cpu_plugin_refusals(ir_model)
    if not refusals:
        return error
    more = f" (and {len(refusals) - 1} more)" if len(refusals) > 1 else ""
    return f"{refusals[0]}{more}; OpenVINO: {error}"


def _explain_f64(report: BackendReport) -> None:
    """Each float64 output OpenVINO's values miss gets the likely cause as its note."""
    for row in report.rows:
        if row.verdict == "mismatch" and row.ref_dtype == "float64":
            row.note = f"{row.note}; {F64_CAUSE}" if row.note else F64_CAUSE


def _only_f64(report: BackendReport) -> bool:
    """Did the backend run, and is every output it gets wrong a float64 mismatch?"""
    wrong = [r for r in report.rows if not r.ok]
    return report.error is None and bool(wrong) and all(
        r.verdict == "mismatch" and r.ref_dtype == "float64" for r in wrong)


def _dtype(value: np.ndarray) -> str:
    return "str" if value.dtype.kind in "USO" else value.dtype.name


def _load_onnx(model: Any) -> tuple[onnx.ModelProto, str]:
    import onnx

    if isinstance(model, onnx.ModelProto):
        return model, "<ModelProto>"
    path = Path(model)
    if not path.is_file():
        raise ConversionError("no such ONNX file", file=str(path))
    refuse_other_kind(path, "onnx", ConversionError)
    try:
        return onnx.load(str(path)), str(path)
    except Exception as err:  # protobuf's DecodeError and friends
        raise ConversionError(f"cannot read the ONNX model: {first_line(err)}",
                              file=str(path)) from None


def _ir_feed(ir_model: Any, proto: onnx.ModelProto,
             feed: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The feed for the IR: its inputs by name; an ONNX initializer the IR kept as an
    input gets the initializer's value."""
    from onnx import numpy_helper

    inits = {t.name: t for t in proto.graph.initializer}
    out: dict[str, np.ndarray] = {}
    for name in ir_model.input_names():
        if name in feed:
            out[name] = feed[name]
        elif name in inits:
            out[name] = numpy_helper.to_array(inits[name])
    return out


class _ir_dir:  # lower case: used like a function in a with statement
    """A context manager: ``keep_dir`` (created) or a temporary folder removed at exit."""

    def __init__(self, keep_dir: str | os.PathLike[str] | None) -> None:
        self.keep_dir = keep_dir
        self._tmp: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> Path:
        if self.keep_dir is not None:
            path = Path(self.keep_dir)
            try:
                path.mkdir(parents=True, exist_ok=True)
            except OSError as err:
                raise IRToolError(f"cannot create the folder: {err.strerror}",
                                  file=str(path)) from None
            return path
        self._tmp = tempfile.TemporaryDirectory(prefix="irtool-check-")
        return Path(self._tmp.name)

    def __exit__(self, *exc: object) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()


# -- the table -------------------------------------------------------------------------------


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    if value == 0:
        return "0"
    return f"{value:.3g}"


_CELL = 60
_VERDICT_WORD = {"ok": "ok", "mismatch": "MISMATCH", "shape": "SHAPE", "dtype": "DTYPE",
                 "missing": "MISSING", "extra": "EXTRA"}


def _format_table(report: CheckReport) -> str:
    ref = report.reference
    candidates = [b for b in report.backends if b.name != ref]
    ref_report = next((b for b in report.backends if b.name == ref), None)
    names = list(report.outputs)
    for b in candidates:
        names += [r.output for r in b.rows if r.output not in names]
    ref_info: dict[str, str] = {}
    for b in candidates:
        for r in b.rows:
            if r.ref_dtype is not None and r.output not in ref_info:
                ref_info[r.output] = f"{r.ref_dtype}{list(r.ref_shape or ())}"

    header1 = ["output", f"{ref} (reference)"]
    header2 = ["", "type"]
    body = [[n, ref_info.get(n, "-")] for n in names]
    groups: list[tuple[str, list[list[str]]]] = []
    for b in candidates:
        cells: list[list[str]] = []
        by_name = {r.output: r for r in b.rows}
        for i, n in enumerate(names):
            if b.error is not None:
                # The full reason follows the table; the column gets its start.
                reason = b.error if len(b.error) <= _CELL else b.error[:_CELL - 1] + "…"
                cells.append([f"failed: {reason}" if i == 0 else "failed"])
            elif n in by_name:
                r = by_name[n]
                cells.append([_num(r.max_abs), _num(r.max_rel), _VERDICT_WORD[r.verdict]])
            else:
                cells.append(["-", "-", "-"])
        groups.append((b.name, cells))

    lines = []
    status = "ok" if ref_report and ref_report.error is None else "failed"
    lines.append(f"model: {report.model}")
    feed = ", ".join(f"{i['name']}: {i['dtype']}{i['shape']} {i['source']}"
                     for i in report.inputs)
    lines.append(f"inputs: {feed or 'none'}")
    if report.ir_path:
        lines.append(f"IR kept: {report.ir_path}")
    if report.optimizations:
        lines.append("optimisations" + ("" if report.optimize else " (--no-optimize)") + ": "
                     + "; ".join(f"{where}: {describe_optimizations(applied)}"
                                 for where, applied in report.optimizations.items()))
    if ref != "onnxruntime":
        ort = next((b for b in report.backends if b.name == "onnxruntime"), None)
        reason = ort.error if ort else "not run"  # type: ignore[assignment]
        lines.append(f"onnxruntime failed: {reason}")
        lines.append(f"reference instead: {ref} ({status})")

    left_w = [max(len(r[c]) for r in [header1, header2, *body]) for c in range(2)]
    sub_heads = ["max abs", "max rel", "verdict"]
    rendered_groups = []
    for gname, cells in groups:
        split = [c for c in cells if len(c) == 3]
        widths = [max([len(sub_heads[k])] + [len(c[k]) for c in split]) for k in range(3)]
        inner = sum(widths) + 4
        full = max([inner, len(gname)] + [len(c[0]) for c in cells if len(c) == 1])
        widths[2] += full - inner
        head1 = gname.ljust(full)
        head2 = "  ".join(h.ljust(w) for h, w in zip(sub_heads, widths))
        rows = ["  ".join(v.ljust(w) for v, w in zip(c, widths)) if len(c) == 3
                else c[0].ljust(full) for c in cells]
        rendered_groups.append((head1, head2, rows))

    def line(left: list[str], parts: list[str]) -> str:
        text = "  ".join(v.ljust(w) for v, w in zip(left, left_w))
        return (text + "".join(f" | {p}" for p in parts)).rstrip()

    lines.append("")
    lines.append(line(header1, [g[0] for g in rendered_groups]))
    lines.append(line(header2, [g[1] for g in rendered_groups]))
    for i, row in enumerate(body):
        lines.append(line(row, [g[2][i] for g in rendered_groups]))
    lines.append("")
    for problem in report.failures():
        lines.append(f"  {problem}")
    lines.append(report.verdict())
    return "\n".join(lines)
