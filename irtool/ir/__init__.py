"""The in-memory IR, building it in code, and its XML/.bin serialization."""

from .builder import GraphBuilder, IfBuilder, LoopBuilder, TensorIteratorBuilder, Value
from .graph import (
    BackEdge,
    ConstData,
    Edge,
    Graph,
    Layer,
    Model,
    Port,
    PortMapEntry,
    RTNode,
    Shape,
    Slicing,
    TensorInfo,
    format_shape,
    parse_shape,
    tensor_name,
)
from .serde.canonical import round_trip_difference, xml_difference
from .serde.xml_reader import read_model, read_model_bytes
from .serde.xml_writer import serialize, write_model
from .types import ELEMENT_TYPES, ElementType, element_type, from_numpy

__all__ = [
    "ELEMENT_TYPES", "BackEdge", "ConstData", "Edge", "ElementType", "Graph", "GraphBuilder",
    "IfBuilder", "Layer", "LoopBuilder", "Model", "Port", "PortMapEntry", "RTNode", "Shape",
    "Slicing", "TensorInfo", "TensorIteratorBuilder", "Value", "element_type", "format_shape",
    "from_numpy", "parse_shape", "read_model", "read_model_bytes", "round_trip_difference",
    "serialize", "tensor_name", "write_model", "xml_difference",
]
