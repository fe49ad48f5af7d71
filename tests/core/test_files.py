"""All-or-nothing output files (``irtool.core.files``): folders made on demand and removed
again on failure, targets replaced only when every write succeeded, npz keyed by any name."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import irtool
from irtool.core.errors import IRToolError
from irtool.core.files import check_writable, replacing, write_files, write_npz


def test_write_files_creates_folders_and_replaces(tmp_path: Path) -> None:
    a, b = tmp_path / "x" / "y" / "a.bin", tmp_path / "x" / "y" / "a.xml"
    write_files({a: b"old", b: b"old"})
    write_files({a: b"new-bin", b: b"new-xml"})
    assert (a.read_bytes(), b.read_bytes()) == (b"new-bin", b"new-xml")
    assert sorted(p.name for p in a.parent.iterdir()) == ["a.bin", "a.xml"]  # no temporaries


def test_failure_inside_the_block_leaves_no_file_and_no_new_folder(tmp_path: Path) -> None:
    existing = tmp_path / "keep.txt"
    existing.write_bytes(b"untouched")
    with pytest.raises(RuntimeError), \
            replacing(existing, tmp_path / "new" / "a.txt",
                      tmp_path / "new" / "deeper" / "out.txt") as temporaries:
        for tmp in temporaries:
            tmp.write_bytes(b"half")
        raise RuntimeError("the writer failed")
    assert existing.read_bytes() == b"untouched"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_a_file_in_the_way_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("")
    with pytest.raises(IRToolError, match="is not a folder"):
        write_files({tmp_path / "plain" / "out.bin": b""})
    with pytest.raises(IRToolError, match="not a writable folder"):
        check_writable(tmp_path / "plain" / "sub" / "out.npz")
    check_writable(tmp_path / "fresh" / "sub" / "out.npz")  # creatable: no error
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain"]


def test_npz_keys_are_exactly_the_tensor_names(tmp_path: Path) -> None:
    # np.savez(file, **arrays) raises on "file" and takes "allow_pickle" as its own option.
    arrays = {"file": np.arange(3), "allow_pickle": np.array([True]), "x:0": np.eye(2),
              "words": np.array(["a", "bc"], dtype=object)}
    write_npz(tmp_path / "o.npz", arrays)
    with np.load(tmp_path / "o.npz", allow_pickle=False) as got:
        assert sorted(got.files) == sorted(arrays)
        for name, want in arrays.items():
            assert got[name].tolist() == want.tolist()


# -- saves under concurrency and kill -9 -----------------------------------------------

_SAVE_MANY = """
import sys
import numpy as np
import irtool
from irtool.ir import Model, TensorInfo, element_type
from irtool.ir.builder import GraphBuilder

path, value, times, size = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
g = GraphBuilder()
f32 = element_type("f32")
x = g.parameter(TensorInfo(f32, (size,)), "x", ["x"])
(y,) = g.op("Add", "opset1", [x, g.const(np.full(size, value, np.float32))],
            {"auto_broadcast": "numpy"}, outputs=[TensorInfo(f32, (size,))])
g.result(y, "y")
model = Model(g.graph, name=f"adds_{value:g}")
print("ready", flush=True)
for _ in range(times):
    irtool.save(model, path)
"""


def _saver(path: Path, value: float, times: int, size: int = 4) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", _SAVE_MANY, str(path), str(value),
                             str(times), str(size)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_concurrent_saves_to_one_path_end_with_one_whole_model(tmp_path: Path) -> None:
    """Two processes save two models of the same shapes (so the .bin sizes agree) to one
    path, many times at once: every save succeeds (neither removes the other's live
    temporaries), and the pair left is one model's .xml with that model's .bin."""
    path = tmp_path / "m.xml"
    for _ in range(3):
        savers = [_saver(path, value, 60) for value in (1.0, 2.0)]
        for proc in savers:
            _, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err
        assert irtool.validate(path) == []
        model = irtool.load(path)
        got = irtool.run(model, {"x": np.zeros(4, np.float32)})["y"]
        want = {"adds_1": 1.0, "adds_2": 2.0}[model.name]  # which model the .xml is
        assert got.tolist() == [want] * 4
        assert _temporaries(tmp_path) == []


def test_a_bin_of_another_model_is_refused(tmp_path: Path) -> None:
    """What an unlocked pair of renames could leave: model 1's .xml beside model 2's
    .bin (same size). The .xml's record of its weights tells."""
    for value in (1.0, 2.0):
        saver = _saver(tmp_path / f"m{value:g}.xml", value, 1)
        assert saver.wait(timeout=120) == 0
    (tmp_path / "m2.bin").replace(tmp_path / "m1.bin")
    assert [d.code for d in irtool.validate(tmp_path / "m1.xml")] == ["BIN_MISMATCH"]
    with pytest.raises(irtool.IRValidationError, match="BIN_MISMATCH"):
        irtool.load(tmp_path / "m1.xml")


def test_temporaries_of_a_killed_save_go_with_the_next_save(tmp_path: Path) -> None:
    """kill -9 while a large model is being written leaves its temporaries; the next save
    to that path removes them (and writes a whole model)."""
    path = tmp_path / "big.xml"
    saver = _saver(path, 3.0, 1000, size=25_000_000)  # a 100 MB Const
    assert saver.stdout is not None and saver.stdout.readline().strip() == "ready"
    deadline = time.monotonic() + 120
    while not _temporaries(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.001)
    os.kill(saver.pid, signal.SIGKILL)
    saver.wait(timeout=60)
    left = _temporaries(tmp_path)
    assert left, "the save was not caught in the act"
    assert all(name.startswith((".big.xml.", ".big.bin.")) for name in left)
    small = _saver(path, 5.0, 1)
    assert small.wait(timeout=120) == 0
    assert _temporaries(tmp_path) == []
    assert irtool.run(irtool.load(path), {"x": np.zeros(4, np.float32)})["y"].tolist() == [5.0] * 4
