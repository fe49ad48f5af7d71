"""How many threads numpy's BLAS may use while irtool runs a plan.

irtool's kernels are numpy calls, one after the other; only the BLAS behind matmul
(OpenBLAS, MKL) runs threads of its own. Left at its default (one per core), OpenBLAS
busy-waits between calls and fights any other thread pool in the process (onnxruntime's,
OpenVINO's) for the cores, which made default-threaded runs up to 100x slower than
single-threaded ones. So a run limits BLAS to ``IRTOOL_BLAS_THREADS`` threads (default 1)
and gives the process its own setting back afterwards.

A run of a small plan takes some microseconds, so the limit must cost less than that:
the BLAS libraries are found once per process, OpenBLAS's thread count is read and set
through its own C functions (threadpoolctl's methods add about a microsecond per call),
and runs that overlap in several threads share one limit, set by the first to start and
taken back by the last to end.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

Knob = tuple[Callable[[], Any], Callable[[int], Any]]  # a library's get and set of its threads

_knobs: list[Knob] | None = None
_lock = threading.Lock()
_active = 0  # runs inside the limit now
_restore: list[tuple[Callable[[int], Any], int]] = []  # what the first run changed


def blas_thread_limit() -> int | None:
    """The BLAS thread count a run uses: ``IRTOOL_BLAS_THREADS`` (``0``: leave BLAS as it
    is), default 1."""
    raw = os.environ.get("IRTOOL_BLAS_THREADS", "1").strip()
    try:
        n = int(raw)
    except ValueError:
        return 1
    return n if n > 0 else None


def _knob(lib: Any) -> Knob:
    """``lib``'s get and set of its thread count: OpenBLAS's own C functions where
    threadpoolctl can name them (its pthreads build: one process-wide pool), else
    threadpoolctl's methods."""
    symbol = getattr(lib, "_get_symbol", None)
    if getattr(lib, "internal_api", "") == "openblas" and symbol is not None \
            and getattr(lib, "threading_layer", "") != "openmp":
        get, set_ = symbol("openblas_get_num_threads"), symbol("openblas_set_num_threads")
        if get is not None and set_ is not None:
            return get, set_
    return lib.get_num_threads, lib.set_num_threads


def _blas_knobs() -> list[Knob]:
    global _knobs
    if _knobs is None:  # finding the BLAS libraries is slow: once per process
        from threadpoolctl import ThreadpoolController

        libs = ThreadpoolController().select(user_api="blas").lib_controllers
        _knobs = [_knob(lib) for lib in libs]
    return _knobs


class BlasLimit:
    """A context limiting BLAS to ``threads`` threads while it is entered (None: BLAS
    left as it is). Overlapping contexts in several threads share one limit: the first
    to enter sets it, the last to leave gives the process its setting back."""

    def __init__(self, threads: int | None) -> None:
        self.threads = threads

    def __enter__(self) -> None:
        global _active, _restore
        if self.threads is None:
            return
        knobs = _blas_knobs()
        with _lock:
            if not _active:
                _restore = []
                for get, set_ in knobs:
                    before = get()
                    if before is not None and before != self.threads:
                        set_(self.threads)
                        _restore.append((set_, before))
            _active += 1

    def __exit__(self, *exc: object) -> None:
        global _active, _restore
        if self.threads is None:
            return
        with _lock:
            _active -= 1
            if not _active:
                for set_, before in _restore:
                    set_(before)
                _restore = []


def limited_blas_threads() -> BlasLimit:
    """A context limiting BLAS to ``blas_thread_limit()`` threads, read now."""
    return BlasLimit(blas_thread_limit())
