"""ONNX tensor types as irtool ``TensorInfo``: the element-type table, what a graph
declares (and ONNX shape inference adds) about each tensor, and how two descriptions
of one tensor combine (``refine`` keeps the known, ``union`` covers both)."""

from __future__ import annotations

import numpy as np
import onnx

from ...ir.graph import shape_text
from ...ir.types import ElementType, from_numpy, ml_dtypes  # type: ignore[attr-defined]
from ...opset import TensorInfo


def _numpy_dtype(code: int) -> np.dtype:
    """The numpy dtype of an ONNX ``TensorProto`` type, as onnx and ml_dtypes name it.

    Before onnx 1.18 ``tensor_dtype_to_np_dtype`` answers the *storage* type for
    bfloat16, the float8s and the 4-bit integers (float32, uint8...), so the ml_dtypes
    type spelled like the ONNX type (``FLOAT8E4M3FN`` -> ``float8_e4m3fn``, ``FLOAT4E2M1``
    -> ``float4_e2m1fn``) comes first; onnx 1.18 and later answer that very type.
    """
    name = onnx.helper.tensor_dtype_to_string(code).rsplit(".", 1)[-1].lower()
    if ml_dtypes is not None:
        for candidate in dir(ml_dtypes):
            if candidate.replace("_", "") in (name, name + "fn", name + "fnu"):
                return np.dtype(getattr(ml_dtypes, candidate))
    return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(code))


def _element_types() -> dict[int, ElementType]:
    """Every ``TensorProto`` type the installed onnx defines that OpenVINO has a type for
    (so an older onnx without, say, ``UINT4`` simply has no entry for it)."""
    table: dict[int, ElementType] = {}
    for code in onnx.helper.get_all_tensor_dtypes():
        try:
            table[code] = from_numpy(_numpy_dtype(code))
        except (KeyError, TypeError, ValueError):  # complex, fnuz floats...: not in OpenVINO
            continue
    return table


# ONNX TensorProto element types -> OpenVINO element types, from onnx's and ml_dtypes' own
# tables rather than a list of TensorProto attributes some onnx versions lack.
ONNX_TO_ELEMENT_TYPE: dict[int, ElementType] = _element_types()


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


def value_infos(graph: onnx.GraphProto, *, output_shapes: bool = True
                ) -> dict[str, TensorInfo]:
    """What the graph's declarations and ONNX shape inference say about each tensor.

    ``output_shapes=False`` takes only the element types of the graph's outputs: a main
    graph's declared output shape is a claim that onnxruntime and OpenVINO do not hold
    the computation to (onnxmltools declares a classifier's label ``[1]`` for any number
    of rows), while irtool's runtime checks values against their ports.
    """
    infos: dict[str, TensorInfo] = {}
    outputs = {vi.name for vi in graph.output} if not output_shapes else set()
    for vi in [*graph.input, *graph.value_info, *graph.output]:
        info = tensor_info_from_type(vi.type)
        if info is not None and vi.name in outputs:
            info = TensorInfo(info.element_type, None)
        if info is not None:
            infos[vi.name] = refine(infos[vi.name], info) if vi.name in infos else info
    return infos


def contradicts(declared: TensorInfo | None, shape: tuple[int, ...] | None) -> bool:
    """Does ``shape`` (``-1``: dynamic dims; None: unknown rank) contradict the declared
    one: another rank, or another size of a dim both give statically?"""
    if declared is None or declared.shape is None or shape is None:
        return False
    return len(declared.shape) != len(shape) or any(
        a >= 0 and b >= 0 and a != b for a, b in zip(declared.shape, shape))


def declared_output_warning(name: str, declared: TensorInfo, shape: tuple[int, ...]) -> str:
    """The one line saying graph output ``name`` is not the shape its ONNX declaration says.

    ONNX takes the declared shapes of a graph's outputs as assertions about the values
    the nodes compute ("Semantics of Shape Annotations"); when they do not hold, what the
    nodes compute is the output, as onnxruntime runs it (warning), and so does irtool.
    """
    return (f"graph output {name!r} is declared {shape_text(declared.shape)} but is "
            f"{shape_text(shape)}; "
            "the computed value is the output (the declaration is wrong, as onnxruntime "
            "also finds)")


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
