"""``check`` on an IR: irtool's executor against OpenVINO's CPU runtime on the same files,
and both against saved outputs when given (``--reference outputs.npz``, e.g. the
framework's); a stateful IR step by step over the steps of one session.

OpenVINO runs in its exact modes unless told otherwise (``REFERENCE_CONFIG``: f32
arithmetic, an f32 KV cache, no dynamic quantization), and the report says so. With
``openvino_config`` (the settings a deployment uses, over OpenVINO's own defaults) a
disagreement is checked once more in the exact modes: when it goes away there, the report
says the settings cause it.

The pieces another tool reuses: ``run_engines`` (both engines on one IR, a session of
steps, each step's outputs and variables) and ``compare_engines`` / ``engines_disagree``
(where they part beyond tolerance).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..core.errors import IRToolError
from ..core.files import write_npz
from ..engines.base import STATE_KEY, EngineResult, flatten_steps, split_steps
from ..engines.isolate import Isolated
from ..engines.openvino import OpenVINOSessionEngine, describe_config
from ..engines.runtime import IrtoolSessionEngine
from ..ir import Model, read_model, write_model
from .check import DEFAULT_TIMEOUT_S, BackendReport, CheckReport, _dtype, _ir_dir
from .compare import Comparison, compare, compare_outputs
from .inputs import CheckInputError, make_ir_inputs
from .localize import DEFAULT_MEMORY_BUDGET, localize, localize_failure

log = logging.getLogger("irtool")

Feed = Mapping[str, Any]
Progress = Callable[[str], None]


@dataclass
class EnginePair:
    """Both engines over one session: each step's outputs and variables (keyed
    ``STATE_KEY + id``), or why an engine failed."""

    irtool: EngineResult
    openvino: EngineResult
    applied: dict[str, int] = field(default_factory=dict)  # irtool's rewrites (see check)

    def steps(self, engine: str) -> list[dict[str, np.ndarray]]:
        result = self.irtool if engine == "irtool" else self.openvino
        return split_steps(result.outputs or {})


def run_engines(xml: str | os.PathLike[str], steps: Sequence[Feed], *,
                model: Model | None = None, config: Mapping[str, str] | None = None,
                timeout: float = DEFAULT_TIMEOUT_S, max_iterations: int | None = None,
                optimize: bool = True, irtool: bool = True) -> EnginePair:
    """irtool's executor (``model``, else the file) and OpenVINO (the file, in a worker
    stopped after ``timeout``) over ``steps`` of one session. ``config``: OpenVINO's CPU
    properties (None: its exact modes). ``irtool=False`` runs OpenVINO alone."""
    flat = flatten_steps(steps)
    ov = Isolated(OpenVINOSessionEngine(xml, config=config, states=True), timeout,
                  label="OpenVINO").try_run(flat)
    if not irtool:
        return EnginePair(EngineResult("irtool", None, "not run", 0.0), ov)
    mine = IrtoolSessionEngine(model if model is not None else xml,
                               max_iterations=max_iterations, optimize=optimize)
    return EnginePair(mine.try_run(flat), ov, mine.applied)


@dataclass
class Parting:
    """Where two sessions first part: ``step``, and the outputs and variables that differ
    there (``rows``: every comparison of that step)."""

    step: int
    outputs: list[str]
    variables: list[str]
    rows: list[Comparison] = field(default_factory=list)

    def describe(self) -> str:
        what = [f"output {n!r}" for n in self.outputs] + \
               [f"variable {v!r}" for v in self.variables]
        return f"step {self.step}: {', '.join(what)}"


def compare_engines(candidate: Sequence[Mapping[str, np.ndarray]],
                    reference: Sequence[Mapping[str, np.ndarray]], outputs: Sequence[str], *,
                    rtol: float | None = None, atol: float | None = None) -> Parting | None:
    """The first step at which ``candidate`` misses ``reference`` (each a list of steps'
    outputs, variables keyed ``STATE_KEY + id``) on one of ``outputs`` or a variable both
    have, beyond tolerance; None when they agree throughout."""
    for number, (got, want) in enumerate(zip(candidate, reference)):
        rows = compare_outputs(list(outputs), got, want, rtol=rtol, atol=atol)
        rows = [r for r in rows if r.verdict != "extra"]
        for key in sorted(k for k in got if k.startswith(STATE_KEY) and k in want):
            rows.append(compare(key[len(STATE_KEY):], got[key], want[key], rtol=rtol,
                                atol=atol))
        bad_out = [r.output for r in rows[:len(outputs)] if not r.ok]
        bad_var = [r.output for r in rows[len(outputs):] if not r.ok]
        if bad_out or bad_var:
            return Parting(number, bad_out, bad_var, rows)
    return None


def engines_disagree(xml: str | os.PathLike[str], steps: Sequence[Feed], *,
                     config: Mapping[str, str] | None = None, rtol: float | None = None,
                     atol: float | None = None, timeout: float = DEFAULT_TIMEOUT_S,
                     max_iterations: int | None = None) -> str | None:
    """Do irtool and OpenVINO disagree on the IR ``xml`` over ``steps``, beyond tolerance?
    The first parting in words (``step 0: output 'y'``), or an engine's failure (``openvino
    failed: ...``); None when both run and agree."""
    from ..validation import read_valid

    model = read_valid(xml)
    pair = run_engines(xml, steps, model=model, config=config, timeout=timeout,
                       max_iterations=max_iterations)
    for result in (pair.irtool, pair.openvino):
        if not result.ok:
            return f"{result.engine} failed: {result.error}"
    parting = compare_engines(pair.steps("openvino"), pair.steps("irtool"),
                              model.output_names(), rtol=rtol, atol=atol)
    return parting.describe() if parting else None


def _load(model_or_path: Model | str | os.PathLike[str]) -> Model:
    from ..validation import read_valid, require_valid

    if isinstance(model_or_path, Model):
        return require_valid(model_or_path)
    path = Path(model_or_path)
    if not path.is_file():
        raise IRToolError("no such IR file", file=str(path))
    return read_valid(path)


def _steps(model: Model, inputs: Feed | Sequence[Feed] | None, seed: int,
           shapes: Mapping[str, Sequence[int | None]] | None
           ) -> tuple[list[dict[str, np.ndarray]], list[str]]:
    if inputs is None or isinstance(inputs, Mapping):
        feed, generated = make_ir_inputs(model, inputs, seed=seed, shapes=shapes)
        return [feed], generated
    steps, generated = [], []
    for number, given in enumerate(inputs):
        try:
            feed, made = make_ir_inputs(model, given, seed=seed + number, shapes=shapes)
        except CheckInputError as err:
            raise CheckInputError(f"step {number}: {err.message}") from None
        steps.append(feed)
        generated += [f"{n} (step {number})" for n in made]
    return steps, generated


def _label(name: str, step: int, many: bool) -> str:
    return f"{name} (step {step})" if many else name


def check_ir(model_or_path: Model | str | os.PathLike[str],
             inputs: Feed | Sequence[Feed] | None = None, *, seed: int = 0,
             shapes: Mapping[str, Sequence[int | None]] | None = None,
             rtol: float | None = None,
             atol: float | None = None,
             reference: Feed | Sequence[Feed] | None = None, reference_name: str = "reference",
             openvino_config: Mapping[str, str] | None = None,
             keep_dir: str | os.PathLike[str] | None = None, progress: Progress | None = None,
             timeout: float = DEFAULT_TIMEOUT_S, max_iterations: int | None = None,
             optimize: bool = True, localize_parting: bool = False,
             memory_budget: int = DEFAULT_MEMORY_BUDGET) -> CheckReport:
    """irtool's executor and OpenVINO on one IR (see the module docstring).

    ``inputs``: one feed by tensor name, or a list of them for the steps of one session
    (inputs not given are random: ``seed``, ``shapes``). ``reference``: saved outputs (one
    mapping, or one per step) both engines are compared with, named ``reference_name`` in
    the report; without it irtool is the reference. ``openvino_config``: OpenVINO's CPU
    properties (None: its exact modes). ``localize_parting``: when the engines part, find
    the layer where (``tools.localize``), within ``memory_budget`` bytes of values.
    """
    say = progress or (lambda _msg: None)
    model = _load(model_or_path)
    label = model.path or "<Model>"
    steps, generated = _steps(model, inputs, seed, shapes)
    many = len(steps) > 1
    outputs = model.output_names()
    saved: list[Mapping[str, Any]] | None = None
    if reference is not None:
        saved = [reference] if isinstance(reference, Mapping) else list(reference)
        if len(saved) != len(steps):
            raise CheckInputError(f"{len(saved)} reference file(s) for {len(steps)} step(s)")
    with _ir_dir(keep_dir) as folder:
        if isinstance(model_or_path, Model) or keep_dir is not None:
            xml = folder / (Path(label).stem if model.path else "model")
            xml = xml.with_suffix(".xml")
            write_model(model, xml)
            # What the engines read, lines and all (a model made in memory may name another
            # file, or none).
            model = read_model(xml)
        else:
            xml = Path(model_or_path)
        if keep_dir is not None:
            for number, feed in enumerate(steps):
                write_npz(folder / (f"inputs{number}.npz" if many else "inputs.npz"), feed)
        say("running irtool and OpenVINO")
        pair = run_engines(xml, steps, model=model, config=openvino_config, timeout=timeout,
                           max_iterations=max_iterations, optimize=optimize)
        report = _report(label, steps, generated, pair, saved, reference_name, outputs,
                         rtol, atol, optimize)
        report.openvino = describe_config(openvino_config)
        report.openvino_config = None if openvino_config is None else dict(openvino_config)
        report.ir_path = str(xml) if keep_dir is not None else None
        parting = None
        if pair.irtool.ok and pair.openvino.ok:
            parting = compare_engines(pair.steps("openvino"), pair.steps("irtool"), outputs,
                                      rtol=rtol, atol=atol)
        if parting is not None:
            report.notes.append(f"irtool and OpenVINO first part at {parting.describe()}")
            if openvino_config is not None:
                _exact_rerun(report, xml, steps, pair, outputs, rtol, atol, timeout, say)
            if localize_parting:
                say("localizing")
                report.localization = localize(
                    model, steps, parting.outputs, variables=parting.variables,
                    step=parting.step, config=openvino_config, rtol=rtol, atol=atol,
                    memory_budget=memory_budget, timeout=timeout,
                    max_iterations=max_iterations, progress=say,
                    candidate_outputs=pair.steps("openvino")[parting.step])
        elif localize_parting and pair.irtool.ok and not pair.openvino.ok:
            say("localizing OpenVINO's failure")
            report.localization = localize_failure(model, steps, pair.openvino.error or "",
                                                   config=openvino_config, timeout=timeout,
                                                   progress=say)
        elif localize_parting and saved is not None and not report.ok \
                and pair.irtool.ok and pair.openvino.ok:
            report.notes.append("irtool and OpenVINO agree with each other, not with the "
                                f"{reference_name}: nothing between them to localize")
    return report


def _exact_rerun(report: CheckReport, xml: Path, steps: Sequence[Feed], pair: EnginePair,
                 outputs: Sequence[str], rtol: float | None, atol: float | None,
                 timeout: float, say: Progress) -> None:
    """OpenVINO once more in its exact modes: does the difference go away?"""
    say("running OpenVINO in its exact modes")
    exact = run_engines(xml, steps, irtool=False, timeout=timeout).openvino
    if not exact.ok:
        report.notes.append(f"OpenVINO in its exact modes failed: {exact.error}")
        return
    again = compare_engines(split_steps(exact.outputs or {}), pair.steps("irtool"), outputs,
                            rtol=rtol, atol=atol)
    if again is None:
        settings = ", ".join(f"{k}={v}" for k, v in (report.openvino_config or {}).items())
        report.notes.append(f"in its exact modes ({describe_config(None)}) OpenVINO agrees "
                            "with irtool: the difference is caused by the settings "
                            f"{settings or '(its defaults)'}")
        report.caused_by_settings = True
    else:
        report.notes.append("in its exact modes OpenVINO still parts from irtool at "
                            + again.describe())


def _report(label: str, steps: Sequence[Mapping[str, np.ndarray]],
            generated: list[str], pair: EnginePair,
            saved: list[Mapping[str, Any]] | None, reference_name: str,
            outputs: list[str], rtol: float | None, atol: float | None,
            optimize: bool) -> CheckReport:
    many = len(steps) > 1
    names = [_label(n, s, many) for s in range(len(steps)) for n in outputs]
    reports: list[BackendReport] = []
    ref_name = reference_name if saved is not None else "irtool"
    ref_steps = [dict(s) for s in saved] if saved is not None else \
        (pair.steps("irtool") if pair.irtool.ok else None)
    if saved is not None:
        reports.append(BackendReport(reference_name, None, 0.0))
    for result in (pair.irtool, pair.openvino):
        row = BackendReport(result.engine, result.error, result.seconds)
        if result.ok and result.engine != ref_name and ref_steps is not None:
            row.compared_with = ref_name
            mine = split_steps(result.outputs or {})
            for number, (got, want) in enumerate(zip(mine, ref_steps)):
                got = {k: v for k, v in got.items() if not k.startswith(STATE_KEY)}
                rows = compare_outputs(outputs, got, want, rtol=rtol, atol=atol)
                for r in rows:
                    r.output = _label(r.output, number, many)
                row.rows += rows
        if result.ok and result.engine == "openvino" and pair.irtool.ok:
            for number, (got, want) in enumerate(zip(split_steps(result.outputs or {}),
                                                     pair.steps("irtool"))):
                for key in sorted(k for k in got if k.startswith(STATE_KEY) and k in want):
                    r = compare(_label(f"variable {key[len(STATE_KEY):]}", number, many),
                                got[key], want[key], rtol=rtol, atol=atol)
                    if ref_name != "irtool":
                        r.note = (r.note + "; " if r.note else "") + "vs irtool"
                    row.rows.append(r)
        reports.append(row)
    first = steps[0] if steps else {}
    input_rows = [{"name": n, "dtype": _dtype(v), "shape": list(np.shape(v)),
                   "source": "random" if n in generated else "given"}
                  for n, v in first.items()]
    return CheckReport(label, ref_name, reports, names, input_rows, None, rtol, atol,
                       optimize, {"irtool": dict(pair.applied)}, intended_reference=ref_name,
                       steps=len(steps))
