"""Sliced Loop inputs: ``Gather(X, iteration, axis=k)`` in a body -> a port_map ``axis``.

ONNX has no sliced loop inputs, so exporters write a ``for`` loop over the rows
of ``X`` as a Loop whose body gathers row ``i`` of the captured ``X``. The
Loop-5 spec can say that directly: an input entry with ``axis="k"`` hands the
body one part of ``X`` per iteration (size 1 along ``k``, squeezed in the body),
which lets OpenVINO skip the gather and the copy of ``X`` into the body.

The rewrite is made only where it is provably the same computation:

* the body gathers from a Parameter that is a plain invariant input (no slicing
  axis, no back edge) with the scalar ``current_iteration`` as the index (fed by no
  back edge: the counter), a constant axis and ``batch_dims`` 0;
* the Loop runs exactly ``X.shape[k]`` iterations: its execution condition is a
  constant true, the body's condition output is a constant true, and the trip
  count is either a constant equal to the static ``X.shape[k]`` or computed as
  ``Gather(ShapeOf(X), k)`` (or ``Slice`` of it) of the very same ``X``, through the
  value-preserving steps ``irtool.passes.loop_facts`` lists (no narrowing cast).
"""

from __future__ import annotations

import numpy as np

from ..ir.builder import GraphBuilder
from ..ir.graph import Graph, Layer, Model, Port, PortMapEntry, TensorInfo, format_shape
from .base import Pass, PassResult
from .loop_facts import all_true, const_of, input_source, iterations, scalar_int, trip_matches


class SliceLoopInputs(Pass[Model]):
    """Rewrite every provably equivalent body Gather of a model."""

    optimisation = "sliced loop inputs"

    def apply(self, model: Model) -> PassResult[Model]:
        return PassResult(model, sum(_slice_loop(graph, layer)
                                     for graph, layer in iterations(model.graph, "Loop")))


def _gathers(body: Graph, iteration: int, candidates: dict[int, PortMapEntry]
             ) -> dict[tuple[int, int], list[Layer]]:
    """Body Gathers of ``X[iteration]`` along a constant axis, by (Parameter, axis)."""
    found: dict[tuple[int, int], list[Layer]] = {}
    for layer in body.layers:
        if layer.type != "Gather" or len(layer.inputs) != 3 or \
                layer.attrs.get("batch_dims", "0") != "0":
            continue
        data = input_source(body, layer, 0)
        index = input_source(body, layer, 1)
        if data is None or index is None or data[0] not in candidates or index[0] != iteration:
            continue
        axis = scalar_int(const_of(body, input_source(body, layer, 2)))
        dims = body.layer(data[0]).outputs[0].dims
        if axis is None or dims is None:
            continue
        if axis < 0:
            axis += len(dims)
        if 0 <= axis < len(dims):
            found.setdefault((data[0], axis), []).append(layer)
    return found


def _slice_loop(graph: Graph, loop: Layer) -> int:
    body = loop.bodies["body"]
    entries = loop.port_maps.get("port_map", [])
    if not all_true(const_of(graph, input_source(graph, loop, 1))):
        return 0
    iteration = next((e.internal_layer_id for e in entries
                      if e.kind == "input" and e.purpose == "current_iteration"), None)
    cond = next((e.internal_layer_id for e in entries
                 if e.kind == "output" and e.purpose == "execution_condition"), None)
    if iteration is None or cond is None or cond not in body or iteration not in body:
        return 0
    if body.layer(iteration).outputs[0].dims != ():
        return 0  # a [1] iteration number keeps the axis: not this rewrite
    if any(edge.to_layer == iteration for edge in loop.back_edges):
        return 0  # a back edge, not the counter, gives its value after iteration 0
    if not all_true(const_of(body, input_source(body, body.layer(cond), 0))):
        return 0
    carried = {edge.to_layer for edge in loop.back_edges}
    candidates = {e.internal_layer_id: e for e in entries
                  if e.kind == "input" and e.purpose is None and e.axis is None
                  and e.external_port_id >= 2 and e.internal_layer_id not in carried}
    count = 0
    for (param_id, axis), gathers in _gathers(body, iteration, candidates).items():
        entry = candidates[param_id]
        index = loop.input_index(entry.external_port_id)
        x_src = input_source(graph, loop, index) if index is not None else None
        if x_src is None or not trip_matches(graph, loop, x_src, axis):
            continue
        _rewrite(graph, loop, body, entry, param_id, axis, gathers, x_src)
        count += len(gathers)
    return count


def _rewrite(graph: Graph, loop: Layer, body: Graph, entry: PortMapEntry, param_id: int,
             axis: int, gathers: list[Layer], x_src: tuple[int, int]) -> None:
    param = body.layer(param_id)
    gather_ids = {g.id for g in gathers}
    shared = any(lid not in gather_ids for lid, _ in body.consumers(param_id))
    dims = param.outputs[0].dims
    assert dims is not None
    sliced_dims = (*dims[:axis], 1, *dims[axis + 1:])
    builder = GraphBuilder(body)
    whole = builder.value(param_id, param.outputs[0].id)
    sliced = TensorInfo(whole.element_type, sliced_dims)
    if shared:
        # X is used whole elsewhere in the body: a second input carries the slices.
        port_id = _add_input(graph, loop, x_src)
        target = builder.parameter(sliced, name=f"{param.name}/slice")
        entry = PortMapEntry("input", port_id, target.layer)
        loop.port_maps["port_map"].append(entry)
    else:
        param.attrs["shape"] = format_shape(sliced_dims)
        param.outputs[0].dims = sliced_dims
        target = builder.value(param_id, param.outputs[0].id)
    entry.axis, entry.start, entry.end, entry.stride, entry.part_size = axis, 0, -1, 1, 1
    row = gathers[0].outputs[0]
    assert row.precision is not None  # the body was typed by the builder or the reader
    axes = builder.const(np.array([axis], dtype=np.int64))
    (out,) = builder.op("Squeeze", "opset1", [target, axes],
                        outputs=[TensorInfo(row.precision, row.dims)], name=gathers[0].name,
                        output_names=[[n for g in gathers for n in g.outputs[0].names]])
    for gather in gathers:
        for consumer, port in body.consumers(gather.id, gather.outputs[0].id):
            body.disconnect_input(consumer, port)
            body.connect(out.layer, out.port, consumer, port)
        body.remove_layer(gather.id)


def _add_input(graph: Graph, layer: Layer, src: tuple[int, int]) -> int:
    """Give ``layer`` one more input port fed by ``src``; returns its port id.

    Input ports come first in the numbering, so every output port id moves up by
    one, in the edges of ``graph`` and in the layer's port maps.
    """
    new_id = len(layer.inputs)
    for port in layer.outputs:
        port.id += 1
    for _, _, data in graph.nx.out_edges(layer.id, data=True):
        data["from_port"] += 1
    for entries in layer.port_maps.values():
        for e in entries:
            if e.kind == "output" and e.external_port_id >= new_id:
                e.external_port_id += 1
    src_port = graph.layer(src[0]).port(src[1])
    layer.inputs.append(Port(new_id, src_port.precision if src_port else None,
                             src_port.dims if src_port else None))
    graph.connect(src[0], src[1], layer.id, new_id)
    return new_id
