"""``irtool.core.workers``: the one pool of child processes. Jobs that crash their
worker or hang are outcomes, not the end of the run; the other jobs still get done."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from support import TESTS
from support.processes import left_after

from irtool.core import workers
from irtool.core.workers import BACKSTOP_S, Pool, _Worker, sweep_stale_folders

ENV = {"PYTHONPATH": str(TESTS)}


def test_crashes_hangs_and_errors_are_outcomes() -> None:
    jobs = [("double", 2), ("crash", 0), ("print", 4), ("hang", 0), ("raise", "bad input"),
            ("double", 5)]
    with Pool("support.toy_worker", workers=2, timeout=3, attempts=2, env=ENV) as pool:
        outcomes = {o.job: o for o in pool.run(jobs)}
    assert len(outcomes) == len(jobs)
    assert (outcomes[("double", 2)].status, outcomes[("double", 2)].value) == ("ok", 4)
    assert (outcomes[("print", 4)].status, outcomes[("print", 4)].value) == ("ok", 8)
    assert outcomes[("double", 5)].value == 10
    crash = outcomes[("crash", 0)]
    assert (crash.status, crash.reason, crash.returncode) == ("crash", "SIGSEGV", -11)
    assert (outcomes[("hang", 0)].status, outcomes[("hang", 0)].reason) == \
        ("timeout", "no result within 3 s")
    assert (outcomes[("raise", "bad input")].status, outcomes[("raise", "bad input")].reason) \
        == ("error", "bad input")



def test_jobs_sent_in_chunks_are_still_answered_timed_and_failed_one_by_one(monkeypatch) -> None:
    """chunk_seconds: several jobs per message, yet a crash or a hang in the middle of a
    chunk is that job's outcome only (one attempt: no second chance to blame the right
    one), and the chunk's other jobs are all done, once."""
    sent: list[int] = []
    send = _Worker.send
    monkeypatch.setattr(_Worker, "send", lambda self, indices, jobs, timeout: (
        sent.append(len(indices)), send(self, indices, jobs, timeout))[1])
    jobs = [("double", i) for i in range(60)]
    jobs[25], jobs[41] = ("crash", 0), ("hang", 0)
    with Pool("support.toy_worker", workers=2, timeout=3, env=ENV, chunk_seconds=10.0) as pool:
        outcomes = pool.run(jobs)
    assert sorted(map(str, (o.job for o in outcomes))) == sorted(map(str, jobs))  # each once
    by_job = {o.job: o for o in outcomes}
    assert (by_job[("crash", 0)].status, by_job[("crash", 0)].reason) == ("crash", "SIGSEGV")
    assert by_job[("hang", 0)].status == "timeout"
    assert all(by_job[j].value == j[1] * 2 for j in jobs if j[0] == "double")
    assert max(sent) > 1  # chunks were sent ...
    assert len(sent) < len(jobs)  # ... fewer messages than jobs, retries included


def test_one_worker_takes_a_run_in_one_message_once_the_pool_knows_a_job_s_time(
        monkeypatch) -> None:
    """A Dask task hands its chunk of models to a pool of one worker: after the pool's
    first job (timed), each run goes in one message, not a first job alone and then
    halves of the rest (round trips that cost a chunk of small models a third of its time)."""
    sent: list[int] = []
    send = _Worker.send
    monkeypatch.setattr(_Worker, "send", lambda self, indices, jobs, timeout: (
        sent.append(len(indices)), send(self, indices, jobs, timeout))[1])
    with Pool("support.toy_worker", workers=1, timeout=30, env=ENV, chunk_seconds=10.0) as pool:
        first = pool.run([("double", i) for i in range(12)])
        assert sent == [1, 11]
        sent.clear()
        second = pool.run([("double", i) for i in range(20)])
    assert sent == [20]
    assert [o.value for o in first] == [2 * i for i in range(12)]
    assert [o.value for o in second] == [2 * i for i in range(20)]


def _counting_reads(monkeypatch) -> list[int]:
    """How many replies each of the parent's reads of a worker's pipe brought."""
    reads: list[int] = []
    replies = _Worker.replies

    def counted(self: _Worker) -> list:
        out = replies(self)
        reads.append(len(out))
        return out

    monkeypatch.setattr(_Worker, "replies", counted)
    return reads


def test_the_parent_reads_a_chunk_s_replies_a_few_at_a_time(monkeypatch) -> None:
    """Woken for every reply, the parent of a chunk of quick jobs spent a tenth of their
    time on a core the workers need. It naps instead (at most NAP_S), waking when the
    worker should be a quarter of the way through what is left: a chunk of 60 jobs of
    10 ms is read about 15 times, not 60. A loaded machine only makes the batches bigger."""
    reads = _counting_reads(monkeypatch)
    jobs = [("sleep", 0.01)] * 61
    with Pool("support.toy_worker", workers=1, timeout=30, env=ENV, chunk_seconds=10.0) as pool:
        outcomes = pool.run(jobs)  # the first alone (timed), then 60 in one message
    assert [o.value for o in outcomes] == [0.01] * 61
    chunk_reads = reads[2:]  # "ready", and the lone first job
    assert sum(chunk_reads) == 60
    assert len(chunk_reads) <= 20, chunk_reads


def _worker_on(jobs_left: int, *, began: float, deadline: float = 1e9,
               ready: bool = True) -> _Worker:
    """A worker's bookkeeping without its process: ``jobs_left`` jobs of its chunk not
    answered, the one it is on begun at ``began``."""
    worker = object.__new__(_Worker)
    worker.ready, worker.jobs = ready, list(range(jobs_left))
    worker.since, worker.deadline = began, deadline
    return worker


@pytest.mark.parametrize(("pool", "expected"), [
    ([_worker_on(9, began=100.0)], 0.02),  # a quarter of the 8 jobs after this one's 10 ms
    ([_worker_on(9, began=99.99)], 0.01),  # ... less the 10 ms this one has run
    ([_worker_on(9, began=100.0), _worker_on(5, began=100.0)], 0.01),  # the first to feed
    ([_worker_on(9, began=100.0), _worker_on(0, began=0.0)], 0.02),  # an idle one: no limit
    ([_worker_on(41, began=100.0)], workers.NAP_S),  # never longer
    ([_worker_on(9, began=100.0, deadline=100.015)], 0.015),  # a time limit comes first
    ([_worker_on(1, began=100.0)], 0.0),  # the chunk's last reply is waited for
    ([_worker_on(9, began=100.0), _worker_on(0, began=0.0, ready=False)], 0.0),  # starting
    ([_worker_on(2, began=100.0)], 0.0025),  # 2.5 ms: worth a nap ...
    ([_worker_on(2, began=99.998)], 0.0),  # ... under a millisecond is not
])
def test_a_nap_ends_a_quarter_of_the_way_through_the_first_chunk_to_end(pool, expected) -> None:
    assert workers._nap(pool, 0.01, 100.0) == pytest.approx(expected, abs=1e-9)


def test_naps_lose_no_reply_of_a_worker_that_dies_and_blame_the_right_job(
        monkeypatch) -> None:
    """Replies left in the pipe while the parent naps are read after the worker has died:
    the jobs before the crash are answered, the crash is the job it was on, the jobs
    after it go to a fresh worker; a hang is still a time-out."""
    reads = _counting_reads(monkeypatch)
    jobs: list[tuple[str, object]] = [("sleep", 0.01)] * 41
    jobs = [*jobs[:21], ("crash", 0), *jobs[21:31], ("hang", 0), *jobs[31:]]
    with Pool("support.toy_worker", workers=1, timeout=2, env=ENV, chunk_seconds=10.0) as pool:
        outcomes = pool.run(jobs)
    assert [o.status for o in outcomes].count("ok") == 41
    assert [(o.job, o.status) for o in outcomes if o.status != "ok"] == \
        [(("crash", 0), "crash"), (("hang", 0), "timeout")]
    assert max(reads) > 1  # the replies did wait in the pipe


def test_workers_are_kept_between_runs_and_replaced_after_their_quota() -> None:
    with Pool("support.toy_worker", env=ENV) as pool:
        first = pool.call(("pid", 0)).value
        assert pool.call(("pid", 0)).value == first
    with Pool("support.toy_worker", jobs_per_worker=2, env=ENV) as pool:
        pids = [o.value for o in pool.run([("pid", 0)] * 5)]
    assert pids[0] == pids[1] != pids[2] == pids[3] != pids[4], pids


def test_a_worker_that_cannot_start_stops_the_run() -> None:
    pool = Pool("support.toy_worker", env={**ENV, "TOY_WORKER_FAILS": "1"}, name="toy workers")
    with pytest.raises(RuntimeError, match=r"toy workers failed to start: .*cannot start"):
        pool.run([("double", 1)])
    pool.close()


def test_a_worker_started_early_is_the_one_that_answers() -> None:
    """start() spawns without waiting; the next call uses that worker (its process id is
    the one start() made), so a caller can let a worker load while it does other work."""
    with Pool("support.toy_worker", env=ENV) as pool:
        pool.start()
        started = pool._pool[0].proc.pid
        assert pool.call(("pid", 0)).value == started
        pool.start()  # already there: no second worker
        assert len(pool._pool) == 1


def test_a_killed_worker_leaves_no_temporary_files() -> None:
    """A worker's temporary files live in a folder of its own that the pool removes when
    the worker ends, however it ends (irtool-conf-*/irtool-ov-* piled up in /tmp from
    workers killed by OpenVINO's crashes and time-outs)."""
    from pathlib import Path

    with Pool("support.toy_worker", env=ENV, timeout=30) as pool:
        kept = Path(pool.call(("litter", "keep")).value)
        assert (kept / "data").is_file()  # the worker lives: its files too
        crashed = pool.call(("litter", "crash"))
        assert crashed.status == "crash"
        worker_tmp = kept.parent
        assert worker_tmp.name.startswith("irtool-worker-")
    assert not worker_tmp.exists() and not kept.exists()


def test_folders_of_a_killed_parent_are_swept_by_the_next_pool(tmp_path: Path) -> None:
    """A parent killed by a signal never removes its workers' folders; the next process to
    start a worker removes those whose owner is gone, and never a live pool's."""
    script = (
        "import os, signal, sys\n"
        "from irtool.core.workers import Pool\n"
        "pool = Pool('support.toy_worker', env={'PYTHONPATH': sys.argv[1]})\n"
        "print(pool.call(('pid', 0)).value, pool._pool[0].tmp, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n")
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # this test's folders only
    done = subprocess.run([sys.executable, "-c", script, str(TESTS)], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == -signal.SIGKILL, done.stderr
    pid, folder = done.stdout.split()
    assert Path(folder).parent == tmp_path and Path(folder).is_dir()
    with contextlib.suppress(ProcessLookupError):  # the orphaned worker, if still there
        os.killpg(int(pid), signal.SIGKILL)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tempfile, "tempdir", str(tmp_path))
        mp.setattr(workers, "_swept", True)  # the sweep below is the one looked at
        with Pool("support.toy_worker", env=ENV) as live:
            live.start()
            mine = live._pool[0].tmp
            assert Path(mine).parent == tmp_path
            assert sweep_stale_folders() == [folder]
            assert not Path(folder).exists() and Path(mine).is_dir()
        assert not Path(mine).exists()  # removed by its own pool on close


# The parent: one worker (started in the main thread, or in another one), busy with a job
# that never ends, then the parent kills itself; "fork" first forks a child that keeps
# the lifeline's write end open, so that only PR_SET_PDEATHSIG can end the worker.
PARENT = """
import os, signal, sys, threading, time
from irtool.core.workers import Pool
pool = Pool('support.toy_worker', env={'PYTHONPATH': sys.argv[1]}, timeout=600)
if sys.argv[2] == 'thread':
    starter = threading.Thread(target=pool.start)
    starter.start()
    starter.join()
print(pool.call(('pid', 0)).value, flush=True)
if sys.argv[2] == 'fork':
    keeper = os.fork()
    if keeper == 0:
        os.close(1)
        os.close(2)
        time.sleep(60)
        os._exit(0)
    print(keeper, flush=True)
threading.Thread(target=pool.call, args=(('hang', 0),), daemon=True).start()
time.sleep(1)
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc, PR_SET_PDEATHSIG")
@pytest.mark.parametrize("how", ["main", "thread", "fork"])
def test_a_worker_dies_with_its_parent(how: str) -> None:
    """A parent killed by SIGKILL takes its busy worker with it: through the lifeline pipe
    (a worker started from another thread has nothing else), or through PR_SET_PDEATHSIG
    (``fork``: a forked child of the parent keeps the pipe open)."""
    done = subprocess.run([sys.executable, "-c", PARENT, str(TESTS), how], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == -signal.SIGKILL, done.stderr
    worker, *keeper = (int(pid) for pid in done.stdout.split())
    try:
        assert not left_after([worker], 5), f"the worker {worker} outlived its parent"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(worker, signal.SIGKILL)
        for pid in keeper:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.skipif(not hasattr(signal, "SIGALRM"), reason="no alarm")
def test_a_worker_ends_a_job_past_its_time_limit_by_itself() -> None:
    """The backstop: a job sent with a limit of 0.5 s whose parent does not stop it (here:
    nobody watches) ends the worker by SIGALRM after 1.1 x the limit + BACKSTOP_S."""
    worker = _Worker(Pool("support.toy_worker", env=ENV).command,
                     {**os.environ, **ENV, "PYTHONWARNINGS": "ignore"})
    try:
        while not worker.ready:
            worker.ready = any(kind == "ready" for kind, _ in worker.replies())
        start = time.monotonic()
        worker.send([0], [("hang", 0)], 0.5)
        rc = worker.proc.wait(timeout=BACKSTOP_S + 30)
        assert rc == -signal.SIGALRM
        assert time.monotonic() - start >= BACKSTOP_S
    finally:
        worker.stop()
