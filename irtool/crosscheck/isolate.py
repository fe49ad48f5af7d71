"""Run a backend in a child process, so that a crash or hang of OpenVINO is a reason, not an end.

``Isolated(backend)`` is itself a backend. The child
(``python -m irtool.crosscheck._isolate_child``) is started on first use and reused
for later calls in this process; a child that dies (a segfault, an abort) or
overruns is replaced. Backends and inputs travel pickled over the child's
stdin/stdout, which belong to the protocol only (the child's own prints go to
stderr).
"""

from __future__ import annotations

import atexit
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import time
from typing import Any

import numpy as np

from ..errors import BackendError
from .backends import Backend, Feed

# Generous: a large model may take a while to compile; a node case takes well under 1 s.
DEFAULT_TIMEOUT_S = 600.0
_HEADER = struct.Struct("<Q")


def _write(stream: Any, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _read_exact(fd: int, size: int, deadline: float | None) -> bytes:
    chunks, left = [], size
    while left:
        if deadline is not None:
            wait = deadline - time.monotonic()
            if wait <= 0 or not select.select([fd], [], [], wait)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _read(fd: int, deadline: float | None = None) -> Any:
    (size,) = _HEADER.unpack(_read_exact(fd, _HEADER.size, deadline))
    return pickle.loads(_read_exact(fd, size, deadline))


def stop_process(proc: subprocess.Popen) -> int:
    """Kill ``proc`` unless it has ended, close its pipes, and return its exit code."""
    if proc.poll() is None:
        proc.kill()
    rc = proc.wait()
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            stream.close()
    return rc


def exit_reason(rc: int) -> str:
    """``SIGSEGV`` for a process killed by a signal, else ``exit status N``."""
    if rc < 0:
        try:
            return signal.Signals(-rc).name
        except ValueError:
            return f"signal {-rc}"
    return f"exit status {rc}"


class _Child:
    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "irtool.crosscheck._isolate_child"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def call(self, backend: Backend, inputs: Feed, timeout: float) -> dict[str, np.ndarray]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            _write(self.proc.stdin, (backend, dict(inputs)))
            kind, payload = _read(self.proc.stdout.fileno(), time.monotonic() + timeout)
        except TimeoutError:
            self.close()
            raise BackendError(f"{backend.name} gave no result within {timeout:g} s "
                               "(killed)") from None
        except (EOFError, BrokenPipeError, OSError):
            why = self.close()
            raise BackendError(f"{backend.name} crashed the process running it ({why})") \
                from None
        if kind == "error":
            raise BackendError(payload)
        return payload

    def close(self) -> str:
        return exit_reason(stop_process(self.proc))

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None


_child: _Child | None = None


def _shared_child() -> _Child:
    global _child
    if _child is None or not _child.alive:
        _child = _Child()
    return _child


@atexit.register
def _stop_child() -> None:
    if _child is not None and _child.alive:
        _child.close()


class Isolated(Backend):
    """``inner`` run in a child process; crashes and hangs become ``BackendError``s."""

    def __init__(self, inner: Backend, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self.inner = inner
        self.name = inner.name
        self.timeout = timeout

    def _run(self, inputs: Feed) -> dict[str, np.ndarray]:
        return _shared_child().call(self.inner, inputs, self.timeout)


def _child_main() -> int:
    from .backends import first_line

    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # library prints go to stderr, never into the protocol
    fd = sys.stdin.fileno()
    while True:
        try:
            backend, inputs = _read(fd)
        except EOFError:
            return 0
        try:
            reply = ("ok", backend._run(inputs))
        except Exception as err:  # the parent reports it as this backend's failure
            reply = ("error", first_line(err))
        _write(out, reply)

