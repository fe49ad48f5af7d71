"""Shared helpers of the converter tests (no tests here): build small ONNX models,
and check a conversion against onnxruntime on OpenVINO and on irtool's runtime.

Expected values always come from onnxruntime (or a case's own expected outputs),
never from irtool.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

import irtool
from support.compare import assert_same

TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64,
         np.dtype(np.int32): TensorProto.INT32, np.dtype(np.bool_): TensorProto.BOOL,
         np.dtype(np.float64): TensorProto.DOUBLE}


def vi(name: str, dtype: object, shape: Sequence[int | str | None] | None
       ) -> onnx.ValueInfoProto:
    """A tensor value info; ``shape=None``: no shape; ``None`` dims: unknown."""
    return helper.make_tensor_value_info(name, TYPES[np.dtype(dtype)], shape)


def const_node(name: str, value: object, dtype: object = None) -> onnx.NodeProto:
    arr = np.asarray(value, dtype=dtype)
    return helper.make_node("Constant", [], [name], name=name,
                            value=onnx.numpy_helper.from_array(arr, name))


def make_model(nodes: Sequence[onnx.NodeProto], inputs: Sequence[onnx.ValueInfoProto],
               outputs: Sequence[onnx.ValueInfoProto], opset: int = 17,
               initializers: Sequence[onnx.TensorProto] = (), name: str = "test"
               ) -> onnx.ModelProto:
    graph = helper.make_graph(list(nodes), name, list(inputs), list(outputs),
                              initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 10)
    return model


def run_onnxruntime(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]
                    ) -> dict[str, np.ndarray]:
    import onnxruntime as ort

    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, dict(feeds))))


OV_CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}
"""Run f32 as f32 (some CPUs would pick bf16 and miss the tolerances)."""


def ov_tensor(value: np.ndarray):  # -> ov.Tensor
    """``value`` as an OpenVINO tensor; bfloat16 goes in bit for bit (numpy has no bf16)."""
    import openvino as ov

    value = np.asarray(value)
    if value.dtype.name == "bfloat16":
        tensor = ov.Tensor(ov.Type.bf16, ov.Shape(list(value.shape)))
        tensor.data.view(np.uint16)[...] = value.view(np.uint16)
        return tensor
    return ov.Tensor(np.require(value, requirements="C"))


def ov_array(tensor) -> np.ndarray:  # tensor: ov.Tensor
    """An OpenVINO tensor as numpy; bf16 comes back as ml_dtypes.bfloat16."""
    import ml_dtypes
    import openvino as ov

    data = np.array(tensor.data)
    if tensor.element_type == ov.Type.bf16:
        return data.view(np.uint16).view(ml_dtypes.bfloat16)
    return data


def run_openvino(xml: Path, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Outputs by name from OpenVINO's CPU plugin on the IR file (independent of irtool).

    Compiled afresh on each call: OpenVINO's CPU plugin keeps a stale scan
    output shape when a Loop runs zero iterations after a run with some.
    """
    import openvino as ov

    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(xml)), "CPU", OV_CONFIG)
    request = compiled.create_infer_request()
    request.infer({name: ov_tensor(v) for name, v in feeds.items()})
    return ov_outputs(compiled, request)


def ov_outputs(compiled, request) -> dict[str, np.ndarray]:  # ov.CompiledModel, InferRequest
    """Each output under the IR's name for it: the name its Result's ``output_names``
    gives, i.e. the Result's own name minus the ``/sink_port_0`` suffix irtool writes.

    Not ``any_name``: when OpenVINO folds an If whose condition is constant, the
    output tensor also gets the branch's inner tensor names, and the smallest one
    may be one of those.
    """
    out = {}
    for port in compiled.outputs:
        result = port.get_node().get_friendly_name()
        name = result.removesuffix("/sink_port_0")
        out[name if name in port.names else port.any_name] = ov_array(request.get_tensor(port))
    return out


def check_conversion(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], tmp_path: Path,
                     *, slice_inputs: bool = False, vectorize: bool = True,
                     expected: Mapping[str, np.ndarray] | None = None, rtol: float = 1e-5,
                     atol: float = 1e-6, checker: bool = True
                     ) -> irtool.Model:
    """Convert ``model``, save it, and compare OpenVINO and irtool with onnxruntime.

    Also checks that irtool's validator finds no error in the IR and that OpenVINO
    names the outputs exactly as the ONNX graph does.
    ``checker=False`` (with ``expected`` given) is for models ONNX itself rejects
    but irtool accepts. Returns the converted model for structural checks.
    """
    if checker:
        onnx.checker.check_model(model)
    if expected is None:
        expected = run_onnxruntime(model, feeds)
    ir = irtool.convert(model, slice_inputs=slice_inputs, vectorize=vectorize)
    problems = [p.format() for p in irtool.validate(ir) if p.severity == "error"]
    assert not problems, problems
    xml = irtool.save(ir, tmp_path / "model.xml")
    import openvino as ov

    names = [o.any_name for o in ov.Core().read_model(str(xml)).outputs]
    assert names == [o.name for o in model.graph.output]
    for who, outputs in (("openvino", run_openvino(xml, feeds)),
                         ("irtool", irtool.run(irtool.load(xml), dict(feeds)))):
        assert_same(outputs, expected, who, rtol, atol, float_dtypes=False)
    return ir


def loop_layers(model: irtool.Model, type: str = "Loop") -> list:
    """Every layer of ``type`` in the model, nested bodies included."""
    return [layer for _, layer in model.graph.walk() if layer.type == type]
