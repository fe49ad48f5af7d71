"""Low-precision weights and types against OpenVINO: constants of every packed or 8/16-bit
float type, the decompression subgraphs NNCF writes, and Convert to those types.

Every model is built with OpenVINO's Python API and saved with ``ov.save_model``, so the
.bin holds the bytes OpenVINO packs; the expected values are OpenVINO's CPU plugin's (f32
inference precision), run on the same file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest
from support.compare import assert_matmul_close

import irtool
from irtool.ir import round_trip_difference

CPU = {"INFERENCE_PRECISION_HINT": "f32"}
N, GROUPS, GROUP_SIZE = 8, 4, 16


def _openvino(xml: Path, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
    request = ov.Core().compile_model(str(xml), "CPU", CPU).create_infer_request()
    request.infer(feed)
    return [np.asarray(request.get_output_tensor(i).data).copy()
            for i in range(len(request.model_outputs))]


def _irtool(xml: Path, feed: dict[str, np.ndarray], optimize: bool = True) -> list[np.ndarray]:
    return list(irtool.run(xml, feed, optimize=optimize).values())


def _save(model: ov.Model, path: Path) -> Path:
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


def _weights(type_name: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Values for a Const of ``type_name``: its integer range, or floats OpenVINO rounds."""
    if type_name in ("u4", "u8"):
        return rng.integers(0, 16 if type_name == "u4" else 256, size=shape).astype(np.float32)
    if type_name in ("i4", "i8"):
        return rng.integers(-8, 8, size=shape).astype(np.float32)
    if type_name == "f8e8m0":  # powers of two away from the subnormal 2^-127
        return (2.0 ** rng.integers(-20, 20, size=shape)).astype(np.float32)
    return (rng.standard_normal(shape) * 2).astype(np.float32)


LOW_TYPES = ["u4", "i4", "nf4", "f4e2m1", "f8e4m3", "f8e5m2", "f8e8m0", "bf16", "f16", "u8",
             "i8", "u6", "u3", "u2", "u1"]


@pytest.mark.parametrize("type_name", LOW_TYPES)
def test_constant_of_low_precision_type(type_name: str, tmp_path: Path) -> None:
    """Const(type) -> Convert(f32) * x: irtool unpacks the bytes OpenVINO packed (u1 most
    significant bit first, 2- and 4-bit types low bits first, u3 and u6 split into low and
    high bits, nf4 through its table) to
    exactly OpenVINO's values, and load + save keeps the .bin byte for byte. u3 and u6 come
    in groups of 3 bytes (8 or 4 elements): 36 u3 elements end mid-group."""
    rng = np.random.default_rng(7)
    shape = (4, 9)  # odd element count per row: packed types end mid-byte
    if type_name == "u1":
        values = rng.integers(0, 2, size=shape).astype(np.float32)
    elif type_name in ("u2", "u3", "u6"):
        bits = int(type_name[1])
        values = rng.integers(0, 2**bits, size=shape).astype(np.float32)
    elif type_name == "nf4":  # every code, from -1 to 1
        values = np.linspace(-1, 1, 36, dtype=np.float32).reshape(shape)
    else:
        values = _weights(type_name, shape, rng)
    const = ops.constant(values, dtype=getattr(ov.Type, type_name))
    x = ops.parameter(list(shape), ov.Type.f32, name="x")
    decompressed = ops.convert(const, ov.Type.f32)
    model = ov.Model([ops.multiply(decompressed, x), decompressed], [x], "low")
    xml = _save(model, tmp_path / f"{type_name}.xml")
    feed = {"x": rng.standard_normal(shape).astype(np.float32)}
    expected = _openvino(xml, feed)
    actual = _irtool(xml, feed)
    for got, want in zip(actual, expected):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    copy = tmp_path / "copy" / xml.name
    irtool.save(irtool.load(xml), copy)
    assert round_trip_difference(xml, copy) is None


def _decompression_model(weight_type: str, zero_point: bool, scale_type: str,
                         rng: np.random.Generator) -> ov.Model:
    """A MatMul on group-wise compressed weights, the subgraph NNCF writes::

        Const(w) -> Convert(f16) [- Convert(Const(zp))] * scale -> Reshape -> Convert(f32)
    """
    weight = ops.constant(_weights(weight_type, (N, GROUPS, GROUP_SIZE), rng),
                          dtype=getattr(ov.Type, weight_type))
    w = ops.convert(weight, ov.Type.f16)
    if zero_point:
        zp = ops.constant(_weights(weight_type, (N, GROUPS, 1), rng),
                          dtype=getattr(ov.Type, weight_type))
        w = ops.subtract(w, ops.convert(zp, ov.Type.f16))
    if scale_type == "f8e8m0":  # mxfp4: power-of-two scales
        scale = ops.convert(ops.constant(2.0 ** rng.integers(-6, 2, size=(N, GROUPS, 1)),
                                         dtype=ov.Type.f8e8m0), ov.Type.f16)
    else:
        scale = ops.constant(rng.random((N, GROUPS, 1)) * 0.1 + 0.01, dtype=ov.Type.f16)
    w = ops.multiply(w, scale)
    w = ops.reshape(w, ops.constant(np.array([N, GROUPS * GROUP_SIZE], np.int64)), False)
    w = ops.convert(w, ov.Type.f32)
    x = ops.parameter([3, GROUPS * GROUP_SIZE], ov.Type.f32, name="x")
    return ov.Model([ops.matmul(x, w, False, True), w], [x], "decompression")


@pytest.mark.parametrize("weight_type, zero_point, scale_type", [
    ("u8", True, "f16"),  # int8 asymmetric
    ("i8", False, "f16"),  # int8 symmetric
    ("u4", True, "f16"),  # int4 asymmetric, group-wise
    ("i4", False, "f16"),  # int4 symmetric
    ("nf4", False, "f16"),
    ("f4e2m1", False, "f8e8m0"),  # mxfp4
    ("f8e4m3", False, "f16"),
    ("f8e5m2", False, "f16"),
])
@pytest.mark.parametrize("optimize", [True, False])
def test_decompression_subgraph_equals_openvino(weight_type: str, zero_point: bool,
                                                scale_type: str, optimize: bool,
                                                tmp_path: Path) -> None:
    """OpenVINO's CPU plugin computes ``(w - zp) * scale`` in f32 from the exact values,
    not rounding each f16 step; irtool gives the same weights bit for bit, and both
    MatMuls are that product up to summation order. That is semantics, not an
    optimisation: ``optimize=False`` computes the same."""
    rng = np.random.default_rng(3)
    xml = _save(_decompression_model(weight_type, zero_point, scale_type, rng),
                tmp_path / "decompression.xml")
    feed = {"x": rng.standard_normal((3, GROUPS * GROUP_SIZE)).astype(np.float32)}
    expected = _openvino(xml, feed)
    actual = _irtool(xml, feed, optimize)
    np.testing.assert_array_equal(actual[1], expected[1])  # the decompressed weights
    # The MatMul: OpenVINO's and numpy's kernels sum in orders that depend on the CPU.
    assert_matmul_close(actual[0], feed["x"], expected[1], "MatMul", transpose_b=True)
    assert_matmul_close(expected[0], feed["x"], expected[1], "OpenVINO's MatMul",
                        transpose_b=True)


def _convert_to(type_name: str, tmp_path: Path, x: np.ndarray) -> tuple[np.ndarray, ...]:
    p = ops.parameter([x.size], ov.Type.f32, name="x")
    model = ov.Model([ops.convert(ops.convert(p, getattr(ov.Type, type_name)), ov.Type.f32)],
                     [p], "convert")
    xml = _save(model, tmp_path / f"convert_{type_name}.xml")
    return _irtool(xml, {"x": x})[0], _openvino(xml, {"x": x})[0]


SPECIAL = np.array([0, -0.0, 1, -1, 0.1, 3.3, 447, 449, 480, 500, 1e4, -1e4, 57344, 60000, 1e6,
                    np.inf, -np.inf, np.nan, 1e-3, 1e-6, 1e-9, 5.5, 0.3, 0.75, 1.5, 3.0, 2.5,
                    1.5 * 2.0**-127, 2.0**-127, 2.0**126 * 1.5, 2.0**127 * 1.5], dtype=np.float32)


@pytest.mark.parametrize("type_name", ["f8e4m3", "f8e5m2", "f8e8m0", "f4e2m1", "nf4"])
def test_convert_to_low_precision_rounds_as_openvino(type_name: str, tmp_path: Path) -> None:
    """f32 -> type -> f32: rounding, saturation, NaN, infinities and subnormals as
    OpenVINO's CPU plugin gives them (f8e8m0 rounds its exponent half to even and
    saturates to 2^127; nf4 picks the nearest of its 16 values)."""
    rng = np.random.default_rng(11)
    spread = (np.sign(rng.standard_normal(2000))
              * 2.0 ** rng.uniform(-30, 20, 2000)).astype(np.float32)
    x = np.concatenate([SPECIAL, spread, rng.uniform(-1.2, 1.2, 500).astype(np.float32)])
    actual, expected = _convert_to(type_name, tmp_path, x)
    same = (actual == expected) | (np.isnan(actual) & np.isnan(expected))
    assert same.all(), list(zip(x[~same][:5], actual[~same][:5], expected[~same][:5]))


def test_convert_to_f8e8m0_by_hand() -> None:
    """The f8e8m0 rule, from the OCP MX format (a biased exponent, 2^(code-127)) and
    OpenVINO's choices for what it cannot hold: values hand-computed."""
    from irtool.opset.math_convert import to_f8e8m0_codes

    x = np.array([1.0, 2.0, 0.5, 1.5, 3.0, 0.75, 1.7, 0.0, -4.0, np.inf, np.nan, 2.0**-127,
                  1.6 * 2.0**-127, 3e38], dtype=np.float32)
    # 1.5 = 2^0 * 1.5 ties to the even code 128 (2^1); 3.0 ties to 128 (2^1); 0.75 to 126.
    assert to_f8e8m0_codes(x).tolist() == [127, 128, 126, 128, 128, 126, 128, 0, 0, 254, 255,
                                           0, 1, 254]


def test_raw_bits_inputs_on_both_backends(tmp_path: Path) -> None:
    """A bf16 / f8e4m3 / i4 input given as the raw ``|V2`` / ``|V1`` entries an npz holds is
    read as the declared type by irtool's runtime and by ``backend="openvino"``."""
    import ml_dtypes

    bf16 = ops.parameter([2, 3], ov.Type.bf16, name="b")
    f8 = ops.parameter([2, 3], ov.Type.f8e4m3, name="f")
    i4 = ops.parameter([2, 3], ov.Type.i4, name="i")
    out = ops.add(ops.add(ops.convert(bf16, ov.Type.f32), ops.convert(f8, ov.Type.f32)),
                  ops.convert(i4, ov.Type.f32))
    xml = _save(ov.Model([out], [bf16, f8, i4], "raw"), tmp_path / "raw.xml")
    rng = np.random.default_rng(2)
    b = rng.standard_normal((2, 3)).astype(ml_dtypes.bfloat16)
    f = rng.standard_normal((2, 3)).astype(ml_dtypes.float8_e4m3fn)
    i = rng.integers(-8, 8, (2, 3)).astype(ml_dtypes.int4)
    # by hand: each exact in f32
    expected = b.astype(np.float32) + f.astype(np.float32) + i.astype(np.float32)
    raw = {"b": b.view("V2"), "f": f.view("V1"), "i": i.view("V1")}
    for backend in ("irtool", "openvino"):
        got = next(iter(irtool.run(xml, raw, backend=backend).values()))
        np.testing.assert_array_equal(got, expected, err_msg=backend)


def test_unknown_element_type_is_one_line(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    x = ops.parameter([2], ov.Type.f32, name="x")
    xml = _save(ov.Model([ops.multiply(x, ops.constant(np.ones(2, np.float32)))], [x], "m"),
                tmp_path / "m.xml")
    text = xml.read_text()
    assert 'element_type="f32" shape="2"' in text
    xml.write_text(text.replace('element_type="f32" shape="2"', 'element_type="f5e2m2" shape="2"'))
    env = {**os.environ, "IRTOOL_DEBUG": ""}
    done = subprocess.run([sys.executable, "-m", "irtool", "validate", str(xml)],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    named = [line for line in done.stdout.splitlines() if "f5e2m2" in line]
    assert len(named) == 1 and named[0].startswith(f"{xml}:") and "ELEMENT_TYPE" in named[0]
    done = subprocess.run([sys.executable, "-m", "irtool", "run", str(xml)],
                          capture_output=True, text=True, env=env)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1
    assert len(lines) == 1 and "f5e2m2" in lines[0] and f"{xml}:" in lines[0], lines
