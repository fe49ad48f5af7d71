"""All-or-nothing output files (``irtool.files``): folders made on demand and removed
again on failure, targets replaced only when every write succeeded, npz keyed by any name."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irtool.errors import IRToolError
from irtool.files import check_writable, replacing, write_files, write_npz


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
