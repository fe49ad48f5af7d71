"""``irtool run`` through a real subprocess: outputs, backends and clean failures."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support.ir_builders import A0, counting_expected, counting_loop, runaway_loop

import irtool


def irtool_cli(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "irtool", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def loop_xml(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return irtool.save(counting_loop(), tmp_path_factory.mktemp("cli") / "loop.xml")


def write_inputs(path: Path, **arrays: np.ndarray) -> Path:
    np.savez(path, **arrays)
    return path


def good_inputs(tmp_path: Path) -> Path:
    return write_inputs(tmp_path / "in.npz", trip=np.array(4), cond=np.array(True), a0=A0)


def assert_clean_failure(proc: subprocess.CompletedProcess, out: Path, *words: str) -> None:
    """Exit 1, one line on stderr naming the problem, no traceback, no output file."""
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for word in words:
        assert word in lines[0], lines[0]
    assert not out.exists()


@pytest.mark.parametrize("backend", ["irtool", "openvino"])
def test_run_writes_outputs(loop_xml: Path, tmp_path: Path, backend: str) -> None:
    out = tmp_path / "out.npz"
    proc = irtool_cli("run", loop_xml, good_inputs(tmp_path), "-o", out, "--backend", backend)
    assert proc.returncode == 0, proc.stderr
    expected = counting_expected(4, True, A0)
    with np.load(out) as got:
        assert sorted(got.files) == sorted(expected)
        for name, want in expected.items():
            np.testing.assert_allclose(got[name], want, rtol=1e-6)
            assert got[name].dtype == want.dtype


def test_run_output_into_a_new_folder(loop_xml: Path, tmp_path: Path) -> None:
    out = tmp_path / "out" / "run1" / "outputs.npz"
    proc = irtool_cli("run", loop_xml, good_inputs(tmp_path), "-o", out)
    assert proc.returncode == 0, proc.stderr
    with np.load(out) as got:
        np.testing.assert_allclose(got["acc"], counting_expected(4, True, A0)["acc"])


def test_run_prints_without_output_file(loop_xml: Path, tmp_path: Path) -> None:
    proc = irtool_cli("run", loop_xml, good_inputs(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "acc: float32[2]" in proc.stdout
    assert "steps: float32[4, 2]" in proc.stdout


@pytest.mark.parametrize("backend", ["irtool", "openvino"])
def test_missing_input(loop_xml: Path, tmp_path: Path, backend: str) -> None:
    inputs = write_inputs(tmp_path / "in.npz", trip=np.array(4), cond=np.array(True))
    out = tmp_path / "out.npz"
    proc = irtool_cli("run", loop_xml, inputs, "-o", out, "--backend", backend)
    assert_clean_failure(proc, out, "a0")


def test_unknown_input(loop_xml: Path, tmp_path: Path) -> None:
    inputs = write_inputs(tmp_path / "in.npz", trip=np.array(4), cond=np.array(True), a0=A0,
                          extra=A0)
    out = tmp_path / "out.npz"
    assert_clean_failure(irtool_cli("run", loop_xml, inputs, "-o", out), out, "extra")


def test_wrong_dtype(loop_xml: Path, tmp_path: Path) -> None:
    inputs = write_inputs(tmp_path / "in.npz", trip=np.array(4), cond=np.array(True),
                          a0=A0.astype(np.float64))
    out = tmp_path / "out.npz"
    assert_clean_failure(irtool_cli("run", loop_xml, inputs, "-o", out), out, "a0", "float64")


def test_runaway_loop_stops_at_max_iterations(tmp_path: Path) -> None:
    xml = irtool.save(runaway_loop(), tmp_path / "runaway.xml")
    inputs = write_inputs(tmp_path / "in.npz", trip=np.array(-1), cond=np.array(True),
                          a0=np.array(0, np.float32))
    out = tmp_path / "out.npz"
    proc = irtool_cli("run", xml, inputs, "-o", out, "--max-iterations", "5")
    assert_clean_failure(proc, out, '"runaway"', "Loop", "5 iterations", "max_iterations=5")


def test_a_trip_count_of_10_to_the_12_stops_at_the_default_cap(loop_xml: Path,
                                                                tmp_path: Path) -> None:
    """No --max-iterations: the default cap bounds a finite trip count too (it ran forever)."""
    inputs = write_inputs(tmp_path / "in.npz", trip=np.array(10**12), cond=np.array(True), a0=A0)
    out = tmp_path / "out.npz"
    proc = irtool_cli("run", loop_xml, inputs, "-o", out)
    assert_clean_failure(proc, out, "Loop", "more than 1000000 iterations", "default cap",
                         "--max-iterations")


def test_max_iterations_large_enough_runs(loop_xml: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.npz"
    proc = irtool_cli("run", loop_xml, good_inputs(tmp_path), "-o", out, "--max-iterations", "4")
    assert proc.returncode == 0, proc.stderr
    with np.load(out) as got:
        np.testing.assert_array_equal(got["acc"], counting_expected(4, True, A0)["acc"])


def test_missing_model_file(tmp_path: Path) -> None:
    out = tmp_path / "out.npz"
    proc = irtool_cli("run", tmp_path / "nope.xml", good_inputs(tmp_path), "-o", out)
    assert_clean_failure(proc, out, "nope.xml")
