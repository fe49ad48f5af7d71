"""Child processes that may crash or hang, supervised: the one worker pool of irtool.

OpenVINO can take a whole process down (a segfault, an abort) or never return on
some models, so whatever runs OpenVINO on untrusted input runs it in a worker:
``check``'s OpenVINO column (``isolate``), the conformance runner and the corpus
of OpenVINO-written IR (``corpus``) all use this pool.

A worker is ``python -m MODULE ARGS...``; the module calls ``serve(handle)``,
which loads what it needs (``setup``), says it is ready and then answers jobs
read from stdin, one reply each on stdout. Jobs and replies are length-prefixed
pickles; the child's own prints go to stderr, never into the protocol. The
parent (``Pool``) keeps up to ``workers`` children busy and turns what goes
wrong into outcomes instead of exceptions: a job whose worker died is retried
on a fresh worker up to ``attempts`` times, then reported as a ``crash``; a job
past its ``timeout`` has its worker (and everything the worker started) killed
and is reported as a ``timeout``. Workers that cannot even start are retried
twice, then the pool gives up with a ``RuntimeError`` naming why.

A worker never outlives its parent, nor runs a job for ever, whatever happens to the
parent (a ``SIGKILL`` from a CI job's time-out gives it no chance to stop them): the
worker watches a pipe whose other end only the parent holds, and kills its process group
when the pipe closes (the parent is gone); on Linux it also asks the kernel for
``SIGKILL`` when its parent dies (``PR_SET_PDEATHSIG``; only for workers started from the
main thread, since the kernel sends it when the starting *thread* ends). And each job (and
the start-up) runs under an alarm a little past its time limit (``SIGALRM``, whose default
action ends the process; no Python code needs to run for it), a backstop should the
parent be alive but not watching.

Why not pebble or loky (both tried, pebble 5.2 and loky 3.7, on these jobs). loky has
no time limit per job (a job past its limit keeps its worker busy), a crash breaks the
whole executor (every pending job fails with ``TerminatedWorkerError``: no outcome per
job, no retry), and a busy loky worker outlived its SIGKILLed parent by minutes, parent
1. pebble does time limits, crash outcomes (``ProcessExpired``) and worker reuse
(``max_tasks``), and its busy worker did die with its parent, but its workers are
``multiprocessing`` processes: forked, they inherit a parent that has loaded OpenVINO's
and onnxruntime's thread pools (unsafe); spawned, they import the parent's ``__main__``
and the job's whole package (``irtool``'s API: the ``bare_package`` start, most of the
ONNX checker's worker start-up, cannot be had), and the job travels as a pickled function
reference rather than ``python -m MODULE``. It stops a worker with SIGTERM, not the process
group it started, retries no crashed job, and would still need this module's worker
folders, their sweep and the backstop. What it would replace is the ~100 lines of
``Pool.run``; so the pool stays ours.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import os
import pickle
import selectors
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

from .files import abandoned

try:
    import fcntl
except ImportError:  # Windows: no advisory locks, no sweep
    fcntl = None  # type: ignore[assignment]

START_TIMEOUT_S = 300.0
"""How long a worker may take to load what it needs (the ONNX node cases take ~10 s)."""

BACKSTOP_S = 10.0
"""A worker's own limit on a job: its time limit, plus a tenth, plus this many seconds
(the parent normally stops it at the limit itself)."""

_HEADER = struct.Struct("<Q")
_FAILED_STARTS_ALLOWED = 2

NAP_S = 0.05
"""The longest the parent leaves replies in the workers' pipes (``Pool`` with
``chunk_seconds``): rows reach the caller at most this late."""

_LIFELINE = "IRTOOL_WORKER_LIFELINE"  # "<parent pid>:<pipe fd>:<1: ask for PDEATHSIG>"
_PR_SET_PDEATHSIG = 1


def exit_reason(rc: int) -> str:
    """``SIGSEGV`` for a process killed by a signal, else ``exit status N``."""
    if rc < 0:
        try:
            return signal.Signals(-rc).name
        except ValueError:
            return f"signal {-rc}"
    return f"exit status {rc}"


# -- the protocol ---------------------------------------------------------------------------


def _write(stream: IO[bytes], obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _read_exact(fd: int, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _read(fd: int) -> Any:
    (size,) = _HEADER.unpack(_read_exact(fd, _HEADER.size))
    return pickle.loads(_read_exact(fd, size))


def _backstop(seconds: float | None) -> None:
    """Ask for ``SIGALRM`` (default action: the process ends) once ``seconds`` and the
    margin of ``BACKSTOP_S`` have passed; None cancels it. Nothing where there is no alarm."""
    if hasattr(signal, "alarm"):
        signal.alarm(0 if seconds is None else
                     math.ceil(min(seconds * 1.1 + BACKSTOP_S, 1e8)))


def _end_group() -> None:
    """Kill this worker and everything it started (its own process group)."""
    try:
        os.killpg(os.getpgrp(), signal.SIGKILL)
    finally:
        os._exit(1)


def _watch(fd: int) -> None:
    """Block on the parent's pipe; end-of-file (or an error) means the parent is gone."""
    with contextlib.suppress(OSError):
        while os.read(fd, 1):
            pass
    _end_group()


def _tie_to_parent() -> None:
    """Make this worker die with the parent that started it (see the module docstring)."""
    spec = os.environ.pop(_LIFELINE, None)
    if not spec:
        return  # not started by a Pool
    parent, fd, deathsig = (int(part) for part in spec.split(":"))
    if deathsig and sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent:  # it died before the request above was made
        _end_group()
    threading.Thread(target=_watch, args=(fd,), name="parent watch", daemon=True).start()


def serve(handle: Callable[[Any], Any], setup: Callable[[], None] | None = None,
          describe: Callable[[BaseException], str] = str) -> int:
    """The worker's side: ``setup()``, then answer every job on stdin with
    ``handle(job)``; an exception becomes an error reply, ``describe(err)``. The worker
    dies with its parent, and on its own past a job's time limit (``_tie_to_parent``,
    ``_backstop``)."""
    _tie_to_parent()
    if hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, signal.SIG_DFL)  # an inherited SIG_IGN would disarm it
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # library prints go to stderr, never into the protocol
    _backstop(START_TIMEOUT_S)
    if setup is not None:
        setup()
    _backstop(None)
    _write(out, ("ready", None))
    fd = sys.stdin.fileno()
    while True:
        try:
            timeout, jobs = _read(fd)  # a chunk: one or more jobs, answered one by one
        except EOFError:
            return 0
        for job in jobs:
            _backstop(timeout)
            try:
                reply = ("ok", handle(job))
            except Exception as err:  # the parent reports it as this job's failure
                reply = ("error", describe(err))
            _backstop(None)
            _write(out, reply)


# -- the parent's side ----------------------------------------------------------------------


@dataclass
class Outcome:
    """What became of one job: ``status`` ``ok`` (``value`` is the reply), ``error`` (the
    job raised; ``reason`` says what), ``crash`` or ``timeout`` (the worker died or was
    killed; ``reason`` says how)."""

    job: Any
    status: str
    value: Any = None
    reason: str = ""
    returncode: int | None = None  # how the worker of a crashed job ended

    @property
    def ok(self) -> bool:
        return self.status == "ok"


_FOLDER_PREFIX = "irtool-worker-"
_LOCK_NAME = ".owner.lock"
_swept = False


def _own_folder() -> tuple[str, int | None]:
    """A new folder for a worker's temporary files, and a descriptor holding an exclusive
    lock on the lock file in it for as long as this process lives (None: no locks here)."""
    global _swept
    if not _swept:
        _swept = True
        sweep_stale_folders()
    folder = tempfile.mkdtemp(prefix=_FOLDER_PREFIX)
    if fcntl is None:
        return folder, None
    # Locked under another name, then renamed: a sweep never sees the lock file unlocked.
    making = os.path.join(folder, _LOCK_NAME + ".new")
    fd = os.open(making, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.rename(making, os.path.join(folder, _LOCK_NAME))
    return folder, fd


def sweep_stale_folders() -> list[str]:
    """Remove the worker folders whose owner is gone (a parent killed by a signal never
    removes its workers' folders): those whose lock file nobody holds. A folder without a
    lock file is left alone (its owner may not have locked it yet). Returns the removed."""
    root = tempfile.gettempdir()
    try:
        names = [n for n in os.listdir(root) if n.startswith(_FOLDER_PREFIX)]
    except OSError:
        return []
    removed = []
    for name in names:
        folder = os.path.join(root, name)
        if abandoned(os.path.join(folder, _LOCK_NAME)):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


class _Worker:
    """One child process and the job it is on."""

    def __init__(self, command: Sequence[str], env: Mapping[str, str]) -> None:
        # stderr goes to a file so that a worker that fails to start can say why.
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed by stop()
        # The worker's temporary files go into a folder of its own, removed by stop(): a
        # worker killed (a crash, a time-out) never gets to clean up after itself. The
        # lock on it tells a later sweep whether this process still owns it.
        self.tmp, self._lock = _own_folder()
        # The lifeline: the worker holds the read end; the write end stays here, never
        # written and never inherited (os.pipe's descriptors are not), so the worker reads
        # end-of-file exactly when this process is gone.
        lifeline, write_end = os.pipe()
        self._lifeline: int | None = write_end
        deathsig = int(threading.current_thread() is threading.main_thread())
        try:
            self.proc = subprocess.Popen(
                list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=self.stderr, pass_fds=(lifeline,),
                env={**env, "TMPDIR": self.tmp, "TEMP": self.tmp, "TMP": self.tmp,
                     _LIFELINE: f"{os.getpid()}:{lifeline}:{deathsig}"},
                start_new_session=True)  # own group: killed with its children
        finally:
            os.close(lifeline)
        self.buffer = b""
        self.ready = False
        self.jobs: list[int] = []  # the indices of the jobs sent and not answered, in order
        self.done = 0
        self.deadline = time.monotonic() + START_TIMEOUT_S
        self.since = 0.0  # when the job it is on began (it was sent, or the last answered)

    @property
    def job(self) -> int | None:
        """The index of the job it is on (the first one not answered), None when idle."""
        return self.jobs[0] if self.jobs else None

    def send(self, indices: list[int], jobs: list[Any], timeout: float) -> None:
        """A chunk of jobs, in one message; each is answered (and timed) on its own."""
        assert self.proc.stdin is not None
        self.jobs = list(indices)
        self.since = time.monotonic()
        self.deadline = self.since + timeout
        # A worker that died meanwhile shows as end-of-file on its stdout; the pool
        # then deals with the jobs it was given.
        with contextlib.suppress(BrokenPipeError, OSError):
            _write(self.proc.stdin, (timeout, jobs))

    def answered(self, timeout: float) -> tuple[int, float]:
        """The job it was on is answered: its index and how long it took; the next one's
        time limit starts now."""
        now = time.monotonic()
        index, took = self.jobs.pop(0), now - self.since
        self.since, self.deadline = now, now + timeout
        self.done += 1
        return index, took

    def replies(self) -> list[Any]:
        """The complete replies available now; EOFError when the worker is gone."""
        assert self.proc.stdout is not None
        chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
        if not chunk:
            raise EOFError
        self.buffer += chunk
        out = []
        while len(self.buffer) >= _HEADER.size:
            (size,) = _HEADER.unpack_from(self.buffer)
            if len(self.buffer) < _HEADER.size + size:
                break
            out.append(pickle.loads(self.buffer[_HEADER.size:_HEADER.size + size]))
            self.buffer = self.buffer[_HEADER.size + size:]
        return out

    def stop(self) -> int:
        """Kill the worker (and its process group) unless it has ended; its exit code."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
        rc = self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()
        self.stderr.close()
        if self._lifeline is not None:
            os.close(self._lifeline)
            self._lifeline = None
        shutil.rmtree(self.tmp, ignore_errors=True)
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None
        return rc

    def last_error_line(self) -> str:
        self.stderr.seek(0)
        lines = self.stderr.read().decode("utf-8", "replace").strip().splitlines()
        return lines[-1] if lines else "no error output"


_BARE = """import importlib.util, runpy, sys, types
parts = sys.argv[1].split(".")[:-1]
for depth in range(1, len(parts) + 1):
    name = ".".join(parts[:depth])
    spec = importlib.util.find_spec(name)
    package = types.ModuleType(name)
    package.__spec__, package.__path__ = spec, list(spec.submodule_search_locations)
    sys.modules[name] = package
del sys.argv[0]
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""
"""``python -m`` for a module whose packages' ``__init__`` modules are not needed: each
package on its path is registered without running it (``irtool``'s imports its whole API,
and ``irtool.frontends.onnx``'s every translator: most of a worker's start-up when the
worker needs only onnx)."""


def _nap(pool: Sequence[_Worker], per_job: float, now: float) -> float:
    """How long a ``Pool`` with chunks may leave its workers' replies in their pipes.

    Woken for each reply, the parent spent ~0.1 ms of CPU per job, a tenth of what
    validating a small IR takes, on a core the workers need. It wakes instead:
    - when a busy worker is, by ``per_job`` (the time per job so far), a quarter of the
      way through what it has left, so that it is fed on time though a chunk's jobs may
      be quicker than those so far (at a half, a worker validating IRs idled 4 ms a
      chunk); a chunk of 100 jobs costs about 15 wakes;
    - at the first time limit;
    - after ``NAP_S`` at most.
    Not at all while a worker starts, nor when a chunk has one job left (its reply is
    waited for). What waits in a pipe is not lost: a worker's replies stay there when it
    dies, so a crash is still the job it was on."""
    left = NAP_S
    for worker in pool:
        if not worker.ready:
            return 0.0
        if worker.job is not None:
            left = min(left, worker.deadline - now,
                       (len(worker.jobs) - 1) * per_job / 4 - (now - worker.since))
    return left if left > 0.001 else 0.0


class Pool:
    """Workers running ``python -m module *args``, each job in one of them.

    ``timeout``: seconds a job may take; ``attempts``: how often a job whose worker
    died is tried; ``jobs_per_worker``: a worker is replaced after this many jobs, so
    that what a library caches per job cannot pile up. Workers are kept between
    ``run`` calls until ``close``.

    ``chunk_seconds``: jobs go to a worker in chunks of about this much work (by the time
    the jobs of this run have taken so far; fewer as the last ones are given out, so that
    no worker is left idle at the end), one message each way per chunk instead of per
    job: jobs of a few milliseconds spent more in the round trip and the parent than in
    the worker. Each job of a chunk is still answered, timed and failed on its own: the
    worker answers them one by one, the time limit is per job, and a crash or a time-out
    is the job the worker was on (the chunk's jobs not answered yet go to another
    worker; a job that crashed one is tried again alone). None: one job at a time. The
    time per job is learnt across ``run`` calls: a caller that runs a pool chunk by chunk
    (a Dask task's models, ``tools.batch_dask``) sends each of its chunks in one message,
    not a first job alone and then halves. With one worker nothing is held back for the
    end: there is no other worker to keep busy. The replies of a chunk are read a few at
    a time (``_nap``), not each as it comes.
    """

    def __init__(self, module: str, args: Sequence[str] = (), *, workers: int = 1,
                 timeout: float = 600.0, attempts: int = 1, jobs_per_worker: int | None = None,
                 env: Mapping[str, str] | None = None, name: str = "workers",
                 bare_package: bool = False, chunk_seconds: float | None = None) -> None:
        # bare_package: the module's package is not initialised (see _BARE).
        self.command = [sys.executable, *(("-c", _BARE) if bare_package else ("-m",)), module,
                        *args]
        self.workers = max(1, workers)
        self.timeout = timeout
        self.attempts = max(1, attempts)
        self.jobs_per_worker = jobs_per_worker
        self.chunk_seconds = chunk_seconds
        self.env = {**os.environ, "PYTHONWARNINGS": "ignore", **(env or {})}
        self.name = name
        self._pool: list[_Worker] = []
        self._timed = [0, 0.0]  # jobs answered by this pool, and the seconds they took

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop every worker."""
        for worker in self._pool:
            worker.stop()
        self._pool.clear()

    def run(self, jobs: Iterable[Any], on_outcome: Callable[[Outcome], None] | None = None,
            timeout: float | None = None) -> list[Outcome]:
        """Every job in a worker; outcomes in the order they come (``on_outcome`` hears of
        each as it does)."""
        timeout = self.timeout if timeout is None else timeout
        jobs = list(jobs)
        todo = list(reversed(range(len(jobs))))  # indices into jobs, next one last
        outcomes: list[Outcome] = []
        crashes = [0] * len(jobs)
        failed_starts: list[str] = []
        sel = selectors.DefaultSelector()
        timed = self._timed

        def record(index: int, status: str, value: Any = None, reason: str = "",
                   returncode: int | None = None) -> None:
            outcome = Outcome(jobs[index], status, value, reason, returncode)
            outcomes.append(outcome)
            if on_outcome is not None:
                on_outcome(outcome)

        def retire(worker: _Worker) -> int:
            self._pool.remove(worker)
            with contextlib.suppress(KeyError, ValueError):
                sel.unregister(worker.proc.stdout)  # type: ignore[arg-type]
            return worker.stop()

        def failed_start(worker: _Worker, what: str) -> None:
            detail = worker.last_error_line()
            failed_starts.append(f"{what} ({exit_reason(retire(worker))}; {detail})")
            if len(failed_starts) > _FAILED_STARTS_ALLOWED:
                raise RuntimeError(f"{self.name} failed to start: " + "; ".join(failed_starts))

        def chunk_size(worker: _Worker) -> int:
            # A job that crashed a worker is next in line (``todo.append``) and goes alone.
            if self.chunk_seconds is None or not timed[0] or crashes[todo[-1]]:
                return 1  # (nor is there any time to go by before the first answer)
            by_time = int(self.chunk_seconds * timed[0] / max(timed[1], 1e-9))
            # Guided: smaller towards the end, so that no worker idles while one finishes.
            by_balance = len(todo) // (2 * self.workers) if self.workers > 1 else len(todo)
            size = max(1, min(by_time, by_balance))
            if self.jobs_per_worker is not None:
                size = min(size, self.jobs_per_worker - worker.done)
            return size

        def feed(worker: _Worker) -> None:
            worker.jobs = []
            if todo and (self.jobs_per_worker is None or worker.done < self.jobs_per_worker):
                indices = [todo.pop() for _ in range(min(chunk_size(worker), len(todo)))]
                worker.send(indices, [jobs[i] for i in indices], timeout)

        def give_back(indices: list[int]) -> None:
            """Jobs sent to a worker that is gone, not answered: next in line, in order."""
            todo.extend(reversed(indices))

        for worker in self._pool:  # kept from an earlier run
            sel.register(worker.proc.stdout, selectors.EVENT_READ, worker)  # type: ignore[arg-type]
        try:
            while len(outcomes) < len(jobs):
                busy = sum(w.job is not None for w in self._pool)
                while len(self._pool) < min(self.workers, len(todo) + busy):
                    worker = _Worker(self.command, self.env)
                    self._pool.append(worker)
                    sel.register(worker.proc.stdout, selectors.EVENT_READ, worker)  # type: ignore[arg-type]
                for worker in self._pool:
                    if worker.ready and worker.job is None:
                        feed(worker)
                # (a job sent alone, as without chunk_seconds, is waited for: no nap)
                pause = _nap(self._pool, timed[1] / timed[0], time.monotonic()) if timed[0] \
                    else 0.0
                if pause:
                    time.sleep(pause)
                for key, _ in sel.select(timeout=0.5):
                    worker = key.data
                    try:
                        replies = worker.replies()
                    except EOFError:
                        if not worker.ready:
                            failed_start(worker, "a worker exited while starting")
                            continue
                        sent, rc = worker.jobs, retire(worker)
                        if sent:
                            # The job it was on crashed it; the rest of its chunk is given
                            # to the next worker. Some crashes are intermittent: a job
                            # counts as a crash only if it crashes on every attempt.
                            job = sent[0]
                            give_back(sent[1:])
                            crashes[job] += 1
                            if crashes[job] < self.attempts:
                                todo.append(job)
                            else:
                                record(job, "crash", reason=exit_reason(rc), returncode=rc)
                        continue
                    for kind, payload in replies:
                        if kind == "ready":
                            worker.ready = True
                        elif worker.job is not None:
                            index, took = worker.answered(timeout)
                            timed[0] += 1
                            timed[1] += took
                            record(index, kind, payload if kind == "ok" else None,
                                   payload if kind == "error" else "")
                        if worker.job is None:
                            feed(worker)
                    if worker.ready and worker.job is None and self.jobs_per_worker \
                            is not None and worker.done >= self.jobs_per_worker:
                        retire(worker)  # a fresh one takes over what is left
                now = time.monotonic()
                for worker in list(self._pool):
                    if now <= worker.deadline or (worker.ready and worker.job is None):
                        continue
                    if not worker.ready:
                        failed_start(worker, f"a worker did not start within "
                                             f"{START_TIMEOUT_S:g} s")
                        continue
                    sent = worker.jobs
                    retire(worker)
                    give_back(sent[1:])
                    record(sent[0], "timeout", reason=f"no result within {timeout:g} s")
        finally:
            sel.close()
        return outcomes

    def start(self) -> None:
        """Start the workers now, without waiting for them to be ready: whoever calls ``run``
        later finds them loaded (``python -m`` and its imports take most of a second)."""
        while len(self._pool) < self.workers:
            self._pool.append(_Worker(self.command, self.env))

    def call(self, job: Any, timeout: float | None = None) -> Outcome:
        """One job, waited for."""
        return self.run([job], timeout=timeout)[0]
