"""``bench/loop_overhead.py --quick`` as a smoke test: it runs, every backend agrees with
the numpy loop, and it prints its table. No timing is asserted."""

from __future__ import annotations

import subprocess
import sys

from support import REPO

BENCH = REPO / "bench" / "loop_overhead.py"


def test_loop_overhead_quick() -> None:
    proc = subprocess.run([sys.executable, str(BENCH), "--quick", "--repeats", "1"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # 1 means a wrong result
    lines = proc.stdout.splitlines()
    header = next(line for line in lines if line.startswith("case"))
    for backend in ("numpy loop", "irtool", "onnxruntime", "OpenVINO", "ReferenceEvaluator"):
        assert backend in header
    rows = [line for line in lines if line.startswith("(")]
    assert [r[:3] for r in rows] == ["(a)", "(b)", "(c)"]
    assert "WRONG" not in proc.stdout and "failed" not in proc.stdout
