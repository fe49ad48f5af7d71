"""``irtool.ir.builder``: typed ports, port-map roles, slicing defaults.

The behaviour of what the builders make (Loops, TensorIterators, Ifs that run the
same on irtool and OpenVINO) is tested by every runtime test, which build through
them; here: what the builders write, checked against the IR spec's wording.
"""

from __future__ import annotations

import numpy as np
import pytest

from irtool.ir import GraphBuilder, PortMapEntry, TensorInfo, element_type

F32 = TensorInfo(element_type("f32"), (2,))
I64 = TensorInfo(element_type("i64"), ())
BOOL = TensorInfo(element_type("boolean"), ())


def test_every_port_is_typed() -> None:
    build = GraphBuilder()
    x = build.parameter(F32, "x", tensor_names=["x"])
    c = build.const(np.array([1, 2], np.float32))
    (y,) = build.op("Add", "opset1", [x, c], {"auto_broadcast": "numpy"}, outputs=[F32])
    result = build.result(y)
    for layer in build.graph.layers:
        for port in (*layer.inputs, *layer.outputs):
            assert (port.precision, port.dims) == (F32.element_type, (2,)), (layer.type, port)
    assert result.inputs[0].precision == F32.element_type
    assert build.graph.layer(x.layer).attrs == {"shape": "2", "element_type": "f32"}
    assert build.graph.layer(x.layer).outputs[0].names == ("x",)


def test_op_without_output_types_needs_an_infer_callback() -> None:
    build = GraphBuilder()
    x = build.parameter(F32, "x")
    with pytest.raises(ValueError, match="give the output types"):
        build.op("Relu", "opset1", [x])
    calls = []

    def infer(builder, type, version, inputs, attrs, name):  # type: ignore[no-untyped-def]
        calls.append((type, attrs))
        return [inputs[0].info]

    assert GraphBuilder(build.graph, infer).op("Relu", "opset1", [x], {"a": True})[0].info == F32
    assert calls == [("Relu", {"a": "true"})]


def test_loop_roles_become_port_map_entries_and_back_edges() -> None:
    body = GraphBuilder()
    i = body.parameter(I64, "i")
    acc = body.parameter(F32, "acc")
    part = body.parameter(TensorInfo(element_type("f32"), (1, 2)), "part")
    keep = body.result(body.const(np.array(True)))
    r_acc = body.result(acc)
    r_part = body.result(part)
    net = GraphBuilder()
    loop = net.loop(body.graph, "loop")
    with pytest.raises(ValueError, match="second input"):
        loop.condition(net.const(np.array(True)))
    loop.trip_count(net.const(np.int64(3)))
    with pytest.raises(ValueError, match="first input"):
        loop.trip_count(net.const(np.int64(3)))
    loop.condition(net.const(np.array(True)))
    loop.current_iteration(i)
    loop.execution_condition(keep)
    assert loop.carried(net.parameter(F32, "a0"), acc, r_acc) == 2
    assert loop.sliced(net.parameter(TensorInfo(element_type("f32"), (3, 2)), "x"), part,
                       0, stride=1) == 3
    loop.output(r_acc, F32, names=["acc"])
    loop.output(r_part, TensorInfo(element_type("f32"), (3, 2)), axis=0)
    layer, outs = loop.build()
    assert (layer.type, layer.version, layer.name, layer.has_data) == \
        ("Loop", "opset5", "loop", False)
    assert [p.id for p in layer.inputs] == [0, 1, 2, 3]
    assert [p.id for p in layer.outputs] == [4, 5] == [v.port for v in outs]
    assert layer.outputs[0].names == ("acc",)
    assert layer.port_maps["port_map"] == [
        PortMapEntry("input", -1, i.layer, purpose="current_iteration"),
        PortMapEntry("output", -1, keep.id, purpose="execution_condition"),
        PortMapEntry("input", 2, acc.layer),
        PortMapEntry("input", 3, part.layer, axis=0, stride=1),
        PortMapEntry("output", 4, r_acc.id),
        PortMapEntry("output", 5, r_part.id, axis=0),
    ]
    assert [(e.from_layer, e.to_layer) for e in layer.back_edges] == [(r_acc.id, acc.layer)]
    assert layer.bodies["body"] is body.graph
    with pytest.raises(ValueError, match="built already"):
        loop.build()


def test_slicing_defaults_are_the_specs() -> None:
    """Loop-5 / TensorIterator-1: start 0, end -1, stride 1, part_size 1 when not given."""
    assert tuple(PortMapEntry("input", 0, 1, axis=0).slicing()) == (0, -1, 1, 1)
    entry = PortMapEntry("output", 3, 4, axis=1, start=-1, end=0, stride=-1, part_size=2)
    assert tuple(entry.slicing()) == (-1, 0, -1, 2)


def test_if_inputs_are_shared_between_branches() -> None:
    then_b, else_b = GraphBuilder(), GraphBuilder()
    tx, ty = then_b.parameter(F32, "tx"), then_b.parameter(F32, "ty")
    ex = else_b.parameter(F32, "ex")
    t_out, e_out = then_b.result(tx), else_b.result(ex)
    net = GraphBuilder()
    x, y = net.parameter(F32, "x"), net.parameter(F32, "y")
    branch = net.if_(net.parameter(BOOL, "c"), then_b.graph, else_b.graph)
    branch.then_input(x, tx)
    branch.then_input(y, ty)
    branch.else_input(x, ex)
    branch.output(t_out, e_out, F32)
    layer, _ = branch.build()
    assert len(layer.inputs) == 3  # the condition, x once, y
    assert layer.port_maps["then_port_map"] == [
        PortMapEntry("input", 1, tx.layer), PortMapEntry("input", 2, ty.layer),
        PortMapEntry("output", 3, t_out.id)]
    assert layer.port_maps["else_port_map"] == [
        PortMapEntry("input", 1, ex.layer), PortMapEntry("output", 3, e_out.id)]
    assert set(layer.bodies) == {"then_body", "else_body"}
