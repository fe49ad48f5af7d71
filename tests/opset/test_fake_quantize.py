"""FakeQuantize-1 against its spec formula, values computed by hand::

    x <= min(il, ih)  -> ol
    x >  max(il, ih)  -> oh
    otherwise         -> round((x - il) / (ih - il) * (levels - 1)) / (levels - 1)
                         * (oh - ol) + ol          (round: half to even)

OpenVINO's CPU plugin runs FakeQuantize with int8 kernels whose arithmetic differs from
the formula in the last bits, so it is checked here only to within one quantization step;
``bench/fake_quantize.py`` measures how close the two are on a quantized CNN.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest

import irtool


def _model(x_shape: list[int], limits: list[np.ndarray], levels: int, *,
           f16_limits: bool = False) -> ov.Model:
    x = ops.parameter(x_shape, ov.Type.f32, name="x")
    if f16_limits:  # as NNCF writes them into a compressed IR: f16 Consts, Convert to f32
        nodes = [ops.convert(ops.constant(v, dtype=ov.Type.f16), ov.Type.f32) for v in limits]
    else:
        nodes = [ops.constant(v, dtype=ov.Type.f32) for v in limits]
    return ov.Model([ops.fake_quantize(x, *nodes, levels)], [x], "fq")


def _run(tmp_path: Path, model: ov.Model, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    xml = tmp_path / "fq.xml"
    ov.save_model(model, str(xml), compress_to_fp16=False)
    ours = next(iter(irtool.run(xml, {"x": x}).values()))
    theirs = ov.Core().compile_model(str(xml), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})(
        {"x": x})[0]
    return ours, np.asarray(theirs)


def _scalar(v: float) -> np.ndarray:
    return np.array(v, dtype=np.float32)


@pytest.mark.parametrize("levels, limits, x, expected", [
    # 256 levels on [0, 255] -> [0, 255]: the step is 1; half to even; clamped at both ends.
    (256, (0, 255, 0, 255), [-1, 0, 1.4, 2.5, 3.5, 3.6, 254.5, 255, 300],
     [0, 0, 1, 2, 4, 4, 254, 255, 255]),
    # 256 levels on [0, 2.55] -> [-1.28, 1.27] (an int8 output grid of step 0.01).
    (256, (0, 2.55, -1.28, 1.27), [0.0, 0.006, 1.0, 2.55, 9.0],
     [-1.28, -1.27, -0.28, 1.27, 1.27]),
    # 255 levels, symmetric [-127, 127]: round(x + 127) - 127, so halves go to the odd
    # neighbour of x (126.5 -> 126, 127.5 -> 128, 128.5 -> 128 before the shift back).
    (255, (-127, 127, -127, 127), [-200, -126.5, -0.5, 0.5, 1.5, 126.6, 127.1],
     [-127, -127, -1, 1, 1, 127, 127]),
    # 16 levels (4 bit) on [0, 15] -> [-1, 1]: k / 15 * 2 - 1 for k = round(x).
    (16, (0, 15, -1, 1), [-3, 0.49, 7.5, 8.5, 14.5, 15.01],
     [-1, -1, 1 / 15, 1 / 15, 13 / 15, 1]),
])
def test_levels_match_the_formula_by_hand(levels: int, limits: tuple[float, ...],
                                          x: list[float], expected: list[float],
                                          tmp_path: Path) -> None:
    xs = np.array(x, dtype=np.float32)
    ours, theirs = _run(tmp_path, _model([xs.size], [_scalar(v) for v in limits], levels), xs)
    np.testing.assert_allclose(ours, np.array(expected, dtype=np.float32), rtol=0, atol=1e-6)
    step = abs(limits[3] - limits[2]) / (levels - 1)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=step * 1.001)


def _formula(x: np.ndarray, il: np.ndarray, ih: np.ndarray, ol: np.ndarray, oh: np.ndarray,
             levels: int) -> np.ndarray:
    """The spec's formula, element by element in float64 (the limits broadcast by hand)."""
    out = np.empty(x.shape, dtype=np.float64)
    limits = [v.reshape((1,) * (x.ndim - v.ndim) + v.shape) for v in (il, ih, ol, oh)]
    for index in np.ndindex(x.shape):
        lo, hi, olo, ohi = (float(v[tuple(i if s > 1 else 0 for i, s in zip(index, v.shape))])
                            for v in limits)
        v = float(x[index])
        if v <= min(lo, hi):
            out[index] = olo
        elif v > max(lo, hi):
            out[index] = ohi
        else:
            k = np.round((v - lo) / (hi - lo) * (levels - 1))  # numpy rounds half to even
            out[index] = k / (levels - 1) * (ohi - olo) + olo
    return out


@pytest.mark.parametrize("f16_limits", [False, True])
def test_per_channel_ranges_broadcast(f16_limits: bool, tmp_path: Path) -> None:
    """Input ranges per channel ([1, C, 1, 1], as NNCF quantizes weights and activations),
    output ranges per tensor; with ``f16_limits`` the ranges are f16 Consts converted to
    f32, as NNCF writes them into a compressed IR (the formula then uses the f16 values)."""
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((2, 3, 4, 4)) * 2).astype(np.float32)
    il = np.array([-1.0, -2.5, -0.3], dtype=np.float32).reshape(1, 3, 1, 1)
    ih = np.array([1.0, 2.5, 0.7], dtype=np.float32).reshape(1, 3, 1, 1)
    ol, oh = _scalar(-1.28), _scalar(1.27)
    ours, theirs = _run(tmp_path, _model(list(x.shape), [il, ih, ol, oh], 256,
                                         f16_limits=f16_limits), x)
    limits = [v.astype(np.float16) if f16_limits else v for v in (il, ih, ol, oh)]
    expected = _formula(x, *(v.astype(np.float64) for v in limits), 256)
    # float32 arithmetic versus float64 by hand: equal to within float32 rounding.
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-6)
    assert ours.dtype == np.float32
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=2.55 / 255 * 1.001)


def test_output_range_per_channel(tmp_path: Path) -> None:
    """Per-channel output ranges broadcast against the input too (weights quantized per
    output channel on [0, 255] with ranges of their own)."""
    x = np.array([[0.0, 0.25, 0.5, 1.0], [0.0, 0.25, 0.5, 1.0]], dtype=np.float32)
    il, ih = _scalar(0.0), _scalar(1.0)
    ol = np.array([[0.0], [-2.0]], dtype=np.float32)
    oh = np.array([[4.0], [2.0]], dtype=np.float32)
    ours, _ = _run(tmp_path, _model([2, 4], [il, ih, ol, oh], 5), x)
    # levels 5: k = round(x * 4) in 0..4, out = k / 4 * (oh - ol) + ol
    np.testing.assert_allclose(ours, [[0, 1, 2, 4], [-2, -1, 0, 2]], rtol=0, atol=1e-6)
