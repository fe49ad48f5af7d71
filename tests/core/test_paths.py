"""``irtool.core.paths.expand``: the models named by files, folders and globs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from irtool.core.paths import NoModels, expand
from irtool.core.sniff import xml_root

IR = b'<?xml version="1.0"?>\n<!-- a comment -->\n<net name="m" version="11">\n</net>\n'


def _tree(root: Path) -> None:
    """zoo/a.xml (IR), zoo/a.bin, zoo/sub/deep/b.xml (IR), zoo/pom.xml (other XML),
    zoo/notes.xml (not XML), zoo/.hidden/c.xml (IR in a hidden folder), zoo/m.onnx."""
    for rel, data in {"a.xml": IR, "a.bin": b"\0" * 8, "sub/deep/b.xml": IR,
                      "pom.xml": b"<project/>", "notes.xml": b"hello",
                      ".hidden/c.xml": IR, "m.onnx": b"\x08\x07"}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def test_xml_root_reads_past_the_prolog(tmp_path: Path) -> None:
    path = tmp_path / "m.xml"
    path.write_bytes(b"\xef\xbb\xbf<?xml version='1.0'?><!DOCTYPE x><!-- <fake/> --><net/>")
    assert xml_root(path) == "net"
    path.write_bytes(b"not xml")
    assert xml_root(path) is None


def test_a_folder_is_searched_recursively_for_ir_only(tmp_path: Path) -> None:
    _tree(tmp_path / "zoo")
    found = expand([str(tmp_path / "zoo")], "ir")
    assert [f.name for f in found.found] == ["a.xml", "sub/deep/b.xml"]
    assert found.paths == [str(tmp_path / "zoo" / "a.xml"),
                           str(tmp_path / "zoo" / "sub" / "deep" / "b.xml")]
    skipped = {Path(p).name: why for p, why in found.skipped}
    assert set(skipped) == {"pom.xml", "notes.xml"}  # the .bin and .onnx are no news
    assert "<project>" in skipped["pom.xml"] and skipped["notes.xml"] == "not XML"


def test_globs_with_double_star_and_names_below_the_fixed_part(tmp_path: Path,
                                                               monkeypatch) -> None:
    _tree(tmp_path / "zoo")
    monkeypatch.chdir(tmp_path)
    found = expand(["zoo/**/*.xml"], "ir")
    assert [(f.path, f.name) for f in found.found] == [
        ("zoo/a.xml", "a.xml"), (os.path.join("zoo", "sub", "deep", "b.xml"),
                                 "sub/deep/b.xml")]
    assert [f.name for f in expand(["zoo/*.onnx"], "onnx").found] == ["m.onnx"]
    assert [f.name for f in expand(["zoo/s*"], "ir").found] == ["sub/deep/b.xml"]


def test_named_files_are_kept_whatever_they_are_and_each_model_once(tmp_path: Path) -> None:
    _tree(tmp_path / "zoo")
    zoo = tmp_path / "zoo"
    found = expand([str(zoo / "pom.xml"), str(zoo / "missing.xml"), str(zoo),
                    str(zoo / "a.xml")], "ir")
    assert [f.name for f in found.found] == ["pom.xml", "missing.xml", "a.xml",
                                             "sub/deep/b.xml"]
    only = expand([str(zoo / "pom.xml"), str(zoo / "a.xml")], "ir", only_models=True)
    assert [f.name for f in only.found] == ["a.xml"]
    assert [Path(p).name for p, _ in only.skipped] == ["pom.xml"]


def test_a_folder_or_glob_without_models_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(NoModels, match="empty: no IR file"):
        expand([str(tmp_path / "empty")], "ir")
    with pytest.raises(NoModels, match=r"\*\.xml: no IR file .* matches this pattern"):
        expand([str(tmp_path / "*.xml")], "ir")
