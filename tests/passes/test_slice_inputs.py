"""The sliced-input pass: ``Gather(X, iteration, axis=k)`` in a Loop body becomes a
port_map input with ``axis=k`` where that is provably the same computation, and stays a
Gather everywhere else. Every variant is checked against onnxruntime on OpenVINO and
irtool, with the pass on and off."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import helper
from support.conversion import (
    check_conversion,
    const_node,
    loop_layers,
    make_model,
    run_onnxruntime,
    vi,
)

import irtool

F32, I64, BOOL = np.float32, np.int64, np.bool_
RNG = np.random.default_rng(3)
X = RNG.standard_normal((4, 3)).astype(F32)


def loop_over(axis: int, *, trip: str = "shape", index: str = "i", cond: str = "true",
              whole_x_too: bool = False, static: bool = True, x_second: bool = False
              ) -> object:
    """acc += X[i] along ``axis``; scan output X[i]^2.

    ``trip``: "shape" (Gather(Shape(X), axis)), "const" (the right constant), "wrong"
    (a constant one short), "input" (a graph input M); ``index``: "i" or "i+1 mod n";
    ``cond``: "true" (Identity of cond_in) or "computed" (sum < 100); ``x_second``: X is
    the second graph input (its Parameter is not the first layer of the graph).
    """
    n = X.shape[axis]
    nodes = []
    idx = "i"
    if index != "i":
        nodes += [helper.make_node("Add", ["i", "one"], ["i1"]),
                  helper.make_node("Mod", ["i1", "n"], ["idx"])]
        idx = "idx"
    nodes += [helper.make_node("Gather", ["X", idx], ["row"], axis=axis),
              helper.make_node("Add", ["acc_in", "row"], ["acc_out"]),
              helper.make_node("Mul", ["row", "row"], ["sq"])]
    if cond == "true":
        nodes.append(helper.make_node("Identity", ["c_in"], ["c_out"]))
    else:
        nodes += [helper.make_node("ReduceSum", ["acc_out"], ["tot"], keepdims=0),
                  helper.make_node("Less", ["tot", "big"], ["c_out"])]
    out = "sq"
    if whole_x_too:
        nodes += [helper.make_node("ReduceSum", ["X"], ["all"], keepdims=0),
                  helper.make_node("Add", ["sq", "all"], ["sq_all"])]
        out = "sq_all"
    elem = X.shape[1 - axis]
    body = helper.make_graph(
        nodes, "body", [vi("i", I64, []), vi("c_in", BOOL, []), vi("acc_in", F32, [elem])],
        [vi("c_out", BOOL, []), vi("acc_out", F32, [elem]), vi(out, F32, [elem])])
    top = [const_node("one", 1, I64), const_node("n", n, I64), const_node("big", F32(100))]
    inputs = [vi("X", F32, list(X.shape) if static else [None, None]),
              vi("acc0", F32, [elem])]
    if x_second:
        inputs.reverse()
    if trip == "shape":
        top += [helper.make_node("Shape", ["X"], ["shape"]), const_node("k", axis, I64),
                helper.make_node("Gather", ["shape", "k"], ["M"])]
    elif trip == "const":
        top.append(const_node("M", n, I64))
    elif trip == "wrong":
        top.append(const_node("M", n - 1, I64))
    else:
        inputs.append(vi("M", I64, []))
    top.append(helper.make_node("Loop", ["M", "", "acc0"], ["acc", "sqs"], body=body))
    return make_model(top, inputs, [vi("acc", F32, [elem]), vi("sqs", F32, [None, elem])])


def _check(model, tmp_path: Path, slice_inputs: bool = True, **extra) -> object:
    (acc0,) = (i for i in model.graph.input if i.name == "acc0")
    elem = acc0.type.tensor_type.shape.dim[0].dim_value
    feeds = {"X": X, "acc0": np.linspace(0, 1, elem, dtype=F32), **extra}
    where = tmp_path / ("on" if slice_inputs else "off")
    where.mkdir(exist_ok=True)
    return check_conversion(model, feeds, where, slice_inputs=slice_inputs)


def _sliced_axes(ir) -> list[int]:
    (loop,) = loop_layers(ir)
    return [e.axis for e in loop.port_maps["port_map"] if e.kind == "input" and e.axis is not None]


def _body_gathers(ir) -> int:
    (loop,) = loop_layers(ir)
    return len(loop.bodies["body"].layers_of_type("Gather"))


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("trip", ["shape", "const"])
def test_gather_by_iteration_becomes_a_sliced_input(axis: int, trip: str,
                                                    tmp_path: Path) -> None:
    model = loop_over(axis, trip=trip)
    ir = _check(model, tmp_path)
    assert _sliced_axes(ir) == [axis]
    assert _body_gathers(ir) == 0
    (loop,) = loop_layers(ir)
    entry = next(e for e in loop.port_maps["port_map"] if e.axis is not None)
    assert (entry.start, entry.end, entry.stride, entry.part_size) == (0, -1, 1, 1)
    assert loop.bodies["body"].layers_of_type("Squeeze")
    # X is read only through the Gather: its own input is sliced, no second one is added.
    inputs = [e for e in loop.port_maps["port_map"] if e.kind == "input" and not e.purpose]
    assert len(inputs) == 2  # acc, X sliced
    # Off: the Gather stays, same numbers.
    off = _check(model, tmp_path, slice_inputs=False)
    assert _sliced_axes(off) == [] and _body_gathers(off) == 1


def test_dynamic_x_with_trip_count_from_its_shape(tmp_path: Path) -> None:
    ir = _check(loop_over(0, static=False), tmp_path)
    assert _sliced_axes(ir) == [0]


def test_x_also_used_whole_gets_a_second_input(tmp_path: Path) -> None:
    ir = _check(loop_over(0, whole_x_too=True), tmp_path)
    (loop,) = loop_layers(ir)
    assert _sliced_axes(ir) == [0]
    inputs = [e for e in loop.port_maps["port_map"] if e.kind == "input" and not e.purpose]
    assert len(inputs) == 3  # acc, X whole, X sliced


def test_second_input_is_fed_by_x_and_declares_its_type(tmp_path: Path) -> None:
    """X used whole too, and the second graph input (so X's producer is neither layer 0
    nor wired from port 0 of another layer by accident): the added Loop input is fed by X
    and declares X's type, f32 [4, 3] as the ONNX graph declares it."""
    ir = _check(loop_over(0, whole_x_too=True, x_second=True), tmp_path)
    (loop,) = loop_layers(ir)
    (entry,) = (e for e in loop.port_maps["port_map"]
                if e.kind == "input" and e.axis is not None)
    port = loop.port(entry.external_port_id)
    assert port is not None and port.precision is not None
    assert (port.precision.name, port.dims) == ("f32", (4, 3))
    x_param = next(layer for layer in ir.graph.layers if layer.name == "X")
    assert ir.graph.source(loop.id, entry.external_port_id) == \
        (x_param.id, x_param.outputs[0].id)


def test_other_three_input_layers_keep_their_consumers(tmp_path: Path) -> None:
    """acc += X[i] * W[1]: the body's Gather(W, 1) has its output on the same port number
    as the rewritten Gather(X, i) (both have three inputs); only the latter's consumers
    move to the sliced row. Hand numpy and onnxruntime agree; irtool and OpenVINO too."""
    body = helper.make_graph(
        [helper.make_node("Gather", ["X", "i"], ["row"], axis=0),
         helper.make_node("Gather", ["W", "one"], ["w1"], axis=0),
         helper.make_node("Mul", ["row", "w1"], ["prod"]),
         helper.make_node("Add", ["acc_in", "prod"], ["acc_out"]),
         helper.make_node("Identity", ["c_in"], ["c_out"])],
        "body", [vi("i", I64, []), vi("c_in", BOOL, []), vi("acc_in", F32, [3])],
        [vi("c_out", BOOL, []), vi("acc_out", F32, [3]), vi("prod", F32, [3])])
    model = make_model(
        [const_node("one", 1, I64), const_node("M", 4, I64),
         helper.make_node("Loop", ["M", "", "acc0"], ["acc", "prods"], body=body)],
        [vi("X", F32, [4, 3]), vi("acc0", F32, [3]), vi("W", F32, [2, 3])],
        [vi("acc", F32, [3]), vi("prods", F32, [4, 3])])
    w = np.array([[9, 9, 9], [1, -2, 3]], F32)
    feeds = {"X": X, "acc0": np.zeros(3, F32), "W": w}
    hand = {"acc": (X * w[1]).sum(axis=0), "prods": X * w[1]}
    for name, value in run_onnxruntime(model, feeds).items():
        np.testing.assert_allclose(value, hand[name], rtol=1e-6)
    ir = check_conversion(model, feeds, tmp_path, slice_inputs=True)
    assert _sliced_axes(ir) == [0]
    assert _body_gathers(ir) == 1  # W[1] stays


@pytest.mark.parametrize(("variant", "extra"), [
    ({"trip": "wrong"}, {}),                      # fewer iterations than rows
    ({"trip": "input"}, {"M": np.array(4, I64)}),  # trip count not provably X.shape[0]
    ({"index": "i+1"}, {}),                       # index is not the iteration number
    ({"cond": "computed"}, {}),                   # may stop early
])
def test_not_provable_keeps_the_gather(variant: dict, extra: dict, tmp_path: Path) -> None:
    ir = _check(loop_over(0, **variant), tmp_path, **extra)
    assert _sliced_axes(ir) == []
    assert _body_gathers(ir) == 1


def test_cli_slice_inputs(tmp_path: Path) -> None:
    """The Gather stays by default (and with --no-slice-inputs); --slice-inputs slices."""
    import onnx

    from irtool.cli import main

    onnx.save(loop_over(0), tmp_path / "m.onnx")
    m = str(tmp_path / "m.onnx")
    assert main(["convert", m, "-o", str(tmp_path / "default.xml")]) == 0
    assert main(["convert", m, "-o", str(tmp_path / "on.xml"), "--slice-inputs"]) == 0
    assert main(["convert", m, "-o", str(tmp_path / "off.xml"), "--no-slice-inputs"]) == 0
    assert _sliced_axes(irtool.load(tmp_path / "on.xml")) == [0]
    assert 'axis="0" external_port_id' in (tmp_path / "on.xml").read_text()
    for form in ("default", "off"):
        ir = irtool.load(tmp_path / f"{form}.xml")
        assert _sliced_axes(ir) == [] and _body_gathers(ir) == 1


@pytest.mark.parametrize("axis", [0, 1])
def test_default_form_keeps_the_gather_for_openvino(axis: int, tmp_path: Path) -> None:
    """convert's default IR reads row i with Gather(X, i) in the body, the form OpenVINO's
    CPU plugin runs faster than a sliced input (bench/ov_ir_quality.py): it validates,
    and OpenVINO and irtool match onnxruntime on it."""
    model = loop_over(axis)
    elem = model.graph.input[1].type.tensor_type.shape.dim[0].dim_value
    feeds = {"X": X, "acc0": np.linspace(0, 1, elem, dtype=F32)}
    ir = check_conversion(model, feeds, tmp_path)
    assert _sliced_axes(ir) == [] and _body_gathers(ir) == 1


def loop_over_carried_x() -> object:
    """acc += Xc[i] where Xc is loop-carried (Xc_out = Xc_in + 1): iteration ``i`` must
    read row ``i`` of the *updated* Xc, so a slice of the initial X would be wrong."""
    body = helper.make_graph(
        [helper.make_node("Gather", ["x_in", "i"], ["row"], axis=0),
         helper.make_node("Add", ["acc_in", "row"], ["acc_out"]),
         helper.make_node("Add", ["x_in", "one_f"], ["x_out"]),
         helper.make_node("Identity", ["c_in"], ["c_out"])],
        "body",
        [vi("i", I64, []), vi("c_in", BOOL, []), vi("acc_in", F32, [3]),
         vi("x_in", F32, [4, 3])],
        [vi("c_out", BOOL, []), vi("acc_out", F32, [3]), vi("x_out", F32, [4, 3])])
    top = [const_node("one_f", F32(1)), helper.make_node("Shape", ["X"], ["shape"]),
           const_node("k", 0, I64), helper.make_node("Gather", ["shape", "k"], ["M"]),
           helper.make_node("Loop", ["M", "", "acc0", "X"], ["acc", "x_last"], body=body)]
    return make_model(top, [vi("X", F32, [4, 3]), vi("acc0", F32, [3])],
                      [vi("acc", F32, [3]), vi("x_last", F32, [4, 3])])


def test_loop_carried_x_keeps_the_gather(tmp_path: Path) -> None:
    """X carried by a back edge changes every iteration: slicing the initial X would
    give acc = sum of X's rows instead of sum of (row i + i)."""
    model = loop_over_carried_x()
    x = np.arange(12, dtype=F32).reshape(4, 3)
    feeds = {"X": x, "acc0": np.zeros(3, F32)}
    # Hand numpy: row i of X after i increments.
    hand = sum(x[i] + i for i in range(4))
    np.testing.assert_array_equal(run_onnxruntime(model, feeds)["acc"], hand)
    ir = check_conversion(model, feeds, tmp_path)
    assert _sliced_axes(ir) == []
    assert _body_gathers(ir) == 1
