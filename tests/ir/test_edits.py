"""Every way of changing an IR object in place moves the edit counter (``irtool.ir.edits``),
which the plan cache trusts to tell an unchanged model without walking it; making,
reading, copying and running a model does not change one.

Each case changes a model as a user could, through any object or container it holds,
and the counter must move. tests/runtime/test_plan_cache.py checks that such edits reach
the next ``irtool.run`` and give hand-computed values.
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from support.ir_builders import counting_loop

import irtool
from irtool.ir import BackEdge, ConstData, Layer, Model, Port, PortMapEntry, RTNode
from irtool.ir.edits import EditedDict, EditedList, EditedMultiDiGraph, edit_count


def _model() -> Model:
    return counting_loop()


def _loop(m: Model) -> Layer:
    return m.graph.layers_of_type("Loop")[0]


def _body_add(m: Model) -> Layer:
    return _loop(m).bodies["body"].layers_of_type("Add")[0]


def _const(m: Model) -> Layer:
    return next(layer for _, layer in m.graph.walk() if layer.type == "Const")


Edit = Callable[[Model], object]

EDITS: dict[str, Edit] = {
    # attributes of every class
    "model name": lambda m: setattr(m, "name", "other"),
    "model version": lambda m: setattr(m, "version", 10),
    "model rt_info": lambda m: setattr(m, "rt_info", [RTNode("x")]),
    "model weights record": lambda m: setattr(m, "weights_record", {"a": "b"}),
    "graph rt_info": lambda m: setattr(m.graph, "rt_info", []),
    "layer type": lambda m: setattr(_body_add(m), "type", "Subtract"),
    "layer name": lambda m: setattr(_body_add(m), "name", "renamed"),
    "layer version": lambda m: setattr(_body_add(m), "version", "opset13"),
    "layer attrs replaced": lambda m: setattr(_body_add(m), "attrs", {"auto_broadcast": "none"}),
    "layer deleted attribute": lambda m: delattr(_body_add(m), "line"),
    "layer const replaced": lambda m: setattr(_const(m), "const", ConstData(b"\0")),
    "const data offset": lambda m: setattr(_const(m).const, "offset", 1),  # type: ignore[union-attr]
    "port dims": lambda m: setattr(_body_add(m).outputs[0], "dims", (3,)),
    "port precision": lambda m: setattr(_body_add(m).outputs[0], "precision", None),
    "port names": lambda m: setattr(_body_add(m).outputs[0], "names", ("n",)),
    "port rt_info": lambda m: setattr(_body_add(m).outputs[0], "rt_info", []),
    "port map entry axis": lambda m: setattr(_loop(m).port_maps["port_map"][-1], "axis", 1),
    "back edge target": lambda m: setattr(_loop(m).back_edges[0], "to_layer", 99),
    "rt node text": lambda m: setattr(m.rt_info[0], "text", "y"),  # type: ignore[index]
    # dicts in place
    "attrs item set": lambda m: _body_add(m).attrs.__setitem__("auto_broadcast", "none"),
    "attrs item deleted": lambda m: _body_add(m).attrs.__delitem__("auto_broadcast"),
    "attrs update": lambda m: _body_add(m).attrs.update(auto_broadcast="none"),
    "attrs |=": lambda m: _body_add(m).attrs.__ior__({"auto_broadcast": "none"}),
    "attrs setdefault": lambda m: _body_add(m).attrs.setdefault("new", "1"),
    "attrs pop": lambda m: _body_add(m).attrs.pop("auto_broadcast"),
    "attrs popitem": lambda m: _body_add(m).attrs.popitem(),
    "attrs clear": lambda m: _body_add(m).attrs.clear(),
    "layer extra": lambda m: _body_add(m).extra.__setitem__("k", "v"),
    "port extra": lambda m: _body_add(m).outputs[0].extra.__setitem__("k", "v"),
    "port map entry extra": lambda m: _loop(m).port_maps["port_map"][0].extra.update(k="v"),
    "back edge extra": lambda m: _loop(m).back_edges[0].extra.__setitem__("k", "v"),
    "bodies item": lambda m: _loop(m).bodies.__setitem__("body", _loop(m).bodies["body"]),
    "port maps item": lambda m: _loop(m).port_maps.__setitem__("port_map", []),
    "rt node attrs": lambda m: m.rt_info[0].attrs.__setitem__("k", "v"),  # type: ignore[index]
    "weights record item": lambda m: m.weights_record.__setitem__("k", "v"),  # type: ignore[union-attr]
    # lists in place
    "inputs reversed": lambda m: _body_add(m).inputs.reverse(),
    "inputs sorted": lambda m: _body_add(m).inputs.sort(key=lambda p: -p.id),
    "outputs appended": lambda m: _body_add(m).outputs.append(Port(9)),
    "outputs extended": lambda m: _body_add(m).outputs.extend([Port(9)]),
    "outputs +=": lambda m: _body_add(m).outputs.__iadd__([Port(9)]),
    "outputs *=": lambda m: _body_add(m).outputs.__imul__(2),
    "inputs inserted": lambda m: _body_add(m).inputs.insert(0, Port(9)),
    "inputs item set": lambda m: _body_add(m).inputs.__setitem__(0, Port(9)),
    "inputs slice deleted": lambda m: _body_add(m).inputs.__delitem__(slice(0, 1)),
    "inputs popped": lambda m: _body_add(m).inputs.pop(),
    "inputs removed": lambda m: _body_add(m).inputs.remove(_body_add(m).inputs[0]),
    "inputs cleared": lambda m: _body_add(m).inputs.clear(),
    "back edges cleared": lambda m: _loop(m).back_edges.clear(),
    "back edge appended": lambda m: _loop(m).back_edges.append(BackEdge(1, 2)),
    "port map entries": lambda m: _loop(m).port_maps["port_map"].pop(),
    "port map entry appended": lambda m: _loop(m).port_maps["port_map"].append(
        PortMapEntry("input", 9, 9)),
    "layer rt_info": lambda m: _loop(m).unknown.append(RTNode("x")),
    "rt node children": lambda m: m.rt_info[0].children.append(RTNode("c")),  # type: ignore[index]
    # the graph's structure, through Graph and through networkx
    "graph connect": lambda m: m.graph.connect(0, 0, 1, 5),
    "graph disconnect": lambda m: m.graph.disconnect_input(_loop(m).id, 0),
    "graph remove layer": lambda m: m.graph.remove_layer(_loop(m).id),
    "graph add layer": lambda m: m.graph.add_layer(Layer(99, "n", "Parameter", "opset1")),
    "body connect": lambda m: _loop(m).bodies["body"].connect(0, 0, 1, 5),
    "nx add_node": lambda m: m.graph.nx.add_node(100),
    "nx add_nodes_from": lambda m: m.graph.nx.add_nodes_from([100, 101]),
    "nx remove_node": lambda m: m.graph.nx.remove_node(_loop(m).id),
    "nx remove_nodes_from": lambda m: m.graph.nx.remove_nodes_from([_loop(m).id]),
    "nx add_edge": lambda m: m.graph.nx.add_edge(0, 1, from_port=0, to_port=3),
    "nx add_edges_from": lambda m: m.graph.nx.add_edges_from([(0, 1)]),
    "nx add_weighted_edges_from": lambda m: m.graph.nx.add_weighted_edges_from([(0, 1, 2)]),
    "nx remove_edge": lambda m: m.graph.nx.remove_edge(*next(iter(m.graph.nx.edges()))),
    "nx remove_edges_from": lambda m: m.graph.nx.remove_edges_from(list(m.graph.nx.edges())),
    "nx update": lambda m: m.graph.nx.update(edges=[(0, 1)]),
    "nx clear": lambda m: m.graph.nx.clear(),
    "nx clear_edges": lambda m: m.graph.nx.clear_edges(),
    "nx node data": lambda m: m.graph.nx.nodes[_loop(m).id].__setitem__("layer", _const(m)),
    "nx edge data": lambda m: next(iter(m.graph.nx.edges(data=True)))[2].__setitem__(
        "to_port", 7),
    "nx graph data": lambda m: m.graph.nx.graph.__setitem__("k", "v"),
    "nx replaced": lambda m: setattr(m.graph, "nx", m.graph.nx.copy()),
}


@pytest.mark.parametrize("name", sorted(EDITS))
def test_every_edit_moves_the_counter(name: str) -> None:
    model = _model()
    model.rt_info = [RTNode("r")]
    model.weights_record = {}
    before = edit_count()
    EDITS[name](model)
    assert edit_count() != before, name


def test_containers_given_plain_are_stored_observed() -> None:
    """A plain dict or list given to a constructor or assigned to a field is copied into an
    observed one, nested port-map lists too, so edits through it move the counter; lists
    given as dims or names become tuples (nothing to edit in place)."""
    layer = Layer(1, "a", "Loop", "opset5", attrs={"k": "v"}, inputs=[Port(0, dims=[2])],
                  port_maps={"port_map": [PortMapEntry("input", 0, 1)]})
    assert type(layer.attrs) is EditedDict and type(layer.inputs) is EditedList
    assert type(layer.port_maps["port_map"]) is EditedList
    assert layer.inputs[0].dims == (2,)
    layer.port_maps = {"port_map": []}
    assert type(layer.port_maps["port_map"]) is EditedList
    layer.port_maps["other"] = []
    assert type(layer.port_maps["other"]) is EditedList
    port = Port(0)
    port.names = ["a", "b"]  # type: ignore[assignment]
    assert port.names == ("a", "b")
    before = edit_count()
    layer.attrs["k"] = "w"
    assert edit_count() != before


def test_copies_and_pickles_stay_observed() -> None:
    model = _model()
    for twin in (copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        assert isinstance(twin.graph.nx, EditedMultiDiGraph)
        before = edit_count()
        _body_add(twin).attrs["auto_broadcast"] = "none"
        assert edit_count() != before
        assert _body_add(model).attrs["auto_broadcast"] == "numpy"


def test_reading_and_running_change_nothing(tmp_path: Path) -> None:
    """The cache's fast path: a model read, then run again and again, and compiled as a
    session, never moves the counter after its first run."""
    xml = irtool.save(_model(), tmp_path / "m.xml")
    model = irtool.load(xml)
    feed = {"trip": np.array(3), "cond": np.array(True), "a0": np.zeros(2, np.float32)}
    irtool.run(model, feed)
    before = edit_count()
    irtool.run(model, feed)
    irtool.compile(model).run(feed)
    irtool.run(model, feed)
    assert edit_count() == before


def test_a_const_from_a_read_only_view_is_a_copy() -> None:
    """A Const made from a read-only view of a writable array keeps its values when that
    array changes (what no edit counter could see); read-only memory itself is not copied."""
    base = np.arange(4, dtype=np.float32)
    view = base.view()
    view.flags.writeable = False
    data = ConstData.from_array(view)
    base[0] = 100.0
    np.testing.assert_array_equal(np.frombuffer(data.view(), np.float32), [0, 1, 2, 3])
    frozen = np.frombuffer(np.arange(4, dtype=np.float32).tobytes(), np.float32)
    assert np.shares_memory(np.frombuffer(ConstData.from_array(frozen).view(), np.float32),
                            frozen)
