"""Drop ``Identity`` layers: their consumers read the Identity's input instead.

ONNX exporters write ``Identity`` a lot (a loop body's condition ``Identity(cond_in)``,
renamed outputs), and OpenVINO's CPU plugin runs each as a node of its own: in a Loop
body that is one more node per iteration (a TorchScript decode loop ran 1.4x slower
for it; ``bench/ov_ir_quality.py``). OpenVINO's own ONNX frontend drops them too.

An Identity feeding a ``Result`` of the main graph stays, since its output port carries
the model output's tensor name; in bodies, port maps name Results, not tensors.
"""

from __future__ import annotations

from ..ir.graph import Graph, Model
from .base import Pass, PassResult


class DropIdentities(Pass[Model]):
    """Remove the Identity layers of a model (bodies included) that no model output is
    named by."""

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
