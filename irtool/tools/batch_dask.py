"""A batch on a Dask cluster (``--scheduler tcp://HOST:PORT``; ``pip install 'irtool[dask]'``).

Dask distributed does the distributing: one Dask task per chunk of models, results taken
``as_completed`` so that the report streams. What Dask cannot do is stop a task that
hangs or survive one that takes its process down, so a Dask worker does not run a model
itself: it hands each model of its chunk to a worker process of its own
(``core.workers``, through ``batch.worker_pool``: time limit, a crash tried again), and a
crash or a hang is one row, as on one machine. When a Dask worker dies all the same (its
machine goes away, it is killed), Dask's scheduler gives its tasks to the others; a task
that has outlived too many workers (Dask's ``allowed-failures``) comes back as
``KilledWorker``, and each of its models gets a ``MODEL_LOST`` row.

Chunks: a Dask task costs milliseconds of scheduling, about what validating a small IR
does, so models go in chunks of about ``CHUNK_SECONDS`` of work each (``chunks``), smaller
towards the end (guided: a chunk is at most a quarter of what is left per worker, and at
least an eighth of ``CHUNK_SECONDS``) so that every worker stays busy to the end. Inside
its chunk, the Dask worker's own worker process takes the models in chunks too
(``batch.worker_pool``), each answered on its own. The chunks are submitted in one
``Client.map`` (one graph update at the scheduler, not one per chunk), and a chunk's
tasks and rows travel as one ``Packed`` object: Dask walks a list argument or result
item by item (to find futures in it, to serialise and size each), CPU that the
validating processes beside it on a small machine lose (2 Dask workers on 2 cores took
1.46 s for the 1,372 IRs of the node corpus with lists, 1.38 s with both changes).

The Dask workers need irtool (and what the command needs) installed, as the client has.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from ..core.errors import IRToolError
from ..core.workers import Pool
from .batch import Row, Task, failed_row, row_of, worker_pool

CHUNK_SECONDS = 0.25
"""About how long one Dask task should work (models are grouped to that)."""

_SECONDS_PER_MODEL = {"validate": 0.002, "convert": 1.0, "check": 3.0}
"""About what one model costs (validate: about 2 ms for an IR of the OpenVINO-written node
corpus on this project's 2-core machine)."""

SUBMISSIONS = 3
"""How often a chunk is submitted when its result does not come back (its worker died
after computing it, the connection broke): Dask itself re-runs the tasks of a worker that
dies while they run."""

_local = threading.local()

T = TypeVar("T")


@dataclass(frozen=True)
class Packed(Generic[T]):
    """A chunk's tasks, or its rows: one object to Dask, which sends a list's items one
    by one (see the module docstring)."""

    items: list[T]


def chunks(tasks: Sequence[Task], workers: int) -> list[list[Task]]:
    """The Dask tasks' models, in order: about ``CHUNK_SECONDS`` of work each, and each
    at most a quarter of what is left per worker (but not under an eighth of that work),
    so that the last ones are small and do not leave the other workers idle."""
    if not tasks:
        return []
    by_time = max(1, round(CHUNK_SECONDS / _SECONDS_PER_MODEL.get(tasks[0].command, 1.0)))
    out: list[list[Task]] = []
    start = 0
    while start < len(tasks):
        size = max(1, by_time // 8, min(by_time, (len(tasks) - start) // (4 * max(1, workers))))
        out.append(list(tasks[start:start + size]))
        start += size
    return out


def run_chunk(tasks: Packed[Task], worker: str, timeout: float | None) -> Packed[Row]:
    """In a Dask worker: each model in this thread's worker process (started once, kept
    for the next chunks), its row whatever became of it."""
    pools: dict[tuple[str, float | None], Pool] = getattr(_local, "pools", None) or {}
    _local.pools = pools
    pool = pools.get((worker, timeout))
    if pool is None:
        pool = pools[(worker, timeout)] = worker_pool(worker, jobs=1, timeout=timeout)
    return Packed([row_of(o.job, o) for o in pool.run(tasks.items)])


def run_on_dask(tasks: Sequence[Task], on_row: Callable[[Row], None], *, worker: str,
                scheduler: str, timeout: float | None) -> None:
    """Every task on the Dask cluster at ``scheduler``, each row to ``on_row`` as its chunk
    finishes."""
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise IRToolError("--scheduler needs Dask distributed: pip install 'irtool[dask]'"
                          ) from None
    try:
        client = Client(scheduler, timeout="30s")
    except (OSError, TimeoutError) as err:
        raise IRToolError(f"cannot reach the Dask scheduler at {scheduler}: {err}") from None
    try:
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        packed = [Packed(chunk) for chunk in chunks(tasks, workers)]
        # (positional: Client.map's own keywords include "workers", and take the rest)
        submitted = client.map(run_chunk, packed, [worker] * len(packed),
                               [timeout] * len(packed), pure=False)
        futures = {future: (chunk, 1) for future, chunk in zip(submitted, packed)}
        done = as_completed(submitted)
        try:
            for future in done:
                chunk, attempt = futures.pop(future)
                try:
                    rows = future.result().items
                except Exception as err:  # KilledWorker, or its result was lost with a worker
                    if type(err).__name__ != "KilledWorker" and attempt < SUBMISSIONS:
                        again = client.submit(run_chunk, chunk, worker, timeout, pure=False)
                        futures[again] = (chunk, attempt + 1)
                        done.add(again)
                        continue
                    code, status = (("MODEL_LOST", "lost") if type(err).__name__ ==
                                    "KilledWorker" else ("INTERNAL_ERROR", "error"))
                    rows = [failed_row(t, code, f"{type(err).__name__}: {err}", status)
                            for t in chunk.items]
                for row in rows:
                    on_row(row)
        except BaseException:
            client.cancel(list(futures))
            raise
    finally:
        client.close()
