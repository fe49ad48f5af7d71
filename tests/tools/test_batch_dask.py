"""A batch on a Dask LocalCluster (``--scheduler``): the same rows as on one machine, a crash
and a hang one row each, and a Dask worker killed in the middle loses no model (Dask's
scheduler gives its tasks to the others). In-process clusters of worker processes."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path

import pytest
from support.gate import copy_ir, hazard_extension, hazard_ir, irtool, make_zoo

from irtool.cli._batch import WORKER
from irtool.tools.batch import Row, Task

distributed = pytest.importorskip("distributed", reason="Dask is a test extra: pip install "
                                                        "'.[test]'")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster():  # type: ignore[no-untyped-def]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as c:
        yield c


def _rows(stdout: str) -> list[dict]:
    return [{k: v for k, v in f.items() if k != "seconds"}
            for f in json.loads(stdout)["files"]]


def test_the_same_report_as_on_one_machine(cluster, ov_control_flow_irs: dict[str, Path],
                                           tmp_path: Path) -> None:
    root = make_zoo(ov_control_flow_irs, tmp_path / "zoo")["good"].parent
    local = irtool("validate", root, "--format", "json")
    dask = irtool("validate", root, "--format", "json", "--scheduler",
                  cluster.scheduler_address)
    assert local.returncode == dask.returncode == 1, dask.stderr
    assert _rows(dask.stdout) == _rows(local.stdout)


def test_a_crash_and_a_hang_on_dask_are_rows(cluster, ov_control_flow_irs: dict[str, Path],
                                             tmp_path: Path) -> None:
    good = copy_ir(ov_control_flow_irs["test_if"], tmp_path / "good.xml")
    crash, hang = hazard_ir(tmp_path, "crash"), hazard_ir(tmp_path, "hang")
    proc = irtool("validate", good, crash, hang, "--extension", hazard_extension(tmp_path),
                  "--format", "json", "--model-timeout", "20", "--scheduler",
                  cluster.scheduler_address)
    assert proc.returncode == 1, proc.stderr
    rows = {Path(f["file"]).name: f for f in json.loads(proc.stdout)["files"]}
    assert rows["good.xml"]["valid"]
    assert [d["code"] for d in rows["hazard_crash.xml"]["diagnostics"]] == ["MODEL_CRASHED"]
    assert [d["code"] for d in rows["hazard_hang.xml"]["diagnostics"]] == ["MODEL_TIMEOUT"]


def test_a_killed_worker_loses_no_model(ov_control_flow_irs: dict[str, Path],
                                        tmp_path: Path) -> None:
    from irtool.tools.batch_dask import run_on_dask

    models = [copy_ir(ov_control_flow_irs[name], tmp_path / f"{i:02d}_{name}.xml")
              for i in range(12) for name in ("test_loop11", "test_scan9_sum", "test_if")]
    tasks = [Task("validate", str(m), m.name) for m in models]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as c, distributed.Client(c) as client:
        pids = list(client.run(os.getpid).values())
        rows: list[Row] = []
        killed = threading.Event()

        def on_row(row: Row) -> None:
            rows.append(row)
            if not killed.is_set():  # after the first chunk: kill a worker mid-run
                killed.set()
                os.kill(pids[0], signal.SIGKILL)

        run_on_dask(tasks, on_row, worker=WORKER, scheduler=c.scheduler_address, timeout=120)
    assert killed.is_set()
    assert sorted(r.file for r in rows) == sorted(t.path for t in tasks)  # each once
    assert all(r.status == "done" and not r.diagnostics for r in rows), \
        [(r.file, r.status, d.code, d.message) for r in rows for d in r.diagnostics]
