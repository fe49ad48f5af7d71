"""String tensors against OpenVINO: ``string`` Consts as OpenVINO packs them in the .bin,
StringTensorUnpack-15 and StringTensorPack-15, and npz string arrays through ``irtool run``.

Models are built with OpenVINO's Python API and saved with ``ov.save_model``; expected
values come from OpenVINO (its CPU plugin, or its reader for Const data, since the CPU
plugin cannot hold a string Const) or are written out by hand.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset15 as ops
import pytest

import irtool
from irtool.core.errors import IRToolError
from irtool.ir import round_trip_difference

WORDS = np.array([["ab", "", "héllo"], ["x", "yz", "日本"]])


def _string_const_model(tmp_path: Path) -> Path:
    const = ov.op.Constant(ov.Tensor(WORDS))
    begins, ends, symbols = ops.string_tensor_unpack(const).outputs()
    x = ops.parameter([1], ov.Type.i32, name="x")
    model = ov.Model([begins, ends, symbols, ops.string_tensor_pack(begins, ends, symbols)
                      .output(0), ops.add(x, x).output(0)], [x], "strings")
    xml = tmp_path / "strings.xml"
    ov.save_model(model, str(xml))
    return xml


def test_string_const_is_read_as_openvino_packs_it(tmp_path: Path) -> None:
    """The .bin layout is i32 count, count + 1 i32 offsets from 0, then the UTF-8 bytes
    (checked by hand below); irtool reads the values OpenVINO's reader reads, unpacks and
    repacks them like the spec says, and writes the .bin back byte for byte."""
    xml = _string_const_model(tmp_path)
    data = xml.with_suffix(".bin").read_bytes()
    encoded = [w.encode() for w in WORDS.ravel()]
    offsets = np.cumsum([0] + [len(w) for w in encoded]).tolist()
    assert data[:4 * 8] == struct.pack("<8i", 6, *offsets)
    assert data[4 * 8:4 * 8 + offsets[-1]] == b"".join(encoded)

    core_const = next(op for op in ov.Core().read_model(str(xml)).get_ordered_ops()
                      if op.get_type_name() == "Constant" and
                      op.get_element_type() == ov.Type.string)
    model = irtool.load(xml)
    const = next(layer for layer in model.graph.layers
                 if layer.type == "Const" and layer.attrs["element_type"] == "string")
    assert const.const_value().ravel().tolist() == core_const.get_value_strings()

    outputs = list(irtool.run(model, {"x": np.array([1], np.int32)}).values())
    assert outputs[0].tolist() == np.reshape(offsets[:-1], (2, 3)).tolist()
    assert outputs[1].tolist() == np.reshape(offsets[1:], (2, 3)).tolist()
    assert bytes(outputs[2]) == b"".join(encoded)
    assert outputs[3].tolist() == WORDS.tolist()

    copy = tmp_path / "copy" / xml.name
    irtool.save(model, copy)
    assert round_trip_difference(xml, copy) is None


def _string_ops_model(tmp_path: Path) -> Path:
    text = ops.parameter([-1], ov.Type.string, name="text")
    begins = ops.parameter([-1], ov.Type.i32, name="begins")
    ends = ops.parameter([-1], ov.Type.i32, name="ends")
    symbols = ops.parameter([-1], ov.Type.u8, name="symbols")
    unpacked = ops.string_tensor_unpack(text).outputs()
    packed = ops.string_tensor_pack(begins, ends, symbols).output(0)
    repacked = ops.string_tensor_pack(*unpacked).output(0)
    model = ov.Model([*unpacked, packed, repacked], [text, begins, ends, symbols], "ops")
    for output, name in zip(model.outputs, ["b", "e", "s", "packed", "repacked"]):
        output.get_tensor().set_names({name})
    xml = tmp_path / "string_ops.xml"
    ov.save_model(model, str(xml))
    return xml


FEED = {"text": np.array(["q", "", "rs", "héllo", "日本語"]),
        "begins": np.array([0, 2, 2, 3], np.int32), "ends": np.array([2, 2, 4, 5], np.int32),
        "symbols": np.frombuffer(b"abcde", np.uint8).copy()}


def _openvino(xml: Path, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    compiled = ov.Core().compile_model(str(xml), "CPU")
    result = compiled(feed)
    return {out.get_any_name(): np.asarray(result[out]) for out in compiled.outputs}


def test_string_tensor_unpack_and_pack_equal_openvino(tmp_path: Path) -> None:
    xml = _string_ops_model(tmp_path)
    expected = _openvino(xml, FEED)
    actual = irtool.run(xml, FEED)
    assert sorted(actual) == sorted(expected)
    for name, want in expected.items():
        got = actual[name]
        assert got.shape == want.shape, name
        if want.dtype.kind in "USO":
            assert got.tolist() == want.tolist(), name
        else:
            assert got.dtype == want.dtype, name
            np.testing.assert_array_equal(got, want, err_msg=name)
    assert actual["repacked"].tolist() == FEED["text"].tolist()


def test_pack_of_a_bad_range_names_the_layer(tmp_path: Path) -> None:
    xml = _string_ops_model(tmp_path)
    feed = {**FEED, "begins": np.array([0, 3, 3, 3], np.int32)}  # element 1: [3, 2)
    with pytest.raises(IRToolError, match=r"StringTensorPack.*element 1: \[3, 2\)"):
        irtool.run(xml, feed)
    feed = {**FEED, "ends": np.array([2, 1, 4, 5], np.int32)}
    with pytest.raises(IRToolError, match=r"StringTensorPack.*ends are not in ascending order"):
        irtool.run(xml, feed)


def test_cli_reads_and_writes_npz_string_arrays(tmp_path: Path) -> None:
    """``irtool run`` takes unicode arrays from an npz and writes string outputs as
    unicode arrays that load back without pickle."""
    xml = _string_ops_model(tmp_path)
    inputs, out = tmp_path / "in.npz", tmp_path / "out.npz"
    np.savez(inputs, **FEED)
    done = subprocess.run([sys.executable, "-m", "irtool", "run", str(xml), str(inputs),
                           "-o", str(out)], capture_output=True, text=True,
                          env={**os.environ, "IRTOOL_DEBUG": ""})
    assert done.returncode == 0, done.stderr
    expected = _openvino(xml, FEED)
    with np.load(out, allow_pickle=False) as data:
        assert data["packed"].dtype.kind == "U"
        assert data["packed"].tolist() == expected["packed"].tolist()
        assert data["repacked"].tolist() == FEED["text"].tolist()


def _corrupt(xml: Path, header: bytes) -> None:
    bin_path = xml.with_suffix(".bin")
    data = bin_path.read_bytes()
    bin_path.write_bytes(header + data[len(header):])


@pytest.mark.parametrize("header, message", [
    (struct.pack("<i", 5), "holds 5 strings, the shape 6"),
    (struct.pack("<3i", 6, 0, 9), "offsets do not start at 0 and grow"),
    (struct.pack("<8i", 6, 0, 2, 2, 8, 9, 11, 400), "past its"),
])
def test_string_const_with_corrupt_layout_is_one_line(tmp_path: Path, header: bytes,
                                                      message: str) -> None:
    xml = _string_const_model(tmp_path)
    _corrupt(xml, header)
    done = subprocess.run([sys.executable, "-m", "irtool", "validate", str(xml)],
                          capture_output=True, text=True, env={**os.environ, "IRTOOL_DEBUG": ""})
    assert done.returncode == 1
    errors = [line for line in done.stdout.splitlines() if "CONST_DATA" in line]
    assert len(errors) == 1 and message in errors[0] and "Traceback" not in done.stderr
    assert f"{xml}:" in errors[0]
    done = subprocess.run([sys.executable, "-m", "irtool", "run", str(xml)],
                          capture_output=True, text=True, env={**os.environ, "IRTOOL_DEBUG": ""})
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1
    assert message in done.stderr
