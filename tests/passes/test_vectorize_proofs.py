"""What ``VectorizeLoops`` takes as proven about the graph around a loop before it splices
the batched form in (``irtool.passes.vectorize._proven``): a TensorIterator's sliced
inputs have equally many parts (the same input, or declared static lengths that are
equal), and a Loop runs exactly its trip count (a constant true condition, a trip count
that is a non-negative constant or a length) with every sliced input of that many parts.

Each case is a loop built in IR whose body adds the parts of its sliced inputs (each part
kept at length 1 along the sliced axis) and joins the sums along that axis. Cases the
pass must vectorise give hand numpy's values with no loop left; cases it must not keep
the loop and still give hand numpy's values (the spliced form would give another number
of rows: all the rows of X where the Loop reads 3, rows where the condition stops it
first). IR that validate refuses (a sliced input whose port is missing or unconnected,
an axis past the rank) keeps the loop without an error.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support.conversion import loop_layers
from support.ir_builders import Net, check, finish, info, true_result

import irtool
from irtool.passes.vectorize import VectorizeLoops, why_not

F32 = np.float32


def _x(rows: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed + rows).standard_normal((rows, 3)).astype(F32)


def _sliced_sum(kind: str, decls: list[tuple[int, ...]], *, axis: int = 0, same: bool = False,
                trip: object = None, cond: str = "const", joined: int = -1) -> irtool.Model:
    """A ``kind`` ("ti" or "loop") layer ``lp`` over inputs ``x0, x1, ...`` declared
    ``decls`` (``same``: one input ``x0`` sliced twice), each sliced along ``axis``; the
    body adds the parts, joined along ``axis`` into output ``y`` of ``joined`` rows. A
    Loop's trip count is ``trip`` (an int: a constant; "param": input ``trip``) and its
    condition a constant true or (``cond="param"``) input ``cond``."""
    body, net = Net(), Net()
    rank = len(decls[0])
    ax = axis % rank
    outer = [net.param(f"x{k}", "f32", d) for k, d in enumerate(decls[:1] if same else decls)]
    parts = [body.param(f"p{k}", "f32", tuple(1 if a == ax else d
                                              for a, d in enumerate(decls[0])))
             for k in range(len(decls))]
    if kind == "ti":
        lp = net.tensor_iterator(body, "lp")
    else:
        lp = net.loop(body, "lp")
        lp.trip_count(net.param("trip", "i64", ()) if trip == "param"
                      else net.const(np.int64(trip)))
        lp.condition(net.param("cond", "boolean", ()) if cond == "param"
                     else net.const(np.array(True)))
        lp.execution_condition(true_result(body))
    for k, p in enumerate(parts):
        lp.sliced(outer[0 if same else k], p, axis=axis)
    total = parts[0]
    for p in parts[1:]:
        total = body.op("Add", "opset1", [total, p], {"auto_broadcast": "numpy"})
    out = tuple(joined if a == ax else d for a, d in enumerate(decls[0]))
    lp.output(body.result(total), info("f32", out), axis=axis, names=["y"])
    return finish(net, lp)


# name: (model, feeds, vectorised, expected y by hand numpy)
X4, Z4, X5 = _x(4), _x(4, seed=1), _x(5)
PROOFS = {
    # TensorIterator: two inputs of equal declared lengths, along 0 and along -rank
    "ti, two inputs of 4 rows": (
        lambda: _sliced_sum("ti", [(4, 3), (4, 3)], joined=4),
        {"x0": X4, "x1": Z4}, True, X4 + Z4),
    "ti, two inputs of 4 rows along -2": (
        lambda: _sliced_sum("ti", [(4, 3), (4, 3)], axis=-2, joined=4),
        {"x0": X4, "x1": Z4}, True, X4 + Z4),
    "ti, one input sliced twice, dynamic length": (
        lambda: _sliced_sum("ti", [(-1, 3), (-1, 3)], same=True),
        {"x0": X4}, True, X4 + X4),
    # ... of no rows (validate refuses the TensorIterator, as OpenVINO's CPU plugin
    # does: an empty slice; its batched form is well defined, rows of nothing: a
    # Reshape to (0, 0), where -1 for the count could not be written next to the 0)
    "ti, two inputs of no rows": (
        lambda: _sliced_sum("ti", [(0, 3), (0, 3)], joined=0),
        {"x0": _x(0), "x1": _x(0)}, True, np.zeros((0, 3), F32)),
    "ti, no rows of nothing": (
        lambda: _sliced_sum("ti", [(0, 0)], joined=0),
        {"x0": np.zeros((0, 0), F32)}, True, np.zeros((0, 0), F32)),
    # ... of lengths not proven equal: unknown, or declared unequal (IR the validator
    # may refuse; irtool's runtime gives it no values to compare)
    "ti, two inputs of dynamic length": (
        lambda: _sliced_sum("ti", [(-1, 3), (-1, 3)]),
        {"x0": X4, "x1": Z4}, False, X4 + Z4),
    "ti, inputs of 4 and 5 rows": (
        lambda: _sliced_sum("ti", [(4, 3), (5, 3)], joined=4), None, False, None),
    # Loop: a constant trip count equal to the declared rows, or none at all
    "loop, trip 4 over 4 rows": (
        lambda: _sliced_sum("loop", [(4, 3)], trip=4, joined=4), {"x0": X4}, True, X4),
    "loop, trip 4 over two inputs of 4 rows": (
        lambda: _sliced_sum("loop", [(4, 3), (4, 3)], trip=4, joined=4),
        {"x0": X4, "x1": Z4}, True, X4 + Z4),
    # ... shorter than the rows: the loop reads rows 0..2 only (the form would read 5)
    "loop, trip 3 over 5 rows": (
        lambda: _sliced_sum("loop", [(5, 3)], trip=3, joined=3), {"x0": X5}, False, X5[:3]),
    # ... a condition that may be false: no iteration (the form would give every row)
    "loop, a condition input": (
        lambda: _sliced_sum("loop", [(4, 3)], trip=4, cond="param"),
        {"x0": X4, "cond": np.array(False)}, False, np.zeros((0, 3), F32)),
    # ... a trip count of an input: not proven the length
    "loop, trip count of an input": (
        lambda: _sliced_sum("loop", [(4, 3)], trip="param", joined=4),
        {"x0": X4, "trip": np.array(4, np.int64)}, False, X4),
    # ... a negative axis: trip_matches does not count from the end
    "loop, trip 4 over 4 rows along -2": (
        lambda: _sliced_sum("loop", [(4, 3)], axis=-2, trip=4, joined=4),
        {"x0": X4}, False, X4),
}


@pytest.mark.parametrize("case", list(PROOFS))
def test_only_proven_iteration_counts_are_vectorised(case: str) -> None:
    make, feeds, vectorised, want = PROOFS[case]
    model = make()
    assert VectorizeLoops()(model).changes == int(vectorised)
    assert len(loop_layers(model, "Loop") + loop_layers(model, "TensorIterator")) == \
        int(not vectorised)
    if feeds is not None:
        check(model, feeds, {"y": want}, openvino=False)


def _numbered(trip: object) -> irtool.Model:
    """A Loop ``lp`` of trip count ``trip`` (an int: a constant; "param": input ``trip``)
    and no sliced input whose body gives float(i) * 0.5 + 1, joined along 0."""
    body, net = Net(), Net()
    i = body.param("i", "i64", ())
    fi = body.op("Convert", "opset1", [i], {"destination_type": "f32"}, et="f32")
    y = body.op("Add", "opset1", [body.op("Multiply", "opset1", [fi, body.const(F32(0.5))],
                                          {"auto_broadcast": "numpy"}),
                                  body.const(F32(1))], {"auto_broadcast": "numpy"})
    y = body.op("Unsqueeze", "opset1", [y, body.const(np.array([0], np.int64))], shape=(1,))
    lp = net.loop(body, "lp")
    lp.trip_count(net.param("trip", "i64", ()) if trip == "param"
                  else net.const(np.int64(trip)))
    lp.condition(net.const(np.array(True)))
    lp.current_iteration(i)
    lp.execution_condition(true_result(body))
    lp.output(body.result(y), info("f32", (-1,)), axis=0, names=["y"])
    return finish(net, lp)


@pytest.mark.parametrize("trip, vectorised", [(0, True), (3, True), ("param", False)])
def test_a_loop_without_sliced_inputs_needs_a_known_trip_count(trip: object,
                                                               vectorised: bool) -> None:
    """A constant trip count, 0 too, is how often the loop runs; one read from an input
    is not proven non-negative (a negative one runs until the condition stops it)."""
    model = _numbered(trip)
    assert VectorizeLoops()(model).changes == int(vectorised)
    count = 3 if trip == "param" else trip
    feeds = {"trip": np.array(count, np.int64)} if trip == "param" else {}
    check(model, feeds, {"y": np.arange(count, dtype=F32) * F32(0.5) + F32(1)}, openvino=False)


@pytest.mark.parametrize("kind", ["ti", "loop"])
@pytest.mark.parametrize("fault", ["missing port", "unconnected", "fed from a missing port",
                                   "axis past the rank"])
def test_invalid_sliced_inputs_keep_the_loop(kind: str, fault: str) -> None:
    """A sliced input whose port_map names no port of the layer, whose port has no
    source or an edge from a port its source does not have, or whose axis is past the
    rank (IR validate refuses): nothing proven, the loop stays, no error."""
    model = _sliced_sum(kind, [(4, 3), (4, 3)], trip=4, joined=4)
    (lp,) = loop_layers(model, "Loop" if kind == "loop" else "TensorIterator")
    entry = [e for e in lp.port_maps["port_map"] if e.kind == "input" and e.axis is not None][1]
    if fault == "missing port":
        entry.external_port_id = 99
    elif fault == "unconnected":
        model.graph.disconnect_input(lp.id, entry.external_port_id)
    elif fault == "fed from a missing port":
        (x1,) = [p for p in model.graph.parameters() if p.name == "x1"]
        model.graph.disconnect_input(lp.id, entry.external_port_id)
        model.graph.connect(x1.id, 99, lp.id, entry.external_port_id)
    else:
        entry.axis = 2
    assert VectorizeLoops()(model).changes == 0
    assert len(model.graph.layers_of_type(lp.type)) == 1


def _relu_scan(net: Net, x) -> object:  # type: ignore[no-untyped-def]
    """A TensorIterator over the rows of ``x`` [4, 3] giving their Relu, joined."""
    body = Net()
    row = body.param("row", "f32", (1, 3))
    ti = net.tensor_iterator(body)
    ti.sliced(x, row, axis=0)
    ti.output(body.result(body.op("Relu", "opset1", [row])), info("f32", (4, 3)), axis=0)
    return ti.build()[1][0]


def _outer(net: Net, x, k: int) -> object:  # type: ignore[no-untyped-def]
    """A Loop of trip count input ``trip{k}`` (not proven: it stays) whose body runs a
    ``_relu_scan`` of the ``x`` it reads whole; its last value."""
    body = Net()
    xb = body.param("xb", "f32", (4, 3))
    lp = net.loop(body, f"outer{k}")
    lp.trip_count(net.param(f"trip{k}", "i64", ()))
    lp.condition(net.const(np.array(True)))
    lp.invariant(x, xb)
    lp.execution_condition(true_result(body))
    lp.output(body.result(_relu_scan(body, xb)), info("f32", (4, 3)))
    return lp.build()[1][0]


@pytest.mark.parametrize("nested", [False, True])
def test_every_vectorised_loop_is_counted(nested: bool) -> None:
    """Two loops side by side, or inside two loops that stay (a trip count of an input):
    both are vectorised and counted, and the values are hand numpy's."""
    net = Net()
    x = net.param("x", "f32", (4, 3))
    outs = [_outer(net, x, k) if nested else _relu_scan(net, x) for k in range(2)]
    model = finish(net, outs)
    assert VectorizeLoops()(model).changes == 2
    assert len(model.graph.layers_of_type("Loop")) == (2 if nested else 0)
    assert not model.graph.layers_of_type("TensorIterator")
    feeds = {"x": X4, "trip0": np.array(1, np.int64), "trip1": np.array(2, np.int64)} \
        if nested else {"x": X4}
    relu = np.maximum(X4, 0)
    got = irtool.run(model, feeds)
    assert len(got) == 2
    for y in got.values():
        np.testing.assert_array_equal(y, relu)


@pytest.mark.parametrize("kind", ["ti", "loop"])
def test_a_loop_without_a_port_map_has_no_form(kind: str) -> None:
    """A loop whose IR has no port_map at all (validate refuses): its body Parameter
    is fed by nothing, so there is no batched form; why_not says so."""
    model = _sliced_sum(kind, [(4, 3)], trip=4, joined=4)
    (lp,) = loop_layers(model, "Loop" if kind == "loop" else "TensorIterator")
    del lp.port_maps["port_map"]
    name = "Loop" if kind == "loop" else "TensorIterator"
    assert why_not(lp) == f"{name} 'lp': a body Parameter has no port_map entry"
    assert VectorizeLoops()(model).changes == 0


# -- what the batched form refuses, and says so (why_not)


def _ti_model() -> tuple[irtool.Model, object, object]:
    """``_sliced_sum`` over two inputs as a TensorIterator: the model, the layer, its body."""
    model = _sliced_sum("ti", [(4, 3), (4, 3)], joined=4)
    (lp,) = loop_layers(model, "TensorIterator")
    return model, lp, lp.bodies["body"]


def _edit(fault: str, lp, body) -> None:  # type: ignore[no-untyped-def]
    param = body.parameters()[0]
    (add,) = body.layers_of_type("Add")
    entries = lp.port_maps["port_map"]
    sliced = next(e for e in entries if e.kind == "input")
    out = next(e for e in entries if e.kind == "output")
    if fault == "no body":
        del lp.bodies["body"]
    elif fault == "port_map input names a Result":
        sliced.internal_layer_id = body.results()[0].id
    elif fault == "port_map input names a missing port":
        sliced.external_port_id = 99
    elif fault == "port_map output names a missing port":
        out.external_port_id = 99
    elif fault == "an output without a port_map entry":
        entries.remove(out)
    elif fault == "a back edge from a missing layer":
        from irtool.ir.graph import BackEdge
        lp.back_edges.append(BackEdge(99, param.id))
        sliced.axis = None  # a carried value, not a slice
    elif fault == "a body port of unknown rank":
        lp.inputs[0].dims = None
    elif fault == "an unconnected body input":
        body.disconnect_input(add.id, add.inputs[1].id)
    elif fault == "a body value defined nowhere":
        body.disconnect_input(add.id, add.inputs[1].id)
        body.connect(param.id, 99, add.id, add.inputs[1].id)
    elif fault == "an iteration number":
        sliced.purpose = "current_iteration"
    elif fault == "an operation without a batched rule":
        add.type, add.version, add.attrs = "TopK", "opset11", {
            "axis": "0", "mode": "max", "sort": "value", "index_element_type": "i64"}
    else:
        raise AssertionError(fault)


REFUSED = {
    "no body": "TensorIterator 'lp' is not a Loop or TensorIterator",
    "port_map input names a Result": "TensorIterator 'lp': port_map input names body layer "
                                     "{result}, not a Parameter",
    "port_map input names a missing port": "TensorIterator 'lp': port_map names input port "
                                           "99, which the layer does not have",
    "port_map output names a missing port": "TensorIterator 'lp': port_map names output port "
                                            "99, which the layer does not have",
    "an output without a port_map entry": "TensorIterator 'lp': not every output port has "
                                          "one port_map entry",
    "a back edge from a missing layer": "TensorIterator 'lp': a back edge from missing body "
                                        "layer 99",
    "a body port of unknown rank": "TensorIterator 'lp': a body port of unknown type or rank "
                                   "(0)",
    "an unconnected body input": "TensorIterator 'lp': input 1 of body layer '{add}' "
                                 "is not connected",
    "a body value defined nowhere": "TensorIterator 'lp': body layer '{add}' reads "
                                    "a value defined nowhere",
    "an iteration number": "TensorIterator 'lp': a TensorIterator with an iteration number",
    "an operation without a batched rule": "TensorIterator 'lp': body layer '{add}' "
                                           "(TopK-opset11) cannot take a leading iteration "
                                           "axis",
}


@pytest.mark.parametrize("fault", list(REFUSED))
def test_invalid_loops_have_no_form_and_why_not_says_why(fault: str) -> None:
    """IR that validate refuses, edited into a TensorIterator over rows: no batched form,
    no error, and why_not names the layer and what is wrong."""
    model, lp, body = _ti_model()
    (result,) = body.results()
    (add,) = body.layers_of_type("Add")
    _edit(fault, lp, body)
    assert why_not(lp) == REFUSED[fault].format(result=result.id, add=add.name)
    assert VectorizeLoops()(model).changes == 0


def _conditioned_loop(carried: str) -> irtool.Model:
    """A Loop ``lp`` of trip count 4 over the rows of ``x0`` [4, 3] whose body gives
    ``row * float(c)``, ``c`` a body Parameter reading the loop's condition input (a
    constant true) first; after each iteration ``c`` is ``carried``: "the condition" (the
    body's constant true condition Result), "its negation" (``not c``, another Result),
    or ("a body condition of c") the body condition is ``c`` itself. Its port_map lists
    the row output before the condition."""
    body, net = Net(), Net()
    row = body.param("row", "f32", (1, 3))
    c = body.param("c", "boolean", ())
    fc = body.op("Convert", "opset1", [c], {"destination_type": "f32"}, et="f32")
    y = body.op("Multiply", "opset1", [row, fc], {"auto_broadcast": "numpy"})
    lp = net.loop(body, "lp")
    lp.trip_count(net.const(np.int64(4)))
    lp.condition(net.const(np.array(True)))
    lp.sliced(net.param("x0", "f32", (4, 3)), row, axis=0)
    lp.output(body.result(y), info("f32", (4, 3)), axis=0, names=["y"])
    if carried == "a body condition of c":
        r_cond = body.result(c)
    else:
        r_cond = true_result(body)
    lp.execution_condition(r_cond)
    if carried == "its negation":
        lp.carried_condition(c, body.result(body.op("LogicalNot", "opset1", [c])))
    else:
        lp.carried_condition(c, r_cond)
    return finish(net, lp)


@pytest.mark.parametrize("carried, vectorised, want", [
    ("the condition", True, X4),
    ("its negation", False, X4 * np.array([1, 0, 1, 0], F32)[:, None]),
])
def test_a_carried_condition_is_unchanged_only_when_it_is_the_condition(
        carried: str, vectorised: bool, want: np.ndarray) -> None:
    """A body Parameter reading the condition (port 1) and carried from the body's
    constant true condition is true in every iteration: the loop is vectorised. Carried
    from another Result it changes (true, false, true, false): the loop stays, and why_not
    says which value changes."""
    model = _conditioned_loop(carried)
    (lp,) = loop_layers(model)
    assert why_not(lp) == (None if vectorised else "Loop 'lp': the carried value of body "
                           "Parameter 'c' changes from one iteration to the next")
    assert VectorizeLoops()(model).changes == int(vectorised)
    check(model, {"x0": X4}, {"y": want}, openvino=False)


def test_a_body_condition_that_may_stop_the_loop_is_refused() -> None:
    model = _conditioned_loop("a body condition of c")
    (lp,) = loop_layers(model)
    assert why_not(lp) == "Loop 'lp': the body condition may stop the loop early"
    assert VectorizeLoops()(model).changes == 0
    check(model, {"x0": X4}, {"y": X4}, openvino=False)


def test_the_form_names_its_ports_after_the_loop_and_keeps_static_counts() -> None:
    """The form's Parameters and Results say which port of the loop they stand for; a
    count the sliced input declares static (along -rank too) stays static in the form."""
    from irtool.passes.vectorize import batched_form

    model = _sliced_sum("ti", [(4, 3), (4, 3)], axis=-2, joined=4)
    form = batched_form(loop_layers(model, "TensorIterator")[0])
    assert form is not None and form.count == 4
    assert [p.name for p in form.graph.parameters()] == ["lp/input0", "lp/input1"]
    assert [r.name for r in form.graph.results()] == ["lp/output0"]


def test_a_control_flow_layer_on_per_iteration_values_is_refused(tmp_path: Path) -> None:
    """An If inside a Loop body whose condition is computed from the row: the If has no
    batched form, so the Loop stays, why_not names the If, and irtool still computes what
    onnxruntime does."""
    from onnx import TensorProto, helper
    from support.conversion import check_conversion, make_model, vi

    def branch(name: str, op: str) -> object:
        return helper.make_graph([helper.make_node(op, ["x_i", "x_i"], [name + "_y"])], name,
                                 [], [vi(name + "_y", np.float32, [3])])

    body = helper.make_graph(
        [helper.make_node("Gather", ["X", "i"], ["x_i"], axis=0),
         helper.make_node("ReduceSum", ["x_i"], ["s"], keepdims=0),
         helper.make_node("Constant", [], ["zero"], value=helper.make_tensor(
             "z", TensorProto.FLOAT, [], [0.0])),
         helper.make_node("Greater", ["s", "zero"], ["c"]),
         helper.make_node("If", ["c"], ["y"], then_branch=branch("then", "Add"),
                          else_branch=branch("other", "Mul")),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body", [vi("i", np.int64, []), vi("cond_in", np.bool_, [])],
        [vi("cond_out", np.bool_, []), vi("y", np.float32, [3])])
    model = make_model([helper.make_node("Shape", ["X"], ["shape"]),
                        helper.make_node("Constant", [], ["k"], value_int=0),
                        helper.make_node("Gather", ["shape", "k"], ["trip"], axis=0),
                        helper.make_node("Constant", [], ["t"], value=helper.make_tensor(
                            "t", TensorProto.BOOL, [], [True])),
                        helper.make_node("Loop", ["trip", "t"], ["Y"], body=body)],
                       [vi("X", np.float32, [None, 3])], [vi("Y", np.float32, [None, 3])])
    x = np.array([[1, 2, 3], [-1, -2, -3], [0.5, -4, 1]], np.float32)
    ir = check_conversion(model, {"X": x}, tmp_path, slice_inputs=False)
    (lp,) = loop_layers(ir)
    message = why_not(lp) or ""
    assert message.startswith("Loop ") and "(If-opset8) runs a body of its own on " \
        "per-iteration values" in message, message


def test_an_output_port_numbered_zero_has_its_result() -> None:
    """Port ids need only be unique: a TensorIterator whose output is port 0 (its inputs 1
    and 2) gets a Result for it in the batched form, as when outputs follow the inputs."""
    from irtool.passes.vectorize import batched_form

    model = _sliced_sum("ti", [(4, 3), (4, 3)], joined=4)
    (lp,) = loop_layers(model, "TensorIterator")
    renumbered = {lp.inputs[0].id: 1, lp.inputs[1].id: 2, lp.outputs[0].id: 0}
    for port in (*lp.inputs, *lp.outputs):
        port.id = renumbered[port.id]
    for entry in lp.port_maps["port_map"]:
        entry.external_port_id = renumbered[entry.external_port_id]
    form = batched_form(lp)
    assert form is not None, why_not(lp)
    assert [r.name for r in form.graph.results()] == ["lp/output0"]


def test_a_copied_body_layer_keeps_its_data_flag_and_rt_info() -> None:
    """The batched form's copy of a body layer keeps what the writer needs of it: whether
    it has a <data> element, and its rt_info."""
    from irtool.ir.graph import RTNode
    from irtool.passes.vectorize import batched_form

    model = _sliced_sum("ti", [(4, 3), (4, 3)], joined=4)
    (lp,) = loop_layers(model, "TensorIterator")
    (add,) = lp.bodies["body"].layers_of_type("Add")
    for has_data in (True, False):
        add.has_data = has_data
        add.rt_info = [RTNode("attribute", {"name": "fused_names", "value": f"{has_data}"})]
        form = batched_form(lp)
        assert form is not None
        (copy,) = [layer for _, layer in form.graph.walk() if layer.name == f"lp/{add.name}"]
        assert copy.has_data is has_data and copy.rt_info == add.rt_info
