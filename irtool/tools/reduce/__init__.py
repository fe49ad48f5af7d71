"""``reduce``: shrink an IR to a small one that still shows a condition, for a bug report.

``reduce(MODEL.xml, inputs, until, out_dir)`` reads the IR and its inputs, checks that the
condition (``conditions``: OpenVINO crashes, irtool and OpenVINO disagree, ``validate``
reports a code, a command fails) holds on the IR as irtool writes it, then searches for
a smaller IR that still shows it (``search``: delta debugging over outputs and layers, then
into loops and branches, then smaller and simpler inputs and constants; the edits are in
``edits``, the values a cut feeds in come from irtool's executor, ``values``). What it
finds goes to ``out_dir`` with a README a user can paste into a bug report (``report``).
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...core.diagnostics import errors_only
from ...core.errors import IRToolError
from ...core.feeds import input_mismatch
from ...core.files import check_writable
from ...core.sniff import refuse_other_kind
from ...ir import write_model
from ...validation import check_file
from .conditions import (
    DEFAULT_TIMEOUT_S,
    KINDS,
    Condition,
    ConditionError,
    parse_condition,
)
from .edits import Candidate, layer_counts
from .report import write_report
from .search import Reducer

__all__ = ["DEFAULT_TIMEOUT_S", "KINDS", "Condition", "ConditionError", "ReduceError",
           "ReduceResult", "parse_condition", "reduce"]

log = logging.getLogger("irtool")

PathLike = str | os.PathLike[str]


class ReduceError(IRToolError):
    """An IR ``reduce`` cannot start from: invalid, inputs that do not fit, or one on which
    the condition does not hold."""


@dataclass
class ReduceResult:
    """What ``reduce`` did: the IR written, its size before and after, the condition and
    what the smallest IR shows of it, and the search's effort."""

    xml: Path
    source: str
    condition: str
    detail: str
    before: tuple[int, int]
    after: tuple[int, int]
    tried: int
    kept: int
    seconds: float
    out_of_time: bool = False

    def summary(self) -> str:
        """The one line the command ends with."""
        cut = (f"{self.before[0]} layers ({self.before[1]} with bodies) to {self.after[0]} "
               f"({self.after[1]})")
        stopped = ", stopped at the time limit" if self.out_of_time else ""
        return (f"reduced {self.source} from {cut} in {self.seconds:.1f} s, {self.tried} "
                f"candidates tried, {self.kept} kept{stopped}: {self.xml}; {self.detail}")


Progress = Callable[[Candidate, Reducer], None]


def reduce(model: PathLike, inputs: Mapping[str, np.ndarray] | PathLike | None, until: str |
           Condition, out_dir: PathLike, *, match: str | None = None,
           rtol: float | None = None, atol: float | None = None,
           timeout: float = DEFAULT_TIMEOUT_S, max_iterations: int | None = None,
           time_limit: float | None = None, progress: Progress | None = None
           ) -> ReduceResult:
    """Shrink the IR ``model`` while ``until`` holds, and write the result to ``out_dir``.

    ``inputs``: arrays by input name (or an ``.npz``), every input of the model; None for a
    model without inputs. ``until``: a ``Condition`` or its text (``openvino-crash``,
    ``disagree``, ``validate:CODE``, ``command:CMD {xml}``), with ``match`` (a regular
    expression for ``openvino-crash`` and ``command``) and ``rtol``/``atol`` (for
    ``disagree``, as ``check`` takes them). ``timeout``: seconds each candidate's OpenVINO
    run (or command) may take; ``max_iterations``: irtool's executor stops any loop beyond
    it; ``time_limit``: seconds for the whole search, after which the smallest IR found
    so far is written. ``progress`` hears of every candidate kept.

    Raises ``ReduceError`` when the IR has validation errors (other than the code
    ``validate:CODE`` is about), the inputs do not fit it, or the condition does not hold
    on it; ``ConditionError`` for a condition that cannot be understood.
    """
    started = time.monotonic()
    condition = until if isinstance(until, Condition) else parse_condition(
        until, match=match, rtol=rtol, atol=atol, timeout=timeout,
        max_iterations=max_iterations)
    path = Path(model)
    if not path.is_file():
        raise ReduceError("no such IR file", file=str(path))
    refuse_other_kind(path, "ir", ReduceError)
    out = Path(out_dir)
    check_writable(out / "README.md")
    ir, diagnostics = check_file(path)
    errors = [d for d in errors_only(diagnostics) if d.code not in condition.allowed_codes]
    if ir is None or errors:
        first = errors[0] if errors else errors_only(diagnostics)[0]
        raise ReduceError(f"validate finds errors in it; reduce starts from valid IR: "
                          f"{first.what()}", file=str(path), line=first.line)
    feed = _feed(inputs, ir.input_names(), str(path))
    with tempfile.TemporaryDirectory(prefix="irtool-reduce-") as tmp:
        reducer = Reducer(condition, Path(tmp), max_iterations=max_iterations,
                          progress=progress, time_limit=time_limit)
        start = Candidate(ir, feed)
        verdict = reducer.test(start)
        if verdict is None or not verdict.holds:
            seen = verdict.detail if verdict is not None else "irtool cannot write it back"
            raise ReduceError(f"the condition does not hold on it ({condition.describe()}): "
                              f"{seen}", file=str(path))
        condition.pin(verdict)
        reducer.current, reducer.verdict = start, verdict
        final = reducer.run(start)
        assert reducer.verdict is not None
        xml, bin_path = write_model(final.model, Path(tmp) / "reduced.xml")
        before, after = layer_counts(ir), layer_counts(final.model)
        written = write_report(out, (xml.read_bytes(), bin_path.read_bytes()), final.feed,
                               final.model, condition, reducer.verdict, source=str(path),
                               before=before, after=after)
    return ReduceResult(written, str(path), condition.describe(), reducer.verdict.detail,
                        before, after, reducer.tried, reducer.kept,
                        time.monotonic() - started, reducer.out_of_time)


def _feed(inputs: Mapping[str, np.ndarray] | PathLike | None, names: list[str],
          where: str) -> dict[str, np.ndarray]:
    if inputs is None:
        given: dict[str, np.ndarray] = {}
    elif isinstance(inputs, Mapping):
        given = {k: np.asarray(v) for k, v in inputs.items()}
    else:
        refuse_other_kind(inputs, "npz", ReduceError)
        try:
            with np.load(inputs, allow_pickle=False) as data:
                given = {k: data[k] for k in data.files}
        except (OSError, ValueError) as err:
            raise ReduceError(f"cannot read inputs: {err}", file=str(inputs)) from None
    mismatch = input_mismatch(names, given)
    if mismatch:
        raise ReduceError(mismatch, file=where)
    return given
