"""The faster forms of Relu (rows against a row of zeros), Softmax / LogSoftmax (one
buffer) and Convolution (a zeroed padded buffer), against onnxruntime and numpy.

Each case covers the edges of its fast form: Relu sizes around its row length, NaN,
non-contiguous and integer inputs, in place; Softmax on several axes with large
values; Convolution with asymmetric pads, strides, dilations and groups.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from onnx import helper, numpy_helper
from support.conversion import make_model, run_onnxruntime, vi

import irtool
from irtool.opset import make_op
from irtool.opset.activation import _ROW
from irtool.opset.convolution import scratch
from irtool.runtime import Executor

F32 = np.float32
RNG = np.random.default_rng(41)


@pytest.mark.parametrize("size", [0, 1, 5, _ROW - 1, _ROW, _ROW + 1, 3 * _ROW + 7])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32])
def test_relu_matches_numpy_maximum(size: int, dtype: type) -> None:
    x = (RNG.standard_normal(size) * 10).astype(dtype)
    if size and x.dtype.kind == "f":
        x[size // 2] = np.nan
        x[0] = -np.inf
    want = np.maximum(x, x.dtype.type(0))
    op = make_op("Relu", "opset1", {})
    got = op.compute([x])[0]
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    y = x.copy()
    assert op.fn(y, out=y) is y  # in place, as the plan's out= calls use it
    np.testing.assert_array_equal(y, want)


def test_relu_of_views_and_of_a_large_tensor_against_onnxruntime() -> None:
    x = RNG.standard_normal((3, _ROW + 5)).astype(F32)
    op = make_op("Relu", "opset1", {})
    np.testing.assert_array_equal(op.compute([x.T])[0], np.maximum(x.T, 0))
    np.testing.assert_array_equal(op.compute([x[:, ::3]])[0], np.maximum(x[:, ::3], 0))
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", F32, list(x.shape))],
                       [vi("y", F32, list(x.shape))])
    np.testing.assert_array_equal(irtool.run(irtool.convert(model), {"x": x})["y"],
                                  run_onnxruntime(model, {"x": x})["y"])


@pytest.mark.parametrize("op_type", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_against_onnxruntime(op_type: str, axis: int) -> None:
    x = (RNG.standard_normal((3, 4, 50)) * 30).astype(F32)
    x[0, 0, :5] = [80, 90, -90, 1e4, -1e4]
    model = make_model([helper.make_node(op_type, ["x"], ["y"], axis=axis)],
                       [vi("x", F32, [3, 4, 50])], [vi("y", F32, [3, 4, 50])], opset=13)
    want = run_onnxruntime(model, {"x": x})["y"]
    got = irtool.run(irtool.convert(model), {"x": x})["y"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("attrs,wshape", [
    ({"pads": [1, 2, 0, 1]}, (6, 3, 3, 3)),
    ({"pads": [2, 1, 2, 1], "strides": [2, 1], "dilations": [1, 2]}, (6, 3, 3, 2)),
    ({"pads": [1, 1, 1, 1], "group": 3}, (6, 1, 3, 3)),
    ({"auto_pad": "SAME_UPPER", "strides": [2, 2]}, (4, 3, 2, 2)),
])
def test_padded_convolution_against_onnxruntime(attrs: dict, wshape: tuple) -> None:
    x = RNG.standard_normal((2, 3, 9, 8)).astype(F32)
    w = RNG.standard_normal(wshape).astype(F32)
    model = make_model([helper.make_node("Conv", ["x", "w"], ["y"], **attrs)],
                       [vi("x", F32, [2, 3, 9, 8])], [vi("y", F32, None)],
                       initializers=[numpy_helper.from_array(w, "w")])
    want = run_onnxruntime(model, {"x": x})["y"]
    got = irtool.run(irtool.convert(model), {"x": x})["y"]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape,attrs", [
    ((2, 3, 9, 8), {"kernel_shape": [2, 2], "strides": [2, 2]}),
    ((2, 3, 9, 8), {"kernel_shape": [3, 2], "strides": [2, 1], "pads": [1, 0, 1, 1]}),
    ((2, 3, 9, 8), {"kernel_shape": [3, 3], "dilations": [2, 1], "ceil_mode": 1,
                    "strides": [2, 2]}),
    ((2, 3, 9, 8), {"kernel_shape": [1, 3]}),
    ((1, 2, 5, 6, 7), {"kernel_shape": [2, 3, 2], "strides": [1, 2, 2]}),
    ((2, 3, 11), {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),
])
def test_max_pool_one_axis_at_a_time_against_onnxruntime(shape: tuple, attrs: dict) -> None:
    x = RNG.standard_normal(shape).astype(F32)
    model = make_model([helper.make_node("MaxPool", ["x"], ["y"], **attrs)],
                       [vi("x", F32, list(shape))], [vi("y", F32, None)], opset=12)
    want = run_onnxruntime(model, {"x": x})["y"]
    got = irtool.run(irtool.convert(model), {"x": x})["y"]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert not np.shares_memory(got, x)


def test_max_pool_nan_wins_as_numpy_max_over_each_window() -> None:
    """irtool keeps NaN (as np.max over the window does; onnxruntime skips NaN)."""
    x = RNG.standard_normal((2, 3, 9, 8)).astype(F32)
    x.reshape(-1)[::17] = np.nan
    op = make_op("MaxPool", "opset1", {"kernel": "3,2", "strides": "2,1", "pads_begin": "0,0",
                                       "pads_end": "0,0", "rounding_type": "floor"})
    windows = np.lib.stride_tricks.sliding_window_view(x, (3, 2), axis=(2, 3))[:, :, ::2, :]
    np.testing.assert_array_equal(op.compute([x])[0], windows.max(axis=(-2, -1)))


def _conv_case(wshape: tuple, **attrs: object):  # type: ignore[no-untyped-def]
    w = RNG.standard_normal(wshape).astype(F32)
    model = make_model([helper.make_node("Conv", ["x", "w"], ["y"], **attrs)],
                       [vi("x", F32, None)], [vi("y", F32, None)],
                       initializers=[numpy_helper.from_array(w, "w")])
    return model, Executor(irtool.convert(model)).run


def test_convolution_scratch_buffers_do_not_leak_between_calls_or_threads() -> None:
    """The padded input and the columns live in per-thread scratch buffers: an earlier
    result stays intact after later calls (of other shapes too), and no two threads
    share a buffer."""
    model, compiled = _conv_case((5, 3, 3, 3), pads=[1, 1, 1, 1])
    xs = [RNG.standard_normal((2, 3, s, s)).astype(F32) for s in (8, 6, 11)]
    wants = [run_onnxruntime(model, {"x": x})["y"] for x in xs]
    results = [compiled({"x": x})["y"] for x in xs]
    for got, want in zip(results, wants):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    mine = scratch("columns", (4, 5), F32)
    assert np.shares_memory(mine, scratch("columns", (3, 2), F32))  # reused in a thread
    theirs: list[np.ndarray] = []
    thread = threading.Thread(target=lambda: theirs.append(scratch("columns", (4, 5), F32)))
    thread.start()
    thread.join()
    assert not np.shares_memory(mine, theirs[0])  # never shared between threads


@pytest.mark.parametrize("limit", [0, 64 << 20], ids=["over the scratch limit", "scratch"])
@pytest.mark.parametrize("wshape,attrs", [
    ((4, 3, 1, 1), {}),  # pointwise: its columns are a view of x
    ((6, 1, 3, 3), {"group": 3, "pads": [1, 1, 1, 1]}),
    ((4, 3, 1, 1), {"strides": [2, 2]}),
], ids=["1x1", "grouped", "1x1 strided"])
def test_convolution_columns_against_onnxruntime(monkeypatch: pytest.MonkeyPatch, limit: int,
                                                 wshape: tuple, attrs: dict) -> None:
    from irtool.opset import convolution

    monkeypatch.setattr(convolution, "SCRATCH_LIMIT", limit)
    model, compiled = _conv_case(wshape, **attrs)
    x = RNG.standard_normal((2, 3, 7, 6)).astype(F32)
    got = compiled({"x": x})["y"]
    np.testing.assert_allclose(got, run_onnxruntime(model, {"x": x})["y"], rtol=1e-4,
                               atol=1e-4)
    assert not np.shares_memory(got, x)


@pytest.mark.parametrize("images", [1, 2, 3, 0], ids=["one", "two", "three", "all"])
@pytest.mark.parametrize("wshape,attrs", [
    ((4, 3, 3, 3), {"pads": [1, 1, 1, 1]}),
    ((6, 1, 3, 3), {"group": 3, "pads": [1, 0, 2, 1]}),
    ((4, 3, 2, 3), {"dilations": [2, 1]}),
    ((4, 3, 3, 3), {"strides": [2, 1], "pads": [1, 1, 1, 1]}),
], ids=["3x3 padded", "grouped asymmetric pads", "dilated", "strided"])
def test_convolution_columns_a_few_images_at_a_time(monkeypatch: pytest.MonkeyPatch,
                                                    images: int, wshape: tuple,
                                                    attrs: dict) -> None:
    """The columns of as many images as fit in ``COLUMNS_BYTES`` are made (and multiplied)
    at a time, at unit stride and otherwise: a batch of 5 in chunks of 1, 2 (the last one
    short) or 3 images, or all at once, gives onnxruntime's result, and the same bits
    whatever the chunks (each image's product is the same matmul)."""
    from irtool.opset import convolution

    x = RNG.standard_normal((5, 3, 7, 6)).astype(F32)
    model, compiled = _conv_case(wshape, **attrs)
    pads = attrs.get("pads", [0, 0, 0, 0])
    dilations = attrs.get("dilations", [1, 1])
    assert isinstance(pads, list) and isinstance(dilations, list)
    height, width = x.shape[2] + pads[0] + pads[2], x.shape[3] + pads[1] + pads[3]
    rows = height - (wshape[2] - 1) * dilations[0]  # output rows, computed on full width
    per_image = x.shape[1] * wshape[2] * wshape[3] * rows * width * x.itemsize
    if "strides" in attrs:  # the general path: the output positions only
        per_image = x.shape[1] * wshape[2] * wshape[3] * 4 * 6 * x.itemsize
    monkeypatch.setattr(convolution, "COLUMNS_BYTES", images * per_image)
    got = compiled({"x": x})["y"]
    np.testing.assert_allclose(got, run_onnxruntime(model, {"x": x})["y"], rtol=1e-4,
                               atol=1e-4)
    monkeypatch.setattr(convolution, "COLUMNS_BYTES", 0)
    np.testing.assert_array_equal(got, compiled({"x": x})["y"])
