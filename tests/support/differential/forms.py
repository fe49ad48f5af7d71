"""The irtool forms checked against onnxruntime, and the verdict of each on one case.

A *form* is one way irtool computes a model: a conversion (``irtool.convert``'s keyword
arguments) and an engine for the saved IR (irtool's runtime, with or without its
optimisations, or OpenVINO's CPU plugin). ``FORMS`` lists them all in one place: a new
switch is one more line there.

onnxruntime is the reference. A form that differs from it on an output is wrong (``differ``)
when either arbiter sides with onnxruntime there:

* OpenVINO's own ONNX frontend (``read_model`` of the .onnx) computes the same as
  onnxruntime: the engines agree, irtool does not;
* for irtool's runtime, the form's *baseline* ``irtool:all-off`` (``optimize=False`` for
  the conversion and the runtime: no optimisation at all) computes the same as
  onnxruntime: a rewrite changed the result, which issue 21 forbids whatever the engines
  say. (Not for the OpenVINO forms: the plugin's results on two forms of one model can
  differ by its own doing, a Loop it runs no iteration of leaving values it never wrote;
  a rewrite that changes a result shows in the irtool forms.)

Otherwise the difference is the engines' (``unsettled``: recorded, not counted against
irtool). So is a difference where onnxruntime and OpenVINO's frontend agree but ONNX's
own reference implementation (``onnx.reference``, the spec in numpy) computes what the
form does: both engines depart from the spec the same way (a float16 chain they compute
in float32, where the spec rounds every op's result to float16: seed 118, case 189 of the
long run, a float16 ``ReduceSum`` cast to int64 that the rounding takes from 2.999 to 3).
The same for an integer made by casting an accumulated float that sits exactly at an
integer, where the engines' summation order leaves it one ulp below (seed 136, case 166).
The verdict's detail says so; a rewrite that changes a result is still ``differ`` by its
baseline first. Only in those two kinds of model (``_Spec._may_settle``): the reference
implementation has gaps of its own in control flow (some Loops keep their initial values),
which elsewhere could match a bug of irtool's and hide it.

The claim the suite checks: no form ``differ``s, and no irtool form fails (``error``) on a
model onnxruntime runs.

onnxruntime and both OpenVINO engines run in a worker process (``irtool.engines.isolate``):
a crash or a hang of either is an outcome, not the end of the run.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import onnx

import irtool
from irtool.engines.base import EngineResult, first_line
from irtool.engines.isolate import Isolated
from irtool.engines.onnxruntime import OnnxRuntimeEngine
from irtool.engines.openvino import OpenVINOEngine, OpenVINOFrontendEngine
from irtool.tools.compare import Comparison, compare
from support.differential.generate import Case

if TYPE_CHECKING:
    from irtool.runtime import Executor


@dataclass(frozen=True)
class Form:
    """One way irtool computes a model: ``convert`` (``irtool.convert``'s keyword
    arguments), then ``engine`` on the saved IR: ``irtool`` (its runtime; ``runtime`` are
    ``Executor`` keyword arguments) or ``openvino`` (OpenVINO's CPU plugin on irtool's
    .xml/.bin)."""

    name: str
    convert: Mapping[str, Any] = field(default_factory=dict)
    engine: str = "irtool"
    runtime: Mapping[str, Any] = field(default_factory=dict)
    baseline: str | None = None  # the form without optimisations this one must compute alike

    @property
    def conversion(self) -> tuple[tuple[str, Any], ...]:
        """A key for the conversion this form runs (forms share conversions)."""
        return tuple(sorted(self.convert.items()))


FORMS: tuple[Form, ...] = (
    Form("irtool", baseline="irtool:all-off"),
    Form("irtool:no-vectorize", {"vectorize": False}, baseline="irtool:all-off"),
    Form("irtool:slice-inputs", {"slice_inputs": True}, baseline="irtool:all-off"),
    Form("irtool:plain-runtime", runtime={"optimize": False}, baseline="irtool:all-off"),
    Form("irtool:all-off", {"optimize": False}, runtime={"optimize": False}),
    Form("openvino", engine="openvino"),
    Form("openvino:no-vectorize", {"vectorize": False}, engine="openvino"),
    Form("openvino:slice-inputs", {"slice_inputs": True}, engine="openvino"),
    Form("openvino:no-optimize", {"optimize": False}, engine="openvino"),
)
"""Every form the suite checks. ``irtool:plain-runtime`` runs the default IR on irtool's
runtime with ``optimize=False`` (no batched loops, constant folding, MaxPool fusion,
specialised or inlined kernels, in-place writes or loop-code rewrites); ``irtool:all-off``
is ``irtool run --no-optimize`` of the ONNX model: converted and run without any
optimisation."""

VERDICTS = ("agree", "differ", "unsettled", "refused", "error", "engine-error")
"""What became of a form on one case:

* agree: every output matches onnxruntime (values within the dtype's tolerance; dtype and
  shape for outputs that depend on a random draw);
* differ: some output does not, where onnxruntime and OpenVINO's frontend agree on it;
* unsettled: it differs only on outputs where onnxruntime and OpenVINO's frontend disagree
  (or the frontend cannot run the model): the engines' disagreement;
* refused: ``irtool.convert`` refused the model with a one-line ``IRToolError``;
* error: irtool failed otherwise (an exception that is not an ``IRToolError`` while
  converting, IR its own validator rejects, its runtime failing on a model onnxruntime runs);
* engine-error: OpenVINO failed on irtool's IR (compiling, running, crashing, time-out).
"""

FAILING = ("differ", "error")
"""The verdicts that break the suite's claim."""

TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (2e-2, 2e-3),
}
"""(rtol, atol) per output dtype where a chain of ops needs more than a single op
(``irtool.tools.compare.default_tolerance`` otherwise): float16 values rounded after
every op (onnxruntime, irtool) or only at the end (OpenVINO computes in f32) drift apart by a
few units in the last place per op."""


@dataclass
class Verdict:
    """One form on one case: its verdict, a one-line detail, the outputs it got wrong, and
    for ``differ`` what says it is wrong (``openvino-frontend``, or its baseline form)."""

    form: str
    kind: str
    detail: str = ""
    outputs: list[str] = field(default_factory=list)
    settled_by: str = ""

    @property
    def failing(self) -> bool:
        return self.kind in FAILING


@dataclass
class Evaluation:
    """Every form on one case. ``reference`` is onnxruntime's failure (None: it ran; the
    forms then have verdicts); ``arbiter`` OpenVINO's frontend's (None: it ran)."""

    reference: str | None
    arbiter: str | None
    verdicts: list[Verdict] = field(default_factory=list)
    unsettled_outputs: list[str] = field(default_factory=list)

    def failures(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.failing]

    def verdict(self, form: str) -> Verdict | None:
        return next((v for v in self.verdicts if v.form == form), None)


def executor_for(xml: Path, form: Form) -> Executor:
    """irtool's runtime as ``form`` runs it on the saved IR (loaded and validated as
    ``irtool.load`` does)."""
    from irtool.runtime import Executor

    return Executor(irtool.load(xml), check=False, **dict(form.runtime))


def run_irtool(xml: Path, feed: Mapping[str, np.ndarray], form: Form) -> dict[str, np.ndarray]:
    """``form``'s outputs from irtool's runtime on the saved IR."""
    executor = executor_for(xml, form)
    return executor.run({n: feed[n] for n in executor.input_names})


def evaluate(case: Case, forms: Sequence[Form] = FORMS, *, timeout: float = 120.0,
             workdir: Path | None = None) -> Evaluation:
    """Run onnxruntime, OpenVINO's frontend and every form on ``case``; a verdict per form.

    A form's baseline runs too when it is not among ``forms`` (to settle differences).
    ``workdir`` keeps the files (model.onnx, the IRs); a temporary folder otherwise.
    """
    by_name = {f.name: f for f in FORMS}
    wanted = list(forms)
    for form in forms:
        if form.baseline and all(f.name != form.baseline for f in wanted):
            wanted.append(by_name[form.baseline])
    with contextlib.ExitStack() as stack:
        folder = workdir or Path(stack.enter_context(tempfile.TemporaryDirectory(
            prefix="irtool-differential-")))
        folder.mkdir(parents=True, exist_ok=True)
        onnx_path = folder / "model.onnx"
        onnx.save(case.model, str(onnx_path))
        reference = Isolated(OnnxRuntimeEngine(case.model), timeout,
                             label="onnxruntime").try_run(case.feed)
        if not reference.ok:
            return Evaluation(reference.error, None)
        arbiter = Isolated(OpenVINOFrontendEngine(onnx_path), timeout,
                           label="OpenVINO's frontend").try_run(case.feed)
        ref = reference.outputs or {}
        settled = _settled(case, ref, arbiter)
        conversions: dict[tuple, tuple[Path | None, str | None, str]] = {}
        runs: dict[str, _Run] = {}
        for form in wanted:
            key = form.conversion
            if key not in conversions:
                conversions[key] = _convert(case.model, form, folder / f"ir{len(conversions)}")
            xml, problem, kind = conversions[key]
            runs[form.name] = _Run(None, kind, problem or "") if xml is None else \
                _run_form(case, form, xml, ref, timeout)
    evaluation = Evaluation(None, arbiter.error,
                            unsettled_outputs=[o for o in ref if not settled[o]])
    spec = _Spec(case, ref)
    for form in forms:
        evaluation.verdicts.append(_verdict(form, runs, settled, spec))
    return evaluation


class _Spec:
    """ONNX's reference implementation on the case, run only when a verdict asks (a form
    that differs where both engines agree): does it compute what the form computed, and
    not what onnxruntime did?"""

    def __init__(self, case: Case, ref: Mapping[str, np.ndarray]) -> None:
        self.case, self.ref = case, ref
        self._outputs: dict[str, np.ndarray] | None = None

    def outputs(self) -> dict[str, np.ndarray]:
        """The reference implementation's outputs; none where it cannot run the model."""
        if self._outputs is None:
            from onnx.reference import ReferenceEvaluator

            try:
                evaluator = ReferenceEvaluator(self.case.model, new_ops=_REFERENCE_FIXES)
                values = evaluator.run(None, dict(self.case.feed))
                self._outputs = {name: np.asarray(v) for name, v in
                                 zip(evaluator.output_names, values)}
            except Exception:  # its own gaps: no arbiter then
                self._outputs = {}
        return self._outputs

    def sides_with(self, name: str, got: np.ndarray | None) -> bool:
        """Does the spec give ``got`` for output ``name``, where onnxruntime differs from it?"""
        kind = self.case.checks.get(name, "values")
        if got is None or kind not in ("values", "loose") or not self._may_settle(name, got):
            return False
        spec = self.outputs().get(name)
        return spec is not None and check_output(kind, name, got, spec) is None and \
            check_output(kind, name, spec, self.ref[name]) is not None

    def _may_settle(self, name: str, got: np.ndarray) -> bool:
        """Is ``name`` a difference the spec may settle? Only two kinds are known to make
        both engines depart from the spec alike; elsewhere the reference implementation's
        own gaps (it gives some Loops their initial values) could match a bug of irtool's
        and hide it. (A random output's values are nobody's to settle: not asked.)

        * float16 values: the engines compute a float16 chain in float32.
        * an integer output of a model that casts a float to an integer, off by at most
          one everywhere: a float sum exactly at an integer (-24 by float64) that the
          engines' summation order leaves one ulp below it (-23.999998, truncated to -23)
          and numpy's pairwise sum, the spec's and irtool's, does not (seed 136, case 166
          of the confirmation run). A truncation that rounds instead, or any other cast
          bug, is still ``differ``: the spec truncates, so it does not side with it.
        """
        if "float16" in self.case.tags:
            return True
        ref = np.asarray(self.ref[name])
        if "float-to-int" not in self.case.tags or ref.dtype.kind not in "iu" or \
                np.shape(got) != ref.shape:
            return False
        gap = np.abs(np.asarray(got).astype(np.int64) - ref.astype(np.int64))
        return bool(gap.size == 0 or gap.max() <= 1)


@dataclass
class _Run:
    """What a form computed: per reference output, what is wrong with it (None: nothing);
    or, when it did not run, its verdict and why."""

    wrong: dict[str, str | None] | None
    kind: str = ""
    detail: str = ""
    extra: list[str] = field(default_factory=list)
    got: Mapping[str, np.ndarray] = field(default_factory=dict)


def _scan_any_axes() -> type:
    """ONNX's reference Scan (opset 9 on) runs along axis 0, forwards only; the spec's Scan
    along any axis and direction is that one on inputs whose scan axis is moved first (and
    reversed for a backward scan), its scan outputs moved back (and reversed) after."""
    from onnx.reference.ops.op_scan import Scan as ReferenceScan

    class Scan(ReferenceScan):  # type: ignore[misc]
        """(The reference evaluator takes a new op by its class's name.)"""

        op_domain = ""

        def __init__(self, node: onnx.NodeProto, run_params: dict[str, Any]) -> None:
            moved = ("scan_input_axes", "scan_input_directions", "scan_output_axes",
                     "scan_output_directions")
            given = {a.name: list(a.ints) for a in node.attribute if a.name in moved}
            plain = onnx.NodeProto()
            plain.CopyFrom(node)
            del plain.attribute[:]
            plain.attribute.extend(a for a in node.attribute if a.name not in moved)
            super().__init__(plain, run_params)
            self.given = given

        def _run(self, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
            states = len(args) - self.num_scan_inputs
            inputs = list(args)
            for i in range(self.num_scan_inputs):
                x = np.asarray(inputs[states + i])
                x = np.moveaxis(x, _at(self.given, "scan_input_axes", i) % x.ndim, 0)
                inputs[states + i] = x[::-1] if _at(self.given, "scan_input_directions", i) \
                    else x
            outputs = list(super()._run(*inputs, **kwargs))
            for j in range(len(outputs) - states):
                y = np.asarray(outputs[states + j])
                y = y[::-1] if _at(self.given, "scan_output_directions", j) else y
                outputs[states + j] = np.ascontiguousarray(np.moveaxis(
                    y, 0, _at(self.given, "scan_output_axes", j) % y.ndim))
            return tuple(outputs)

    return Scan


def _at(attrs: Mapping[str, list[int]], name: str, index: int) -> int:
    values = attrs.get(name, [])
    return values[index] if index < len(values) else 0


_ScanAnyAxes = _scan_any_axes()


def _coerced_to_2d(name: str) -> type:
    """ONNX's reference Softmax, LogSoftmax and Hardmax compute opset 13's form (along one
    axis) at every opset; before 13 the spec's form flattens the input to 2-D at ``axis``
    (default 1) and works along the rows: that one for models of opset 1 to 12."""
    from onnx.reference.ops import op_hardmax, op_log_softmax, op_softmax

    base = {"Softmax": op_softmax.Softmax, "LogSoftmax": op_log_softmax.LogSoftmax,
            "Hardmax": op_hardmax.Hardmax}[name]

    def _run(self: Any, x: np.ndarray, axis: int | None = None) -> tuple[np.ndarray]:
        if self.run_params["opsets"].get("", 13) >= 13:
            return base._run(self, x)
        axis = next((a.i for a in self.onnx_node.attribute if a.name == "axis"), 1)
        axis %= max(x.ndim, 1)
        rows = int(np.prod(x.shape[:axis], dtype=np.int64))
        along = op_hardmax.Hardmax if name == "Hardmax" else op_softmax.Softmax
        (y,) = along._run(self, x.reshape(rows, -1), axis=-1)
        y = np.log(y) if name == "LogSoftmax" else y
        return (y.reshape(x.shape),)

    return type(name, (base,), {"op_domain": "", "_run": _run,
                                "__doc__": "(taken by the class's name)"})


def _loop_stacked() -> type:
    """ONNX's reference Loop joins a scan output's rows with ``np.vstack``, which drops a
    leading dim of 1 ([1, 3] rows come out [n, 3], not [n, 1, 3]) and fails on no rows,
    and it runs no iteration when the condition input is left out (None). The spec's Loop:
    rows stacked on a new axis, an absent condition true."""
    from onnx.reference.ops.op_loop import Loop as ReferenceLoop

    class Loop(ReferenceLoop):
        """(The reference evaluator takes a new op by its class's name.)"""

        op_domain = ""

        def _run(self, M: Any, cond: Any, *args: Any, context: Any = None, body: Any = None,
                 attributes: Any = None, bindings: Any = None) -> tuple[Any, ...]:
            body = self.body
            names = body.input_names
            inputs: dict[str, Any] = dict(context or {})
            inputs.update(zip(names[2:], args))
            keep = cond is None or bool(np.asarray(cond).all())
            rows: list[list[np.ndarray]] = [[] for _ in range(self.K)]
            carried = list(args)
            it = 0
            while keep and (M is None or it < int(np.asarray(M))):
                inputs[names[0]] = np.array(it, dtype=np.int64)
                inputs[names[1]] = np.array(keep) if cond is None else \
                    np.asarray(keep).reshape(np.shape(cond))
                outputs = self._run_body(inputs, attributes=attributes, bindings=bindings)
                keep = bool(np.asarray(outputs[0]).all())
                carried = list(outputs[1:1 + self.N])
                inputs.update(zip(names[2:], carried))
                for k in range(self.K):
                    rows[k].append(np.asarray(outputs[1 + self.N + k]))
                it += 1
            if any(not r for r in rows):
                raise NotImplementedError("a scan output of no rows: its shape is not known")
            return tuple(carried) + tuple(np.stack(r) for r in rows)

    return Loop


_REFERENCE_FIXES = [_ScanAnyAxes, _loop_stacked(),
                    *(_coerced_to_2d(n) for n in ("Softmax", "LogSoftmax", "Hardmax"))]


def _verdict(form: Form, runs: Mapping[str, _Run], settled: Mapping[str, bool],
             spec: _Spec) -> Verdict:
    run = runs[form.name]
    if run.wrong is None:
        return Verdict(form.name, run.kind, run.detail)
    bad = [name for name, problem in run.wrong.items() if problem is not None]
    if not bad and not run.extra:
        return Verdict(form.name, "agree")
    detail = "; ".join(f"{name}: {run.wrong[name]}" for name in bad) or \
        f"outputs not in the model: {run.extra}"
    if run.extra:
        return Verdict(form.name, "differ", detail, run.extra, "the model's outputs")
    base = runs.get(form.baseline) if form.baseline else None
    for name in bad:
        if base is not None and base.wrong is not None and base.wrong.get(name) is None:
            return Verdict(form.name, "differ", detail, bad, form.baseline or "")
    for name in bad:
        if settled[name] and not spec.sides_with(name, run.got.get(name)):
            return Verdict(form.name, "differ", detail, bad, "openvino-frontend")
    if any(settled[name] for name in bad):
        detail = "the engines agree, but ONNX's reference implementation computes what " \
                 f"this form does: {detail}"
    return Verdict(form.name, "unsettled", detail, bad)


def _convert(model: onnx.ModelProto, form: Form, folder: Path
             ) -> tuple[Path | None, str | None, str]:
    """The saved IR of ``form``'s conversion, or None with why and the verdict for that."""
    try:
        ir = irtool.convert(model, **dict(form.convert))
    except irtool.IRToolError as err:
        return None, first_line(err), "refused"
    except Exception as err:  # an internal error of the converter: a bug
        return None, f"convert raised {type(err).__name__}: {first_line(err)}", "error"
    try:
        problems = [p.format() for p in irtool.validate(ir) if p.severity == "error"]
        if problems:
            return None, f"the IR fails irtool validate: {problems[0]}", "error"
        return irtool.save(ir, folder / "model.xml"), None, ""
    except Exception as err:
        return None, f"validating or saving the IR: {type(err).__name__}: " \
                     f"{first_line(err)}", "error"


def _run_form(case: Case, form: Form, xml: Path, ref: Mapping[str, np.ndarray],
              timeout: float) -> _Run:
    if form.engine == "openvino":
        outcome = Isolated(OpenVINOEngine(xml), timeout, label="OpenVINO").try_run(case.feed)
        if not outcome.ok:
            return _Run(None, "engine-error", outcome.error or "")
        got = outcome.outputs or {}
    else:
        try:
            got = run_irtool(xml, case.feed, form)
        except Exception as err:  # the runtime failing on a model onnxruntime runs
            return _Run(None, "error", f"run: {type(err).__name__}: {first_line(err)}")
    wrong = {name: check_output(case.checks.get(name, "values"), name, got.get(name), value)
             for name, value in ref.items()}
    return _Run(wrong, extra=sorted(set(got) - set(ref)), got=got)


def check_output(kind: str, name: str, got: np.ndarray | None, ref: np.ndarray) -> str | None:
    """What is wrong with ``got`` as output ``name`` (None: nothing), by the case's check:
    ``values`` within the dtype's tolerance, ``loose`` within float16's, ``shape`` (dtype and
    shape), ``draws`` (``shape``, and not one row repeated where the reference's rows
    differ), ``rank`` (dtype and rank: a random output whose length the run decides, which
    a random draw may decide, as a Loop whose condition is computed from one)."""
    if got is None:
        return "missing"
    got, ref = np.asarray(got), np.asarray(ref)
    if kind in ("values", "loose"):
        rtol, atol = TOLERANCES.get("float16" if kind == "loose" else ref.dtype.name,
                                    (None, None))
        row: Comparison = compare(name, got, ref, rtol=rtol, atol=atol)
        return None if row.ok else row.describe()
    if kind == "rank":
        if got.dtype != ref.dtype or got.ndim != ref.ndim:
            return f"{got.dtype}{list(got.shape)} != reference {ref.dtype}{list(ref.shape)} " \
                   "(a random output of run-time length: dtype and rank compared)"
        return None
    if got.dtype != ref.dtype or got.shape != ref.shape:
        return f"{got.dtype}{list(got.shape)} != reference {ref.dtype}{list(ref.shape)} " \
               "(a random output: dtype and shape compared)"
    if kind == "draws" and ref.ndim and ref.shape[0] >= 2 and not _one_row(ref) \
            and _one_row(got) and _unlikely_alike(ref):
        return f"the {ref.shape[0]} rows of fresh random draws are all the same row"
    return None


def _unlikely_alike(ref: np.ndarray) -> bool:
    """Would rows of independent draws like the reference's be all alike by chance less
    than once in a million? A continuous draw never is; a dropout mask over k kept
    (nonzero) elements repeats with odds 2**-k per row at ratio 0.5."""
    if ref.dtype.kind != "f":
        return False
    kept = min(int(np.count_nonzero(row)) for row in ref)
    return kept * (ref.shape[0] - 1) >= 20


def _one_row(value: np.ndarray) -> bool:
    return bool(np.all(value == value[:1]))


def _settled(case: Case, ref: Mapping[str, np.ndarray], arbiter: EngineResult) -> dict[str, bool]:
    """Per output: do onnxruntime and OpenVINO's frontend agree on it?"""
    if not arbiter.ok:
        return {name: False for name in ref}
    got = arbiter.outputs or {}
    return {name: check_output(case.checks.get(name, "values"), name, got.get(name), value)
            is None for name, value in ref.items()}
