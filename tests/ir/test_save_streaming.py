"""``save`` streams the weights: those read from an ONNX file are copied from it in
chunks, and the record binding the ``.xml`` to its ``.bin`` is computed on the way.

Expected bytes come from ``onnx.load`` of the source model, expected digests from
hashlib/zlib by hand; peak memory is counted by tracemalloc in a child process.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import onnx
import pytest
from lxml import etree
from onnx import helper, numpy_helper
from support.conversion import vi

import irtool


def _chain(path: Path, loops: int, width: int) -> dict[str, np.ndarray]:
    """A chain of Loops whose bodies read a captured f32[width, width] weight each (two
    of them equal, to be stored once); returns the weights by name."""
    rng = np.random.default_rng(0)
    weights = {f"W{i}": (rng.standard_normal((width, width)) / width).astype(np.float32)
               for i in range(loops)}
    weights[f"W{loops - 1}"] = weights["W0"].copy()
    nodes, x = [], "x"
    for i in range(loops):
        body = helper.make_graph(
            [helper.make_node("Identity", ["c_in"], ["c_out"]),
             helper.make_node("MatMul", ["h_in", f"W{i}"], ["m"]),
             helper.make_node("Tanh", ["m"], ["h_out"])], f"body{i}",
            [vi("it", np.int64, []), vi("c_in", np.bool_, []),
             vi("h_in", np.float32, [1, width])],
            [vi("c_out", np.bool_, []), vi("h_out", np.float32, [1, width])])
        out = "y" if i == loops - 1 else f"y{i}"
        nodes.append(helper.make_node("Loop", ["trips", "cond", x], [out], body=body))
        x = out
    graph = helper.make_graph(
        nodes, "chain", [vi("x", np.float32, [1, width])], [vi("y", np.float32, [1, width])],
        [numpy_helper.from_array(np.array(2, np.int64), "trips"),
         numpy_helper.from_array(np.array(True), "cond"),
         *(numpy_helper.from_array(w, n) for n, w in weights.items())])
    onnx.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
                    path)
    return weights


def _consts(xml: Path) -> list[tuple[str, int, int]]:
    """(name, offset, size) of every Const in the IR file, bodies included."""
    root = etree.parse(str(xml)).getroot()
    return [(layer.get("name"), int(data.get("offset")), int(data.get("size")))
            for layer in root.iter("layer") if layer.get("type") == "Const"
            for data in layer.iter("data")]


def test_saved_weights_are_the_onnx_tensors_stored_once(tmp_path: Path) -> None:
    src = tmp_path / "m.onnx"
    weights = _chain(src, loops=4, width=64)
    xml = irtool.save(irtool.convert(src), tmp_path / "out" / "m.xml")
    data = xml.with_suffix(".bin").read_bytes()
    by_name = {name: (offset, size) for name, offset, size in _consts(xml)}
    for name, array in weights.items():
        offset, size = by_name[name]
        assert data[offset:offset + size] == array.tobytes(), name
    assert by_name["W3"] == by_name["W0"]  # equal payloads stored once
    assert len(data) == sum(w.nbytes for w in weights.values()) - weights["W0"].nbytes \
        + 8 + 1  # trips (i64) and cond (bool)
    assert irtool.validate(xml) == []


def test_record_is_a_crc32_of_the_bin_and_catches_another_bin(tmp_path: Path) -> None:
    src = tmp_path / "m.onnx"
    _chain(src, loops=3, width=32)
    xml = irtool.save(irtool.convert(src), tmp_path / "out" / "m.xml")
    data = xml.with_suffix(".bin").read_bytes()
    text = xml.read_text()
    assert f'<data_crc32 value="{zlib.crc32(data):08x}"/>' in text
    changed = bytearray(data)
    changed[len(data) // 2] ^= 1
    xml.with_suffix(".bin").write_bytes(bytes(changed))
    assert [d.code for d in irtool.validate(xml)] == ["BIN_MISMATCH"]


def test_record_of_an_earlier_irtool_is_still_checked(tmp_path: Path) -> None:
    """Records written before held data_sha256: every Const's size (8 bytes, little
    endian) and bytes, in document order."""
    src = tmp_path / "m.onnx"
    _chain(src, loops=3, width=32)
    xml = irtool.save(irtool.convert(src), tmp_path / "out" / "m.xml")
    data = xml.with_suffix(".bin").read_bytes()
    old = hashlib.sha256()
    for _, offset, size in _consts(xml):
        old.update(size.to_bytes(8, "little"))
        old.update(data[offset:offset + size])
    text = re.sub(r'<data_crc32 value="[0-9a-f]+"/>',
                  f'<data_sha256 value="{old.hexdigest()}"/>', xml.read_text())
    assert "data_sha256" in text
    xml.write_text(text)
    assert irtool.validate(xml) == []
    changed = bytearray(data)
    changed[-20] ^= 1
    xml.with_suffix(".bin").write_bytes(bytes(changed))
    assert [d.code for d in irtool.validate(xml)] == ["BIN_MISMATCH"]


def test_source_file_cut_short_before_save_is_an_error_and_writes_nothing(
        tmp_path: Path) -> None:
    src = tmp_path / "m.onnx"
    _chain(src, loops=3, width=64)
    model = irtool.convert(src)
    with open(src, "r+b") as f:
        f.truncate(1000)
    with pytest.raises(irtool.IRToolError, match=re.escape(str(src))):
        irtool.save(model, tmp_path / "out" / "m.xml")
    assert not (tmp_path / "out").exists()


def test_source_file_cut_short_while_saving_is_an_error_and_writes_nothing(
        tmp_path: Path) -> None:
    """The .bin is streamed from the source after the XML tree is built: a source cut
    short in between is refused by name when the copy runs out of bytes."""
    from irtool.ir.serde import xml_writer

    src = tmp_path / "m.onnx"
    _chain(src, loops=3, width=64)
    root, weights = xml_writer._tree(irtool.convert(src))  # the sizes are checked here
    with open(src, "r+b") as f:
        f.truncate(1000)
    out = tmp_path / "out"
    with pytest.raises(irtool.IRToolError, match="ends before the weights it held") as err:
        xml_writer.write_ir_files(out / "m.xml", out / "m.bin", root, weights)
    assert str(src) in str(err.value)
    assert not out.exists()


PEAK = r'''
import json, sys, tracemalloc
import irtool
irtool.convert(sys.argv[1])  # once first: what it imports is not the weights
tracemalloc.start()
irtool.save(irtool.convert(sys.argv[1]), sys.argv[2])
print(json.dumps(tracemalloc.get_traced_memory()[1]))
'''


def test_convert_and_save_hold_no_copy_of_the_weights(tmp_path: Path) -> None:
    """A 48 MiB model: the Python heap (tracemalloc: numpy arrays and bytes included, the
    mapped file not) stays a small part of the weights through convert and save (it held
    them all when the weights were read with onnx.load)."""
    src = tmp_path / "m.onnx"
    weights = _chain(src, loops=12, width=1024)
    total = sum(w.nbytes for w in weights.values())
    done = subprocess.run([sys.executable, "-c", PEAK, str(src), str(tmp_path / "o.xml")],
                          capture_output=True, text=True, check=True)
    peak = json.loads(done.stdout.strip().splitlines()[-1])
    assert peak < total / 8, f"peak {peak / 2**20:.1f} MiB for {total / 2**20:.0f} MiB"
