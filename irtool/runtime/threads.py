"""How many threads numpy's BLAS may use while irtool runs a plan.

irtool's kernels are numpy calls, one after the other; only the BLAS behind matmul
(OpenBLAS, MKL) runs threads of its own. Left at its default (one per core), OpenBLAS
busy-waits between calls and fights any other thread pool in the process (onnxruntime's,
OpenVINO's) for the cores, which made default-threaded runs up to 100x slower than
single-threaded ones. So a run limits BLAS to ``IRTOOL_BLAS_THREADS`` threads (default 1)
and gives the process its own setting back afterwards.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

_libraries: list[Any] | None = None


def blas_thread_limit() -> int | None:
    """The BLAS thread count a run uses: ``IRTOOL_BLAS_THREADS`` (``0``: leave BLAS as it
    is), default 1."""
    raw = os.environ.get("IRTOOL_BLAS_THREADS", "1").strip()
    try:
        n = int(raw)
    except ValueError:
        return 1
    return n if n > 0 else None


def _blas_libraries() -> list[Any]:
    global _libraries
    if _libraries is None:  # finding the BLAS libraries is slow: once per process
        from threadpoolctl import ThreadpoolController

        _libraries = ThreadpoolController().select(user_api="blas").lib_controllers
    return _libraries


@contextlib.contextmanager
def limited_blas_threads() -> Iterator[None]:
    """Run the body with BLAS limited to ``blas_thread_limit()`` threads."""
    limit = blas_thread_limit()
    if limit is None:
        yield
        return
    # threadpoolctl's own limit() context re-reads every library's info (~50 us); the
    # libraries' get/set calls alone cost about a microsecond.
    changed = []
    for lib in _blas_libraries():
        before = lib.get_num_threads()
        if before != limit:
            lib.set_num_threads(limit)
            changed.append((lib, before))
    try:
        yield
    finally:
        for lib, before in changed:
            lib.set_num_threads(before)
