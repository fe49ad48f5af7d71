"""Every compile-time refusal of the Loop / TensorIterator / If kernels, word for word.

The validator refuses these IRs first (``load`` is strict), so the kernels meet them only
on in-memory models run with ``check=False``; still, each must be one line naming the
layer by its full path (``5/body/<id>``: the layer sits in a body), the port-map entry's
XML line when it has one, and what is wrong. The kernels are compiled directly with that
scope. Expected messages follow the format of ``irtool.core.errors`` and the port-map terms of
the OpenVINO specs.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from support.ir_builders import (
    A0,
    F32,
    Net,
    check,
    counted_loop,
    counting_loop,
    doubling_if,
    finish,
    growing_history,
    history_loop,
    info,
    runaway_body,
    true_result,
    unsqueeze,
)

import irtool
from irtool.core.errors import ExecutionError
from irtool.ir.graph import BackEdge, Layer
from irtool.runtime import Executor, RunOptions
from irtool.runtime.control_flow import compile_if, compile_loop, compile_tensor_iterator

SCOPE = "5/body"


def refusal(compile_: Callable, layer: Layer, options: RunOptions | None = None) -> str:
    with pytest.raises(ExecutionError) as info_:
        compile_(layer, SCOPE, options or RunOptions())
    message = str(info_.value)
    assert "\n" not in message
    return message


def where(layer: Layer, line: int | None = None) -> str:
    at = f"line {line}: " if line is not None else ""
    return f'{at}layer {SCOPE}/{layer.id} "{layer.name}" ({layer.type}-{layer.version})'


# -- If ------------------------------------------------------------------------------------


def if_layer() -> Layer:
    """If(c) over x: then 2x, else x; output y."""
    return doubling_if().graph.layers_of_type("If")[0]


def test_if_compiles_and_runs_both_branches() -> None:
    kernel = compile_if(if_layer(), SCOPE, RunOptions())
    x = np.array([1.5, -2], F32)
    np.testing.assert_array_equal(kernel([np.array(True), x])[0], 2 * x)
    np.testing.assert_array_equal(kernel([np.array([False]), x])[0], x)


def test_if_without_a_condition_input() -> None:
    layer = if_layer()
    layer.inputs = []
    assert refusal(compile_if, layer) == f"{where(layer)}: If needs a condition input"


@pytest.mark.parametrize("branch", ["then", "else"])
@pytest.mark.parametrize("bad", ["layer", "port"])
@pytest.mark.parametrize("kind", ["input", "output"])
def test_if_mapping_that_joins_nothing(branch: str, bad: str, kind: str) -> None:
    layer = if_layer()
    entry = next(e for e in layer.port_maps[f"{branch}_port_map"] if e.kind == kind)
    if bad == "layer":
        entry.internal_layer_id = 99
    else:
        entry.external_port_id = 77
    entry.line = 42
    if kind == "input":
        said = (f"{branch}_port_map input {entry.external_port_id} -> {entry.internal_layer_id} "
                f"does not join an input port to a {branch}_body Parameter")
    else:
        said = (f"{branch}_port_map output {entry.internal_layer_id} -> "
                f"{entry.external_port_id} does not join a {branch}_body Result to an output "
                "port")
    assert refusal(compile_if, layer) == f"{where(layer, 42)}: {said}"


@pytest.mark.parametrize("branch", ["then", "else"])
def test_if_body_parameter_without_an_input(branch: str) -> None:
    layer = if_layer()
    layer.port_maps[f"{branch}_port_map"] = [e for e in layer.port_maps[f"{branch}_port_map"]
                                             if e.kind == "output"]
    param = layer.bodies[f"{branch}_body"].layers_of_type("Parameter")[0]
    assert refusal(compile_if, layer) == (
        f'{where(layer)}: {branch}_body Parameter {param.id} "{param.name}" has no '
        f"{branch}_port_map input")


@pytest.mark.parametrize("branch", ["then", "else"])
def test_if_without_a_port_map_at_all(branch: str) -> None:
    """A branch with no port map: its Parameter has no input (not a crash on the missing
    map)."""
    layer = if_layer()
    del layer.port_maps[f"{branch}_port_map"]
    param = layer.bodies[f"{branch}_body"].layers_of_type("Parameter")[0]
    assert refusal(compile_if, layer) == (
        f'{where(layer)}: {branch}_body Parameter {param.id} "{param.name}" has no '
        f"{branch}_port_map input")


def test_if_output_without_a_mapping() -> None:
    layer = if_layer()
    layer.port_maps["else_port_map"] = [e for e in layer.port_maps["else_port_map"]
                                        if e.kind == "input"]
    assert refusal(compile_if, layer) == (
        f"{where(layer)}: output port {layer.outputs[0].id} has no else_port_map output")


def test_if_without_a_branch_body() -> None:
    layer = if_layer()
    del layer.bodies["else_body"]
    assert refusal(compile_if, layer) == f"{where(layer)}: has no else_body"


def test_max_iterations_reaches_a_loop_inside_an_if_branch() -> None:
    """then: an endless loop ("inner"); else: x. max_iterations stops the inner loop."""
    inner, acc, r_acc, r_keep = runaway_body()
    t = Net()
    tx = t.param("tx", "f32", ())
    lp = t.loop(inner, "inner")
    lp.trip_count(t.const(np.int64(-1)))
    lp.condition(t.const(np.array(True)))
    lp.carried(tx, acc, r_acc)
    lp.execution_condition(r_keep)
    lp.output(r_acc, info("f32", ()), names=["y"])
    inner_layer, (y,) = lp.build()
    t_out = t.result(y)
    e = Net()
    ex = e.param("ex", "f32", ())
    e_out = e.result(ex)
    net = Net()
    branch = net.if_(net.param("c", "boolean", ()), t, e)
    x = net.param("x", "f32", ())
    branch.then_input(x, tx)
    branch.else_input(x, ex)
    branch.output(t_out, e_out, info("f32", ()), names=["y"])
    if_, outs = branch.build()
    model = finish(net, outs)
    feeds = {"c": np.array(False), "x": np.array(2.5, F32)}
    assert irtool.run(model, feeds, max_iterations=3)["y"] == np.float32(2.5)
    with pytest.raises(ExecutionError) as info_:
        irtool.run(model, dict(feeds, c=np.array(True)), max_iterations=3)
    assert str(info_.value) == (
        f'layer {if_.id}/then_body/{inner_layer.id} "inner" (Loop-opset5): loop stopped: it '
        "would run more than 3 iterations (max_iterations=3)")


# -- Loop and TensorIterator ---------------------------------------------------------------


def loop_layer() -> Layer:
    """``counting_loop``'s Loop: inputs trip, cond, a0; current iteration i; outputs acc
    and the stacked accs."""
    return counting_loop().graph.layers_of_type("Loop")[0]


def test_loop_without_its_trip_count_and_condition() -> None:
    layer = loop_layer()
    layer.inputs = layer.inputs[:1]
    assert refusal(compile_loop, layer) == (
        f"{where(layer)}: Loop needs the trip count and execution condition inputs")


def test_loop_without_a_body() -> None:
    layer = loop_layer()
    del layer.bodies["body"]
    assert refusal(compile_loop, layer) == f"{where(layer)}: has no body"


def _entry(layer: Layer, kind: str, purpose: str | None = None, sliced: bool = False):  # type: ignore[no-untyped-def]
    return next(e for e in layer.port_maps["port_map"]
                if e.kind == kind and e.purpose == purpose and (e.axis is not None) == sliced)


def test_port_map_input_naming_no_input_port() -> None:
    layer = loop_layer()
    entry = _entry(layer, "input")
    entry.external_port_id, entry.line = 77, 12
    assert refusal(compile_loop, layer) == (
        f"{where(layer, 12)}: port_map input names port 77, which is not an input port of "
        "the layer")


def test_port_map_input_naming_no_body_parameter() -> None:
    layer = loop_layer()
    entry = _entry(layer, "input")
    entry.internal_layer_id, entry.line = 99, 13
    assert refusal(compile_loop, layer) == (
        f"{where(layer, 13)}: port_map input names body layer 99, which is not a body "
        "Parameter")


def test_port_map_input_without_port_or_purpose() -> None:
    layer = loop_layer()
    entry = _entry(layer, "input", "current_iteration")
    entry.purpose, entry.line = None, 14
    assert refusal(compile_loop, layer) == (
        f"{where(layer, 14)}: port_map input for body Parameter {entry.internal_layer_id} has "
        f"external_port_id {entry.external_port_id} and no purpose")


def test_current_iteration_of_a_float_type() -> None:
    layer = loop_layer()
    entry = _entry(layer, "input", "current_iteration")
    entry.line = 15
    param = layer.bodies["body"].layer(entry.internal_layer_id)
    param.attrs["element_type"] = "f32"
    param.outputs[0].precision = irtool.ir.types.element_type("f32")
    assert refusal(compile_loop, layer) == (
        f"{where(layer, 15)}: current_iteration Parameter {entry.internal_layer_id} has "
        "element type float32; i32 or i64 expected")


@pytest.mark.parametrize("stride,part", [(0, 1), (1, 0), (-1, -2)])
def test_sliced_input_that_never_advances(stride: int, part: int) -> None:
    model = counting_loop()
    layer = model.graph.layers_of_type("Loop")[0]
    entry = _entry(layer, "input")  # a0 -> acc_in, sliced from now on
    entry.axis, entry.stride, entry.part_size, entry.line = 0, stride, part, 16
    assert refusal(compile_loop, layer) == (
        f"{where(layer, 16)}: sliced input on port {entry.external_port_id} needs a non-zero "
        "stride and a positive part_size")


def test_port_map_output_naming_no_body_result() -> None:
    layer = loop_layer()
    entry = _entry(layer, "output")
    entry.internal_layer_id, entry.line = 99, 17
    assert refusal(compile_loop, layer) == (
        f"{where(layer, 17)}: port_map output names body layer 99, which is not a body Result")


def test_port_map_output_naming_no_output_port() -> None:
    layer = loop_layer()
    entry = _entry(layer, "output")
    entry.external_port_id, entry.line = 77, 18
    assert refusal(compile_loop, layer) == (
        f"{where(layer, 18)}: port_map output names port 77, which is not an output port of "
        "the layer")


@pytest.mark.parametrize("bad", ["from", "to"])
def test_back_edge_that_joins_nothing(bad: str) -> None:
    layer = loop_layer()
    edge = layer.back_edges[0]
    layer.back_edges[0] = BackEdge(99 if bad == "from" else edge.from_layer,
                                   99 if bad == "to" else edge.to_layer, line=19)
    new = layer.back_edges[0]
    assert refusal(compile_loop, layer) == (
        f"{where(layer, 19)}: back edge {new.from_layer} -> {new.to_layer} must join a body "
        "Result to a body Parameter")


def test_outputs_without_a_mapping_are_all_named() -> None:
    layer = loop_layer()
    layer.port_maps["port_map"] = [e for e in layer.port_maps["port_map"] if e.kind == "input"
                                   or e.purpose]
    ports = ", ".join(str(p.id) for p in layer.outputs)
    assert refusal(compile_loop, layer) == (
        f"{where(layer)}: output port(s) {ports} have no port_map output")


def test_body_parameter_without_a_port_map_input() -> None:
    layer = loop_layer()
    acc = _entry(layer, "input")
    layer.port_maps["port_map"].remove(acc)
    param = layer.bodies["body"].layer(acc.internal_layer_id)
    assert refusal(compile_loop, layer) == (
        f'{where(layer)}: body Parameter {param.id} "{param.name}" has no port_map input')


def history_rows(via: str) -> Layer:
    """A Loop growing hist (carried, [?] i64) by its iteration number, and concatenating
    hist as a row per iteration along axis 0: made a [1, k] row by ``via`` (Unsqueeze,
    which the runtime stacks, or Reshape, which it concatenates); inputs trip, cond, h0."""
    body = Net()
    i, hist, grown = growing_history(body)
    r_hist = body.result(grown)
    if via == "Unsqueeze":
        row = unsqueeze(body, grown)
    else:
        row = body.op("Reshape", "opset1", [grown, body.const(np.array([1, -1]))],
                      {"special_zero": "false"}, shape=(1, -1))
    net, lp = history_loop(body, i, hist, r_hist, name="rows")
    lp.output(body.result(row), info("i64", (-1, -1)), names=["rows"], axis=0)
    layer, outs = lp.build()
    finish(net, outs)
    return layer


def computed_loop(axis: int | None) -> Layer:
    """A Loop whose output (concatenated along ``axis``, if given) is x + x of an invariant
    x of no declared shape; inputs trip, cond, X."""
    body = Net()
    x = body.param("x", "f32", None)
    r_y = body.result(body.op("Add", "opset1", [x, x], {"auto_broadcast": "numpy"}))
    net = Net()
    lp = counted_loop(net, body, name="twice")
    lp.invariant(net.param("X", "f32", None), x)
    lp.execution_condition(true_result(body))
    lp.output(r_y, info("f32", None), names=["y"], axis=axis)
    layer, outs = lp.build()
    finish(net, outs)
    return layer


ROWS_DIFFER = ("cannot concatenate the iterations' values along axis 0: all the input array "
               "dimensions except for the concatenation axis must match exactly")
ZERO_TRIPS = "the loop ran zero iterations and "


@pytest.mark.parametrize("make,inputs,says", [
    (lambda: history_rows("Unsqueeze"), [np.array(2), np.array(True), np.array([7])],
     ROWS_DIFFER),
    (lambda: history_rows("Reshape"), [np.array(2), np.array(True), np.array([7])],
     ROWS_DIFFER),
    (lambda: computed_loop(None), [np.array(0), np.array(True), np.ones(2, F32)],
     ZERO_TRIPS + "the body Result is not a carried value and has no declared type and "
                  "shape"),
    (lambda: computed_loop(0), [np.array(0), np.array(True), np.ones(2, F32)],
     ZERO_TRIPS + "the empty concatenation has no known shape: the body Result's shape is "
                  "unknown"),
], ids=["stacked-rows-differ", "concatenated-rows-differ", "zero-trips-no-shape",
        "zero-trips-concat-no-shape"])
def test_output_errors_name_the_loop_in_its_scope(make: Callable[[], Layer],
                                                  inputs: list[np.ndarray], says: str) -> None:
    """Run-time errors of a Loop's outputs: rows of 1 and 2 elements do not concatenate
    (stacked or concatenated), and after zero iterations nothing gives an undeclared
    output its shape; each names the layer by its path and the output port."""
    layer = make()
    with pytest.raises(ExecutionError) as info_:
        compile_loop(layer, SCOPE, RunOptions())(inputs)
    message = str(info_.value)
    assert message.startswith(f"{where(layer)}: output port {layer.outputs[-1].id}: {says}"), \
        message


def two_sliced_ti(rows_a: int, rows_b: int) -> Layer:
    """A TensorIterator adding row k of A and row k of B (both sliced along axis 0)."""
    body = Net()
    a = body.param("a", "f32", (1, 2))
    b = body.param("b", "f32", (1, 2))
    r = body.result(body.op("Add", "opset1", [a, b], {"auto_broadcast": "numpy"}))
    net = Net()
    ti = net.tensor_iterator(body, "pairs")
    ti.sliced(net.param("A", "f32", (rows_a, 2)), a, 0)
    ti.sliced(net.param("B", "f32", (rows_b, 2)), b, 0)
    ti.output(r, info("f32", (-1, 2)), names=["sum"], axis=0)
    layer, outs = ti.build()
    finish(net, outs)
    return layer


def test_tensor_iterator_sliced_inputs_agree_on_the_count() -> None:
    kernel = compile_tensor_iterator(two_sliced_ti(3, 3), SCOPE, RunOptions())
    a, b = np.arange(6, dtype=F32).reshape(3, 2), np.ones((3, 2), F32)
    np.testing.assert_array_equal(kernel([a, b])[0], a + b)


@pytest.mark.parametrize("rows", [(3, 2), (2, 3), (3, 1)])
def test_tensor_iterator_sliced_inputs_with_different_counts(rows: tuple[int, int]) -> None:
    layer = two_sliced_ti(3, 3)
    kernel = compile_tensor_iterator(layer, SCOPE, RunOptions())
    with pytest.raises(ExecutionError) as info_:
        kernel([np.zeros((rows[0], 2), F32), np.zeros((rows[1], 2), F32)])
    assert str(info_.value) == (f"{where(layer)}: the sliced inputs give different iteration "
                                f"counts: {sorted(set(rows))}")


def test_tensor_iterator_sliced_input_out_of_range_names_it() -> None:
    layer = two_sliced_ti(3, 3)
    kernel = compile_tensor_iterator(layer, SCOPE, RunOptions())
    port = layer.inputs[1].id
    with pytest.raises(ExecutionError) as info_:
        kernel([np.zeros((3, 2), F32), np.zeros((), F32)])
    assert str(info_.value) == (f"{where(layer)}: sliced input on port {port}: axis 0 is out "
                                "of range for shape []")


def test_loop_condition_check_names_the_loop_in_its_scope() -> None:
    """A body condition that is not boolean: the error names the loop by its full path."""
    model = counting_loop()
    layer = model.graph.layers_of_type("Loop")[0]
    cond = _entry(layer, "output", "execution_condition")
    cond.internal_layer_id = next(e.from_layer for e in layer.back_edges)  # the f32 acc
    kernel = compile_loop(layer, SCOPE, RunOptions())
    with pytest.raises(ExecutionError) as info_:
        kernel([np.array(3), np.array(True), A0])
    assert str(info_.value) == (
        f"{where(layer)}: the body's execution condition must be a scalar or 1-element "
        "boolean tensor, got float32[2] (at iteration 0 of 5/body/3)")


def test_runaway_loop_names_the_loop_in_its_scope() -> None:
    body, acc, r_acc, r_keep = runaway_body()
    net = Net()
    lp = net.loop(body, "runaway")
    lp.trip_count(net.param("trip", "i64", ()))
    lp.condition(net.param("cond", "boolean", ()))
    lp.carried(net.param("a0", "f32", ()), acc, r_acc)
    lp.execution_condition(r_keep)
    lp.output(r_acc, info("f32", ()), names=["acc"])
    layer, outs = lp.build()
    finish(net, outs)
    kernel = compile_loop(layer, SCOPE, RunOptions(max_iterations=6))
    with pytest.raises(ExecutionError) as info_:
        kernel([np.array(-1), np.array(True), np.array(0, F32)])
    assert str(info_.value) == (f"{where(layer)}: loop stopped: it would run more than 6 "
                                "iterations (max_iterations=6)")


def test_tensor_iterator_longer_than_max_iterations() -> None:
    """A TensorIterator's count comes from its sliced inputs; a cap below it stops it before
    it starts, naming the cap."""
    layer = two_sliced_ti(3, 3)
    kernel = compile_tensor_iterator(layer, SCOPE, RunOptions(max_iterations=2))
    with pytest.raises(ExecutionError) as info_:
        kernel([np.zeros((3, 2), F32), np.zeros((3, 2), F32)])
    assert str(info_.value) == (f"{where(layer)}: loop stopped: it would run more than 2 "
                                "iterations (max_iterations=2)")
    np.testing.assert_array_equal(kernel([np.ones((2, 2), F32), np.ones((2, 2), F32)])[0],
                                  np.full((2, 2), 2, F32))


@pytest.mark.parametrize("trip,cond,what", [
    (np.array(2.0, F32), np.array(True),
     "the trip count (input 0) must be a scalar or 1-element i32 or i64 tensor, got "
     "float32[]"),
    (np.array([2, 3]), np.array(True),
     "the trip count (input 0) must be a scalar or 1-element i32 or i64 tensor, got int64[2]"),
    (np.array(2), np.array([True, False]),
     "the execution condition (input 1) must be a scalar or 1-element boolean tensor, got "
     "bool[2]"),
    (np.array(2), np.array(1),
     "the execution condition (input 1) must be a scalar or 1-element boolean tensor, got "
     "int64[]"),
    (np.array(2), np.array([[True]]),  # one element, but of rank 2
     "the execution condition (input 1) must be a scalar or 1-element boolean tensor, got "
     "bool[1, 1]"),
    (np.array([[2]]), np.array(True),
     "the trip count (input 0) must be a scalar or 1-element i32 or i64 tensor, got "
     "int64[1, 1]"),
])
def test_bad_trip_count_or_condition_word_for_word(trip: np.ndarray, cond: np.ndarray,
                                                   what: str) -> None:
    layer = loop_layer()
    kernel = compile_loop(layer, SCOPE, RunOptions())
    with pytest.raises(ExecutionError) as info_:
        kernel([trip, cond, A0])
    assert str(info_.value) == f"{where(layer)}: {what}"


def loop_with_body_condition(condition: np.ndarray | None) -> irtool.Model:
    """acc += 1, trip count from input "trip"; the body condition a constant (or none)."""
    body = Net()
    acc = body.param("acc_in", "f32", (2,))
    r_acc = body.result(body.op("Add", "opset1", [acc, body.const(np.ones(2, F32))],
                                {"auto_broadcast": "numpy"}, shape=(2,)))
    net = Net()
    lp = net.loop(body, "counter")
    lp.trip_count(net.param("trip", "i64", ()))
    lp.condition(net.param("cond", "boolean", ()))
    lp.carried(net.param("a0", "f32", (2,)), acc, r_acc)
    if condition is not None:
        lp.execution_condition(body.result(body.const(condition)))
    lp.output(r_acc, info("f32", (2,)), names=["acc"])
    return finish(net, lp)


@pytest.mark.parametrize("condition", [np.array(True), np.array([True])])
def test_loop_with_a_constant_true_body_condition(condition: np.ndarray) -> None:
    """Three iterations of acc += 1, by hand and on OpenVINO."""
    model = loop_with_body_condition(condition)
    feeds = {"trip": np.array(3), "cond": np.array(True), "a0": A0}
    check(model, feeds, {"acc": A0 + 3})


def test_loop_without_a_body_condition_runs_to_its_trip_count() -> None:
    """The validator wants the condition Result (LOOP_BODY_CONDITION); the kernel itself,
    like OpenVINO's, keeps going until the trip count without one."""
    model = loop_with_body_condition(None)
    feeds = {"trip": np.array(3), "cond": np.array(True), "a0": A0}
    np.testing.assert_array_equal(Executor(model, check=False).run(feeds)["acc"], A0 + 3)


@pytest.mark.parametrize("condition,got", [
    (np.array([True, True]), "bool[2]"), (np.array([1]), "int64[1]"),
    (np.array(1, np.int32), "int32[]"),
])
def test_constant_body_condition_that_is_not_one_boolean(condition: np.ndarray,
                                                         got: str) -> None:
    """Only a constant true of one boolean element may skip the per-iteration check."""
    model = loop_with_body_condition(condition)
    layer = model.graph.layers_of_type("Loop")[0]
    with pytest.raises(ExecutionError) as info_:
        Executor(model, check=False).run({"trip": np.array(3), "cond": np.array(True),
                                          "a0": A0})
    assert str(info_.value) == (
        f'layer {layer.id} "counter" (Loop-opset5): the body\'s execution condition must be '
        f"a scalar or 1-element boolean tensor, got {got} (at iteration 0 of {layer.id})")


def test_if_condition_that_is_not_boolean_word_for_word() -> None:
    layer = if_layer()
    kernel = compile_if(layer, SCOPE, RunOptions())
    with pytest.raises(ExecutionError) as info_:
        kernel([np.array(1), np.zeros(2, F32)])
    assert str(info_.value) == (f"{where(layer)}: the condition (input 0) must be a scalar or "
                                "1-element boolean tensor, got int64[]")


def test_tensor_iterator_with_a_current_iteration_input_names_its_scope() -> None:
    body = Net()
    i = body.param("i", "i64", ())
    r_i = body.result(i)
    net = Net()
    ti = net.tensor_iterator(body, "counter")
    ti.invariant(net.param("n", "i64", ()), i)
    ti.output(r_i, info("i64", ()), names=["n_out"])
    layer, outs = ti.build()
    finish(net, outs)
    layer.port_maps["port_map"][0].purpose = "current_iteration"
    assert refusal(compile_tensor_iterator, layer) == (
        f"{where(layer)}: a TensorIterator body cannot have a current_iteration input")


def test_tensor_iterator_body_failure_names_the_body_layer_and_iteration() -> None:
    """Rows of A and B added; B's rows have 3 elements, A's 2: the body Add fails on the
    first iteration, named by its path under the TensorIterator's scope."""
    layer = two_sliced_ti(3, 3)
    kernel = compile_tensor_iterator(layer, SCOPE, RunOptions())
    add = layer.bodies["body"].layers_of_type("Add")[0]
    with pytest.raises(ExecutionError) as info_:
        kernel([np.zeros((3, 2), F32), np.zeros((3, 3), F32)])
    message = str(info_.value)
    assert message.startswith(f'layer {SCOPE}/{layer.id}/body/{add.id} "{add.name}" '
                              "(Add-opset1): ")
    assert message.endswith(f"(at iteration 0 of {SCOPE}/{layer.id})")
