"""Model-local functions (``ModelProto.functions``) expanded where they are called.

ONNX's own inliner (run first by the converter) leaves a function in place when the
opset versions it imports differ from the model's, as exporters write them
(skl2onnx's KNNImputer: a model of opset 18 calling functions of opsets 16 and 14).
Such a call is translated here: the function's nodes (attribute references resolved,
names made private to the call) are translated one by one into the caller's IR graph
in a ``Scope`` of the function's own opset, so each node gets the translator of the
version the function was written for; calls to other local functions inside it,
and Loop/If bodies inside it, are expanded the same way.
"""

from __future__ import annotations

from collections.abc import Callable

import onnx

from ...core.errors import ConversionError
from ...opset import TensorInfo
from .context import NodeContext, Scope, Value
from .ops.functions import expand_call, infer_call
from .protos import ONNX_DOMAINS, subgraphs

FunctionKey = tuple[str, str]
TranslateNode = Callable[[onnx.NodeProto, Scope, dict[str, TensorInfo]], None]
MAX_DEPTH = 32
"""Calls nested deeper than this are taken for a recursion (ONNX forbids one)."""


def local_functions(model: onnx.ModelProto) -> dict[FunctionKey, onnx.FunctionProto]:
    """The model's functions by ``(domain, name)``."""
    return {(f.domain, f.name): f for f in model.functions}


def function_opset(function: onnx.FunctionProto, default: int) -> int:
    """The ai.onnx version ``function`` imports (``default`` when it imports none)."""
    return next((o.version for o in function.opset_import if o.domain in ONNX_DOMAINS),
                default)


def function_nodes(function: onnx.FunctionProto) -> list[onnx.NodeProto]:
    """The nodes of ``function`` and of the graphs nested in them."""
    found = []

    def walk(nodes: list[onnx.NodeProto]) -> None:
        for node in nodes:
            found.append(node)
            for _, graph in subgraphs(node):
                walk(list(graph.node))

    walk(list(function.node))
    return found


def expand_local_function(ctx: NodeContext, function: onnx.FunctionProto,
                          functions: dict[FunctionKey, onnx.FunctionProto],
                          translate: TranslateNode) -> list[Value | None]:
    """Translate the call ``ctx.node`` of ``function`` through its body, in the scope of
    the function's opset; ``translate(node, scope, infos)`` translates one body node."""
    depth = ctx.scope.depth + 1
    if depth > MAX_DEPTH:
        raise ctx.error(f"local functions call each other more than {MAX_DEPTH} deep "
                        "(a recursion)")
    inputs = [ctx.input(i) for i in range(len(ctx.node.input))]
    opset = function_opset(function, ctx.opset)
    body = expand_call(ctx.node, function, list(function.attribute_proto))
    infos = infer_call(ctx, body, inputs, function, list(functions.values()))
    scope = Scope(ctx.builder, parent=None, opset=opset, depth=depth,
                  description=f"function {function.domain}:{function.name} called by "
                              f"{ctx.name}")
    for name, value in zip(ctx.node.input, inputs):
        if name and value is not None:
            scope.define(name, value)
    for node in body:
        translate(node, scope, infos)
    values = []
    for name in ctx.node.output:
        if name and name not in scope.values:
            raise ConversionError(f"{ctx.node.op_type}: function output {name!r} is not "
                                  "produced by its body", node=ctx.name)
        values.append(scope.values.get(name) if name else None)
    return values
