"""Grouped and depthwise convolutions (one matmul over every group's columns, not a loop
over the groups: irtool.opset.convolution._grouped_matmul) against onnxruntime, with
optimisations on and off: depthwise layers as MobileNetV3 has them (with hard-swish), strides,
dilations, asymmetric and SAME pads, 1-D and 3-D, a channel multiplier, several channels per
group.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper, numpy_helper
from support.conversion import make_model, run_onnxruntime, vi

import irtool
from irtool.runtime import Executor

F32 = np.float32
RNG = np.random.default_rng(27)


def _conv_model(x_shape: tuple, w: np.ndarray, dtype: type = F32, **attrs: object):
    w_init = numpy_helper.from_array(w.astype(dtype), "w")
    b = RNG.standard_normal(w.shape[0]).astype(dtype)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], **attrs),
             helper.make_node("HardSwish", ["c"], ["y"])]  # MobileNetV3's pair
    return make_model(nodes, [vi("x", dtype, list(x_shape))], [vi("y", dtype, None)],
                      initializers=[w_init, numpy_helper.from_array(b, "b")], opset=14)


DEPTHWISE = [
    ((2, 8, 11, 10), (8, 1, 3, 3), {"pads": [1, 1, 1, 1]}),
    ((1, 6, 12, 9), (6, 1, 5, 5), {"pads": [2, 2, 2, 2], "strides": [2, 2]}),
    ((2, 4, 9, 8), (4, 1, 3, 3), {"pads": [0, 1, 2, 0], "dilations": [2, 1]}),
    ((1, 5, 7, 7), (5, 1, 3, 3), {"auto_pad": "SAME_UPPER", "strides": [2, 2]}),
    ((1, 3, 6, 6), (3, 1, 1, 1), {}),
    ((2, 4, 17), (4, 1, 3), {"pads": [1, 1], "strides": [2]}),  # 1-D
    ((1, 2, 4, 5, 6), (2, 1, 2, 3, 3), {"pads": [0, 1, 1, 1, 1, 0]}),  # 3-D
]


@pytest.mark.parametrize("optimize", [True, False])
@pytest.mark.parametrize("x_shape,w_shape,attrs", DEPTHWISE)
def test_depthwise_against_onnxruntime(x_shape: tuple, w_shape: tuple, attrs: dict,
                                       optimize: bool) -> None:
    w = RNG.standard_normal(w_shape)
    model = _conv_model(x_shape, w, group=w_shape[0], **attrs)
    x = RNG.standard_normal(x_shape).astype(F32)
    want = run_onnxruntime(model, {"x": x})["y"]
    ex = Executor(irtool.convert(model, optimize=optimize), optimize=optimize)
    got = ex.run({"x": x})["y"]
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("optimize", [True, False])
def test_grouped_not_depthwise_against_onnxruntime(optimize: bool) -> None:
    """Two channels per group, and a channel multiplier."""
    for w_shape, group in (((6, 2, 3, 3), 3), ((8, 1, 3, 3), 4)):
        c = w_shape[1] * group
        model = _conv_model((2, c, 7, 6), RNG.standard_normal(w_shape), group=group,
                            pads=[1, 1, 1, 1])
        x = RNG.standard_normal((2, c, 7, 6)).astype(F32)
        want = run_onnxruntime(model, {"x": x})["y"]
        got = irtool.run(irtool.convert(model, optimize=optimize), {"x": x},
                         optimize=optimize)["y"]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
