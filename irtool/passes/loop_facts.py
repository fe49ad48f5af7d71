"""Facts about a Loop that passes prove before rewriting it: constant inputs, a trip count
that is provably ``X.shape[k]`` of a given ``X``, a condition that is constantly true."""

from __future__ import annotations

import numpy as np

from ..ir.graph import Graph, Layer

# Ops that pass a one-element integer tensor through unchanged in value.
_SAME_VALUE = ("Convert", "Squeeze", "Unsqueeze", "Reshape")


def const_of(graph: Graph, src: tuple[int, int] | None) -> np.ndarray | None:
    """The value at ``src`` when a ``Const`` produces it, else None."""
    if src is None:
        return None
    layer = graph.layer(src[0])
    if layer.type != "Const" or layer.const is None:
        return None
    try:
        return layer.const_value()
    except ValueError:
        return None


def input_source(graph: Graph, layer: Layer, index: int) -> tuple[int, int] | None:
    """``(layer, port)`` feeding input ``index`` of ``layer``, or None."""
    return graph.source(layer.id, layer.inputs[index].id) if index < len(layer.inputs) else None


def scalar_int(value: np.ndarray | None) -> int | None:
    """The one integer ``value`` holds, else None."""
    if value is None or value.size != 1 or value.dtype.kind not in "iu":
        return None
    return int(value.reshape(-1)[0])


def all_true(value: np.ndarray | None) -> bool:
    """Is ``value`` a one-element boolean True?"""
    return value is not None and value.dtype == np.bool_ and value.size == 1 and bool(value.all())


def shape_index(graph: Graph, src: tuple[int, int] | None
                 ) -> tuple[tuple[int, int], int] | None:
    """``(X source, k)`` when ``src`` computes ``X.shape[k]`` from ``ShapeOf(X)``."""
    while src is not None and graph.layer(src[0]).type in _SAME_VALUE:
        layer = graph.layer(src[0])
        src = input_source(graph, layer, 0)
    if src is None:
        return None
    pick = graph.layer(src[0])
    if pick.type == "Gather" and pick.attrs.get("batch_dims", "0") == "0":
        index = scalar_int(const_of(graph, input_source(graph, pick, 1)))
        axis = scalar_int(const_of(graph, input_source(graph, pick, 2)))
        if axis != 0 and axis != -1:
            return None
    elif pick.type == "Slice":
        start = scalar_int(const_of(graph, input_source(graph, pick, 1)))
        stop = scalar_int(const_of(graph, input_source(graph, pick, 2)))
        step = scalar_int(const_of(graph, input_source(graph, pick, 3)))
        axes = const_of(graph, input_source(graph, pick, 4)) if len(pick.inputs) > 4 else None
        if step != 1 or start is None or stop != start + 1 or \
                (axes is not None and scalar_int(axes) != 0):
            return None
        index = start
    else:
        return None
    shape_src = input_source(graph, pick, 0)
    if index is None or shape_src is None or graph.layer(shape_src[0]).type != "ShapeOf":
        return None
    shape_of = graph.layer(shape_src[0])
    data = input_source(graph, shape_of, 0)
    if data is None:
        return None
    rank = shape_of.outputs[0].dims[0] if shape_of.outputs[0].dims else -1
    if index < 0:
        if rank is None or rank < 0:
            return None
        index += rank
    return data, index


def trip_matches(graph: Graph, loop: Layer, x_src: tuple[int, int], axis: int) -> bool:
    """Does the Loop's trip count equal ``X.shape[axis]`` for the X at ``x_src``?"""
    trip_src = input_source(graph, loop, 0)
    trip = scalar_int(const_of(graph, trip_src))
    if trip is not None:
        port = graph.layer(x_src[0]).port(x_src[1])
        dims = port.dims if port is not None else None
        return dims is not None and axis < len(dims) and dims[axis] >= 0 and dims[axis] == trip
    return shape_index(graph, unclamped(graph, trip_src)) == (x_src, axis)


def unclamped(graph: Graph, src: tuple[int, int] | None) -> tuple[int, int] | None:
    """The source of ``M`` when ``src`` computes ``Maximum(M, 0)`` (the ONNX converter's
    trip count: a negative ONNX M is no iteration), else ``src``. A length is never
    negative, so a trip count that is a length stays one."""
    if src is not None and graph.layer(src[0]).type == "Maximum":
        clamp = graph.layer(src[0])
        if scalar_int(const_of(graph, input_source(graph, clamp, 1))) == 0:
            return input_source(graph, clamp, 0)
    return src
