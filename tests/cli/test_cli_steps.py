"""``irtool run MODEL.xml step1.npz step2.npz ... -o OUTDIR``: the files are consecutive steps
of one session; each step's outputs go to ``OUTDIR/<input file name>``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support.stateful import accumulator


def irtool_cli(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "irtool", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def _steps(tmp_path: Path, count: int = 3) -> tuple[list[Path], list[np.ndarray]]:
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(count)]
    folder = tmp_path / "in"
    folder.mkdir()
    paths = []
    for k, x in enumerate(xs):
        np.savez(folder / f"step{k}.npz", x=x)
        paths.append(folder / f"step{k}.npz")
    return paths, xs


@pytest.mark.parametrize("backend", ["irtool", "openvino"])
def test_steps_keep_the_state_and_write_one_file_each(tmp_path: Path, backend: str) -> None:
    xml = accumulator(tmp_path / "acc.xml")
    paths, xs = _steps(tmp_path)
    out = tmp_path / "out"
    proc = irtool_cli("run", xml, *paths, "-o", out, "--backend", backend)
    assert proc.returncode == 0, proc.stderr
    for k, path in enumerate(paths):
        with np.load(out / path.name) as data:
            # Hand-computed: the running sum of the steps' inputs.
            np.testing.assert_allclose(data["sum"], np.sum(xs[:k + 1], axis=0), rtol=1e-6)


def test_steps_without_output_print_each_step(tmp_path: Path) -> None:
    xml = accumulator(tmp_path / "acc.xml")
    paths, _ = _steps(tmp_path, 2)
    proc = irtool_cli("run", xml, *paths)
    assert proc.returncode == 0, proc.stderr
    assert [line for line in proc.stdout.splitlines() if line.startswith("== step")] == [
        f"== step {p}" for p in paths]


def test_a_failing_step_writes_nothing(tmp_path: Path) -> None:
    xml = accumulator(tmp_path / "acc.xml")
    paths, _ = _steps(tmp_path, 2)
    bad = tmp_path / "in" / "bad.npz"
    np.savez(bad, x=np.zeros((3, 3), np.float32))
    out = tmp_path / "out"
    proc = irtool_cli("run", xml, *paths, bad, "-o", out)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "'x' has shape [3, 3]" in lines[0], proc.stderr
    assert not out.exists()


def test_input_files_of_one_name_are_refused(tmp_path: Path) -> None:
    xml = accumulator(tmp_path / "acc.xml")
    paths, xs = _steps(tmp_path, 1)
    other = tmp_path / "other"
    other.mkdir()
    np.savez(other / paths[0].name, x=xs[0])
    proc = irtool_cli("run", xml, paths[0], other / paths[0].name, "-o", tmp_path / "out")
    assert proc.returncode == 2  # a command line that cannot be taken: a usage error
    assert "share the name 'step0.npz'" in proc.stderr
