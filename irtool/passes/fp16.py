"""Store f32 constants as f16, decompressed at load time: OpenVINO's ``compress_to_fp16``.

Each f32 ``Const`` (in the graph and in every body) becomes an f16 ``Const``
named ``<name>_compressed`` feeding a ``Convert`` to f32 that takes the old name,
the old tensor names and the ``decompression`` rt_info mark OpenVINO puts there
(its CPU plugin then keeps the weights in f16 and converts them once).

Unlike OpenVINO, which clamps, a constant with a finite value beyond the f16
range (|x| > 65504) stays f32: compression must not change results by more
than f16 rounding.
"""

from __future__ import annotations

import copy

import numpy as np

from ..ir.builder import GraphBuilder
from ..ir.graph import Graph, Layer, Model, RTNode, TensorInfo
from ..ir.types import ElementType
from .base import Pass, PassResult

F16_MAX = float(np.finfo(np.float16).max)


class CompressToFP16(Pass[Model]):
    """A copy of the model with its f32 constants stored as f16 (the model given is
    unchanged: ``irtool.save`` compresses what it writes, not the caller's model)."""

    in_place = False

    def apply(self, model: Model) -> PassResult[Model]:
        out = copy_model(model)
        return PassResult(out, _compress(out.graph))


def copy_model(model: Model) -> Model:
    """A deep copy of ``model`` that shares the (read-only) constant payloads."""
    memo: dict[int, object] = {}
    for _, layer in model.graph.walk():
        if layer.const is not None:
            memo[id(layer.const)] = layer.const
    return copy.deepcopy(model, memo)


def _compressible(layer: Layer) -> np.ndarray | None:
    if layer.type != "Const" or layer.const is None or layer.attrs.get("element_type") != "f32":
        return None
    try:
        value = layer.const_value()
    except ValueError:
        return None
    finite = value[np.isfinite(value)]
    if finite.size and float(np.abs(finite).max()) > F16_MAX:
        return None
    return value


def _compress(graph: Graph) -> int:
    count = 0
    for layer in graph.layers:
        for body in layer.bodies.values():
            count += _compress(body)
        value = _compressible(layer)
        if value is None:
            continue
        count += 1
        out = layer.outputs[0]
        builder = GraphBuilder(graph)
        half = builder.const(value.astype(np.float16), name=f"{layer.name}_compressed")
        assert isinstance(out.precision, ElementType)  # an f32 Const (``_compressible``)
        (new_out,) = builder.op("Convert", "opset1", [half], {"destination_type": "f32"},
                                outputs=[TensorInfo(out.precision, out.dims)], name=layer.name,
                                output_names=[out.names])
        graph.layer(new_out.layer).rt_info = [
            RTNode("attribute", {"name": "decompression", "version": "0"})]
        for consumer, port in graph.consumers(layer.id, out.id):
            graph.disconnect_input(consumer, port)
            graph.connect(new_out.layer, new_out.port, consumer, port)
        graph.remove_layer(layer.id)
    return count
