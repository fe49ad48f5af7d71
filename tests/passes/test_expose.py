"""``passes.expose``: OpenVINO on a copy of an IR whose inner values are extra outputs gives
those values (checked against numpy computed by hand from each model's definition), and
its own outputs as before; the model given is unchanged."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support.ir_builders import counting_loop, doubling_if
from support.planted import code, nested_loops

import irtool
from irtool.engines.openvino import run_ir_steps
from irtool.ir.graph import Model
from irtool.passes.expose import ExposeValues, KeepPrefix, Level, Probe

F32 = np.float32
A0 = np.array([1.5, -2.0], F32)


def openvino(model: Model, feed: dict, tmp_path: Path) -> dict[str, np.ndarray]:
    """OpenVINO's outputs of ``model`` keyed by Result name."""
    xml = irtool.save(model, tmp_path / "exposed.xml")
    return run_ir_steps(xml, [feed], by_result=True)[0]


def _counting() -> tuple[Model, int, int, int]:
    model = counting_loop()
    loop = next(layer for layer in model.graph if layer.type == "Loop")
    body = loop.bodies["body"]
    add = next(layer for layer in body if layer.type == "Add")
    param = next(layer for layer in body if layer.name == "acc_in")
    return model, loop.id, add.id, param.id


FEED = {"trip": np.array(4), "cond": np.array(True), "a0": A0}


def by_hand(trip: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The acc each iteration reads and makes."""
    reads, made, acc = [], [], A0.copy()
    for i in range(trip):
        reads.append(acc)
        acc = acc + F32(i)
        made.append(acc)
    return reads, made


def test_every_iteration_of_a_body_value_stacked(tmp_path: Path) -> None:
    model, loop, add, param = _counting()
    rewrite = ExposeValues([Level(loop, "body")], [Probe(add, model.graph.layer(loop)
                                                         .bodies["body"].layer(add)
                                                         .outputs[0].id),
                                                   Probe(param, 0)])
    before = len(list(model.graph.walk()))
    out = openvino(rewrite(model).target, FEED, tmp_path)
    assert len(list(model.graph.walk())) == before  # the model given is unchanged
    reads, made = by_hand(4)
    made_out, read_out = (out[n] for n in rewrite.result_names)
    np.testing.assert_array_equal(rewrite.select(made_out), np.stack(made))
    np.testing.assert_array_equal(rewrite.select(read_out), np.stack(reads))
    assert [its for its, _ in rewrite.unwrap(made_out)] == [(0,), (1,), (2,), (3,)]
    # The model's own outputs are what they were.
    acc = rewrite.output_names[model.output_names().index("acc")]
    np.testing.assert_array_equal(out[acc], made[-1])


def test_a_loop_cut_after_one_iteration_gives_that_iterations_value(tmp_path: Path) -> None:
    model, loop, add, _ = _counting()
    port = model.graph.layer(loop).bodies["body"].layer(add).outputs[0].id
    rewrite = ExposeValues([Level(loop, "body", 2)], [Probe(add, port)])
    out = openvino(rewrite(model).target, FEED, tmp_path)[rewrite.result_names[0]]
    np.testing.assert_array_equal(rewrite.select(out), by_hand(4)[1][2])
    assert [its for its, _ in rewrite.unwrap(out)] == [(2,)]


def test_nested_loops_stack_the_inner_iterations(tmp_path: Path) -> None:
    """Two Loops deep, the outer one at iteration 1: the Tan's values of the inner loop's
    iterations, tan(0.001 * (i0 + 10 * i1))."""
    model, planted = nested_loops(2)
    outer, inner = (int(p.rsplit("/", 1)[-1]) for p in planted.around)
    tan = int(planted.path.rsplit("/", 1)[-1])
    body = model.graph.layer(outer).bodies["body"].layer(inner).bodies["body"]
    rewrite = ExposeValues([Level(outer, "body", 1), Level(inner, "body")],
                           [Probe(tan, body.layer(tan).outputs[0].id)])
    out = openvino(rewrite(model).target, {"x": np.array([1, 2, 3, 4], F32)}, tmp_path)
    got = dict(rewrite.unwrap(out[rewrite.result_names[0]]))
    assert sorted(got) == [(1, i) for i in range(4)]
    for its, value in got.items():
        assert float(value) == pytest.approx(np.tan(F32(code(its))), rel=1e-6)


def test_the_branch_an_if_takes(tmp_path: Path) -> None:
    model = doubling_if()  # then x + x, else x
    branch = next(layer for layer in model.graph if layer.type == "If")
    then = branch.bodies["then_body"]
    add = next(layer for layer in then if layer.type == "Add")
    rewrite = ExposeValues([Level(branch.id, "then_body")], [Probe(add.id, add.outputs[0].id)])
    exposed = rewrite(model).target
    x = np.array([1, 2], F32)
    taken = openvino(exposed, {"c": np.array(True), "x": x}, tmp_path)
    np.testing.assert_array_equal(taken[rewrite.result_names[0]], x + x)
    other = openvino(exposed, {"c": np.array(False), "x": x}, tmp_path)
    assert other[rewrite.result_names[0]].shape == (0,)  # the stand-in of the other branch


def test_more_groups_in_one_copy(tmp_path: Path) -> None:
    model, loop, add, _ = _counting()
    port = model.graph.layer(loop).bodies["body"].layer(add).outputs[0].id
    rewrite = ExposeValues([], [Probe(loop, model.graph.layer(loop).outputs[0].id)],
                           [([Level(loop, "body")], [Probe(add, port)])])
    out = openvino(rewrite(model).target, FEED, tmp_path)
    made = by_hand(4)[1]
    np.testing.assert_array_equal(out[rewrite.names(0)[0]], made[-1])
    np.testing.assert_array_equal(rewrite.select(out[rewrite.names(1)[0]], 1), np.stack(made))


def test_a_prefix_of_the_model(tmp_path: Path) -> None:
    """The first two layers of x -> exp -> log -> sqrt: OpenVINO computes log(exp(x))."""
    from tools.test_localize import _chain

    model, log_id = _chain()
    order = [i for i in model.graph.topological_order()
             if model.graph.layer(i).type not in ("Parameter", "Const", "Result")]
    upto = order.index(int(log_id)) + 1
    cut = KeepPrefix(frozenset(order[:upto]))(model).target
    x = np.linspace(-1, 1, 6, dtype=F32).reshape(2, 3)
    out = openvino(cut, {"x": x}, tmp_path)
    assert len(out) == 1
    np.testing.assert_allclose(next(iter(out.values())), np.log(np.exp(x) + F32(1)),
                               rtol=1e-6)
