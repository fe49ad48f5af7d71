"""What each layer of a candidate computes, as irtool's executor computes it.

A cut replaces a layer's output by a Parameter (or a Const) holding the value that output
had, and a hoisted loop body takes the values its Parameters had in one iteration; both
come from here. ``record`` runs a copy of the model in which every output port of the top
graph also feeds a Result of its own; ``trace`` runs a copy in which every asked-for body
Parameter of one Loop or TensorIterator is also a concatenated output (``Unsqueeze`` on
axis 0, joined over the iterations), so one run gives its value in every iteration. Both
run irtool's executor, capped at ``max_iterations`` per loop, and give None when it
cannot run the model (the caller then has no values to cut with).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

import numpy as np

from ...ir import GraphBuilder, Model, Port, PortMapEntry, TensorInfo, Value
from ...passes.fp16 import copy_model

log = logging.getLogger("irtool")

PortKey = tuple[int, int]
"""An output port of the top graph: ``(layer id, port id)``."""

Values = dict[PortKey, np.ndarray]

_NOT_COMPUTED = ("Parameter", "Const", "Result")


def record(model: Model, feed: Mapping[str, np.ndarray], *, max_iterations: int | None = None,
           relax: bool = False) -> Values | None:
    """The value of every output port of the top graph's layers (Parameters and Consts
    left out: their values are the feed and their data). ``relax``: the copy run declares
    every such port with dynamic dims (its rank kept), for a candidate whose shapes an edit
    has changed and are to be declared anew from what the run gives."""
    probe = copy_model(model)
    graph = probe.graph
    builder = GraphBuilder(graph)
    wanted: dict[str, PortKey] = {}
    for layer in list(graph.layers):
        if layer.type in _NOT_COMPUTED:
            continue
        for port in layer.outputs:
            if port.precision is None:
                continue
            if relax and port.dims:
                port.dims = tuple(-1 for _ in port.dims)
            name = f"__reduce_{layer.id}_{port.id}"
            builder.result(Value(layer.id, port.id, TensorInfo(port.precision, port.dims)),
                           name)
            wanted[name] = (layer.id, port.id)
    _unname_outputs(graph.layers)
    outputs = _run(probe, feed, max_iterations)
    if outputs is None:
        return None
    return {wanted[n]: v for n, v in outputs.items() if n in wanted}


def trace(model: Model, feed: Mapping[str, np.ndarray], layer_id: int, params: Iterable[int],
          *, max_iterations: int | None = None) -> dict[int, np.ndarray] | None:
    """The values body Parameters ``params`` of the Loop or TensorIterator ``layer_id`` (in
    the top graph) take, stacked over the iterations that ran (axis 0), by Parameter id."""
    probe = copy_model(model)
    layer = probe.graph.layer(layer_id)
    body = layer.bodies["body"]
    inside = GraphBuilder(body)
    outside = GraphBuilder(probe.graph)
    port_id = max(p.id for p in [*layer.inputs, *layer.outputs]) + 1
    wanted: dict[str, int] = {}
    for pid in params:
        out = body.layer(pid).outputs[0]
        if out.precision is None or out.dims is None:
            return None  # a value of unknown rank cannot be joined over iterations
        each = TensorInfo(out.precision, (1, *out.dims))
        axes = inside.const(np.array([0], np.int64))
        (lifted,) = inside.op("Unsqueeze", "opset1",
                              [Value(pid, out.id, TensorInfo(out.precision, out.dims)), axes],
                              outputs=[each])
        result = inside.result(lifted, f"__trace_{pid}")
        layer.outputs.append(Port(port_id, out.precision, (-1, *out.dims)))
        layer.port_maps["port_map"].append(PortMapEntry("output", port_id, result.id, axis=0))
        name = f"__trace_{pid}"
        outside.result(Value(layer_id, port_id, TensorInfo(out.precision, (-1, *out.dims))),
                       name)
        wanted[name] = pid
        port_id += 1
    _unname_outputs(probe.graph.layers)
    outputs = _run(probe, feed, max_iterations)
    if outputs is None:
        return None
    return {wanted[n]: v for n, v in outputs.items() if n in wanted}


def _unname_outputs(layers: Iterable[object]) -> None:
    """Drop the tensor names of every output port but the Parameters', so that each Result
    is named by its own layer name and no two outputs share a name."""
    for layer in layers:
        if layer.type != "Parameter":  # type: ignore[attr-defined]
            for port in layer.outputs:  # type: ignore[attr-defined]
                port.names = ()


def _run(model: Model, feed: Mapping[str, np.ndarray],
         max_iterations: int | None) -> dict[str, np.ndarray] | None:
    from ...runtime import Executor

    try:
        executor = Executor(model, max_iterations=max_iterations, check=False)
        return executor.run({n: feed[n] for n in executor.input_names})
    except Exception as err:  # any failure of irtool's runtime: there are no values to cut with
        log.debug("reduce: irtool's executor cannot give the values: %s",
                  str(err).splitlines()[0] if str(err) else type(err).__name__)
        return None
