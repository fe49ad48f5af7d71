"""Translators of ordinary ONNX operators, at several opset versions each.

Every case is a small ONNX model. The expected outputs come from onnxruntime,
or, for opset versions onnxruntime no longer runs, from numpy written here. The
converted IR runs on OpenVINO (after ``irtool.save``) and on irtool's runtime;
both must match.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper

import irtool

RNG = np.random.default_rng(7)
OV_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": "1"}


def f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def pos(*shape: int) -> np.ndarray:
    return (RNG.random(shape) + 0.5).astype(np.float32)


def ints(*shape: int, low: int = -5, high: int = 6, dtype: Any = np.int64) -> np.ndarray:
    return RNG.integers(low, high, shape).astype(dtype)


def i64(*values: int) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)


@dataclass
class Case:
    """One model: ``nodes`` over graph inputs ``feeds`` and initializers ``consts``."""

    id: str
    nodes: list[onnx.NodeProto]
    feeds: dict[str, np.ndarray]
    opset: int
    consts: dict[str, np.ndarray] = field(default_factory=dict)
    outputs: tuple[str, ...] = ("y",)
    expected: list[np.ndarray] | None = None  # numpy reference when onnxruntime cannot run it
    # "onnx": ONNX's own reference implementation, where onnxruntime departs from the spec
    oracle: str = "onnxruntime"
    rtol: float = 1e-5
    atol: float = 1e-5

    def __str__(self) -> str:
        return self.id


def node(op: str, opset: int, feeds: dict[str, np.ndarray | None], *,
         consts: dict[str, np.ndarray] | None = None, outputs: tuple[str, ...] = ("y",),
         order: list[str] | None = None, expected: list[np.ndarray] | None = None,
         tag: str = "", rtol: float = 1e-5, atol: float = 1e-5, oracle: str = "onnxruntime",
         **attrs: Any) -> Case:
    """A one-node case; ``order`` lists the node's inputs ("" for an absent optional one)."""
    consts = consts or {}
    names = order if order is not None else [*feeds, *consts]
    n = helper.make_node(op, names, list(outputs), **attrs)
    feeds = {k: np.asarray(v) for k, v in feeds.items() if v is not None}
    consts = {k: np.asarray(v) for k, v in consts.items()}
    ident = f"{op}-{opset}" + (f"-{tag}" if tag else "")
    return Case(ident, [n], feeds, opset, consts, outputs, expected, oracle, rtol, atol)


def build(case: Case, out_arrays: list[np.ndarray] | None = None,
          dynamic: bool = False) -> onnx.ModelProto:
    inputs = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
              for k, v in case.feeds.items()]
    if out_arrays is None:
        outputs = [onnx.ValueInfoProto(name=o) for o in case.outputs]
    else:
        outputs = [helper.make_tensor_value_info(o, helper.np_dtype_to_tensor_dtype(a.dtype),
                                                 a.shape)
                   for o, a in zip(case.outputs, out_arrays)]
    inits = [onnx.numpy_helper.from_array(v, k) for k, v in case.consts.items()]
    if dynamic:  # every dim of every graph input and output unknown to the converter
        for vi in [*inputs, *(outputs if out_arrays is not None else [])]:
            for k, dim in enumerate(vi.type.tensor_type.shape.dim):
                dim.Clear()
                dim.dim_param = f"{vi.name}_{k}"
    graph = helper.make_graph(case.nodes, "g", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", case.opset)])


def reference(case: Case) -> list[np.ndarray]:
    if case.expected is not None:
        return [np.asarray(e) for e in case.expected]
    if case.oracle == "onnx":
        from onnx.reference import ReferenceEvaluator

        return [np.asarray(a) for a in ReferenceEvaluator(build(case)).run(
            list(case.outputs), case.feeds)]
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(build(case).SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    return [np.asarray(a) for a in session.run(list(case.outputs), case.feeds)]


def assert_same(name: str, got: Any, want: np.ndarray, case: Case, backend: str) -> None:
    got = np.asarray(got)
    where = f"{case.id} on {backend}, output {name}"
    assert got.shape == want.shape, f"{where}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{where}: dtype {got.dtype} != {want.dtype}"
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=where)
    else:
        np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol, err_msg=where)


def run_both(case: Case, tmp: Path, dynamic: bool = False) -> None:
    import openvino as ov

    expected = reference(case)
    model = irtool.convert(build(case, expected, dynamic))
    got = irtool.run(model, case.feeds)
    for name, want in zip(case.outputs, expected):
        assert_same(name, got[name], want, case, "irtool")
    xml = irtool.save(model, tmp / "m.xml")
    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(xml)), "CPU", OV_CONFIG)
    result = compiled(case.feeds)
    by_name = {n: result[port] for port in compiled.outputs for n in port.get_names()}
    for name, want in zip(case.outputs, expected):
        assert_same(name, by_name[name], want, case, "OpenVINO")


# -- cases -------------------------------------------------------------------------------------
def _binary_cases() -> list[Case]:
    a, b = f32(2, 3, 4), f32(3)
    out = []
    for op, fn in (("Add", np.add), ("Sub", np.subtract), ("Mul", np.multiply)):
        for opset in (7, 13, 14):
            out.append(node(op, opset, {"a": f32(2, 3, 4), "b": f32(4)}))
        # Opset 6: B aligned with A at ``axis`` (onnxruntime dropped this form).
        out.append(node(op, 6, {"a": a, "b": b}, broadcast=1, axis=1, tag="axis",
                        expected=[fn(a, b[:, None])]))
    out.append(node("Div", 14, {"a": f32(2, 3), "b": pos(2, 3)}))
    out.append(node("Div", 7, {"a": f32(2, 3), "b": pos(3)}))
    x, y = ints(4, 5, dtype=np.int32), ints(4, 5, low=1, dtype=np.int32)
    y[0] = -3
    out.append(node("Div", 13, {"a": x, "b": y}, tag="int-trunc",
                    expected=[np.trunc(x / y).astype(np.int32)]))
    out.append(node("Pow", 7, {"a": pos(3, 4), "b": f32(4)}))
    out.append(node("Pow", 15, {"a": pos(3, 4), "b": ints(4, low=0, high=3)}, tag="mixed"))
    out.append(node("Pow", 13, {"a": ints(3, low=1, high=4, dtype=np.int32),
                                "b": ints(3, low=0, high=3, dtype=np.int32)}, tag="int"))
    out.append(node("Mod", 13, {"a": ints(6, dtype=np.int32),
                                "b": np.array([2, -3, 4, -5, 3, 7], np.int32)}))
    out.append(node("Mod", 10, {"a": f32(6), "b": pos(6)}, fmod=1, tag="fmod"))
    out.append(node("BitShift", 11, {"a": np.array([16, 4, 1], np.uint32),
                                     "b": np.array([1, 2, 3], np.uint32)}, direction="RIGHT"))
    out.append(node("BitShift", 11, {"a": np.array([16, 4, 1], np.uint8),
                                     "b": np.array([1, 2, 3], np.uint8)}, direction="LEFT",
                    tag="left"))
    return out


def _compare_cases() -> list[Case]:
    out = []
    x, y = ints(3, 4).astype(np.float32), ints(4).astype(np.float32)
    for op in ("Greater", "Less", "Equal"):
        out += [node(op, 9 if op != "Equal" else 11, {"a": x, "b": y}),
                node(op, 13, {"a": x, "b": y})]
    out.append(node("Equal", 19, {"a": ints(3, 4), "b": ints(1, 4)}, tag="int"))
    for op in ("GreaterOrEqual", "LessOrEqual"):
        out += [node(op, 12, {"a": x, "b": y}), node(op, 16, {"a": x, "b": y})]
    p, q = RNG.random((3, 4)) > 0.5, RNG.random((4,)) > 0.5
    for op in ("And", "Or", "Xor"):
        out += [node(op, 7, {"a": p, "b": q})]
    out.append(node("Not", 1, {"a": p}))
    out.append(node("Where", 9, {"c": p, "a": f32(3, 4), "b": f32(4)}))
    out.append(node("Where", 16, {"c": q, "a": ints(3, 4), "b": ints(3, 1)}))
    out.append(node("BitwiseAnd", 18, {"a": ints(5, dtype=np.int32),
                                       "b": ints(5, dtype=np.int32)}))
    out.append(node("BitwiseNot", 18, {"a": ints(5, low=0, high=200, dtype=np.uint8)}))
    return out


_UNARY = {
    "Relu": ((6, 14), f32), "Tanh": ((6, 13), f32), "Sigmoid": ((6, 13), f32),
    "Exp": ((6, 13), f32), "Log": ((6, 13), pos), "Sqrt": ((6, 13), pos),
    "Reciprocal": ((6, 13), pos), "Ceil": ((6, 13), f32), "Floor": ((6, 13), f32),
    "Neg": ((6, 13), f32), "Abs": ((6, 13), f32), "Sign": ((9, 13), f32),
    "Softplus": ((1, 22), f32), "Softsign": ((1, 22), f32), "Erf": ((9, 13), f32),
    "Sin": ((7, 22), f32), "Cos": ((7, 22), f32), "Atan": ((7, 22), f32),
    "Asinh": ((9, 22), f32), "IsNaN": ((9, 20), f32), "Round": ((11, 22), f32),
    "HardSwish": ((14, 22), f32), "Mish": ((18, 22), f32),
}


def _unary_cases() -> list[Case]:
    out = []
    for op, (versions, make) in _UNARY.items():
        for opset in versions:
            out.append(node(op, opset, {"x": make(2, 3, 4)}))
    x = np.array([1.0, np.inf, -np.inf, np.nan, 0.0], np.float32)
    out.append(node("IsInf", 10, {"x": x}))
    out.append(node("IsInf", 20, {"x": x}, detect_negative=0, tag="pos"))
    out.append(node("Abs", 13, {"x": ints(4)}, tag="int"))
    out.append(node("Round", 11, {"x": np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.4], np.float32)},
                    tag="half-even"))
    return out


def _activation_cases() -> list[Case]:
    x = f32(2, 3, 4)
    return [
        node("Elu", 6, {"x": x}, alpha=0.5), node("Elu", 22, {"x": x}),
        node("Selu", 6, {"x": x}), node("Selu", 22, {"x": x}, alpha=2.0, gamma=3.0),
        node("LeakyRelu", 6, {"x": x}, alpha=0.2), node("LeakyRelu", 16, {"x": x}),
        node("PRelu", 9, {"x": x, "s": f32(4)}), node("PRelu", 16, {"x": x, "s": f32(3, 1)}),
        node("ThresholdedRelu", 10, {"x": x}, alpha=0.3),
        node("HardSigmoid", 6, {"x": x}, alpha=0.3, beta=0.4), node("HardSigmoid", 22, {"x": x}),
        node("Gelu", 20, {"x": x}), node("Gelu", 20, {"x": x}, approximate="tanh", tag="tanh"),
        node("Celu", 12, {"x": x}, alpha=0.7), node("Shrink", 9, {"x": x}, lambd=0.6, bias=0.1),
        node("Softmax", 11, {"x": x}), node("Softmax", 11, {"x": x}, axis=2, tag="last"),
        node("Softmax", 13, {"x": x}, axis=1), node("LogSoftmax", 11, {"x": x}),
        node("LogSoftmax", 13, {"x": x}), node("Hardmax", 11, {"x": x}),
        node("Hardmax", 13, {"x": x}, axis=1),
    ]


def _cast_cases() -> list[Case]:
    x = (f32(3, 4) * 10).astype(np.float32)
    T = onnx.TensorProto
    return [
        node("Cast", 6, {"x": x}, to=T.INT32), node("Cast", 13, {"x": x}, to=T.INT64),
        node("Cast", 19, {"x": ints(3, 4)}, to=T.BOOL),
        node("Cast", 21, {"x": RNG.random((3,)) > 0.5}, to=T.FLOAT),
        node("Cast", 13, {"x": x}, to=T.FLOAT16, tag="f16"),
        node("CastLike", 15, {"x": ints(3), "like": f32(1)}),
        node("CastLike", 19, {"x": x, "like": ints(1, dtype=np.int32)}),
        node("Identity", 13, {"x": x}), node("Identity", 16, {"x": ints(2, 2)}),
    ]


def _variadic_cases() -> list[Case]:
    a, b, c = f32(3, 4), f32(4), f32(1, 4)
    out = []
    for op in ("Max", "Min", "Sum", "Mean"):
        out += [node(op, 8, {"a": a, "b": b, "c": c}), node(op, 13, {"a": a, "b": b}),
                node(op, 13, {"a": a}, tag="one")]
    out += [
        node("Clip", 6, {"x": f32(3, 4)}, min=-0.5, max=0.5),
        node("Clip", 11, {"x": f32(3, 4)}, consts={"lo": np.float32(-0.2)}),
        node("Clip", 13, {"x": f32(3, 4)}, consts={"hi": np.float32(0.3)}, order=["x", "", "hi"]),
        node("Clip", 13, {"x": ints(5)}, consts={"lo": np.int64(-1), "hi": np.int64(2)},
             tag="int"),
    ]
    return out


def _shape_cases() -> list[Case]:
    x = f32(2, 3, 4)
    T = onnx.TensorProto
    const_node = [helper.make_node("Constant", [], ["c"], value=helper.make_tensor(
        "v", T.FLOAT, [2, 2], [1, 2, 3, 4])), helper.make_node("Add", ["x", "c"], ["y"])]
    sparse = helper.make_sparse_tensor(helper.make_tensor("v", T.FLOAT, [2], [5.0, 6.0]),
                                       helper.make_tensor("i", T.INT64, [2], [1, 3]), [2, 2])
    return [
        node("Shape", 13, {"x": x}), node("Shape", 15, {"x": x}, start=1),
        node("Shape", 19, {"x": x}, start=-2, end=-1, tag="neg"),
        node("Size", 13, {"x": x}), node("Size", 21, {"x": ints(0, 3)}, tag="empty"),
        node("Reshape", 5, {"x": x}, consts={"s": i64(3, -1)}),
        node("Reshape", 14, {"x": x}, consts={"s": i64(0, 4, -1)}),
        node("Reshape", 14, {"x": ints(2, 0)}, consts={"s": i64(0, 4)}, allowzero=1, tag="az"),
        node("Reshape", 1, {"x": x}, shape=[6, 4], expected=[x.reshape(6, 4)]),
        node("Squeeze", 11, {"x": f32(1, 3, 1)}, axes=[-1]),
        node("Squeeze", 13, {"x": f32(1, 3, 1)}),
        node("Squeeze", 13, {"x": f32(1, 3, 1)}, consts={"a": i64(0)}, tag="axes"),
        # An empty axes list squeezes nothing (ONNX's shape inference and reference);
        # onnxruntime squeezes every 1-dim (docs/differential.md).
        node("Squeeze", 13, {"x": f32(1, 3, 1)}, consts={"a": i64()}, tag="empty-axes",
             oracle="onnx"),
        node("Squeeze", 13, {"x": f32(1, 3, 1), "a": i64()}, tag="empty-runtime-axes",
             oracle="onnx"),
        node("Unsqueeze", 11, {"x": x}, axes=[0, -1]),
        node("Unsqueeze", 13, {"x": x}, consts={"a": i64(1, 4)}),
        node("Concat", 4, {"a": x, "b": f32(2, 1, 4)}, axis=1),
        node("Concat", 13, {"a": x, "b": f32(2, 3, 2)}, axis=-1),
        node("Split", 11, {"x": f32(6, 2)}, outputs=("y", "z"), split=[2, 4]),
        node("Split", 13, {"x": f32(6, 2)}, consts={"s": i64(1, 5)}, outputs=("y", "z")),
        node("Split", 13, {"x": f32(2, 6)}, axis=1, outputs=("y", "z", "w"), tag="even"),
        node("Split", 18, {"x": f32(7, 2)}, num_outputs=3, outputs=("y", "z", "w")),
        node("Flatten", 1, {"x": x}, axis=2, expected=[x.reshape(6, 4)]),
        node("Flatten", 13, {"x": x}), node("Flatten", 21, {"x": x}, axis=0, tag="0"),
        node("Flatten", 13, {"x": x}, axis=-1, tag="neg"),
        node("Transpose", 1, {"x": x}), node("Transpose", 13, {"x": x}, perm=[1, 0, 2]),
        node("Expand", 8, {"x": f32(3, 1)}, consts={"s": i64(2, 1, 4)}),
        node("Expand", 13, {"x": f32(1, 4)}, consts={"s": i64(3, 1)}),
        node("Tile", 6, {"x": f32(2, 3)}, consts={"r": i64(2, 1)}),
        node("Tile", 13, {"x": ints(2, 3)}, consts={"r": i64(1, 3)}),
        node("Tile", 1, {"x": x}, consts={"t": i64(2), "a": i64(1)},
             expected=[np.tile(x, (1, 2, 1))]),
        node("Pad", 2, {"x": f32(2, 3)}, pads=[1, 0, 0, 2], value=1.5),
        node("Pad", 2, {"x": f32(3, 3)}, pads=[1, 1, 1, 1], mode="reflect", tag="reflect"),
        node("Pad", 11, {"x": f32(2, 3)}, consts={"p": i64(0, 1, 2, 0), "v": np.float32(3)}),
        node("Pad", 13, {"x": f32(3, 3)}, consts={"p": i64(1, 1, 1, 1)}, mode="edge", tag="edge"),
        node("Pad", 18, {"x": f32(2, 3)}, consts={"p": i64(1, 2), "v": np.float32(0),
                                                  "a": i64(-1)}, tag="axes"),
        node("Pad", 19, {"x": f32(3, 4)}, consts={"p": i64(1, 2, 2, 1)}, mode="wrap", tag="wrap"),
        node("Pad", 11, {"x": f32(4, 5)}, consts={"p": i64(-1, 1, 0, -2)}, tag="negative"),
        node("Slice", 1, {"x": x}, starts=[0, 1], ends=[1, 1000], axes=[0, 2]),
        node("Slice", 10, {"x": x}, consts={"s": i64(1), "e": i64(3), "a": i64(1)}),
        node("Slice", 13, {"x": x}, consts={"s": i64(-1, 3), "e": i64(-1000, 0),
                                            "a": i64(1, 2), "t": i64(-1, -2)}, tag="neg-steps"),
        node("Slice", 13, {"x": x, "s": i64(0, 1), "e": i64(2, 3)}, tag="dynamic"),
        node("ConstantOfShape", 9, {"s": i64(2, 3)}),
        node("ConstantOfShape", 20, {"s": i64(2, 3)},
             value=helper.make_tensor("v", T.INT32, [1], [7]), tag="int"),
        node("Range", 11, {}, consts={"a": np.float32(1), "b": np.float32(4),
                                      "c": np.float32(0.5)}),
        node("Range", 11, {"a": np.int64(10), "b": np.int64(0), "c": np.int64(-3)}, tag="int"),
        Case("Constant-13", const_node, {"x": f32(2, 2)}, 13),
        Case("Constant-13-sparse", [helper.make_node("Constant", [], ["y"],
                                                     sparse_value=sparse)], {}, 13,
             expected=[np.array([[0, 5], [0, 6]], np.float32)]),
        Case("Constant-12-ints", [helper.make_node("Constant", [], ["c"], value_ints=[1, 2]),
                                  helper.make_node("Mul", ["x", "c"], ["y"])],
             {"x": ints(2)}, 12),
        node("DepthToSpace", 11, {"x": f32(1, 8, 2, 3)}, blocksize=2),
        node("DepthToSpace", 13, {"x": f32(1, 8, 2, 3)}, blocksize=2, mode="CRD", tag="crd"),
        node("SpaceToDepth", 13, {"x": f32(1, 2, 4, 6)}, blocksize=2),
    ]


def _indexing_cases() -> list[Case]:
    x = f32(4, 5)
    return [
        node("Gather", 11, {"x": x}, consts={"i": i64(0, -1, 2)}),
        node("Gather", 13, {"x": x, "i": np.array([[1, 0], [4, -2]], np.int32)}, axis=1),
        node("GatherElements", 11, {"x": x, "i": ints(2, 5, low=0, high=4)}),
        node("GatherElements", 13, {"x": x, "i": ints(4, 2, low=-5, high=5)}, axis=1),
        node("GatherND", 11, {"x": f32(2, 3, 4), "i": np.array([[0, 1], [1, 2]], np.int64)}),
        node("GatherND", 12, {"x": f32(2, 3, 4), "i": np.array([[1], [2]], np.int64)},
             batch_dims=1),
        node("ScatterElements", 11, {"x": x, "i": np.array([[1, 0, 3, 2, 1]], np.int64),
                                     "u": f32(1, 5)}),
        node("ScatterElements", 16, {"x": x, "i": np.array([[1, 1], [0, 0]], np.int64),
                                     "u": f32(2, 2)}, axis=1, reduction="add"),
        node("ScatterElements", 18, {"x": x, "i": np.array([[1, 1], [0, 0]], np.int64),
                                     "u": f32(2, 2)}, axis=1, reduction="max"),
        node("ScatterND", 11, {"x": x, "i": np.array([[1], [3]], np.int64), "u": f32(2, 5)}),
        node("ScatterND", 16, {"x": x, "i": np.array([[1, 2], [1, 2]], np.int64), "u": f32(2)},
             reduction="mul"),
        node("NonZero", 13, {"x": ints(3, 4, low=-1, high=2)}),
        node("OneHot", 11, {"i": np.array([0, 2, -1, 1], np.int64)},
             consts={"d": np.int64(3), "v": np.array([0.0, 5.0], np.float32)}),
        node("OneHot", 9, {"i": np.array([[0, 2], [1, 1]], np.int32)},
             consts={"d": np.array([4], np.int64), "v": np.array([1, 2], np.int64)}, axis=0,
             expected=[np.where(np.arange(4)[:, None, None] == [[0, 2], [1, 1]], 2, 1)]),
        node("Trilu", 14, {"x": f32(3, 4)}),
        node("Trilu", 14, {"x": f32(2, 3, 4)}, consts={"k": np.int64(-1)}, upper=0, tag="lower"),
        node("Trilu", 14, {"x": f32(3, 4), "k": np.int64(1)}, tag="dynamic-k"),
        node("Compress", 11, {"x": f32(3, 2), "c": np.array([True, False, True])}, axis=0),
        node("Compress", 9, {"x": f32(3, 2), "c": np.array([False, True, True])}, tag="flat"),
        node("Unique", 11, {"x": np.array([2, 1, 1, 3, 4, 3], np.float32)},
             outputs=("y", "idx", "inv", "cnt")),
        node("ReverseSequence", 10, {"x": f32(4, 3), "l": i64(1, 2, 4)}, batch_axis=1,
             time_axis=0),
        node("EyeLike", 9, {"x": f32(3, 4)}, k=1),
        node("EyeLike", 22, {"x": f32(4, 4)}, dtype=onnx.TensorProto.INT32),
    ]


def _reduce_cases() -> list[Case]:
    x = pos(2, 3, 4)
    out = [
        node("ReduceSum", 11, {"x": x}, axes=[1]),
        node("ReduceSum", 13, {"x": x}, consts={"a": i64(0, -1)}, keepdims=0),
        node("ReduceSum", 13, {"x": x}, tag="all"),
        node("ReduceSum", 13, {"x": x}, consts={"a": i64()}, noop_with_empty_axes=1, tag="noop"),
    ]
    for op in ("ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
               "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"):
        out.append(node(op, 13, {"x": x}, axes=[2], keepdims=0))
        out.append(node(op, 18, {"x": x}, consts={"a": i64(1)}))
    out.append(node("ReduceMax", 20, {"x": RNG.random((3, 4)) > 0.5}, consts={"a": i64(1)},
                    tag="bool"))
    out += [
        node("ArgMax", 11, {"x": x}, axis=1), node("ArgMin", 13, {"x": x}, axis=-1, keepdims=0),
        node("ArgMax", 12, {"x": np.array([[1, 3, 3], [2, 2, 0]], np.float32)}, axis=1,
             select_last_index=1, tag="last"),
        node("ArgMin", 13, {"x": np.array([[1, 1, 3], [2, 0, 0]], np.float32)}, axis=1,
             select_last_index=1, keepdims=0, tag="last"),
        node("TopK", 10, {"x": f32(3, 5)}, consts={"k": i64(2)}, outputs=("v", "i")),
        node("TopK", 11, {"x": f32(3, 5)}, consts={"k": i64(3)}, outputs=("v", "i"), axis=0,
             largest=0),
        node("CumSum", 11, {"x": f32(2, 3)}, consts={"a": np.int64(1)}),
        node("CumSum", 14, {"x": ints(2, 3)}, consts={"a": np.int32(0)}, exclusive=1, reverse=1),
    ]
    return out


def _nn_cases() -> list[Case]:
    x = f32(1, 2, 5, 5)
    return [
        node("MatMul", 9, {"a": f32(2, 3, 4), "b": f32(4, 5)}),
        node("MatMul", 13, {"a": f32(4), "b": f32(2, 4, 3)}),
        node("Gemm", 13, {"a": f32(3, 4), "b": f32(5, 4), "c": f32(5)}, transB=1, alpha=0.5,
             beta=2.0),
        node("Gemm", 11, {"a": f32(4, 3), "b": f32(4, 5)}, transA=1),
        node("Gemm", 7, {"a": f32(3, 4), "b": f32(4, 5), "c": f32(3, 5)}),
        node("Conv", 11, {"x": x, "w": f32(3, 2, 3, 3), "b": f32(3)}, pads=[1, 1, 1, 1]),
        node("Conv", 22, {"x": x, "w": f32(4, 1, 3, 3)}, group=2, strides=[2, 2], tag="group"),
        node("Conv", 1, {"x": x, "w": f32(2, 2, 2, 2)}, auto_pad="SAME_UPPER", tag="same"),
        node("ConvTranspose", 11, {"x": f32(1, 2, 3, 3), "w": f32(2, 3, 3, 3), "b": f32(3)},
             strides=[2, 2], pads=[1, 1, 0, 0]),
        node("ConvTranspose", 22, {"x": f32(1, 2, 3, 3), "w": f32(2, 1, 3, 3)}, group=2,
             output_shape=[8, 8], strides=[3, 2], tag="group-shape"),
        node("AveragePool", 11, {"x": x}, kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        node("AveragePool", 19, {"x": x}, kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1,
             count_include_pad=1, tag="ceil"),
        node("AveragePool", 7, {"x": x}, kernel_shape=[2, 2], auto_pad="SAME_LOWER",
             tag="same"),
        node("MaxPool", 12, {"x": x}, kernel_shape=[2, 2], outputs=("y", "i")),
        node("MaxPool", 8, {"x": x}, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
             storage_order=1, outputs=("y", "i"), tag="col-major"),
        node("MaxPool", 22, {"x": x}, kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1,
             dilations=[1, 1], tag="ceil"),
        # MaxPool's values alone (indices unread) take the per-offset path; with indices,
        # the argmax path: both over dilations, pads, strides, ceil rounding, N and C > 1.
        node("MaxPool", 12, {"x": f32(2, 3, 9, 8)}, kernel_shape=[3, 2], strides=[2, 1],
             pads=[1, 0, 2, 1], dilations=[2, 3], tag="dilated-values"),
        node("MaxPool", 12, {"x": f32(2, 3, 9, 8)}, kernel_shape=[3, 2], strides=[2, 1],
             pads=[1, 0, 2, 1], dilations=[2, 3], outputs=("y", "i"), tag="dilated-indices"),
        node("MaxPool", 12, {"x": f32(2, 2, 7, 7)}, kernel_shape=[3, 3], strides=[2, 2],
             pads=[1, 1, 1, 1], ceil_mode=1, tag="ceil-pads-batched"),
        node("MaxPool", 12, {"x": f32(2, 3, 11)}, kernel_shape=[4], strides=[3], pads=[2, 1],
             tag="1d"),
        node("MaxPool", 12, {"x": f32(1, 2, 5, 6, 4)}, kernel_shape=[2, 3, 2],
             strides=[1, 2, 2], outputs=("y", "i"), tag="3d-indices"),
        node("MaxPool", 12, {"x": ints(2, 2, 6, 6, dtype=np.int8)}, kernel_shape=[2, 2],
             pads=[1, 1, 0, 0], tag="int8"),
        # Conv as im2col + GEMM: dilations, strides, asymmetric pads, depthwise groups, 1-D.
        node("Conv", 11, {"x": f32(2, 4, 9, 8)}, consts={"w": f32(6, 4, 3, 2), "b": f32(6)},
             strides=[2, 1], dilations=[2, 3], pads=[1, 0, 2, 2], tag="dilated"),
        node("Conv", 11, {"x": f32(2, 4, 7, 7)}, consts={"w": f32(8, 1, 3, 3)}, group=4,
             pads=[1, 1, 1, 1], tag="depthwise"),
        node("Conv", 11, {"x": f32(3, 2, 10)}, consts={"w": f32(5, 2, 3)}, strides=[2],
             pads=[0, 1],
             tag="1d"),
        node("GlobalAveragePool", 1, {"x": x}), node("GlobalMaxPool", 22, {"x": x}),
        node("GlobalLpPool", 2, {"x": x}),
        node("LpPool", 18, {"x": x}, kernel_shape=[2, 2], p=2),
        node("BatchNormalization", 9, {"x": x, "s": f32(2), "b": f32(2), "m": f32(2),
                                       "v": pos(2)}),
        node("BatchNormalization", 15, {"x": x, "s": f32(2), "b": f32(2), "m": f32(2),
                                        "v": pos(2)}, training_mode=1,
             outputs=("y", "rm", "rv"), tag="training"),
        node("InstanceNormalization", 6, {"x": x, "s": f32(2), "b": f32(2)}),
        node("LRN", 13, {"x": x}, size=3, alpha=0.001),
        node("LayerNormalization", 17, {"x": f32(2, 3, 4), "s": f32(4), "b": f32(4)}),
        node("LayerNormalization", 17, {"x": f32(2, 3, 4), "s": f32(3, 4)}, axis=1,
             outputs=("y", "mean", "inv"), tag="stats"),
        node("LayerNormalization", 17, {"x": f32(2, 3, 4).astype(np.float16),
                                        "s": f32(4).astype(np.float16)},
             outputs=("y", "mean", "inv"), tag="f16-stats", rtol=1e-2, atol=1e-2),
        node("GroupNormalization", 21, {"x": f32(2, 4, 3), "s": f32(4), "b": f32(4)},
             num_groups=2),
        node("MeanVarianceNormalization", 13, {"x": x}, rtol=1e-4, atol=1e-4),
        node("LpNormalization", 1, {"x": f32(3, 4)}, p=1),
        node("LpNormalization", 22, {"x": f32(3, 4)}, axis=0),
        node("Einsum", 12, {"a": f32(2, 3), "b": f32(3, 4)}, equation="ij, jk -> ik"),
        # onnxruntime's Dropout-7 mask is all 0; ONNX's reference keeps every element (1).
        node("Dropout", 7, {"x": x[0, 0]}, outputs=("y", "mask"), ratio=0.3,
             expected=[x[0, 0], np.ones_like(x[0, 0])]),
        node("Dropout", 13, {"x": f32(3, 4)}, outputs=("y", "mask")),
        node("Resize", 13, {"x": f32(1, 1, 2, 3)},
             consts={"s": np.array([1, 1, 2, 1.5], np.float32)}, order=["x", "", "s"],
             mode="linear"),
        node("Resize", 19, {"x": f32(1, 1, 4, 4)}, consts={"z": i64(3, 2)},
             order=["x", "", "", "z"], axes=[2, 3], mode="cubic", tag="sizes-axes"),
        node("Resize", 11, {"x": f32(1, 1, 2, 2)}, consts={"r": np.zeros(0, np.float32),
                                                           "s": np.array([1, 1, 2, 3],
                                                                         np.float32)},
             coordinate_transformation_mode="asymmetric", nearest_mode="floor", tag="nearest"),
        node("Upsample", 9, {"x": f32(1, 1, 2, 2)},
             consts={"s": np.array([1, 1, 2, 3], np.float32)}),
        node("GridSample", 16, {"x": f32(1, 1, 3, 4), "g": f32(1, 2, 2, 2) * 0.8},
             align_corners=1),
        node("GridSample", 20, {"x": f32(1, 1, 3, 4), "g": f32(1, 2, 2, 2) * 0.8},
             mode="nearest", padding_mode="border", tag="nearest"),
    ]


def _recurrent(op: str, opset: int, gates: int, **attrs: Any) -> Case:
    seq, batch, inp, hidden = 3, 2, 4, 5
    dirs = 2 if attrs.get("direction") == "bidirectional" else 1
    layout = attrs.get("layout", 0)
    x = f32(batch, seq, inp) if layout else f32(seq, batch, inp)
    feeds = {"x": x, "w": f32(dirs, gates * hidden, inp) * 0.5,
             "r": f32(dirs, gates * hidden, hidden) * 0.5, "b": f32(dirs, 2 * gates * hidden)}
    outputs = ("y", "yh", "yc") if op == "LSTM" else ("y", "yh")
    tag = "-".join(f"{k}{v}" for k, v in attrs.items())
    expected = None
    if layout:
        # onnxruntime has no batch-first layout: run layout 0 and move the batch axis.
        plain = dict(attrs, layout=0)
        seq_first = node(op, opset, dict(feeds, x=x.transpose(1, 0, 2)), outputs=outputs,
                         hidden_size=hidden, **plain)
        ref = reference(seq_first)
        expected = [ref[0].transpose(2, 0, 1, 3)] + [r.transpose(1, 0, 2) for r in ref[1:]]
    return node(op, opset, feeds, outputs=outputs, hidden_size=hidden, tag=tag,
                expected=expected, **attrs)


def _rnn_cases() -> list[Case]:
    return [
        _recurrent("RNN", 7, 1), _recurrent("RNN", 14, 1, layout=1),
        _recurrent("GRU", 7, 3, direction="bidirectional"),
        _recurrent("GRU", 14, 3, linear_before_reset=1),
        _recurrent("LSTM", 7, 4), _recurrent("LSTM", 14, 4, direction="reverse"),
        _recurrent("LSTM", 22, 4, layout=1, direction="bidirectional"),
    ]


def _quant_cases() -> list[Case]:
    x = f32(2, 3) * 4
    return [
        node("QuantizeLinear", 10, {"x": x}, consts={"s": np.float32(0.1),
                                                     "z": np.uint8(128)}),
        node("QuantizeLinear", 13, {"x": x}, consts={"s": np.array([0.1, 0.2, 0.05], np.float32),
                                                     "z": np.array([0, 1, -2], np.int8)},
             axis=1, tag="axis"),
        node("DequantizeLinear", 10, {"x": ints(2, 3, low=0, high=255, dtype=np.uint8)},
             consts={"s": np.float32(0.1), "z": np.uint8(100)}),
        node("DequantizeLinear", 21, {"x": ints(2, 4, dtype=np.int8)},
             consts={"s": np.array([[0.1, 0.2], [0.3, 0.4]], np.float32)}, axis=1,
             block_size=2, tag="block"),
        node("MatMulInteger", 10, {"a": ints(2, 3, low=0, high=255, dtype=np.uint8),
                                   "b": ints(3, 4, low=0, high=255, dtype=np.uint8)},
             consts={"az": np.uint8(12), "bz": np.uint8(200)}),
        node("QLinearMatMul", 10, {"a": ints(2, 3, low=0, high=255, dtype=np.uint8),
                                   "b": ints(3, 4, low=0, high=255, dtype=np.uint8)},
             consts={"as": np.float32(0.02), "az": np.uint8(100), "bs": np.float32(0.03),
                     "bz": np.uint8(120), "ys": np.float32(0.5), "yz": np.uint8(10)},
             order=["a", "as", "az", "b", "bs", "bz", "ys", "yz"]),
    ]


def _more_cases() -> list[Case]:
    """Run-time axes and pads, newer operators, edge semantics."""
    x = f32(2, 3, 4)
    T = onnx.TensorProto
    return [
        node("Unsqueeze", 13, {"x": x, "a": i64(-1, 0)}, tag="runtime-axes"),
        node("Squeeze", 13, {"x": f32(1, 3, 1), "a": i64(2)}, tag="runtime-axes"),
        node("ReduceMean", 18, {"x": x, "a": i64(0, -1)}, keepdims=0, tag="runtime-axes"),
        node("ReduceSum", 13, {"x": x, "a": np.zeros(0, np.int64)},
             tag="runtime-empty-axes"),
        node("ReduceLogSumExp", 18, {"x": x, "a": i64(1)}, keepdims=0, tag="runtime-axes"),
        node("Pad", 19, {"x": f32(3, 4), "p": i64(2, -1, 1, 3)}, mode="wrap",
             tag="wrap-runtime"),
        node("Pad", 18, {"x": f32(2, 3), "p": i64(1, 2), "a": i64(-1)},
             order=["x", "p", "", "a"], tag="runtime-axes"),
        node("Split", 18, {"x": f32(2, 7)}, axis=1, num_outputs=3, outputs=("y", "z", "w"),
             tag="uneven"),
        node("CumProd", 26, {"x": f32(3, 5)}, consts={"a": np.int64(1)}, exclusive=1,
             expected=None),
        node("CumProd", 26, {"x": ints(4, 3, low=-3, high=4), "a": np.int64(0)}, reverse=1,
             tag="runtime-axis"),
        node("BitShift", 28, {"a": np.array([-16, 16, -1, 5, 7], np.int8),
                              "b": np.array([2, 9, 1, -1, 8], np.int8)}, direction="RIGHT",
             tag="signed"),
        # onnxruntime refuses fmod=0 on floats before opset 28.
        node("Mod", 13, {"a": f32(6), "b": np.array([2, -3, 4, -5, 3, -7], np.float32)},
             tag="float-floor", oracle="onnx"),
        node("LpNormalization", 22, {"x": np.array([[0, 3], [0, 4]], np.float32)}, axis=0,
             tag="zero"),
        node("MaxPool", 12, {"x": f32(1, 1, 4, 4)}, kernel_shape=[3, 3], strides=[2, 2],
             pads=[1, 1, 1, 1], ceil_mode=1, tag="ceil-pads"),
        # With output_shape, onnxruntime reads the indices in the output's flattening; the
        # ONNX reference (and the backend test) in the pooled input's, then pads.
        node("MaxUnpool", 11, {"x": f32(1, 1, 2, 2),
                               "i": i64(5, 7, 13, 15).reshape(1, 1, 2, 2)},
             consts={"s": i64(1, 1, 5, 5)}, kernel_shape=[2, 2], strides=[2, 2], oracle="onnx"),
        node("MaxUnpool", 22, {"x": f32(1, 1, 2, 2), "i": i64(0, 3, 9, 14).reshape(1, 1, 2, 2)},
             kernel_shape=[2, 2], strides=[2, 2], tag="no-shape"),
        node("Resize", 18, {"x": f32(1, 1, 4, 6), "z": i64(3, 3)}, order=["x", "", "", "z"],
             axes=[2, 3], keep_aspect_ratio_policy="not_larger", tag="aspect"),
        node("DFT", 17, {"x": f32(2, 8, 1)}, tag="real"),
        node("DFT", 20, {"x": f32(2, 8, 1)}, consts={"a": np.int64(1)}, order=["x", "", "a"],
             onesided=1, tag="rfft"),
        node("DFT", 20, {"x": f32(2, 8, 2), "n": np.int64(6)}, inverse=1,
             tag="inverse-length"),
        node("STFT", 17, {"s": f32(1, 64, 1)}, consts={"step": np.int64(8),
                                                       "w": np.hanning(16).astype(np.float32)},
             order=["s", "step", "w"]),
        node("TensorScatter", 24, {"c": f32(2, 3, 5, 4), "u": f32(2, 3, 2, 4),
                                   "w": i64(1, 4)}, mode="circular"),
        node("DeformConv", 19, {"x": f32(1, 2, 4, 4), "w": f32(2, 2, 2, 2),
                                "o": f32(1, 8, 3, 3) * 0.5}, kernel_shape=[2, 2]),
        node("OptionalHasElement", 18, {"x": x}),
        node("OptionalGetElement", 18, {"x": x}),
        Case("OptionalHasElement-18-empty",
             [helper.make_node("OptionalHasElement", [""], ["y"])], {}, 18,
             expected=[np.array(False)]),
        node("Cast", 1, {"x": np.array([1.7, -2.5, 3.0], np.float32)}, to="INT32",
             tag="named-type", expected=[np.array([1, -2, 3], np.int32)]),
        node("QuantizeLinear", 21, {"x": f32(2, 4) * 3}, consts={"s": np.float32(0.5),
                                                                "z": np.int16(3)}, tag="i16"),
        node("Cast", 21, {"x": f32(3) * 500}, to=T.FLOAT16, tag="f16-range"),
    ]


def _legacy_cases() -> list[Case]:
    """Early opset versions (attributes that later became inputs); numpy expectations,
    since onnxruntime no longer runs most of them."""
    x, c = f32(2, 3), f32(3)
    v = f32(2, 6)
    img = f32(1, 2, 2, 3)
    s, b, m, var = f32(2), f32(2), f32(2), pos(2)
    bn = (img - m[:, None, None]) / np.sqrt(var[:, None, None] + 1e-5) * s[:, None, None] + \
        b[:, None, None]
    top = np.sort(v, axis=1)[:, ::-1][:, :2]
    w, bias = f32(3, 4), f32(4)
    p, q = ints(2, 3, low=0, high=3), ints(3, low=0, high=3)
    return [
        node("Gemm", 6, {"a": x, "b": w, "c": bias}, broadcast=1, alpha=2.0, tag="bcast",
             expected=[2 * x @ w + bias]),
        node("Concat", 1, {"a": x, "b": x}, expected=[np.concatenate([x, x], axis=1)]),
        node("TopK", 1, {"x": v}, k=2, outputs=("v", "i"),
             expected=[top, np.argsort(-v, axis=1, kind="stable")[:, :2]]),
        node("Split", 2, {"x": v}, axis=1, split=[2, 4], outputs=("y", "z"),
             expected=[v[:, :2], v[:, 2:]]),
        node("Pad", 1, {"x": x}, paddings=[0, 1, 1, 0],
             expected=[np.pad(x, ((0, 1), (1, 0)))]),
        node("Upsample", 7, {"x": img}, scales=[1.0, 1.0, 2.0, 3.0],
             expected=[img.repeat(2, axis=2).repeat(3, axis=3)]),
        node("BatchNormalization", 6, {"x": img, "s": s, "b": b, "m": m, "v": var}, is_test=1,
             expected=[bn], rtol=1e-4),
        node("Dropout", 6, {"x": x}, is_test=1, expected=[x]),
        node("Sum", 6, {"a": x, "b": x, "c": x}, expected=[x * 3]),
        node("Max", 6, {"a": x, "b": -x}, expected=[np.abs(x)]),
        node("Squeeze", 1, {"x": f32(3, 1, 2)}, axes=[1], expected=None),
        node("Mul", 1, {"a": x, "b": c}, broadcast=1, expected=[x * c]),
        node("Equal", 1, {"a": p, "b": q}, broadcast=1, tag="bcast", expected=[p == q]),
        node("Softmax", 1, {"x": f32(2, 3, 4)}, axis=1, expected=None),
    ]


def _function_cases() -> list[Case]:
    """Operators translated through their ONNX function body."""
    return [
        node("HammingWindow", 17, {}, consts={"n": np.int64(8)}),
        node("NegativeLogLikelihoodLoss", 13, {"x": f32(3, 4), "t": i64(0, 3, 1)},
             reduction="mean"),
        node("SoftmaxCrossEntropyLoss", 13, {"x": f32(3, 4), "t": i64(0, 3, 1)},
             reduction="sum"),
    ]


CASES: list[Case] = (
    _binary_cases() + _compare_cases() + _unary_cases() + _activation_cases() + _cast_cases()
    + _variadic_cases() + _shape_cases() + _indexing_cases() + _reduce_cases() + _nn_cases()
    + _rnn_cases() + _quant_cases() + _more_cases() + _legacy_cases()
    + _function_cases()
)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_translator(case: Case, tmp_path: Path) -> None:
    run_both(case, tmp_path)


# With every input dim unknown these cannot work anywhere: the output rank depends on
# input values (Squeeze without axes, ConstantOfShape, GatherND), OpenVINO's CPU plugin
# wants static convolution weights, or the translation needs a static dim.
_STATIC_ONLY = {
    "Squeeze-13", "ConstantOfShape-9", "ConstantOfShape-20-int", "GatherND-11", "GatherND-12",
    "Unsqueeze-13-runtime-axes", "Squeeze-13-runtime-axes", "Squeeze-13-empty-runtime-axes",
    "ReduceMean-18-runtime-axes",
    "ReduceLogSumExp-18-runtime-axes",  # a run-time axes list of unknown length
    "Conv-11", "Conv-1-same", "Conv-22-group", "ConvTranspose-11",
    "ConvTranspose-22-group-shape", "DequantizeLinear-21-block", "CumProd-26",
    "CumProd-26-runtime-axis", "MaxUnpool-11", "MaxUnpool-22-no-shape",
    "DFT-17-real", "DFT-20-rfft", "DFT-20-inverse-length", "STFT-17",  # real or complex?
}


@pytest.mark.parametrize("case", [c for c in CASES if c.feeds and c.id not in _STATIC_ONLY],
                         ids=str)
def test_translator_dynamic_shapes(case: Case, tmp_path: Path) -> None:
    """The same models with every graph input and output dim declared unknown."""
    run_both(case, tmp_path, dynamic=True)


def test_every_case_id_is_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})


def test_every_schema_version_is_registered() -> None:
    """Each op of ``irtool.frontends.onnx.ops`` has a translator for every since-version of
    its schema."""
    from irtool.frontends.onnx.context import find_translator, translators

    have = translators()
    ours = {op for op, versions in have.items()
            if find_translator(op, max(versions)).__module__.startswith(
                "irtool.frontends.onnx.ops")}
    missing = {}
    for schema in onnx.defs.get_all_schemas_with_history():
        if schema.domain in ("", "ai.onnx") and schema.name in ours and \
                schema.since_version not in have[schema.name]:
            missing.setdefault(schema.name, []).append(schema.since_version)
    assert len(ours) > 150
    assert not missing, missing


def test_training_dropout_keeps_or_scales_each_element() -> None:
    """Training dropout is random: each output is 0 (dropped) or x / (1 - ratio) (kept),
    as the mask says, and about ``ratio`` of the elements are dropped."""
    x = pos(4000)
    case = node("Dropout", 13, {"x": x, "t": np.bool_(True)}, consts={"r": np.float32(0.25)},
                order=["x", "r", "t"], outputs=("y", "mask"))
    model = irtool.convert(build(case, [x, np.ones(x.shape, bool)]))
    got = irtool.run(model, case.feeds)
    y, mask = got["y"], got["mask"]
    np.testing.assert_allclose(y[mask], x[mask] / 0.75, rtol=1e-6)
    assert not y[~mask].any()
    assert 0.2 < 1 - mask.mean() < 0.3
    off = irtool.run(model, {"x": x, "t": np.bool_(False)})
    np.testing.assert_array_equal(off["y"], x)
    assert off["mask"].all()
