"""``Identity`` layers in converted IR: dropped where OpenVINO only pays for them, added
where OpenVINO needs one to compute the right values.

``DropIdentities``: ONNX exporters write ``Identity`` a lot (a loop body's condition
``Identity(cond_in)``, renamed outputs), and OpenVINO's CPU plugin runs each as a node of
its own: in a Loop body that is one more node per iteration (a TorchScript decode loop
ran 1.4x slower for it; ``bench/ov_ir_quality.py``). OpenVINO's own ONNX frontend drops
them too. An Identity feeding a ``Result`` of the main graph stays, since its output port
carries the model output's tensor name; in bodies, port maps name Results, not tensors.

``CopyBackEdges``: a back edge whose body Result reads another body Parameter
directly (carried values that swap, ``a' = b, b' = a``; ``a' = i``; ``a' = captured``)
gives wrong values in OpenVINO's CPU plugin, or fails to compile (docs/openvino-quirks.md);
one whose Result reads its own Parameter (a state passed on unchanged) beside a state
starting from a constant crashes it (SIGSEGV) in a TensorIterator. An Identity between
that Parameter and the Result gives the right values in both. The converter adds one
there after dropping the others; irtool's runtime computes the same with or without it.

A back edge whose Result reads a *sliced* body input (a Scan's row, ``s' = row``),
directly or through the layers the plugin runs in place on the same memory (Squeeze,
Unsqueeze, Reshape, Identity), takes the next iteration's row in the plugin: it writes
the next slice into that memory before it copies the back edge. An Identity there does not
help (nor Convert to the same type, Multiply by 1: the plugin removes them); a layer that
computes does. The copy there is ``Maximum(v, v)``, which is ``v`` for every value of
every numeric type (NaN and -0 included); a boolean state keeps the quirk
(docs/openvino-quirks.md).
"""

from __future__ import annotations

from ..ir.builder import GraphBuilder
from ..ir.graph import Graph, Layer, Model, TensorInfo
from .base import Pass, PassResult


class DropIdentities(Pass[Model]):
    """Remove the Identity layers of a model (bodies included) that no model output is
    named by."""

    optimisation = "dropped Identity layers"

    def apply(self, model: Model) -> PassResult[Model]:
        return PassResult(model, _drop(model.graph, top=True))


def _drop(graph: Graph, top: bool) -> int:
    count = 0
    for layer in graph.layers:
        for body in layer.bodies.values():
            count += _drop(body, top=False)
    for layer in graph.layers_of_type("Identity"):
        if len(layer.inputs) != 1 or len(layer.outputs) != 1:
            continue
        src = graph.source(layer.id, layer.inputs[0].id)
        consumers = graph.consumers(layer.id, layer.outputs[0].id)
        if src is None or (top and any(graph.layer(c).type == "Result" for c, _ in consumers)):
            continue
        for consumer, port in consumers:
            graph.disconnect_input(consumer, port)
            graph.connect(src[0], src[1], consumer, port)
        graph.remove_layer(layer.id)
        count += 1
    return count


class CopyBackEdges(Pass[Model]):
    """Put an ``Identity-16`` between every back edge's body Result and the body Parameter
    it reads directly, the one the edge feeds included, and a ``Maximum(v, v)`` where it
    reads a sliced body input, even through in-place layers (bodies at any depth). Not an
    optimisation: OpenVINO needs it to compute the right values."""

    def apply(self, model: Model) -> PassResult[Model]:
        return PassResult(model, _copy_back_edges(model))


# Layers OpenVINO's CPU plugin runs on their input's memory (no copy): a back edge reading
# a sliced input through them reads the slice's buffer.
_IN_PLACE = frozenset({"Squeeze", "Unsqueeze", "Reshape", "Identity"})


def _copy_back_edges(model: Model) -> int:
    count = 0
    for _, layer in model.graph.walk():
        body = layer.bodies.get("body")
        if body is None or not layer.back_edges:
            continue
        sliced = {e.internal_layer_id for e in layer.port_maps.get("port_map", [])
                  if e.kind == "input" and e.axis is not None}
        for edge in layer.back_edges:
            if edge.from_layer not in body or edge.to_layer not in body:
                continue
            result = body.layer(edge.from_layer)
            src = body.source(result.id, result.inputs[0].id) if result.inputs else None
            if src is None:
                continue
            port = body.layer(src[0]).port(src[1])
            if port is None:
                continue
            assert port.precision is not None  # GraphBuilder types every port it makes
            builder = GraphBuilder(body)
            value = builder.value(*src)
            info = TensorInfo(port.precision, port.dims)
            numeric = port.precision.kind in ("float", "int", "uint")
            if numeric and _reads_a_slice(body, body.layer(src[0]), sliced):
                (copy,) = builder.op("Maximum", "opset1", [value, value], outputs=[info],
                                     name=f"{result.name}/copy")
            elif body.layer(src[0]).type == "Parameter":
                (copy,) = builder.op("Identity", "opset16", [value], outputs=[info],
                                     name=f"{result.name}/copy")
            else:
                continue
            body.disconnect_input(result.id, result.inputs[0].id)
            body.connect(copy.layer, copy.port, result.id, result.inputs[0].id)
            count += 1
    return count


def _reads_a_slice(body: Graph, layer: Layer, sliced: set[int]) -> bool:
    """Whether ``layer``'s output is a sliced body input's memory in OpenVINO's plugin: the
    Parameter itself, or it through in-place layers."""
    while layer.type in _IN_PLACE and layer.inputs:
        src = body.source(layer.id, layer.inputs[0].id)
        if src is None:
            return False
        layer = body.layer(src[0])
    return layer.type == "Parameter" and layer.id in sliced
