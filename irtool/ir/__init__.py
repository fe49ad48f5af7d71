"""The in-memory IR and its XML/.bin serialization."""

from .canonical import round_trip_difference, xml_difference
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
    constant,
    format_shape,
    parse_shape,
    tensor_name,
)
from .types import ELEMENT_TYPES, ElementType, element_type, from_numpy
from .xml_reader import read_model, read_model_bytes
from .xml_writer import serialize, write_model

__all__ = [
    "ELEMENT_TYPES", "BackEdge", "ConstData", "Edge", "ElementType", "Graph", "Layer", "Model",
    "Port", "PortMapEntry", "RTNode", "Shape", "constant", "element_type", "format_shape",
    "from_numpy", "parse_shape", "read_model", "read_model_bytes", "round_trip_difference",
    "serialize", "tensor_name", "write_model", "xml_difference",
]
