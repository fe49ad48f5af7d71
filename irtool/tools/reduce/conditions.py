"""What ``irtool reduce`` keeps true while it shrinks an IR: the condition of ``--until``.

A condition is asked about one candidate at a time, after the gate (``validate`` finds no
error in the candidate's files, except the code a ``validate:CODE`` condition is about):

* ``openvino-crash``: OpenVINO's CPU plugin dies in ``compile_model`` or ``infer``: of a
  signal (without ``--match``: the signal the original IR dies of, so that a candidate
  crashing some other way does not count), or, with ``--match REGEX``, of a signal or an
  exception whose one-line reason the expression finds. OpenVINO runs in a worker process
  (``engines.isolate``) stopped after the time-out: its death is an answer, not the end.
* ``disagree``: irtool's executor and OpenVINO (each on the candidate's files) give some
  output whose values, shape or element type differ beyond the tolerances of ``check``
  (``tools.compare``, irtool's values the reference). A run that fails is no disagreement.
* ``validate:CODE``: ``validate`` reports ``CODE``.
* ``command:CMD``: the shell command ``CMD`` exits non-zero (with ``--match``: and its
  output matches), ``{xml}`` replaced by the candidate's path (``{bin}``, ``{inputs}``: its
  weights and an ``.npz`` of its inputs). Stopped (its process group) after the time-out,
  which does not count as showing the condition.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ...core.diagnostics import Diagnostic
from ...core.errors import IRToolError
from ...core.files import write_npz
from ...core.workers import exit_reason
from ...engines.isolate import Isolated
from ...engines.openvino import OpenVINOEngine
from ...ir import Model
from ..compare import Comparison, compare_outputs

DEFAULT_TIMEOUT_S = 60.0
"""Seconds one candidate's OpenVINO run (or command) may take."""

KINDS = ("openvino-crash", "disagree", "validate:CODE", "command:CMD")


class ConditionError(IRToolError):
    """A condition that cannot be understood (``--until``, ``--match``)."""


@dataclass
class Verdict:
    """Whether a candidate shows the condition, and what was seen (one line)."""

    holds: bool
    detail: str
    signature: str = ""
    """What kind of failure it is, where that matters (``openvino-crash``: the signal)."""
    disagreeing: list[str] = field(default_factory=list)
    """For ``disagree``: the outputs whose values differ."""
    outputs: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    """For ``disagree``: each engine's outputs (``irtool``, ``openvino``)."""


@dataclass
class Trial:
    """One candidate as a condition sees it: its files, the model read from them (after
    the gate), its inputs and what ``validate`` said of it."""

    xml: Path
    model: Model
    feed: dict[str, np.ndarray]
    diagnostics: list[Diagnostic]


class Condition:
    """The base of the four kinds; ``allowed_codes`` are validation errors the gate lets
    through (only ``validate:CODE``'s own)."""

    kind = ""
    allowed_codes: frozenset[str] = frozenset()
    needs_values = True
    """Whether cut values should be the ones irtool computes (else zeros will do)."""

    def test(self, trial: Trial) -> Verdict:
        raise NotImplementedError

    def pin(self, verdict: Verdict) -> None:
        """Called with the original IR's verdict, so that later candidates must show the
        same thing (the crash's signal)."""

    def describe(self) -> str:
        """What the condition is, in words, for the report."""
        raise NotImplementedError


class OpenVINOCrash(Condition):
    """OpenVINO dies compiling or running the candidate (see the module)."""

    kind = "openvino-crash"

    def __init__(self, match: re.Pattern[str] | None = None,
                 timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self.match = match
        self.timeout = timeout
        self.signal: str | None = None

    def pin(self, verdict: Verdict) -> None:
        if self.match is None and verdict.holds:
            self.signal = verdict.signature

    def test(self, trial: Trial) -> Verdict:
        outcome = Isolated(OpenVINOEngine(trial.xml), self.timeout).attempt(trial.feed)
        if outcome.status == "crash":
            name = outcome.reason
            if self.match is not None:
                return Verdict(bool(self.match.search(name)), f"OpenVINO crashed ({name})")
            # Without --match only a signal counts, and once pinned only the original's.
            signalled = outcome.returncode is not None and outcome.returncode < 0
            same = self.signal is None or name == self.signal
            return Verdict(signalled and same, f"OpenVINO crashed ({name})", signature=name)
        if outcome.status == "error":
            reason = outcome.reason.replace(f"{trial.xml}: ", "")
            found = self.match is not None and bool(self.match.search(reason))
            return Verdict(found, f"OpenVINO failed: {reason}")
        if outcome.status == "timeout":
            return Verdict(False, f"OpenVINO gave no result within {self.timeout:g} s")
        return Verdict(False, "OpenVINO ran it")

    def describe(self) -> str:
        if self.match is not None:
            return (f"OpenVINO's CPU plugin dies of a signal, or fails with an error, matching "
                    f"/{self.match.pattern}/ in compile_model or infer")
        what = f"the signal {self.signal}" if self.signal else "a signal"
        return f"OpenVINO's CPU plugin dies of {what} in compile_model or infer"


class Disagree(Condition):
    """irtool's executor and OpenVINO differ on some output (see the module)."""

    kind = "disagree"

    def __init__(self, rtol: float | None = None, atol: float | None = None,
                 timeout: float = DEFAULT_TIMEOUT_S, max_iterations: int | None = None) -> None:
        self.rtol, self.atol = rtol, atol
        self.timeout = timeout
        self.max_iterations = max_iterations

    def test(self, trial: Trial) -> Verdict:
        found = irtool_vs_openvino(trial.xml, trial.model, trial.feed, rtol=self.rtol,
                                   atol=self.atol, timeout=self.timeout,
                                   max_iterations=self.max_iterations)
        if isinstance(found, str):
            return Verdict(False, found)
        rows, ours, theirs = found
        bad = [r for r in rows if r.verdict in ("mismatch", "shape", "dtype")]
        return Verdict(bool(bad), _disagreement(bad) if bad else "irtool and OpenVINO agree",
                       disagreeing=[r.output for r in bad],
                       outputs={"irtool": ours, "openvino": theirs})

    def describe(self) -> str:
        rule = ("the tolerances of irtool check (per element type)"
                if self.rtol is None and self.atol is None else
                f"rtol={self.rtol if self.rtol is not None else 'default'}, "
                f"atol={self.atol if self.atol is not None else 'default'}")
        return f"irtool's executor and OpenVINO's CPU plugin disagree beyond {rule}"


Outputs = dict[str, np.ndarray]


def irtool_vs_openvino(xml: Path, model: Model, feed: dict[str, np.ndarray], *,
                       rtol: float | None = None, atol: float | None = None,
                       timeout: float = DEFAULT_TIMEOUT_S, max_iterations: int | None = None
                       ) -> tuple[list[Comparison], Outputs, Outputs] | str:
    """irtool's executor (on ``model``, read from ``xml`` and validated by the caller) and
    OpenVINO (on ``xml``, in the worker of ``engines.isolate``, stopped after ``timeout``)
    on one IR with the same inputs: a ``Comparison`` per output (irtool's values the
    reference, ``tools.compare``'s tolerances) and both engines' outputs; or, when one of
    them fails, one line saying which and why. (Small on purpose: the comparison of one
    IR by two engines that ``check`` on IR may grow is the one to keep.)"""
    from ...runtime import Executor

    try:
        executor = Executor(model, max_iterations=max_iterations, check=False)
        ours = executor.run({n: feed[n] for n in executor.input_names})
    except IRToolError as err:
        return f"irtool failed: {str(err).splitlines()[0]}"
    outcome = Isolated(OpenVINOEngine(xml), timeout).attempt(feed)
    if not outcome.ok:
        return f"OpenVINO {outcome.status}: {outcome.reason.replace(f'{xml}: ', '')}"
    theirs: Outputs = outcome.value
    return compare_outputs(list(ours), theirs, ours, rtol=rtol, atol=atol), ours, theirs


def _disagreement(rows: list[Comparison]) -> str:
    first = rows[0]
    more = f" (and {len(rows) - 1} more output(s))" if len(rows) > 1 else ""
    return f"output {first.output!r}: {first.describe()}{more}"


class ValidateCode(Condition):
    """``validate`` reports ``code``."""

    kind = "validate"
    needs_values = False

    def __init__(self, code: str) -> None:
        from ...validation import RULES

        if code not in RULES:
            close = [c for c in RULES if c.startswith(code[:4])] or sorted(RULES)[:3]
            raise ConditionError(f"validate:{code}: no such code (validate's codes include "
                                 f"{', '.join(close[:5])}; see irtool validate --help)")
        self.code = code
        self.allowed_codes = frozenset({code})

    def test(self, trial: Trial) -> Verdict:
        found = [d for d in trial.diagnostics if d.code == self.code]
        if found:
            return Verdict(True, found[0].what())
        return Verdict(False, f"validate reports no {self.code}")

    def describe(self) -> str:
        return f"irtool validate reports {self.code}"


class Command(Condition):
    """A user's shell command exits non-zero on the candidate (see the module)."""

    kind = "command"
    needs_values = False

    def __init__(self, template: str, match: re.Pattern[str] | None = None,
                 timeout: float = DEFAULT_TIMEOUT_S) -> None:
        if "{xml}" not in template:
            raise ConditionError(f"command:{template}: the command must name the candidate as "
                                 "{xml} (it is run on each candidate IR)")
        self.template = template
        self.match = match
        self.timeout = timeout

    def command_for(self, xml: Path) -> str:
        return (self.template.replace("{xml}", shlex.quote(str(xml)))
                .replace("{bin}", shlex.quote(str(xml.with_suffix(".bin"))))
                .replace("{inputs}", shlex.quote(str(xml.with_name("inputs.npz")))))

    def test(self, trial: Trial) -> Verdict:
        if "{inputs}" in self.template:
            write_npz(trial.xml.with_name("inputs.npz"), trial.feed)
        proc = subprocess.Popen(self.command_for(trial.xml), shell=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            return Verdict(False, f"the command gave no answer within {self.timeout:g} s")
        text = out.decode("utf-8", "replace")
        if proc.returncode == 0:
            return Verdict(False, "the command exits 0")
        how = exit_reason(proc.returncode)
        if self.match is not None and not self.match.search(text):
            return Verdict(False, f"the command ends with {how}, its output not matching "
                                  f"/{self.match.pattern}/")
        last = next((ln.strip() for ln in reversed(text.splitlines()) if ln.strip()), "")
        return Verdict(True, f"the command ends with {how}" + (f": {last}" if last else ""))

    def describe(self) -> str:
        match = f", its output matching /{self.match.pattern}/" if self.match else ""
        return f"the command `{self.template}` exits non-zero{match}"


def _kill_group(proc: subprocess.Popen[Any]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.communicate()


def parse_condition(text: str, *, match: str | None = None, rtol: float | None = None,
                    atol: float | None = None, timeout: float = DEFAULT_TIMEOUT_S,
                    max_iterations: int | None = None) -> Condition:
    """The condition ``--until`` names: ``openvino-crash``, ``disagree``, ``validate:CODE``
    or ``command:CMD`` (see the module). ``ConditionError`` for anything else."""
    pattern = None
    if match is not None:
        try:
            pattern = re.compile(match)
        except re.error as err:
            raise ConditionError(f"--match {match!r}: not a regular expression ({err})"
                                 ) from None
    kind, _, rest = text.partition(":")
    if text == "openvino-crash":
        return OpenVINOCrash(pattern, timeout)
    if text == "disagree":
        if pattern is not None:
            raise ConditionError("--match goes with openvino-crash or command:CMD, not "
                                 "disagree")
        return Disagree(rtol, atol, timeout, max_iterations)
    if kind == "validate" and rest:
        return ValidateCode(rest.strip())
    if kind == "command" and rest.strip():
        return Command(rest.strip(), pattern, timeout)
    raise ConditionError(f"--until {text!r}: not a condition (one of {', '.join(KINDS)})")
