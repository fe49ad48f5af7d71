"""Axes in range: an axis an operation takes (an attribute, or a constant input) must lie
within the rank of the tensor it indexes. A corrupted ``.bin`` or a hand-edited attribute
gives axes OpenVINO and irtool's runtime both refuse only when they run; the validator
says it first, naming the layer. Only axes whose value and rank the IR states are checked.
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import Graph, Layer
from .report import Reporter, known_rank, producer

_REDUCE = ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
           "ReduceL2", "ReduceLogicalAnd", "ReduceLogicalOr")
# type -> (input index of the axes, whose rank they index: "in" input 0, "out" output 0)
_AXES_INPUT: dict[str, tuple[int, str]] = {
    "Unsqueeze": (1, "out"), "Squeeze": (1, "in"), "Gather": (2, "in"), "Split": (1, "in"),
    "VariadicSplit": (1, "in"), **{name: (1, "in") for name in _REDUCE},
}
_AXIS_ATTR = ("Concat", "Softmax", "LogSoftmax")


def _const_input(graph: Graph, layers: dict[int, Layer], layer: Layer,
                 index: int) -> np.ndarray | None:
    if index >= len(layer.inputs):
        return None
    src = producer(graph, layers, layer, layer.inputs[index].id)
    if src is None or src[0].type != "Const":
        return None
    try:
        value = src[0].const_value()
    except Exception:  # no data, out of the .bin, unknown type: other rules say so
        return None
    return value if value.dtype.kind in "iu" and value.size <= 64 else None


def check_axes(graph: Graph, layers: dict[int, Layer], layer: Layer, scope: str,
               rep: Reporter) -> None:
    """AXIS_RANGE for one layer."""
    if layer.type in _AXES_INPUT:
        index, whose = _AXES_INPUT[layer.type]
        ports = layer.inputs if whose == "in" else layer.outputs
        rank = known_rank(ports[0]) if ports else None
        axes = _const_input(graph, layers, layer, index)
        if rank is None or axes is None:
            return
        bad = [int(a) for a in axes.reshape(-1) if not -max(rank, 1) <= int(a) < max(rank, 1)]
        if bad:
            rep.add("AXIS_RANGE", f"input {index} gives axes {axes.reshape(-1).tolist()}: "
                    f"{bad[0]} is outside rank {rank}", layer=layer, scope=scope)
    elif layer.type == "Transpose" and layer.inputs:
        rank = known_rank(layer.inputs[0])
        order = _const_input(graph, layers, layer, 1)
        if rank is None or order is None or order.size == 0:
            return
        if sorted(int(a) for a in order.reshape(-1)) != list(range(rank)):
            rep.add("AXIS_RANGE", f"input 1 gives the order {order.reshape(-1).tolist()}, "
                    f"not a permutation of the {rank} axes", layer=layer, scope=scope)
    elif layer.type in _AXIS_ATTR and "axis" in layer.attrs:
        ports = layer.outputs or layer.inputs
        rank = known_rank(ports[0]) if ports else None
        try:
            axis = int(layer.attrs["axis"])
        except ValueError:
            return  # ATTR_VALUE says so
        if rank is not None and rank > 0 and not -rank <= axis < rank:
            rep.add("AXIS_RANGE", f"axis={axis} is outside rank {rank}", layer=layer,
                    scope=scope)
