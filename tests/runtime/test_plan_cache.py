"""``irtool.run`` reuses the plan compiled for a model until the model is changed in place,
and every kind of change reaches the next run: the values after it are computed by hand
with numpy here.

The top-level model is ``y = Softmax(x, axis=1) - c`` (x f32[3,3], c a Const f32[3,3]);
the nested one is tests/support/ir_builders' counting loop (``acc += float(i)``, every
step's acc stacked).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from support.ir_builders import Net, counting_expected, counting_loop, finish

import irtool
from irtool.ir import ConstData, Layer, Model
from irtool.runtime.cache import PLANS

X = np.array([[0.0, 1.0, 2.0], [3.0, 1.0, 0.5], [-1.0, 4.0, 2.0]], np.float32)
C = np.arange(1, 10, dtype=np.float32).reshape(3, 3) / 4


def softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _top() -> Model:
    net = Net()
    x = net.param("x", "f32", (3, 3))
    s = net.op("Softmax", "opset8", [x], {"axis": "1"}, name="s")
    y = net.op("Subtract", "opset1", [s, net.const(C)], {"auto_broadcast": "numpy"}, name="y")
    return finish(net, [y])


def _layer(model: Model, kind: str) -> Layer:
    return next(layer for _, layer in model.graph.walk() if layer.type == kind)


def _swap_subtract_operands(m: Model) -> None:
    """The edges' data edited through networkx: each input port takes the other's value."""
    sub = _layer(m, "Subtract")
    for _, _, data in m.graph.nx.in_edges(sub.id, data=True):
        data["to_port"] = 1 - data["to_port"]


def _bypass_softmax(m: Model) -> None:
    soft, sub = _layer(m, "Softmax"), _layer(m, "Subtract")
    m.graph.remove_layer(soft.id)
    m.graph.connect(_layer(m, "Parameter").id, 0, sub.id, 0)


TOP: dict[str, tuple[Callable[[Model], object], Callable[[], dict[str, np.ndarray]]]] = {
    "attrs item": (lambda m: _layer(m, "Softmax").attrs.__setitem__("axis", "0"),
                   lambda: {"y": softmax(X, 0) - C}),
    "attrs update": (lambda m: _layer(m, "Softmax").attrs.update(axis="0"),
                     lambda: {"y": softmax(X, 0) - C}),
    "attrs replaced": (lambda m: setattr(_layer(m, "Softmax"), "attrs", {"axis": "0"}),
                       lambda: {"y": softmax(X, 0) - C}),
    "layer type": (lambda m: setattr(_layer(m, "Subtract"), "type", "Add"),
                   lambda: {"y": softmax(X, 1) + C}),
    "const data": (lambda m: setattr(_layer(m, "Const"), "const",
                                     ConstData.from_array(C * 10)),
                   lambda: {"y": softmax(X, 1) - C * 10}),
    "inputs list reversed": (lambda m: _layer(m, "Subtract").inputs.reverse(),
                             lambda: {"y": C - softmax(X, 1)}),
    "edge data": (_swap_subtract_operands, lambda: {"y": C - softmax(X, 1)}),
    "layer removed, edge added": (_bypass_softmax, lambda: {"y": X - C}),
    "output port names": (lambda m: setattr(_layer(m, "Subtract").outputs[0], "names", ("z",)),
                          lambda: {"z": softmax(X, 1) - C}),
}


@pytest.mark.parametrize("edit", sorted(TOP))
def test_an_edit_in_place_compiles_again(edit: str) -> None:
    change, expected = TOP[edit]
    model = _top()
    np.testing.assert_allclose(irtool.run(model, {"x": X})["y"], softmax(X, 1) - C, rtol=1e-6)
    before = PLANS.compilations
    irtool.run(model, {"x": X})
    assert PLANS.compilations == before  # unchanged: the plan is reused
    change(model)
    got = irtool.run(model, {"x": X})
    assert PLANS.compilations == before + 1
    want = expected()
    assert sorted(got) == sorted(want)
    for name, value in want.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("edit", ["declared dims", "declared precision"])
def test_an_edit_of_what_a_port_declares_is_checked_on_the_next_run(edit: str) -> None:
    """The runtime checks computed values against the declared ports: a declaration edited
    so that it no longer holds stops the next run."""
    model = _top()
    irtool.run(model, {"x": X})
    port = _layer(model, "Softmax").outputs[0]
    if edit == "declared dims":
        port.dims = (3, 4)
    else:
        port.precision = irtool.ir.element_type("f16")
    with pytest.raises(irtool.IRToolError):
        irtool.run(model, {"x": X})


def test_an_input_renamed_is_fed_by_its_new_name() -> None:
    model = _top()
    irtool.run(model, {"x": X})
    _layer(model, "Parameter").outputs[0].names = ("inp",)
    with pytest.raises(irtool.ExecutionError, match="missing input"):
        irtool.run(model, {"x": X})
    np.testing.assert_allclose(irtool.run(model, {"inp": X})["y"], softmax(X, 1) - C, rtol=1e-6)


FEED = {"trip": np.array(3, np.int64), "cond": np.array(True), "a0": np.array([1.0, 2.0],
                                                                             np.float32)}


def _loop(m: Model) -> Layer:
    return m.graph.layers_of_type("Loop")[0]


def _body(m: Model, kind: str) -> Layer:
    return _loop(m).bodies["body"].layers_of_type(kind)[0]


def _reverse_steps(m: Model) -> None:
    """The scan output's port-map entry edited in place: pieces joined last first."""
    entry = next(e for e in _loop(m).port_maps["port_map"] if e.axis is not None)
    entry.stride, entry.start, entry.end = -1, -1, 0


def _subtracted() -> dict[str, np.ndarray]:
    a0, steps = FEED["a0"], []
    acc = a0.copy()
    for i in range(3):
        acc = acc - np.float32(i)
        steps.append(acc)
    return {"acc": acc, "steps": np.array(steps)}


def _uncarried() -> dict[str, np.ndarray]:
    """No back edge: acc_in is a0 on every iteration."""
    steps = np.array([FEED["a0"] + np.float32(i) for i in range(3)])
    return {"acc": steps[-1], "steps": steps}


BODY: dict[str, tuple[Callable[[Model], object], Callable[[], dict[str, np.ndarray]]]] = {
    "body layer type": (lambda m: setattr(_body(m, "Add"), "type", "Subtract"), _subtracted),
    "back edges cleared": (lambda m: _loop(m).back_edges.clear(), _uncarried),
    "port map entry": (_reverse_steps, lambda: {
        "acc": counting_expected(3, True, FEED["a0"])["acc"],
        "steps": counting_expected(3, True, FEED["a0"])["steps"][::-1]}),
}


@pytest.mark.parametrize("edit", sorted(BODY))
def test_an_edit_inside_a_loop_body_compiles_again(edit: str) -> None:
    change, expected = BODY[edit]
    model = counting_loop()
    first = irtool.run(model, FEED)
    for name, value in counting_expected(3, True, FEED["a0"]).items():
        np.testing.assert_array_equal(first[name], value)
    before = PLANS.compilations
    change(model)
    got = irtool.run(model, FEED)
    assert PLANS.compilations == before + 1
    for name, value in expected().items():
        np.testing.assert_array_equal(got[name], value)


def test_an_edit_that_changes_nothing_compiled_reuses_the_plan() -> None:
    """The edit counter moved (rt_info, another model edited), but the model compiles as
    before: the fingerprint says so, and nothing compiles again."""
    model, other = _top(), _top()
    irtool.run(model, {"x": X})
    before = PLANS.compilations
    model.rt_info = []
    _layer(other, "Softmax").attrs["axis"] = "0"
    np.testing.assert_allclose(irtool.run(model, {"x": X})["y"], softmax(X, 1) - C, rtol=1e-6)
    assert PLANS.compilations == before
