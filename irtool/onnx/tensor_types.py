"""ONNX tensor types as irtool ``TensorInfo``: the element-type table, what a graph
declares (and ONNX shape inference adds) about each tensor, and how two descriptions
of one tensor combine (``refine`` keeps the known, ``union`` covers both)."""

from __future__ import annotations

import onnx

from ..ir.types import ELEMENT_TYPES, ElementType
from ..opset import TensorInfo

# ONNX TensorProto element types -> OpenVINO element types.
ONNX_TO_ELEMENT_TYPE: dict[int, ElementType] = {
    onnx.TensorProto.FLOAT: ELEMENT_TYPES["f32"],
    onnx.TensorProto.UINT8: ELEMENT_TYPES["u8"],
    onnx.TensorProto.INT8: ELEMENT_TYPES["i8"],
    onnx.TensorProto.UINT16: ELEMENT_TYPES["u16"],
    onnx.TensorProto.INT16: ELEMENT_TYPES["i16"],
    onnx.TensorProto.INT32: ELEMENT_TYPES["i32"],
    onnx.TensorProto.INT64: ELEMENT_TYPES["i64"],
    onnx.TensorProto.STRING: ELEMENT_TYPES["string"],
    onnx.TensorProto.BOOL: ELEMENT_TYPES["boolean"],
    onnx.TensorProto.FLOAT16: ELEMENT_TYPES["f16"],
    onnx.TensorProto.DOUBLE: ELEMENT_TYPES["f64"],
    onnx.TensorProto.UINT32: ELEMENT_TYPES["u32"],
    onnx.TensorProto.UINT64: ELEMENT_TYPES["u64"],
    onnx.TensorProto.BFLOAT16: ELEMENT_TYPES["bf16"],
    onnx.TensorProto.FLOAT8E4M3FN: ELEMENT_TYPES["f8e4m3"],
    onnx.TensorProto.FLOAT8E5M2: ELEMENT_TYPES["f8e5m2"],
    onnx.TensorProto.UINT4: ELEMENT_TYPES["u4"],
    onnx.TensorProto.INT4: ELEMENT_TYPES["i4"],
}


def tensor_info_from_type(type_proto: onnx.TypeProto) -> TensorInfo | None:
    """The ``TensorInfo`` of an ONNX tensor type (None for sequences, optionals, unknown)."""
    if not type_proto.HasField("tensor_type"):
        return None
    tt = type_proto.tensor_type
    et = ONNX_TO_ELEMENT_TYPE.get(tt.elem_type)
    if et is None:
        return None
    if not tt.HasField("shape"):
        return TensorInfo(et, None)
    # A negative dim is unknown: shape inference computes some (-8) from a -1 it was given.
    dims = tuple(d.dim_value if d.HasField("dim_value") and d.dim_value >= 0 else -1
                 for d in tt.shape.dim)
    return TensorInfo(et, dims)


def value_infos(graph: onnx.GraphProto) -> dict[str, TensorInfo]:
    """What the graph's declarations and ONNX shape inference say about each tensor."""
    infos: dict[str, TensorInfo] = {}
    for vi in [*graph.input, *graph.value_info, *graph.output]:
        info = tensor_info_from_type(vi.type)
        if info is not None:
            infos[vi.name] = refine(infos[vi.name], info) if vi.name in infos else info
    return infos


def refine(known: TensorInfo, hint: TensorInfo | None) -> TensorInfo:
    """``known`` with its dynamic dimensions filled from ``hint`` where ``hint`` agrees.

    ``hint`` is what ONNX says; where the two disagree (another element type,
    rank or static size) ``known`` wins.
    """
    if hint is None or hint.element_type != known.element_type or hint.shape is None:
        return known
    if known.shape is None:
        return TensorInfo(known.element_type, hint.shape)
    if len(known.shape) != len(hint.shape):
        return known
    return TensorInfo(known.element_type,
                      tuple(h if k < 0 else k for k, h in zip(known.shape, hint.shape)))


def union(a: TensorInfo, b: TensorInfo) -> TensorInfo:
    """A type covering both: dims that differ become ``-1``, ranks that differ dynamic rank."""
    if a.shape is None or b.shape is None or len(a.shape) != len(b.shape):
        return TensorInfo(a.element_type, None)
    return TensorInfo(a.element_type,
                      tuple(x if x == y else -1 for x, y in zip(a.shape, b.shape)))
