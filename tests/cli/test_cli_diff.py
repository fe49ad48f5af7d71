"""``irtool diff``: exit codes (0 equal, 1 different, 2 usage), the text and JSON formats,
and ``--reference-dir`` over a folder, through the real command."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import REPO

FIXTURES = REPO / "tests" / "fixtures"

IR = FIXTURES / "ir_producers" / "cnn_torch.xml"


def cli(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "irtool", "diff", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def _copy(folder: Path, name: str = "cnn_torch.xml", edit: tuple[str, str] | None = None
          ) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    xml = folder / name
    text = IR.read_text()
    if edit:
        assert text.count(edit[0]) >= 1
        text = text.replace(edit[0], edit[1], 1)
    xml.write_text(text)
    shutil.copy(IR.with_suffix(".bin"), xml.with_suffix(".bin"))
    return xml


EDIT = ('strides="1, 1"', 'strides="2, 2"')


def _edit_line() -> int:
    return next(i + 1 for i, ln in enumerate(IR.read_text().splitlines()) if EDIT[0] in ln)


def test_equal_files_exit_0(tmp_path: Path) -> None:
    proc = cli(IR, _copy(tmp_path))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "no differences\n", "")


def test_a_difference_is_one_line_and_exit_1(tmp_path: Path) -> None:
    b = _copy(tmp_path, edit=EDIT)
    proc = cli(IR, b)
    assert proc.returncode == 1 and proc.stderr == ""
    line, summary = proc.stdout.splitlines()
    n = _edit_line()
    assert line.startswith(f"{IR}:{n} {b}:{n}: Convolution ")
    assert line.endswith(': strides "1, 1" -> "2, 2"')
    assert summary == "1 difference(s)"


def test_json(tmp_path: Path) -> None:
    b = _copy(tmp_path, edit=EDIT)
    proc = cli(IR, b, "--json")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["summary"] == {"files": 1, "equal": 0, "different": 1, "missing": 0,
                                 "extra": 0}
    [entry] = report["files"]
    [d] = entry["differences"]
    assert (d["kind"], d["what"], d["before"], d["after"]) == (
        "attribute", "data.strides", "1, 1", "2, 2")
    assert d["a"] == {"file": str(IR), "line": _edit_line()}
    assert d["b"] == {"file": str(b), "line": _edit_line()}
    assert d["layer"].startswith("Convolution ")


@pytest.mark.parametrize("args, words", [
    (["one.xml"], "does not exist"),
    ([IR], "give two IR files"),
    ([IR, IR, IR], "give two IR files"),
    ([IR, "missing.xml"], "missing.xml does not exist"),
    ([IR, FIXTURES / "onnx_exporters"], "give two IR files"),
    (["--reference-dir", "nowhere", IR], "reference folder nowhere does not exist"),
    (["--bogus", IR, IR], "unrecognized arguments"),
])
def test_usage_errors_exit_2(args: list, words: str) -> None:
    proc = cli(*args)
    assert proc.returncode == 2 and words in proc.stderr and proc.stdout == ""
    assert "Traceback" not in proc.stderr


def test_an_onnx_model_is_named_as_one(tmp_path: Path) -> None:
    onnx_file = next((FIXTURES / "onnx_exporters").glob("*.onnx"))
    proc = cli(onnx_file, IR)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"irtool diff: {onnx_file} is not IR but an ONNX model"


def test_an_unreadable_file_is_a_difference(tmp_path: Path) -> None:
    cut = tmp_path / "cut.xml"
    cut.write_bytes(IR.read_bytes()[:500])
    proc = cli(IR, cut)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stdout.splitlines()[0].startswith(f"{cut}:")
    assert "not readable: malformed XML" in proc.stdout


def test_reference_dir_reports_each_file(tmp_path: Path) -> None:
    ref, out = tmp_path / "ref", tmp_path / "out"
    _copy(ref)
    _copy(ref / "sub", edit=None)
    _copy(ref, "gone.xml")
    _copy(out)
    changed = _copy(out / "sub", edit=EDIT)
    new = _copy(out, "new.xml")
    proc = cli("--reference-dir", ref, out)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    n = _edit_line()
    # per file in name order, its differences before its summary line
    assert lines == [
        f"{out}/cnn_torch.xml: same as {ref}/cnn_torch.xml",
        f"{new}: extra: no reference {ref}/new.xml",
        f"{ref}/sub/cnn_torch.xml:{n} {changed}:{n}: " + lines[2].split(": ", 1)[1],
        f"{changed}: 1 difference(s) from {ref}/sub/cnn_torch.xml",
        f"{ref}/gone.xml: missing: no new file for this reference",
        "4 file(s): 1 equal, 1 different, 1 missing, 1 extra",
    ]
    report = json.loads(cli("--reference-dir", ref, out, "--json").stdout)
    assert {f["name"]: f["status"] for f in report["files"]} == {
        "cnn_torch.xml": "equal", "sub/cnn_torch.xml": "different", "new.xml": "extra",
        "gone.xml": "missing"}
    # the same files given one by one all equal their references: exit 0
    same = cli("--reference-dir", ref, out / "cnn_torch.xml")
    assert same.returncode == 0, same.stdout
    assert same.stdout.splitlines()[-1] == "1 file(s): 1 equal, 0 different, 0 missing, 0 extra"
