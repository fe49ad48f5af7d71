"""BLAS threads during a run: limited to ``IRTOOL_BLAS_THREADS`` (default 1), the process's
own setting back afterwards, as threadpoolctl reads them."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from irtool.runtime.threads import limited_blas_threads


def _blas_threads() -> list[int]:
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_a_run_limits_blas_and_restores_it(monkeypatch: pytest.MonkeyPatch) -> None:
    np.ones((2, 2)) @ np.ones((2, 2))  # BLAS loaded
    before = _blas_threads()
    assert before, "numpy's BLAS is not visible to threadpoolctl"
    monkeypatch.delenv("IRTOOL_BLAS_THREADS", raising=False)
    with limited_blas_threads():
        assert _blas_threads() == [1] * len(before)
    assert _blas_threads() == before
    monkeypatch.setenv("IRTOOL_BLAS_THREADS", "0")  # 0: leave BLAS alone
    with limited_blas_threads():
        assert _blas_threads() == before

