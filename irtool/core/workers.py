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
"""

from __future__ import annotations

import contextlib
import os
import pickle
import selectors
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
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

_HEADER = struct.Struct("<Q")
_FAILED_STARTS_ALLOWED = 2


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


def serve(handle: Callable[[Any], Any], setup: Callable[[], None] | None = None,
          describe: Callable[[BaseException], str] = str) -> int:
    """The worker's side: ``setup()``, then answer every job on stdin with
    ``handle(job)``; an exception becomes an error reply, ``describe(err)``."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # library prints go to stderr, never into the protocol
    if setup is not None:
        setup()
    _write(out, ("ready", None))
    fd = sys.stdin.fileno()
    while True:
        try:
            job = _read(fd)
        except EOFError:
            return 0
        try:
            reply = ("ok", handle(job))
        except Exception as err:  # the parent reports it as this job's failure
            reply = ("error", describe(err))
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
        self.proc = subprocess.Popen(
            list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
            env={**env, "TMPDIR": self.tmp, "TEMP": self.tmp, "TMP": self.tmp},
            start_new_session=True)  # own group: killed with its children
        self.buffer = b""
        self.ready = False
        self.job: int | None = None  # the index of the job it is on
        self.done = 0
        self.deadline = time.monotonic() + START_TIMEOUT_S

    def send(self, index: int, job: Any, timeout: float) -> None:
        assert self.proc.stdin is not None
        self.job = index
        self.deadline = time.monotonic() + timeout
        # A worker that died meanwhile shows as end-of-file on its stdout; the pool
        # then deals with the job it was given.
        with contextlib.suppress(BrokenPipeError, OSError):
            _write(self.proc.stdin, job)

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


class Pool:
    """Workers running ``python -m module *args``, each job in one of them.

    ``timeout``: seconds a job may take; ``attempts``: how often a job whose worker
    died is tried; ``jobs_per_worker``: a worker is replaced after this many jobs, so
    that what a library caches per job cannot pile up. Workers are kept between
    ``run`` calls until ``close``.
    """

    def __init__(self, module: str, args: Sequence[str] = (), *, workers: int = 1,
                 timeout: float = 600.0, attempts: int = 1, jobs_per_worker: int | None = None,
                 env: Mapping[str, str] | None = None, name: str = "workers",
                 bare_package: bool = False) -> None:
        # bare_package: the module's package is not initialised (see _BARE).
        self.command = [sys.executable, *(("-c", _BARE) if bare_package else ("-m",)), module,
                        *args]
        self.workers = max(1, workers)
        self.timeout = timeout
        self.attempts = max(1, attempts)
        self.jobs_per_worker = jobs_per_worker
        self.env = {**os.environ, "PYTHONWARNINGS": "ignore", **(env or {})}
        self.name = name
        self._pool: list[_Worker] = []

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

        def feed(worker: _Worker) -> None:
            worker.job = None
            if todo and (self.jobs_per_worker is None or worker.done < self.jobs_per_worker):
                index = todo.pop()
                worker.send(index, jobs[index], timeout)

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
                for key, _ in sel.select(timeout=0.5):
                    worker = key.data
                    try:
                        replies = worker.replies()
                    except EOFError:
                        if not worker.ready:
                            failed_start(worker, "a worker exited while starting")
                            continue
                        job, rc = worker.job, retire(worker)
                        if job is not None:
                            # Some crashes are intermittent: a job counts as a crash only if
                            # it crashes on every attempt.
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
                            worker.done += 1
                            record(worker.job, kind, payload if kind == "ok" else None,
                                   payload if kind == "error" else "")
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
                    job = worker.job
                    retire(worker)
                    record(job, "timeout", reason=f"no result within {timeout:g} s")  # type: ignore[arg-type]
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
