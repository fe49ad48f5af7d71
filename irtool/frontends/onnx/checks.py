"""What the converter refuses before translating anything, with one line naming the place.

ONNX's own checker lets through what cannot become IR, or crashes later steps:
names that are not valid UTF-8 (protobuf hands them over as ``bytes``) or hold
control characters (XML cannot carry them, and they would split the one-line
error messages), element types no ONNX version defines, and declared dimensions
that are negative (but -1, which some exporters write for "unknown") or larger
than any tensor (IR ports refuse dims outside ``-1..MAX_DIM``). A model without a
graph (a truncated file may still parse) has nothing to convert. These walks read
declarations only, never tensor data, so they cost little next to the conversion.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import cache

import onnx

from ...core.errors import ConversionError
from ...ir.serde.xml_reader import MAX_DIM
from ...ir.types import ElementType
from .protos import subgraphs
from .tensor_types import ONNX_TO_ELEMENT_TYPE

# Characters XML 1.0 cannot hold, plus tab, newline and carriage return, which it can but
# which would break the one-line messages that name a value.
_BAD_CHAR = re.compile("[^\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_KNOWN_ELEM_TYPES = frozenset(onnx.TensorProto.DataType.values())


def check_declarations(proto: onnx.ModelProto, file: str | None = None) -> None:
    """Raise a ``ConversionError`` for the first declaration irtool cannot take."""
    if not proto.HasField("graph"):
        raise ConversionError("the file holds no ONNX graph (a truncated file or not an "
                              "ONNX model?)", file=file)
    if not proto.graph.output:
        raise ConversionError("the main graph has no outputs: there is nothing to compute",
                              file=file)
    _Checker(file).graph(proto.graph, "main graph")


def describe_name(name: str | bytes) -> str:
    """``name`` quoted for a message, whatever it holds (bytes shown escaped)."""
    return repr(name) if isinstance(name, str) else repr(bytes(name))[1:]


class _Checker:
    def __init__(self, file: str | None) -> None:
        self.file = file

    def fail(self, message: str, node: str | None = None) -> ConversionError:
        return ConversionError(message, file=self.file, node=node)

    def name(self, value: str | bytes, what: str, node: str | None = None) -> None:
        if not isinstance(value, str):
            raise self.fail(f"{what} {describe_name(value)} is not valid UTF-8", node)
        bad = _BAD_CHAR.search(value)
        if bad:
            raise self.fail(f"{what} {describe_name(value)} holds the character "
                            f"U+{ord(bad.group()):04X}, which IR (XML) names cannot hold", node)

    def graph(self, graph: onnx.GraphProto, where: str) -> None:
        self.name(graph.name, f"{where}: graph name")
        for kind, values in (("input", graph.input), ("output", graph.output),
                             ("value_info", graph.value_info)):
            for vi in values:
                self.name(vi.name, f"{where}: {kind}")
                self.type(vi.type, f"{where}: {kind} {describe_name(vi.name)}")
        for tensor in graph.initializer:
            self.tensor(tensor, f"{where}: initializer")
        for sparse in graph.sparse_initializer:
            self.tensor(sparse.values, f"{where}: sparse initializer")
        for node in graph.node:
            self.node(node, where)

    def node(self, node: onnx.NodeProto, where: str) -> None:
        self.name(node.name, f"{where}: node name")
        self.name(node.op_type, f"{where}: operator type")
        self.name(node.domain, f"{where}: operator domain")
        # The node's name was checked above; its outputs are named in the label as they are
        # (escaped), since checking them is what follows.
        label = node.name or _BAD_CHAR.sub(
            lambda m: f"\\x{ord(m.group()):02x}",
            f"{node.op_type}({', '.join(map(str, node.output))})")
        for kind, names in (("input", node.input), ("output", node.output)):
            for i, name in enumerate(names):
                self.name(name, f"{kind} {i}", label)
        for attr in node.attribute:
            self.name(attr.name, "attribute name", label)
            if attr.type == onnx.AttributeProto.TENSOR:
                self.tensor(attr.t, f"attribute {attr.name}", label)
            for tensor in attr.tensors:
                self.tensor(tensor, f"attribute {attr.name}", label)
        for attr_name, sub in subgraphs(node):
            self.graph(sub, f"{attr_name} of {node.op_type} {label}")

    def tensor(self, tensor: onnx.TensorProto, what: str, node: str | None = None) -> None:
        self.name(tensor.name, what, node)
        what = f"{what} {describe_name(tensor.name)}" if tensor.name else what
        self.elem_type(tensor.data_type, what, node)
        self.dims(tensor.dims, what, node)

    def type(self, type_proto: onnx.TypeProto, what: str) -> None:
        which = type_proto.WhichOneof("value")
        if which == "tensor_type" or which == "sparse_tensor_type":
            tt = getattr(type_proto, which)
            if tt.elem_type:  # 0: not given, which ONNX allows (inference may fill it)
                self.elem_type(tt.elem_type, what)
            if tt.HasField("shape"):
                # -1 is how some exporters write an unknown dimension: ONNX runtimes take it so.
                self.dims((d.dim_value for d in tt.shape.dim
                           if d.HasField("dim_value") and d.dim_value != -1), what)
                for d in tt.shape.dim:
                    if d.HasField("dim_param"):
                        self.name(d.dim_param, f"{what}: dimension name")
        elif which in ("sequence_type", "optional_type"):
            self.type(getattr(type_proto, which).elem_type, what)
        elif which == "map_type":
            self.type(type_proto.map_type.value_type, what)

    def elem_type(self, elem_type: int, what: str, node: str | None = None) -> None:
        if elem_type not in _KNOWN_ELEM_TYPES:
            raise self.fail(f"{what} has element type {elem_type}, which no ONNX version "
                            "defines", node)

    def dims(self, dims: Iterable[int], what: str, node: str | None = None) -> None:
        for dim in dims:
            if dim < 0:
                raise self.fail(f"{what} declares the dimension {dim}; dimensions are not "
                                "negative", node)
            if dim > MAX_DIM:
                raise self.fail(f"{what} declares the dimension {dim}, larger than any tensor "
                                f"(irtool's limit is {MAX_DIM})", node)


def check_input_types(node: onnx.NodeProto, opset: int,
                      types: Sequence[ElementType | None]) -> str | None:
    """Why the inputs' element types (``types``, None where absent) break the type
    constraints of ``node``'s ONNX schema at ``opset``, or None. onnxruntime refuses such a
    node too; a translator would build ops on a type they do not take (a ThresholdedRelu of
    strings made a string constant of its alpha)."""
    formal = _formal_types(node.op_type, opset, "" if node.domain == "ai.onnx" else node.domain)
    if not formal:
        return None
    for i, et in enumerate(types):
        if et is None:
            continue
        name, allowed = formal[min(i, len(formal) - 1)]
        if not allowed:
            continue
        given = f"tensor({_ONNX_NAME.get(et, et.name)})"
        if given not in allowed:
            shown = ", ".join(sorted(t[7:-1] for t in allowed))
            return (f"input {i} ({name}) is {given}; {node.op_type} takes tensor({shown}) "
                    "there")
    return None


@cache
def _formal_types(op_type: str, opset: int, domain: str = ""
                  ) -> tuple[tuple[str, frozenset[str]], ...]:
    """Each formal input's name and the tensor types it allows (empty: no constraint on
    tensors, e.g. a sequence); nothing when ONNX has no schema for the op."""
    try:
        schema = onnx.defs.get_schema(op_type, opset, domain)
    except Exception:  # SchemaError: an op onnx does not know at this opset
        return ()
    constraints = {c.type_param_str: c.allowed_type_strs for c in schema.type_constraints}
    out = []
    for param in schema.inputs:
        allowed = constraints.get(_ERRATA.get((op_type, schema.since_version, param.name),
                                              param.type_str), [param.type_str])
        out.append((param.name, frozenset(t for t in allowed if t.startswith("tensor("))))
    return tuple(out)


_ERRATA = {("Tile", 1, "tiles"): "T1", ("Tile", 1, "axis"): "T1"}
"""Schema slips: Tile-1 declares T1 (int64) for tiles and axis but types them T (floats);
exporters and runtimes take them as int64."""


_ONNX_NAME = {et: onnx.TensorProto.DataType.Name(code).lower()
              for code, et in ONNX_TO_ELEMENT_TYPE.items()}
