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


DEPLOYMENT = REPO / "bench" / "deployment_irs.py"


def test_deployment_irs_over_two_fixtures() -> None:
    """The bench's table over a stateless and a stateful checked-in IR: every column filled,
    the stateful one's runtime cell irtool's one-line reason or a match, and the timing
    columns (irtool, OpenVINO, their ratio) numbers where irtool runs the IR."""
    proc = subprocess.run([sys.executable, str(DEPLOYMENT), "--fixtures", "--only",
                           "cnn_torch,gpt2_stateful", "--repeats", "2"], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = {line.split(" | ")[0].lstrip("| "): line.split(" | ")
            for line in proc.stdout.splitlines() if line.startswith("| ") and "---" not in line}
    assert set(rows) == {"IR", "cnn_torch", "gpt2_stateful"}
    assert all(len(cells) == 12 for cells in rows.values())
    assert rows["cnn_torch"][3] == "clean" and rows["cnn_torch"][6].startswith("match")
    cells = [c.strip(" |") for c in rows["cnn_torch"][9:12]]
    ours, theirs, ratio = (float(c) for c in cells)
    # The ratio is of the times before they were rounded for the table: it must lie within
    # what the rounded cells allow (half a unit of their last digit each way).
    slack = [0.5 * 10.0 ** -len(c.partition(".")[2]) for c in cells[:2]]
    low = (ours - slack[0]) / (theirs + slack[1])
    high = (ours + slack[0]) / max(theirs - slack[1], 1e-12)
    assert ours > 0 and theirs > 0 and low - 0.01 <= ratio <= high + 0.01, cells
    assert "geomean" in proc.stdout and "CPU:" in proc.stdout
    assert rows["gpt2_stateful"][2] == "5"
    assert rows["gpt2_stateful"][6].startswith(("match", "irtool: gpt2_stateful.xml: layer"))


def test_exporter_models_rows() -> None:
    """``bench/exporter_models.py`` prints one row per fixture asked for, every column filled;
    a fixture irtool handles reads ``ok`` throughout."""
    bench = REPO / "bench" / "exporter_models.py"
    proc = subprocess.run([sys.executable, str(bench), "dynamo_cond", "skl_knn_imputer"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = {line.split(" | ")[0].strip("| "): [c.strip() for c in line.strip("|").split(" | ")]
            for line in proc.stdout.splitlines() if line.startswith("| ")}
    assert rows["fixture"] == ["fixture", "producer", "converts", "irtool", "OV (irtool IR)",
                               "OV frontend"]
    assert rows["dynamo_cond"][1:] == ["dynamo", "ok", "ok", "ok", "ok"]
    assert len(rows["skl_knn_imputer"]) == 6 and all(rows["skl_knn_imputer"])
    assert "2 fixtures:" in proc.stdout


def test_scale_bench_runs_small() -> None:
    """``bench/scale.py`` on a small chain: every operation measured, the output right."""
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "scale.py"), "--sizes", "300",
                           "--repeats", "1"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines()[1:]]
    assert [(r[0], " ".join(r[1:3]) if r[1] == "ov" else r[1]) for r in rows] == [
        ("300", "ov read"), ("300", "validate"), ("300", "load"), ("300", "run")]
    assert "WRONG" not in proc.stdout
    picked = subprocess.run([sys.executable, str(REPO / "bench" / "scale.py"), "--sizes", "300",
                             "--repeats", "1", "--ops", "validate"], capture_output=True,
                            text=True, timeout=300)
    assert picked.returncode == 0, picked.stdout + picked.stderr
    assert [line.split()[1] for line in picked.stdout.splitlines()[1:]] == ["ov", "validate"]


def test_fake_quantize_bench_small() -> None:
    """``bench/fake_quantize.py`` on a few inputs: both comparisons, logits and
    probabilities, each with a top-1 agreement and finite differences."""
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "fake_quantize.py"),
                           "--batch", "4", "--float"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("irtool vs")]
    assert len(rows) == 4
    for row in rows:
        agree, diff = row.split()[-4], float(row.split()[-3])
        assert agree.endswith("%") and 0 <= diff < 1


MAP_LOOPS = REPO / "bench" / "map_loops.py"


def test_map_loops_quick() -> None:
    """bench/map_loops.py runs, every column agrees with the batched numpy op (exit 0),
    and it says for both widths whether each target is met. No timing is asserted."""
    proc = subprocess.run([sys.executable, str(MAP_LOOPS), "--quick", "--repeats", "1",
                           "--iterations", "200"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WRONG" not in proc.stdout and "failed" not in proc.stdout
    for width in (16, 256):
        assert f"width {width}: irtool / numpy batched" in proc.stdout
    assert "width 16: OpenVINO own / OpenVINO on irtool's IR" in proc.stdout
