"""Run an engine in a child process, so that a crash or hang of OpenVINO is a reason, not an end.

``Isolated(engine)`` is itself an engine. Its runs go to one worker of
``irtool.core.workers`` (``python -m irtool.engines._isolate_child``),
started on first use and reused for later calls in this process; a worker that
dies (a segfault, an abort) or overruns is replaced. Backends and inputs travel
pickled.
"""

from __future__ import annotations

import atexit

import numpy as np

from ..core.errors import BackendError
from ..core.workers import Pool, serve
from .base import Engine, Feed, first_line

# Generous: a large model may take a while to compile; a node case takes well under 1 s.
DEFAULT_TIMEOUT_S = 600.0

_pool: Pool | None = None


def _shared_pool() -> Pool:
    global _pool
    if _pool is None:
        _pool = Pool("irtool.engines._isolate_child", name="the isolated engine")
    return _pool


@atexit.register
def _stop_child() -> None:
    """Stop the worker; the next call starts a fresh one (with the environment then)."""
    global _pool
    if _pool is not None:
        _pool.close()
        _pool = None


class Isolated(Engine):
    """``inner`` run in a child process; crashes and hangs become ``BackendError``s."""

    def __init__(self, inner: Engine, timeout: float = DEFAULT_TIMEOUT_S, *,
                 label: str | None = None, doing: str = "") -> None:
        """``label`` names the engine in the messages of a crash or a time-out (default its
        name), ``doing`` ends them (" running m.xml")."""
        self.inner = inner
        self.name = inner.name
        self.timeout = timeout
        self.label = label or inner.name
        self.doing = doing

    def _run(self, inputs: Feed) -> dict[str, np.ndarray]:
        outcome = _shared_pool().call((self.inner, dict(inputs)), timeout=self.timeout)
        if outcome.status == "ok":
            return outcome.value  # type: ignore[no-any-return]
        if outcome.status == "error":
            raise BackendError(outcome.reason)
        if outcome.status == "timeout":
            raise BackendError(f"{self.label} gave no result within {self.timeout:g} s "
                               f"(stopped){self.doing}")
        raise BackendError(f"{self.label} crashed ({outcome.reason}){self.doing}")


def _child_main() -> int:
    """The worker: run each ``(engine, inputs)`` it is sent."""
    return serve(lambda job: job[0]._run(job[1]), describe=first_line)
