"""One command over many models: ``validate``, ``check`` and ``convert`` of a model zoo.

A ``Task`` is one model and what to do with it; a handler (``cli/_batch.py`` has those
of the three commands) turns it into a ``Row``: the model's diagnostics, how long it
took, and what the command made of it (``details``). ``run_tasks`` works through the
tasks and hands each row to ``on_row`` as soon as it is there, so that a report can
stream:

- in this process, one after the other (``jobs=1``, no time limit): what a pre-commit
  hook validating three files wants, no worker to start;
- in worker processes of ``irtool.core.workers`` (``jobs=N``, or a time limit), sent in
  chunks of about ``CHUNK_SECONDS`` of work, each model answered on its own: a model
  that crashes its worker (a segfault, an abort) is tried once more on a fresh worker,
  then is a row with ``MODEL_CRASHED``; one past ``timeout`` has its worker killed and is
  a row with ``MODEL_TIMEOUT``; the others go on;
- on a Dask cluster (``scheduler="tcp://host:8786"``, ``tools/batch_dask.py``): Dask
  distributes the tasks; each Dask worker runs its models in such a worker process of
  its own, so a crash or a hang is still one row, and the tasks of a Dask worker that
  dies are given to the others by Dask's scheduler.

The codes of what is not a finding of the command itself are ``BATCH_CODES``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.bulk import collect_if_due
from ..core.diagnostics import Diagnostic

if TYPE_CHECKING:  # the worker pool loads only for a batch that uses workers
    from ..core.workers import Outcome, Pool

BATCH_CODES: dict[str, tuple[str, str]] = {
    "MODEL_CRASHED": ("error", "the process working on the model died (a signal, an abort) "
                               "on every attempt"),
    "MODEL_TIMEOUT": ("error", "the model took longer than the per-model time limit "
                               "(--model-timeout)"),
    "MODEL_LOST": ("error", "every Dask worker given the model died (Dask's KilledWorker)"),
    "INTERNAL_ERROR": ("error", "irtool failed on the model: its own bug, the message says "
                                "what"),
    "CONVERSION_FAILED": ("error", "the model cannot be converted: the converter's message, "
                                   "naming the ONNX node"),
    "CHECK_FAILED": ("error", "check: an engine failed, or its outputs disagree with the "
                              "reference's beyond tolerance"),
}
"""Code -> (severity, meaning) of the rows' findings that are not the validator's
(``irtool.validation.codes.RULES`` has those)."""

CHUNK_SECONDS = 0.2
"""About how much work goes to a worker process in one message (``core.workers.Pool``:
each model is still answered, timed and failed on its own). Validating a small IR takes
a few milliseconds, as long as a job's round trip through the parent did."""

ATTEMPTS = 2
"""How often a model whose worker died is tried (on a fresh worker) before its row says
``MODEL_CRASHED``: some crashes are intermittent."""


@dataclass(frozen=True)
class Task:
    """One model: ``command`` ("validate", "check", "convert") on ``path``; ``name`` is its
    path inside the folder it was found in (``core.paths.Found``); ``options`` the
    command's, the same for every model."""

    command: str
    path: str
    name: str
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class Row:
    """What became of one model. ``status``: ``done`` (the command ran; ``diagnostics`` are
    its findings, none for a clean model), ``crash``, ``timeout``, ``lost`` or ``error``
    (it did not: one diagnostic says why). ``details``: what the command made of it
    (check's report, the IR convert wrote)."""

    file: str
    command: str
    status: str = "done"
    diagnostics: list[Diagnostic] = field(default_factory=list)
    seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "command": self.command, "status": self.status,
                "seconds": round(self.seconds, 4),
                "diagnostics": [d.to_dict() for d in self.diagnostics],
                "details": self.details}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Row:
        return cls(data["file"], data.get("command", "validate"), data.get("status", "done"),
                   [Diagnostic.from_dict(d) for d in data.get("diagnostics", [])],
                   float(data.get("seconds", 0.0)), dict(data.get("details") or {}))


Handler = Callable[[Task], Row]


def failed_row(task: Task, code: str, message: str, status: str) -> Row:
    """The row of a model the command did not finish: one ``code`` diagnostic."""
    return Row(task.path, task.command, status,
               [Diagnostic(code, message, task.path, severity=BATCH_CODES[code][0])])


def row_of(task: Task, outcome: Outcome) -> Row:
    """The row of a task that ran in a worker process, whatever became of it."""
    if outcome.ok:
        row: Row = outcome.value
        return row
    if outcome.status == "crash":
        return failed_row(task, "MODEL_CRASHED", f"the worker died ({outcome.reason}) on "
                          f"this model, {ATTEMPTS} times", "crash")
    if outcome.status == "timeout":
        return failed_row(task, "MODEL_TIMEOUT", outcome.reason, "timeout")
    return failed_row(task, "INTERNAL_ERROR", outcome.reason, "error")


def run_tasks(tasks: Sequence[Task], handle: Handler, on_row: Callable[[Row], None], *,
              worker: str, jobs: int = 1, timeout: float | None = None,
              pool: Pool | None = None) -> None:
    """Every task on this machine, each row handed to ``on_row`` as it comes (see the
    module docstring; ``batch_dask.run_on_dask`` does the same on a Dask cluster).

    ``handle`` does one task in this process; ``worker`` is the module that serves it in a
    worker process (``python -m worker``: ``core.workers.serve(handle)``). ``pool``: the
    workers, started earlier by the caller (``early_pool``), who closes them.
    """
    if pool is not None:
        pool.run(tasks, on_outcome=lambda o: on_row(row_of(o.job, o)))
    elif jobs <= 1 and timeout is None:
        for task in tasks:
            on_row(handle(task))
    else:
        with worker_pool(worker, jobs=jobs, timeout=timeout) as pool:
            pool.run(tasks, on_outcome=lambda o: on_row(row_of(o.job, o)))


def early_pool(worker: str, *, jobs: int, timeout: float | None) -> Pool | None:
    """The worker processes a batch of ``jobs`` / ``timeout`` will use, started now (not
    waited for), so that they load what they need while the caller looks for the models;
    None when the batch runs in this process. The caller closes it."""
    if jobs <= 1 and timeout is None:
        return None
    pool = worker_pool(worker, jobs=jobs, timeout=timeout)
    pool.start()
    return pool


def worker_pool(worker: str, *, jobs: int, timeout: float | None) -> Pool:
    """The worker processes of a batch: ``jobs`` of them, each model at most ``timeout``
    seconds (None: a day), a crashed model tried ``ATTEMPTS`` times."""
    from ..core.workers import Pool

    return Pool(worker, workers=jobs, timeout=timeout if timeout is not None else 86400.0,
                attempts=ATTEMPTS, name="irtool's batch workers", bare_package=True,
                chunk_seconds=CHUNK_SECONDS)


def timed(task: Task, work: Callable[[], tuple[list[Diagnostic], dict[str, Any]]]) -> Row:
    """``work()``'s diagnostics and details as the task's row, timed; an exception that is
    not the model's fault (irtool's bug) is an ``INTERNAL_ERROR`` row, not a lost batch."""
    started = time.perf_counter()
    try:
        diagnostics, details = work()
    except Exception as err:  # one model's failure must not end the batch
        row = failed_row(task, "INTERNAL_ERROR", f"{type(err).__name__}: {err}", "error")
    else:
        row = Row(task.path, task.command, "done", diagnostics, details=details)
    row.seconds = time.perf_counter() - started
    collect_if_due()  # the model is garbage now; models read one after another pile up
    return row
