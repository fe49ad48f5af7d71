"""``Graph.copy`` (and ``passes.fp16.copy_model`` over it): a copy writes the same IR as
the original, and nothing done to the copy reaches the original.

The models are IR that OpenVINO itself wrote for the ONNX control-flow node cases (bodies,
port maps, back edges, rt_info), so every field irtool reads is exercised; "the same"
means the same bytes from irtool's writer, and the original's bytes are taken before the
copy is changed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from irtool.ir import read_model
from irtool.ir.graph import RTNode
from irtool.ir.serde.xml_writer import serialize
from irtool.passes.fp16 import copy_model


def _mutate_everything(graph) -> None:  # type: ignore[no-untyped-def]
    """Change every mutable field of every layer, port, port-map entry, back edge and
    rt_info node of ``graph`` and its bodies, and its edges."""
    for _, layer in graph.walk():
        layer.attrs["mutated"] = "1"
        layer.extra["mutated"] = "1"
        layer.name += "_copy"
        for port in (*layer.inputs, *layer.outputs):
            port.dims = (7,)
            port.names = ("mutated",)
            port.extra["mutated"] = "1"
            for node in port.rt_info or []:
                node.attrs["mutated"] = "1"
        for node in layer.rt_info or []:
            node.attrs["mutated"] = "1"
            node.children.append(RTNode("mutated"))
        for entries in layer.port_maps.values():
            for entry in entries:
                entry.axis = 3
                entry.extra["mutated"] = "1"
            entries.append(entries[0])
        for edge in layer.back_edges:
            edge.from_layer = -5
            edge.extra["mutated"] = "1"
    for layer in graph.layers:
        for body in layer.bodies.values():
            first = body.layers[0]
            body.remove_layer(first.id)
    for edge in graph.edges()[:3]:
        graph.disconnect_input(edge.to_layer, edge.to_port)


def test_a_copy_writes_the_same_ir_and_changes_to_it_stay_in_it(ov_control_flow_irs) -> None:
    for name, xml in ov_control_flow_irs.items():
        model = read_model(xml)
        original = serialize(model)
        copied = copy_model(model)
        assert serialize(copied) == original, name
        _mutate_everything(copied.graph)
        assert serialize(copied) != original, name
        assert serialize(model) == original, name


def test_a_copy_of_some_layers_keeps_the_edges_between_them(ov_control_flow_irs) -> None:
    model = read_model(ov_control_flow_irs["test_loop11"])
    graph = model.graph
    order = graph.topological_order()
    keep = set(order[: len(order) // 2])
    part = graph.copy(keep)
    assert set(part.nx.nodes) == keep
    assert sorted(part.edges()) == sorted(e for e in graph.edges()
                                          if e.from_layer in keep and e.to_layer in keep)
    assert part.topological_order() == [lid for lid in order if lid in keep]


def test_constant_payloads_are_shared_not_copied(tmp_path: Path, ov_control_flow_irs) -> None:
    model = read_model(ov_control_flow_irs["test_range_float_type_positive_delta_expanded"])
    copied = copy_model(model)
    pairs = [(a, b) for (_, a), (_, b) in zip(model.graph.walk(), copied.graph.walk())
             if a.const is not None]
    assert pairs
    for a, b in pairs:
        assert b.const is a.const
        np.testing.assert_array_equal(a.const_value(), b.const_value())
