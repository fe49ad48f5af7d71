"""Operators that ONNX defines as functions: translated by expanding the function body.

Many newer ONNX operators (Attention, LayerNormalization's relatives, the loss
functions, windows, RMSNormalization...) come with a body made of simpler ONNX
operators in their schema, sometimes built for the node's input types (a
"context-dependent" function). For every such operator without a translator of
its own, ``register_function_fallbacks`` registers ``expand_function``, which
instantiates the body for the node (attribute references resolved, names made
private) and translates its nodes one by one into the same IR graph.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import onnx
from onnx import helper as onnx_helper

from ....opset import TensorInfo
from ..context import NodeContext, Scope, Value, find_translator, onnx_op, translators
from ..protos import ONNX_DOMAINS, subgraphs
from ..tensor_types import ONNX_TO_ELEMENT_TYPE, tensor_info_from_type


def register_function_fallbacks() -> None:
    """Register ``expand_function`` for each function-defined op version with no translator."""
    native = set(translators())
    for schema in onnx.defs.get_all_schemas_with_history():
        if schema.domain not in ONNX_DOMAINS or schema.name in native or _not_tensors(schema):
            continue
        if _has_function(schema):
            onnx_op(schema.name, schema.since_version)(expand_function)


def _has_function(schema: Any) -> bool:
    """Does ONNX define ``schema``'s operator as a function? (``Any``: onnx's type stubs
    lack its function accessors.)"""
    return bool(schema.has_function or schema.has_context_dependent_function)


def _not_tensors(schema: onnx.defs.OpSchema) -> bool:
    """Operators on sequences or optionals (e.g. SequenceMap) belong to the sequence lowering."""
    return any(t.startswith(("seq(", "optional(")) for c in schema.type_constraints
               for t in c.allowed_type_strs)


def expand_function(ctx: NodeContext) -> list[Value | None]:
    """Translate ``ctx.node`` through the function body its schema defines."""
    node = ctx.node
    try:
        schema = onnx.defs.get_schema(node.op_type, ctx.opset, "")
    except onnx.defs.SchemaError:
        raise ctx.error(f"no schema for opset {ctx.opset}") from None
    inputs = [ctx.input(i) for i in range(len(node.input))]
    function = _instantiate(ctx, schema, inputs)
    fn_opset = next((o.version for o in function.opset_import if o.domain in ONNX_DOMAINS),
                    ctx.opset)
    body = _expand(node, function)
    infos = infer_call(ctx, body, inputs, function)
    # A private name table on the same graph: body names cannot clash with the model's.
    scope = Scope(ctx.builder, parent=None, description=f"function body of {ctx.name}")
    for name, value in zip(node.input, inputs):
        if name and value is not None:
            scope.define(name, value)
    for sub in body:
        if sub.domain not in ONNX_DOMAINS:
            raise ctx.error(f"its function body uses {sub.domain}.{sub.op_type}")
        translate = find_translator(sub.op_type, fn_opset)
        if translate is None:
            raise ctx.error(f"its function body uses {sub.op_type}, which has no translator")
        sub_ctx = ctx.for_node(sub, scope, fn_opset, [infos.get(o) for o in sub.output])
        for name, value in zip(sub.output, translate(sub_ctx)):
            if name and value is not None:
                scope.define(name, value)
    return [scope.values.get(name) if name else None for name in node.output]


def _with_defaults(node: onnx.NodeProto, schema: onnx.defs.OpSchema) -> onnx.NodeProto:
    """A copy of ``node`` carrying every schema attribute default it does not set."""
    full = onnx.NodeProto()
    full.CopyFrom(node)
    present = {a.name for a in node.attribute}
    for name, attr in schema.attributes.items():
        if name not in present and attr.default_value.name:
            full.attribute.append(attr.default_value)
    return full


def _instantiate(ctx: NodeContext, schema: Any,  # onnx.defs.OpSchema (see _has_function)
                 inputs: list[Value | None]) -> onnx.FunctionProto:
    node = _with_defaults(ctx.node, schema)
    raw: bytes | None = None
    if schema.has_context_dependent_function:
        types = [onnx.TypeProto() if v is None else _type_proto(v) for v in inputs]
        versions = [v for v in schema.context_dependent_function_opset_versions
                    if v <= ctx.opset]
        try:
            if versions:
                raw = schema.get_context_dependent_function_with_opset_version(
                    max(versions), node.SerializeToString(),
                    [t.SerializeToString() for t in types])
            else:
                raw = schema.get_context_dependent_function(
                    node.SerializeToString(), [t.SerializeToString() for t in types])
        except Exception as err:  # the C++ builder rejects unsupported input types
            raise ctx.error(f"cannot build its function body: {err}") from None
    elif schema.has_function:
        versions = sorted(schema.function_opset_versions)
        usable = [v for v in versions if v <= ctx.opset]
        raw = schema.get_function_with_opset_version(max(usable) if usable else versions[0])
    if not raw:
        raise ctx.error("has no function body for these inputs")
    function = onnx.FunctionProto()
    function.ParseFromString(raw)
    _resolve_attribute_refs(function, node)
    return function


def _type_proto(value: Value) -> onnx.TypeProto:
    code = next((k for k, et in ONNX_TO_ELEMENT_TYPE.items() if et == value.element_type),
                onnx.TensorProto.UNDEFINED)
    shape = None if value.shape is None else [d if d >= 0 else None for d in value.shape]
    return onnx_helper.make_tensor_type_proto(code, shape)


def _resolve_attribute_refs(function: onnx.FunctionProto, node: onnx.NodeProto) -> None:
    """Replace ``ref_attr_name`` attributes of body nodes by the node's values (or drop them)."""
    given = {a.name: a for a in node.attribute}

    def resolve(nodes: list[onnx.NodeProto]) -> None:
        for sub in nodes:
            kept = []
            for attr in sub.attribute:
                if attr.ref_attr_name:
                    source = given.get(attr.ref_attr_name)
                    if source is None:
                        continue
                    new = onnx.AttributeProto()
                    new.CopyFrom(source)
                    new.name = attr.name
                    kept.append(new)
                else:
                    kept.append(attr)
            del sub.attribute[:]
            sub.attribute.extend(kept)
            for _, graph in subgraphs(sub):
                resolve(list(graph.node))

    resolve(list(function.node))


def expand_call(node: onnx.NodeProto, function: onnx.FunctionProto,
                defaults: list[onnx.AttributeProto]) -> list[onnx.NodeProto]:
    """The body of ``function`` for the call ``node``: attribute references resolved
    (the node's attributes, else ``defaults``), names mapped as by ``_expand``."""
    copy = onnx.FunctionProto()
    copy.CopyFrom(function)
    full = onnx.NodeProto()
    full.CopyFrom(node)
    given = {a.name for a in node.attribute}
    full.attribute.extend(a for a in defaults if a.name not in given)
    _resolve_attribute_refs(copy, full)
    return _expand(node, copy)


def _expand(node: onnx.NodeProto, function: onnx.FunctionProto) -> list[onnx.NodeProto]:
    """The body's nodes with formal names mapped to the node's and internal names prefixed."""
    prefix = f"{node.output[0] if node.output else node.op_type}::{node.op_type}::"
    names: dict[str, str] = {}
    for i, formal in enumerate(function.input):
        names[formal] = node.input[i] if i < len(node.input) else ""
    for i, formal in enumerate(function.output):
        if i < len(node.output) and node.output[i]:
            names[formal] = node.output[i]

    def rename(name: str) -> str:
        if not name:
            return ""
        return names.get(name, prefix + name)

    body = []
    for sub in function.node:
        new = onnx.NodeProto()
        new.CopyFrom(sub)
        _rename_node(new, rename)
        body.append(new)
    return body


def _rename_node(node: onnx.NodeProto, rename: Callable[[str], str]) -> None:
    """Rename a node's edges, and every name inside its subgraphs (If/Loop/Scan bodies refer
    to the function's names; their own names get the same prefix, which keeps them apart)."""
    node.input[:] = [rename(n) for n in node.input]
    node.output[:] = [rename(n) for n in node.output]
    for _, graph in subgraphs(node):
        for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
            vi.name = rename(vi.name)
        for init in graph.initializer:
            init.name = rename(init.name)
        for sub in graph.node:
            _rename_node(sub, rename)


def infer_call(ctx: NodeContext, body: list[onnx.NodeProto], inputs: list[Value | None],
               function: onnx.FunctionProto,
               functions: Sequence[onnx.FunctionProto] = ()) -> dict[str, TensorInfo]:
    """ONNX shape inference over the expanded body (best effort; unknown -> absent);
    ``functions`` are the model-local functions the body may call."""
    node = ctx.node
    graph_inputs = [
        onnx.ValueInfoProto(name=name, type=_type_proto(value))
        for name, value in zip(node.input, inputs) if name and value is not None
    ]
    outputs = [onnx.ValueInfoProto(name=name) for name in node.output if name]
    graph = onnx_helper.make_graph(body, "body", graph_inputs, outputs)
    model = onnx_helper.make_model(graph, opset_imports=list(function.opset_import) or [
        onnx_helper.make_opsetid("", ctx.opset)], functions=list(functions))
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # inference is an aid here, not a requirement
        return {}
    infos: dict[str, TensorInfo] = {}
    for vi in list(inferred.graph.value_info) + list(inferred.graph.output):
        info = tensor_info_from_type(vi.type)
        if info is not None:
            infos[vi.name] = info
    for name, info in zip(node.output, ctx.output_infos):
        if name and info is not None:
            infos[name] = info
    return infos

