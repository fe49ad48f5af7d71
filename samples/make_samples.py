"""Build the sample ONNX models (and example inputs) in this folder.

* ``predict_net.onnx``: the ONNX Loop specification's example "predict-net":
  ``a = 3`` read from the enclosing scope, ``b`` carried, ``keepgoing`` as the
  loop condition, ``max_trip_count = 10``, scan output ``b_in + b_in``. ``b``
  and ``keepgoing`` are graph inputs (the spec's values, 6 and true, are in
  ``predict_net.inputs.npz``); ``a`` and the trip count stay constants, as in
  the spec, so any input gives a loop of at most 10 iterations.
* ``scan_cumsum.onnx``: a Scan (opset 17) computing the running sum of the rows
  of ``X`` from ``initial``.
* ``if_select.onnx``: an If whose branches read the outer values ``x`` and ``y``
  (captures): ``(x + y) * 2`` when ``cond`` holds, else ``x - y``.
* ``cast_trip.onnx``: a Loop emitting ``tanh`` of each row of ``X`` whose trip count is
  the number of rows cast to uint8 and back, as an exporter's narrowing cast leaves it:
  over the 260 rows of ``cast_trip.inputs.npz`` that is 260 % 256 = 4 iterations
  (onnxruntime, irtool); OpenVINO's CPU plugin runs 260 (docs/openvino-quirks.md), and
  ``irtool check samples/cast_trip.onnx samples/cast_trip.inputs.npz --localize`` says
  where it departs.

Run ``python samples/make_samples.py [FOLDER]`` (from anywhere); the files are
written next to this script unless a folder is given. Then e.g.
``irtool convert samples/predict_net.onnx -o /tmp/predict_net.xml`` and
``irtool run /tmp/predict_net.xml samples/predict_net.inputs.npz``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = Path(__file__).resolve().parent
OPSET = 17


def _const(name: str, value: np.ndarray) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [name], name=name,
                            value=numpy_helper.from_array(np.asarray(value), name))


def _model(graph: onnx.GraphProto) -> onnx.ModelProto:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="irtool samples")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def predict_net() -> onnx.ModelProto:
    """The Loop spec's sample usage, "cond as well as trip count"."""
    body = helper.make_graph(
        [
            helper.make_node("Add", ["a", "b_in"], ["my_local"], name="my_local"),
            helper.make_node("Sub", ["a", "b_in"], ["b_out"], name="b_out"),
            helper.make_node("Greater", ["my_local", "b_out"], ["keepgoing_out"],
                             name="keepgoing_out"),
            helper.make_node("Add", ["b_in", "b_in"], ["user_defined_val"],
                             name="user_defined_val"),
        ],
        "body-net",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("keepgoing_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("b_in", TensorProto.INT32, []),
        ],
        [
            helper.make_tensor_value_info("keepgoing_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("b_out", TensorProto.INT32, []),
            helper.make_tensor_value_info("user_defined_val", TensorProto.INT32, []),
        ],
    )
    graph = helper.make_graph(
        [
            _const("a", np.array(3, dtype=np.int32)),
            _const("max_trip_count", np.array(10, dtype=np.int64)),
            helper.make_node("Loop", ["max_trip_count", "keepgoing", "b"],
                             ["b_final", "user_defined_vals"], name="loop", body=body),
        ],
        "predict-net",
        [
            helper.make_tensor_value_info("b", TensorProto.INT32, []),
            helper.make_tensor_value_info("keepgoing", TensorProto.BOOL, []),
        ],
        [
            helper.make_tensor_value_info("b_final", TensorProto.INT32, []),
            helper.make_tensor_value_info("user_defined_vals", TensorProto.INT32, ["N"]),
        ],
    )
    return _model(graph)


def scan_cumsum() -> onnx.ModelProto:
    """Scan-16: ``sum += X[t]`` for each row ``t``; outputs the final sum and every sum."""
    body = helper.make_graph(
        [
            helper.make_node("Add", ["sum_in", "row"], ["sum_out"], name="sum_out"),
            helper.make_node("Identity", ["sum_out"], ["running"], name="running"),
        ],
        "cumsum-body",
        [
            helper.make_tensor_value_info("sum_in", TensorProto.FLOAT, [3]),
            helper.make_tensor_value_info("row", TensorProto.FLOAT, [3]),
        ],
        [
            helper.make_tensor_value_info("sum_out", TensorProto.FLOAT, [3]),
            helper.make_tensor_value_info("running", TensorProto.FLOAT, [3]),
        ],
    )
    graph = helper.make_graph(
        [helper.make_node("Scan", ["initial", "X"], ["total", "cumsum"], name="scan",
                          body=body, num_scan_inputs=1)],
        "scan-cumsum",
        [
            helper.make_tensor_value_info("initial", TensorProto.FLOAT, [3]),
            helper.make_tensor_value_info("X", TensorProto.FLOAT, [5, 3]),
        ],
        [
            helper.make_tensor_value_info("total", TensorProto.FLOAT, [3]),
            helper.make_tensor_value_info("cumsum", TensorProto.FLOAT, [5, 3]),
        ],
    )
    return _model(graph)


def if_select() -> onnx.ModelProto:
    """If with captures: both branches read ``x`` and ``y`` from the main graph."""
    then_branch = helper.make_graph(
        [
            helper.make_node("Add", ["x", "y"], ["sum"], name="sum"),
            helper.make_node("Mul", ["sum", "two"], ["doubled"], name="doubled"),
        ],
        "then", [], [helper.make_tensor_value_info("doubled", TensorProto.FLOAT, [3])])
    else_branch = helper.make_graph(
        [helper.make_node("Sub", ["x", "y"], ["diff"], name="diff")],
        "else", [], [helper.make_tensor_value_info("diff", TensorProto.FLOAT, [3])])
    graph = helper.make_graph(
        [
            _const("two", np.array(2.0, dtype=np.float32)),
            helper.make_node("If", ["cond"], ["z"], name="select",
                             then_branch=then_branch, else_branch=else_branch),
        ],
        "if-select",
        [
            helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [3]),
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [3]),
        ],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [3])],
    )
    return _model(graph)


def cast_trip() -> onnx.ModelProto:
    """Loop over the rows of X, its trip count ``Cast(Cast(len(X), uint8), int64)``."""
    body = helper.make_graph(
        [
            helper.make_node("Gather", ["X", "i"], ["row"], name="row", axis=0),
            helper.make_node("Tanh", ["row"], ["y"], name="y"),
            helper.make_node("Identity", ["cond_in"], ["cond_out"], name="cond_out"),
        ],
        "rows-body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [2]),
        ],
    )
    graph = helper.make_graph(
        [
            helper.make_node("Shape", ["X"], ["shape"], name="shape"),
            _const("zero", np.array(0, dtype=np.int64)),
            helper.make_node("Gather", ["shape", "zero"], ["rows"], name="rows", axis=0),
            helper.make_node("Cast", ["rows"], ["rows_u8"], name="rows_u8",
                             to=TensorProto.UINT8),
            helper.make_node("Cast", ["rows_u8"], ["trip"], name="trip",
                             to=TensorProto.INT64),
            _const("go", np.array(True)),
            helper.make_node("Loop", ["trip", "go"], ["Y"], name="loop", body=body),
        ],
        "cast-trip",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["M", 2])],
    )
    return _model(graph)


SAMPLES = {
    "predict_net": (predict_net, {"b": np.array(6, dtype=np.int32),
                                  "keepgoing": np.array(True)}),
    "scan_cumsum": (scan_cumsum, {"initial": np.zeros(3, dtype=np.float32),
                                  "X": np.arange(15, dtype=np.float32).reshape(5, 3)}),
    "if_select": (if_select, {"cond": np.array(True),
                              "x": np.array([1.0, 2.0, 3.0], dtype=np.float32),
                              "y": np.array([0.5, -1.0, 4.0], dtype=np.float32)}),
    "cast_trip": (cast_trip, {"X": np.linspace(-2, 2, 520, dtype=np.float32).reshape(260, 2)}),
}


def main(folder: Path = HERE) -> list[Path]:
    """Write every sample model and its inputs into ``folder``; returns the model paths."""
    written = []
    for name, (build, inputs) in SAMPLES.items():
        path = folder / f"{name}.onnx"
        onnx.save(build(), path)
        with open(folder / f"{name}.inputs.npz", "wb") as f:
            np.savez(f, **inputs)
        written.append(path)
        print(f"wrote {path}")
    return written


if __name__ == "__main__":
    import sys

    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
