"""A worker for the tests of ``irtool.core.workers``: jobs that succeed, raise,
crash the process or hang, on purpose. Run as ``python -m support.toy_worker``."""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import time

from irtool.core.workers import serve


def handle(job: tuple[str, object]) -> object:
    kind, value = job
    if kind == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    if kind == "hang":
        time.sleep(600)
    if kind == "sleep":  # a job of a known time
        time.sleep(value)  # type: ignore[arg-type]
        return value
    if kind == "raise":
        raise ValueError(value)
    if kind == "print":
        print("noise on stdout")  # must not reach the protocol
    if kind == "pid":
        return os.getpid()
    if kind == "litter":  # temporary files, then death before anyone removes them
        folder = tempfile.mkdtemp(prefix="toy-")
        with open(os.path.join(folder, "data"), "wb") as f:
            f.write(b"x" * 1000)
        if value == "crash":
            os.kill(os.getpid(), signal.SIGKILL)
        return folder
    return value * 2  # type: ignore[operator]


def setup() -> None:
    if os.environ.get("TOY_WORKER_FAILS"):
        raise SystemExit("toy worker: cannot start")


if __name__ == "__main__":
    sys.exit(serve(handle, setup))
