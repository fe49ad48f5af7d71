"""BLAS threads during a run: limited to ``IRTOOL_BLAS_THREADS`` (default 1), the process's
own setting back afterwards, as threadpoolctl reads them."""

from __future__ import annotations

import numpy as np
import pytest
from support.ir_builders import Net
from threadpoolctl import threadpool_info, threadpool_limits

from irtool.runtime import Executor
from irtool.runtime.plan import Plan
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



def test_overlapping_runs_share_one_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs in two threads overlap: the first to start sets the limit, the last to end
    gives the process its setting back, whatever order they end in."""
    np.ones((2, 2)) @ np.ones((2, 2))
    monkeypatch.delenv("IRTOOL_BLAS_THREADS", raising=False)
    with threadpool_limits(limits=2, user_api="blas"):  # a setting other than the limit
        before = _blas_threads()
        first, second = limited_blas_threads(), limited_blas_threads()
        first.__enter__()
        second.__enter__()
        assert _blas_threads() == [1] * len(before)
        first.__exit__(None, None, None)  # the first ends while the second still runs
        assert _blas_threads() == [1] * len(before)
        second.__exit__(None, None, None)
        assert _blas_threads() == before


class _Watching(Executor):
    """Records BLAS's thread counts while it runs a plan."""

    seen: list[list[int]]

    def run_plan(self, plan: Plan, values: list[np.ndarray]) -> list[np.ndarray]:
        self.seen.append(_blas_threads())
        return super().run_plan(plan, values)


def test_an_executor_runs_with_the_limit_set_when_it_was_made(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """IRTOOL_BLAS_THREADS is read when the executor is made; a run inside limits BLAS."""
    net = Net()
    x = net.param("x", "f32", (2, 2))
    net.result(net.op("MatMul", "opset1", [x, x]))
    model = net.model()
    eye = np.eye(2, dtype=np.float32)
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        for setting, during in (("3", [3] * len(before)), ("0", before)):
            monkeypatch.setenv("IRTOOL_BLAS_THREADS", setting)
            executor = _Watching(model)
            monkeypatch.setenv("IRTOOL_BLAS_THREADS", "1")  # too late for this executor
            executor.seen = []
            (got,) = executor.run({"x": eye}).values()
            np.testing.assert_array_equal(got, eye)
            assert executor.seen == [during]
            assert _blas_threads() == before
