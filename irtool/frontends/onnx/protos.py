"""Plain ONNX protobuf helpers: nested graphs, names, labels, type names.

Pure functions over ``onnx`` messages; nothing here imports irtool, so the
frontend, the cross-check and the conformance runner share one walker over
nested graphs (Loop/Scan bodies, If branches) instead of each writing its own.
"""

from __future__ import annotations

from collections.abc import Iterator

import onnx

ONNX_DOMAINS = ("", "ai.onnx")
"""The operator domains of the default ONNX opset (the only ones irtool translates)."""


def subgraphs(node: onnx.NodeProto) -> Iterator[tuple[str, onnx.GraphProto]]:
    """The graph attributes of ``node`` (``body``, ``then_branch``...), with their names."""
    for attr in node.attribute:
        if attr.type == onnx.AttributeProto.GRAPH:
            yield attr.name, attr.g
        elif attr.type == onnx.AttributeProto.GRAPHS:
            for g in attr.graphs:
                yield attr.name, g


def walk_nodes(graph: onnx.GraphProto) -> Iterator[onnx.NodeProto]:
    """Every node of ``graph`` and of all graphs nested in it, parents first."""
    for node in graph.node:
        yield node
        for _, sub in subgraphs(node):
            yield from walk_nodes(sub)


def walk_tensors(graph: onnx.GraphProto) -> Iterator[onnx.TensorProto]:
    """Every initializer and tensor attribute of ``graph`` and of its nested graphs."""
    yield from graph.initializer
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.TENSOR:
                yield attr.t
            yield from attr.tensors
        for _, sub in subgraphs(node):
            yield from walk_tensors(sub)


def op_types(graph: onnx.GraphProto) -> set[str]:
    """The operator types used in ``graph``, nested graphs included."""
    return {node.op_type for node in walk_nodes(graph)}


def defined_names(graph: onnx.GraphProto) -> set[str]:
    """Names ``graph`` itself defines: inputs, initializers, node outputs."""
    names = {i.name for i in graph.input}
    names.update(i.name for i in graph.initializer)
    names.update(i.values.name for i in graph.sparse_initializer)
    for node in graph.node:
        names.update(o for o in node.output if o)
    return names


def outer_names(graph: onnx.GraphProto) -> set[str]:
    """Names ``graph`` (or a graph nested in it) reads but does not define: its captures."""
    used: set[str] = set()
    for node in graph.node:
        used.update(i for i in node.input if i)
        for _, sub in subgraphs(node):
            used.update(outer_names(sub))
    used.update(o.name for o in graph.output)
    return used - defined_names(graph)


def node_label(node: onnx.NodeProto) -> str:
    """How errors name a node: its name, else its type and outputs."""
    return node.name or f"{node.op_type}({', '.join(node.output)})"


def elem_type_name(elem_type: int) -> str:
    """An ONNX element type in words (``float``, ``int64``), or its number if none has it."""
    try:
        return onnx.TensorProto.DataType.Name(elem_type).lower()
    except ValueError:
        return f"element type {elem_type}"


def type_name(type_proto: onnx.TypeProto) -> str:
    """An ONNX type in words: ``tensor(float)``, ``sequence of tensor(int64)``..."""
    which = type_proto.WhichOneof("value")
    if which == "tensor_type":
        return f"tensor({elem_type_name(type_proto.tensor_type.elem_type)})"
    if which == "sequence_type":
        return f"sequence of {type_name(type_proto.sequence_type.elem_type)}"
    if which == "optional_type":
        return f"optional {type_name(type_proto.optional_type.elem_type)}"
    if which == "map_type":
        return "map"
    return which or "unknown"
