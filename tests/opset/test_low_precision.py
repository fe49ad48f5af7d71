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
from support.quirks import QuirkRecorder

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
    assert [a.dtype for a in actual] == [e.dtype for e in expected]
    np.testing.assert_array_equal(actual[1], expected[1])  # the decompressed weights
    # The MatMul: OpenVINO's and numpy's kernels sum in orders that depend on the CPU.
    assert_matmul_close(actual[0], feed["x"], expected[1], "MatMul", transpose_b=True)
    assert_matmul_close(expected[0], feed["x"], expected[1], "OpenVINO's MatMul",
                        transpose_b=True)


def _chain_variant(case: str, rng: np.random.Generator) -> tuple[ov.Node, list, dict]:
    """The decompressed weight of ``case`` (u8 weights [N, GROUP_SIZE] unless said), the
    extra Parameters it reads and their feeds."""
    weight = rng.integers(0, 256, size=(N, GROUP_SIZE)).astype(np.float32)
    scale = rng.random((N, 1)) * 0.1 + 0.01

    def f16(value: np.ndarray) -> ov.Node:
        return ops.constant(value, dtype=ov.Type.f16)

    w = ops.convert(ops.constant(weight, dtype=ov.Type.u8), ov.Type.f16)
    if case == "no scale":
        return ops.convert(w, ov.Type.f32), [], {}
    if case == "scale first":
        return ops.convert(ops.multiply(f16(scale), w), ov.Type.f32), [], {}
    if case == "zero point first, a constant":
        shifted = ops.subtract(f16(np.full((N, 1), 100.0)), w)
        return ops.convert(ops.multiply(shifted, f16(scale)), ov.Type.f32), [], {}
    if case == "bf16":
        w = ops.convert(ops.constant(weight, dtype=ov.Type.u8), ov.Type.bf16)
        scaled = ops.multiply(w, ops.constant(scale, dtype=ov.Type.bf16))
        return ops.convert(scaled, ov.Type.f32), [], {}
    # "squeeze by an axes input": [1, N, 1, GROUP_SIZE] squeezed on axis 2 only
    weight = rng.integers(0, 256, size=(1, N, 1, GROUP_SIZE)).astype(np.float32)
    w = ops.convert(ops.constant(weight, dtype=ov.Type.u8), ov.Type.f16)
    scaled = ops.multiply(w, f16(scale.reshape(1, N, 1, 1)))
    axes = ops.parameter([1], ov.Type.i64, name="axes")
    return (ops.convert(ops.squeeze(scaled, axes), ov.Type.f32), [axes],
            {"axes": np.array([2], np.int64)})


@pytest.mark.parametrize("case", ["no scale", "scale first", "zero point first, a constant",
                                  "bf16", "squeeze by an axes input"])
def test_decompression_variants_equal_openvino(case: str, tmp_path: Path) -> None:
    """More forms of the chain: a Convert to f16 then straight to f32, the scale or a
    constant zero point as the first input, bf16 instead of f16, a Squeeze whose axes come
    at run time (a step of its own: it squeezes axis 2 only). irtool gives OpenVINO's
    weights, type and values."""
    rng = np.random.default_rng(9)
    w, extra, feed = _chain_variant(case, rng)
    x = ops.parameter([3, GROUP_SIZE], ov.Type.f32, name="x")
    xml = _save(ov.Model([ops.matmul(x, w, False, True), w], [x, *extra], "variant"),
                tmp_path / "variant.xml")
    feed["x"] = rng.standard_normal((3, GROUP_SIZE)).astype(np.float32)
    expected = _openvino(xml, feed)
    actual = _irtool(xml, feed)
    assert actual[1].dtype == expected[1].dtype and actual[1].shape == expected[1].shape
    np.testing.assert_array_equal(actual[1], expected[1])


def _f16(value: np.ndarray) -> np.ndarray:
    """``value`` rounded to f16 (to nearest, ties to even), as the spec's ``Convert`` to f16
    and every layer computing in f16 round their result."""
    return np.asarray(value).astype(np.float16)


def _beyond_the_rules(case: str, rng: np.random.Generator
                      ) -> tuple[ov.Node, np.ndarray, np.ndarray]:
    """A chain on constants that the decompression rules (``irtool/passes/decompression.py``)
    do not take: its IR node, its value by the spec (hand numpy: a Convert to f16 rounds,
    and each f16 Subtract, Multiply or Add rounds its result to f16; numpy's f16 arithmetic
    rounds the exact result once) and its value computed in f32 from the f16 inputs."""

    def const(value: np.ndarray, type_name: str = "f16") -> ov.Node:
        return ops.constant(np.asarray(value, np.float32), dtype=getattr(ov.Type, type_name))

    scale = _f16(rng.random((N, 1)) * 0.1 + 0.01)
    weight = rng.integers(0, 256, size=(N, GROUP_SIZE)).astype(np.float32)
    w = ops.convert(const(weight, "u8"), ov.Type.f16)
    if case == "an f32 weight":  # 32 bits: its Convert to f16 rounds, so no chain starts
        source = (rng.standard_normal((N, GROUP_SIZE)) * 50).astype(np.float32)
        node = ops.multiply(ops.convert(ops.constant(source), ov.Type.f16), const(scale))
        return (ops.convert(node, ov.Type.f32), (_f16(source) * scale).astype(np.float32),
                _f16(source).astype(np.float32) * scale.astype(np.float32))
    if case == "a boolean weight, two scales":  # booleans are not numbers the rules take
        bits = rng.integers(0, 2, size=(N, GROUP_SIZE)).astype(bool)
        zp = rng.integers(0, 2, size=(N, 1)).astype(bool)
        other = _f16(rng.random((N, 1)) + 0.5)
        shifted = ops.subtract(ops.convert(ops.constant(bits, dtype=ov.Type.boolean), ov.Type.f16),
                               ops.convert(ops.constant(zp, dtype=ov.Type.boolean), ov.Type.f16))
        node = ops.multiply(ops.multiply(shifted, const(other)), const(scale))
        d = _f16(bits) - _f16(zp)  # -1, 0 or 1: exact
        return (ops.convert(node, ov.Type.f32), ((d * other) * scale).astype(np.float32),
                d.astype(np.float32) * other.astype(np.float32) * scale.astype(np.float32))
    if case == "converted to i32":  # only a Convert to f32 ends a chain
        # f32 products just below an integer that f16 rounds up to it: 163 * 0.0184021 is
        # 2.99954 in f32 and 3 in f16, so truncation gives 3 by the spec, 2 from f32
        pairs = [(163, 0.018402099609375), (157, 0.01910400390625), (137, 0.0218963623046875),
                 (177, 0.0225982666015625), (173, 0.028900146484375), (200, 0.5), (7, 0.25)]
        weight = np.array([[w_] for w_, _ in pairs], np.float32)
        scale = _f16(np.array([[s_] for _, s_ in pairs]))
        node = ops.multiply(ops.convert(const(weight, "u8"), ov.Type.f16), const(scale))
        return (ops.convert(node, ov.Type.i32), np.trunc(_f16(weight) * scale).astype(np.int32),
                np.trunc(weight * scale.astype(np.float32)).astype(np.int32))
    if case == "a bias added after the scale":  # Add is not a step of a chain
        bias = _f16(rng.standard_normal((N, 1)))
        node = ops.add(ops.multiply(w, const(scale)), const(bias))
        return (ops.convert(node, ov.Type.f32), (_f16(weight) * scale + bias).astype(np.float32),
                weight * scale.astype(np.float32) + bias.astype(np.float32))
    # "a scale folded from two constants": a constant, not a chain's, has no f32 value, so
    # neither the Multiply by it (first or second input) nor the one after starts a chain
    first, last = _f16(rng.random((N, 1)) + 0.5), _f16(rng.random((N, 1)) + 0.5)
    node = ops.multiply(ops.multiply(ops.multiply(const(first), const(scale)), w), const(last))
    return (ops.convert(node, ov.Type.f32),
            (((first * scale) * _f16(weight)) * last).astype(np.float32),
            first.astype(np.float32) * scale.astype(np.float32) * weight
            * last.astype(np.float32))


BEYOND_THE_RULES = ["an f32 weight", "a boolean weight, two scales", "converted to i32",
                    "a bias added after the scale", "a scale folded from two constants"]


@pytest.mark.parametrize("case", BEYOND_THE_RULES)
@pytest.mark.parametrize("optimize", [True, False])
def test_chains_beyond_the_rules_keep_the_spec_f16_steps(case: str, optimize: bool,
                                                         tmp_path: Path,
                                                         openvino_quirk: QuirkRecorder) -> None:
    """Beyond the decompression rules irtool computes what the spec says, every f16 step
    rounded (irtool is the reference that judges engines); OpenVINO's CPU plugin computes
    these chains in f32 too (docs/openvino-quirks.md), recorded, not required. Each case
    is one the rules refuse on purpose: a source wider than 16 bits or not a number, a
    chain ending in a Convert to an integer, an Add, a scale folded from other f16
    constants."""
    rng = np.random.default_rng(13)
    w, spec, in_f32 = _beyond_the_rules(case, rng)
    assert (spec != in_f32).any()  # the case tells the two readings apart
    x = ops.parameter([1], ov.Type.f32, name="x")
    xml = _save(ov.Model([w], [x], "beyond"), tmp_path / "beyond.xml")
    feed = {"x": np.zeros(1, np.float32)}
    got = _irtool(xml, feed, optimize)[0]
    assert got.dtype == spec.dtype
    np.testing.assert_array_equal(got, spec)
    if optimize:  # OpenVINO's side once
        plugin = _openvino(xml, feed)[0]
        computed_in_f32 = plugin.dtype == in_f32.dtype and np.allclose(
            plugin, in_f32, rtol=2.0**-20, atol=0)  # f32's rounding, not f16's
        openvino_quirk("decompression-in-f32", behaves=np.array_equal(plugin, spec),
                       reproduced=computed_in_f32,
                       answer=f"{int((plugin != spec).sum())} of {spec.size} values differ "
                              f"from the spec's by up to "
                              f"{np.abs(plugin.astype(np.float64) - spec).max()}")


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
