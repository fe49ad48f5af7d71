"""Hostile and broken IR files: ``irtool validate``, ``irtool run`` and ``irtool.load``.

Each file is a real IR (OpenVINO's ``test_loop11``, which has Consts in the
Loop body) turned hostile: an external entity pointing at a local secret
(XXE, in UTF-8, in UTF-16 and UTF-32 with and without a byte order mark, in UTF-7
which only the parser decodes), a billion-laughs entity bomb, a 0-byte or
truncated .bin, an absurd dimension, malformed or non-XML bytes, nesting far
beyond any IR, a missing file. The contract for all of them:

* ``irtool validate``: diagnostics ``file:line: error: CODE ...`` on stdout, exit 1;
* ``irtool run``: one line on stderr, exit 1, and no output file;
* ``irtool.load``: an ``IRToolError`` with a one-line message;
* never a traceback, never the secret's content, never a hang.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import irtool
from irtool.cli import main as cli_main

SECRET = "TOP-SECRET-b1e55ed"


def _with_doctype(text: str, doctype: str, use: str) -> str:
    """Put ``doctype`` after the XML declaration and ``use`` (entity references) into the
    Loop's name, where a resolving parser would expand them."""
    text = text.replace('<?xml version="1.0"?>', f'<?xml version="1.0"?>\n{doctype}', 1)
    return text.replace('name="res_scan" type="Loop"', f'name="{use}" type="Loop"', 1)


def _xxe(text: str, secret: Path) -> str:
    return _with_doctype(text, f'<!DOCTYPE net [<!ENTITY x SYSTEM "file://{secret}">]>', "&x;")


def _billion_laughs(text: str, secret: Path) -> str:
    ents = ['<!ENTITY l0 "lol">'] + [
        f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10)]
    return _with_doctype(text, f"<!DOCTYPE net [{''.join(ents)}]>", "&l9;")


def _absurd_dim(text: str, secret: Path) -> str:
    huge = str(10**30)
    text = text.replace('<data shape="1" element_type="f32" />',
                        f'<data shape="{huge}" element_type="f32" />', 1)
    return text.replace("<dim>1</dim>", f"<dim>{huge}</dim>", 1)


def _deep(text: str, secret: Path) -> str:
    return text.replace("<layers>", "<layers>" + "<a>" * 100_000 + "</a>" * 100_000, 1)


# name -> (how to make the .xml text from the good one, how to make the .bin from the
# good one (None: no .bin change), the code `irtool validate` must report)
Make = Callable[[str, Path], str]
HOSTILE: dict[str, tuple[Make | None, Callable[[bytes], bytes] | None, str]] = {
    "xxe": (_xxe, None, "XML_DTD"),
    "xxe_utf16": (_xxe, None, "XML_DTD"),  # written in the encodings of ENCODED below
    "xxe_utf16be_unmarked": (_xxe, None, "XML_DTD"),
    "xxe_utf32le_unmarked": (_xxe, None, "XML_DTD"),
    "xxe_utf7": (_xxe, None, "XML_DTD"),
    "billion_laughs": (_billion_laughs, None, "XML_DTD"),
    "empty_bin": (None, lambda b: b"", "CONST_OUT_OF_BOUNDS"),
    "short_bin": (None, lambda b: b[:10], "CONST_OUT_OF_BOUNDS"),
    "absurd_dim": (_absurd_dim, None, "BAD_DIM"),
    "malformed": (lambda t, s: t[: len(t) * 2 // 3], None, "XML_MALFORMED"),
    "not_xml": (lambda t, s: "\x00\x01PK\x03\x04 binary junk \xff", None, "XML_MALFORMED"),
    "deep_nesting": (_deep, None, "XML_MALFORMED"),
    "missing": (None, None, "FILE_UNREADABLE"),
}
# name -> (Python's codec, the encoding the XML declaration names); "utf-16" writes a
# byte order mark, the others none. In UTF-7 the "<!" of the declarations is written
# shifted (base64 of UTF-16), which no byte search finds and libxml2 decodes.
ENCODED = {"xxe_utf16": ("utf-16", "UTF-16"), "xxe_utf16be_unmarked": ("utf-16-be", "UTF-16"),
           "xxe_utf32le_unmarked": ("utf-32-le", "UTF-32"), "xxe_utf7": ("utf-7", "UTF-7")}


@pytest.fixture(scope="module")
def hostile(ov_control_flow_irs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
            ) -> dict[str, Path]:
    """name -> the hostile .xml (with its .bin beside it)."""
    good = ov_control_flow_irs["test_loop11"]
    root = tmp_path_factory.mktemp("hostile")
    secret = root / "secret.txt"
    secret.write_text(SECRET)
    text, weights = good.read_text(), good.with_suffix(".bin").read_bytes()
    files = {}
    for name, (make_xml, make_bin, _) in HOSTILE.items():
        xml = root / name / "model.xml"
        xml.parent.mkdir()
        files[name] = xml
        if name == "missing":
            continue
        body = make_xml(text, secret) if make_xml else text
        if name in ENCODED:
            codec, declared = ENCODED[name]
            data = body.replace('<?xml version="1.0"?>',
                                f'<?xml version="1.0" encoding="{declared}"?>', 1).encode(codec)
            xml.write_bytes(data.replace(b"<!", b"+ADwAIQ-") if codec == "utf-7" else data)
        else:
            xml.write_text(body, encoding="utf-8", errors="surrogateescape")
        xml.with_suffix(".bin").write_bytes(make_bin(weights) if make_bin else weights)
    return files


@pytest.fixture(scope="module")
def feed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Good inputs for test_loop11, so that only the IR can be at fault."""
    path = tmp_path_factory.mktemp("feed") / "inputs.npz"
    np.savez(path, trip_count=np.array(3, np.int64), cond=np.array(True),
             y=np.array([1.0], np.float32))
    return path


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "irtool", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def _no_leak(*texts: str) -> None:
    for text in texts:
        assert SECRET not in text
        assert "Traceback" not in text and "internal error" not in text


def test_good_file_runs(ov_control_flow_irs: dict[str, Path], feed: Path,
                        tmp_path: Path) -> None:
    """The unbroken source: validate and run succeed (so failures below are the breakage)."""
    good = ov_control_flow_irs["test_loop11"]
    assert [d for d in irtool.validate(good) if d.severity == "error"] == []
    out = tmp_path / "out.npz"
    proc = _cli("run", good, feed, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert out.exists()


def test_validate_reports_every_hostile_file(hostile: dict[str, Path]) -> None:
    proc = _cli("validate", *hostile.values())
    assert proc.returncode == 1
    _no_leak(proc.stdout, proc.stderr)
    assert len(proc.stderr.splitlines()) == 1  # the summary line
    for name, xml in hostile.items():
        code = HOSTILE[name][2]
        assert re.search(rf"^{re.escape(str(xml))}(:\d+)?: error: {code}\b", proc.stdout,
                         re.MULTILINE), \
            f"{name}: no {code} in\n{proc.stdout}"


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_validate_api_collects_instead_of_raising(name: str, hostile: dict[str, Path]) -> None:
    found = irtool.validate(hostile[name])
    assert HOSTILE[name][2] in {d.code for d in found}
    _no_leak(*(d.format() for d in found))


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_load_raises_one_line_irtoolerror(name: str, hostile: dict[str, Path]) -> None:
    with pytest.raises(irtool.IRToolError) as info:
        irtool.load(hostile[name])
    message = str(info.value)
    assert "\n" not in message and str(hostile[name]) in message
    _no_leak(message)


def _assert_run_failed(rc: int, stdout: str, stderr: str, out: Path) -> None:
    assert rc == 1, stdout + stderr
    assert stdout == ""
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("irtool run: "), stderr
    _no_leak(stderr)
    assert not out.exists()
    assert list(out.parent.iterdir()) == []  # no temporary left behind either


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_run_fails_cleanly_and_writes_nothing(name: str, hostile: dict[str, Path], feed: Path,
                                              tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """``irtool run`` (the CLI entry point, in this process) on every hostile file."""
    out = tmp_path / "out.npz"
    rc = cli_main(["run", str(hostile[name]), str(feed), "-o", str(out)])
    captured = capsys.readouterr()
    _assert_run_failed(rc, captured.out, captured.err, out)


@pytest.mark.parametrize("name", ["xxe", "xxe_utf7", "billion_laughs", "short_bin",
                                  "absurd_dim", "deep_nesting"])
def test_run_subprocess_fails_cleanly(name: str, hostile: dict[str, Path], feed: Path,
                                      tmp_path: Path) -> None:
    """The same as a real process: exit status 1, one stderr line, no traceback."""
    out = tmp_path / "out.npz"
    proc = _cli("run", hostile[name], feed, "-o", out)
    _assert_run_failed(proc.returncode, proc.stdout, proc.stderr, out)


def test_run_on_openvino_refuses_what_validate_rejects(ov_control_flow_irs: dict[str, Path],
                                                       feed: Path, tmp_path: Path) -> None:
    """An IR without <layers> is an empty model to OpenVINO, which "ran" it (no outputs); a
    fuzz case. ``run --backend openvino`` goes through the gate as ``run`` does."""
    import openvino as ov

    text = ov_control_flow_irs["test_loop11"].read_text()
    start, end = text.index("\t<layers>"), text.rindex("\t</layers>") + len("\t</layers>")
    xml = tmp_path / "no_layers.xml"
    xml.write_text(text[:start] + text[end:])
    xml.with_suffix(".bin").write_bytes(ov_control_flow_irs["test_loop11"].with_suffix(".bin")
                                        .read_bytes())
    assert len(ov.Core().read_model(str(xml)).outputs) == 0  # OpenVINO takes it
    out = tmp_path / "out" / "o.npz"
    proc = _cli("run", xml, feed, "-o", out, "--backend", "openvino")
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith(f"irtool run: {xml}:") and "XSD" in proc.stderr
    assert proc.stderr.count("\n") == 1 and not out.exists()
