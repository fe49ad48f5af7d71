"""The direct depthwise GroupConvolution kernel (``GroupConvolution.depthwise``, chosen by
``runtime.fastpath``) against onnxruntime, with optimisations on and off; and the grouped
convolutions it must leave to im2col (more than one channel per group, negative pads,
f16), which keep the op's own kernel and still match.
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
    # The direct kernel is the optimisation: on with optimize, and counted there.
    kernels = [s.kernel for s in ex.plan.steps if s.layer.type == "GroupConvolution"]
    assert len(kernels) == 1
    direct = getattr(kernels[0], "__name__", "") == "group_convolution"
    assert direct == optimize
    assert (ex.optimizations.get("specialised kernels", 0) >= 1) == optimize


def test_the_direct_kernel_is_the_one_that_runs() -> None:
    """Planted: a direct kernel that gets the sum wrong must make the depthwise case fail,
    so the case above does test the kernel it means to."""
    from irtool.opset import convolution

    x = RNG.standard_normal((1, 4, 6, 6)).astype(F32)
    w = RNG.standard_normal((4, 1, 1, 3, 3)).astype(F32)
    op = convolution.GroupConvolution({"strides": "1,1", "dilations": "1,1",
                                       "pads_begin": "1,1", "pads_end": "1,1"})
    direct = op.depthwise(x, w)
    assert direct is not None
    np.testing.assert_allclose(direct, op.compute([x, w])[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(direct[:, :, 1:-1, 1:-1],
                               sum(w[None, :, 0, 0, i, j, None, None] * x[:, :, i:i + 4, j:j + 4]
                                   for i in range(3) for j in range(3)), rtol=1e-5, atol=1e-5)
    # A kernel larger than the (unpadded) input: an empty output, as compute gives.
    small = convolution.GroupConvolution({"strides": "1,1", "dilations": "1,1",
                                          "pads_begin": "0,0", "pads_end": "0,0"})
    empty = small.depthwise(x[:, :, :2, :2], w)
    assert empty is not None and empty.shape == small.compute([x[:, :, :2, :2], w])[0].shape


@pytest.mark.parametrize("case", ["two channels per group", "negative pads", "float16",
                                  "channel multiplier"])
def test_where_the_direct_kernel_does_not_apply(case: str) -> None:
    from irtool.opset import convolution

    op = convolution.GroupConvolution({"strides": "1,1", "dilations": "1,1",
                                       "pads_begin": "1,1", "pads_end": "1,1"})
    x = RNG.standard_normal((1, 4, 6, 6)).astype(F32)
    w = RNG.standard_normal((4, 1, 1, 3, 3)).astype(F32)
    if case == "two channels per group":
        w = RNG.standard_normal((2, 2, 2, 3, 3)).astype(F32)
    elif case == "negative pads":
        op = convolution.GroupConvolution({"strides": "1,1", "dilations": "1,1",
                                           "pads_begin": "-1,0", "pads_end": "0,0"})
    elif case == "float16":
        x, w = x.astype(np.float16), w.astype(np.float16)
    else:  # two outputs per input channel
        w = RNG.standard_normal((4, 2, 1, 3, 3)).astype(F32)
    assert op.depthwise(x, w) is None


@pytest.mark.parametrize("optimize", [True, False])
def test_grouped_not_depthwise_against_onnxruntime(optimize: bool) -> None:
    """Two channels per group and a channel multiplier: im2col, same values either way."""
    for w_shape, group in (((6, 2, 3, 3), 3), ((8, 1, 3, 3), 4)):
        c = w_shape[1] * group
        model = _conv_model((2, c, 7, 6), RNG.standard_normal(w_shape), group=group,
                            pads=[1, 1, 1, 1])
        x = RNG.standard_normal((2, c, 7, 6)).astype(F32)
        want = run_onnxruntime(model, {"x": x})["y"]
        got = irtool.run(irtool.convert(model, optimize=optimize), {"x": x},
                         optimize=optimize)["y"]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
