"""``passes.prune``: what nobody reads goes, and nothing else. Loop and TensorIterator
outputs that no layer reads are dropped with their port-map entries and the body Results
only they used; a Result a back edge or the condition needs stays. Expected values come
from onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from support.compare import assert_same
from support.conversion import run_onnxruntime

import irtool
from irtool.passes.prune import drop_unread_outputs

vi = h.make_tensor_value_info


def _loop(read: list[str], opset: int = 17) -> onnx.ModelProto:
    """A Loop of 3 iterations with a carried sum ``s`` and two scan outputs (``s`` and
    ``2s``); the graph outputs are the Loop outputs in ``read``."""
    body = h.make_graph(
        [h.make_node("Identity", ["c"], ["co"]), h.make_node("Add", ["s", "x"], ["s2"]),
         h.make_node("Add", ["s2", "s2"], ["d"]), h.make_node("Identity", ["s2"], ["r"])],
        "body", [vi("i", T.INT64, []), vi("c", T.BOOL, []), vi("s", T.FLOAT, [2])],
        [vi("co", T.BOOL, []), vi("s2", T.FLOAT, [2]), vi("r", T.FLOAT, [2]),
         vi("d", T.FLOAT, [2])])
    outs = {"final": vi("final", T.FLOAT, [2]), "rows": vi("rows", T.FLOAT, [3, 2]),
            "doubled": vi("doubled", T.FLOAT, [3, 2])}
    graph = h.make_graph(
        [h.make_node("Constant", [], ["M"], value=h.make_tensor("m", T.INT64, [], [3])),
         h.make_node("Loop", ["M", "", "s0"], ["final", "rows", "doubled"], body=body)],
        "g", [vi("s0", T.FLOAT, [2]), vi("x", T.FLOAT, [2])], [outs[n] for n in read])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    model.ir_version = 10
    return model


@pytest.mark.parametrize("read", [["rows"], ["doubled"], ["final"], ["final", "doubled"],
                                  ["final", "rows", "doubled"]])
@pytest.mark.parametrize("optimize", [True, False])
def test_a_loop_keeps_only_the_outputs_read(read: list[str], optimize: bool) -> None:
    model = _loop(read)
    feed = {"s0": np.array([1, 2], np.float32), "x": np.array([0.5, -1], np.float32)}
    ir = irtool.convert(model, optimize=optimize, vectorize=False)
    loops = [layer for _, layer in ir.graph.walk() if layer.type == "Loop"]
    assert len(loops) == 1
    (loop,) = loops
    assert len(loop.outputs) == len(read)
    body = loop.bodies["body"]
    entries = loop.port_maps["port_map"]
    # every body Result is an output's, the condition's or a back edge's
    used = {e.internal_layer_id for e in entries} | {b.from_layer for b in loop.back_edges}
    assert {r.id for r in body.results()} <= used
    assert not [p for p in irtool.validate(ir) if p.severity == "error"]
    assert_same(irtool.run(ir, feed, optimize=optimize), run_onnxruntime(model, feed), "irtool")


def test_nothing_to_drop_changes_nothing() -> None:
    ir = irtool.convert(_loop(["final", "rows", "doubled"]), vectorize=False)
    (loop,) = [layer for _, layer in ir.graph.walk() if layer.type == "Loop"]
    before = (len(loop.outputs), len(loop.port_maps["port_map"]), len(loop.bodies["body"]))
    assert drop_unread_outputs(ir.graph, loop) == 0
    assert (len(loop.outputs), len(loop.port_maps["port_map"]),
            len(loop.bodies["body"])) == before
