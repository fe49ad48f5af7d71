"""ONNX Scan -> TensorIterator-1 (Scan-9 and later) and Scan-8 (batch axis) -> a Loop over
the batch around the scan; axes, directions, several states and scan inputs, captures,
nesting. Expected values from onnxruntime; IR run on OpenVINO and irtool."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import helper
from support.conversion import check_conversion, const_node, loop_layers, make_model, vi

import irtool

F32 = np.float32
RNG = np.random.default_rng(7)


def _body(elem: list, n_scan_in: int = 1, capture: bool = False) -> object:
    """States s, p of shape ``elem``; per iteration s += x_t and p *= 0.5 + x_t^2; scan
    outputs s * x_t (s * w with the captured ``w``) and, with a second scan input,
    z_t + 1."""
    nodes = [
        helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
        helper.make_node("Mul", ["x_t", "x_t"], ["x_sq"]),
        helper.make_node("Add", ["x_sq", "half"], ["factor"]),
        helper.make_node("Mul", ["p_in", "factor"], ["p_out"]),
        helper.make_node("Mul", ["s_out", "w" if capture else "x_t"], ["y1"]),
    ]
    inputs = [vi("s_in", F32, elem), vi("p_in", F32, elem), vi("x_t", F32, elem)]
    outputs = [vi("s_out", F32, elem), vi("p_out", F32, elem), vi("y1", F32, elem)]
    if n_scan_in == 2:
        nodes.append(helper.make_node("Add", ["z_t", "one"], ["y2"]))
        inputs.append(vi("z_t", F32, [4]))
        outputs.append(vi("y2", F32, [4]))
    return helper.make_graph(nodes, "scan_body", inputs, outputs)


def _scan9_model(opset: int, x_shape: list, elem: list, in_axes=None, in_dirs=None,
                 out_axes=None, out_dirs=None, two_inputs: bool = False,
                 capture: bool = False) -> object:
    attrs = {"num_scan_inputs": 2 if two_inputs else 1}
    for key, value in (("scan_input_axes", in_axes), ("scan_input_directions", in_dirs),
                       ("scan_output_axes", out_axes), ("scan_output_directions", out_dirs)):
        if value is not None:
            attrs[key] = value
    inputs = [vi("s0", F32, elem), vi("p0", F32, elem), vi("X", F32, x_shape)]
    outs = [vi("s", F32, elem), vi("p", F32, elem), vi("ys", F32, [None] * (len(elem) + 1))]
    if two_inputs:
        inputs.append(vi("Z", F32, [5, 4]))
        outs.append(vi("zs", F32, [None, None]))
    if capture:
        inputs.append(vi("w", F32, elem))
    nodes = [const_node("half", F32(0.5)), const_node("one", F32(1)),
             helper.make_node("Scan", [v.name for v in inputs if v.name != "w"],
                              [o.name for o in outs],
                              body=_body(elem, 2 if two_inputs else 1, capture), **attrs)]
    return make_model(nodes, inputs, outs, opset=opset)


def _feeds(x_shape: list, elem: list, two: bool = False, capture: bool = False) -> dict:
    feeds = {"s0": RNG.standard_normal(elem).astype(F32),
             "p0": RNG.standard_normal(elem).astype(F32),
             "X": RNG.standard_normal(x_shape).astype(F32)}
    if two:
        feeds["Z"] = RNG.standard_normal((5, 4)).astype(F32)
    if capture:
        feeds["w"] = RNG.standard_normal(elem).astype(F32)
    return feeds


@pytest.mark.parametrize("opset", [9, 11, 16, 19, 21, 23])
def test_scan_versions(opset: int, tmp_path: Path) -> None:
    model = _scan9_model(opset, [5, 3], [3])
    ir = check_conversion(model, _feeds([5, 3], [3]), tmp_path)
    (ti,) = loop_layers(ir, "TensorIterator")
    sliced = [e for e in ti.port_maps["port_map"] if e.kind == "input" and e.axis is not None]
    assert [(e.axis, e.stride, e.part_size) for e in sliced] == [(0, 1, 1)]
    assert len(ti.back_edges) == 2


@pytest.mark.parametrize(("in_axes", "in_dirs", "out_axes", "out_dirs"), [
    ([1], [0], [0], [0]),
    ([1], [1], [1], [0]),
    ([-2], [1], [-1], [1]),
    ([0], [1], [2], [1]),
    ([-3], [0], [-2], [1]),
])
def test_scan_axes_and_directions(in_axes, in_dirs, out_axes, out_dirs, tmp_path: Path) -> None:
    """Input axes and directions (reverse: stride -1 from the end), output axes and
    directions (prepend: the first iteration's value ends up last), negative axes."""
    x_shape = [5, 4, 3] if in_axes[0] in (0, -3) else [2, 5, 3]
    elem = [4, 3] if in_axes[0] in (0, -3) else [2, 3]
    model = _scan9_model(17, x_shape, elem, in_axes, in_dirs, out_axes, out_dirs)
    ir = check_conversion(model, _feeds(x_shape, elem), tmp_path)
    (ti,) = loop_layers(ir, "TensorIterator")
    sliced = next(e for e in ti.port_maps["port_map"] if e.kind == "input" and e.axis is not None)
    assert (sliced.stride, sliced.start, sliced.end) == ((-1, -1, 0) if in_dirs[0] else (1, 0, -1))


def test_scan_two_inputs_and_a_capture(tmp_path: Path) -> None:
    model = _scan9_model(17, [5, 3], [3], two_inputs=True, capture=True)
    check_conversion(model, _feeds([5, 3], [3], two=True, capture=True), tmp_path)


@pytest.mark.parametrize("slice_inputs", [False, True])
def test_scan_nested_in_scan_becomes_a_loop(slice_inputs: bool, tmp_path: Path) -> None:
    """OpenVINO does not nest TensorIterators: the outer Scan becomes a Loop (one without
    a current_iteration input, which the sliced-input pass must leave alone)."""
    inner_body = helper.make_graph(
        [helper.make_node("Add", ["a_in", "e"], ["a_out"]),
         helper.make_node("Identity", ["a_out"], ["a_scan"])],
        "inner", [vi("a_in", F32, []), vi("e", F32, [])],
        [vi("a_out", F32, []), vi("a_scan", F32, [])])
    outer_body = helper.make_graph(
        [helper.make_node("Scan", ["t_in", "row"], ["t_out", "partial"], body=inner_body,
                          num_scan_inputs=1),
         helper.make_node("Mul", ["partial", "k"], ["scaled"])],
        "outer", [vi("t_in", F32, []), vi("row", F32, [4])],
        [vi("t_out", F32, []), vi("scaled", F32, [4])])
    model = make_model(
        [helper.make_node("Scan", ["t0", "X"], ["t", "all"], body=outer_body,
                          num_scan_inputs=1)],
        [vi("t0", F32, []), vi("X", F32, [3, 4]), vi("k", F32, [])],
        [vi("t", F32, []), vi("all", F32, [3, 4])])
    feeds = {"t0": np.array(0.5, F32), "X": RNG.standard_normal((3, 4)).astype(F32),
             "k": np.array(-2, F32)}
    ir = check_conversion(model, feeds, tmp_path, slice_inputs=slice_inputs)
    assert [layer.type for layer in ir.graph.layers if layer.type in ("Loop", "TensorIterator")] \
        == ["Loop"]
    assert len(loop_layers(ir, "TensorIterator")) == 1


def _scan8_model(directions=None, lens: str = "", batch: int = 3) -> object:
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
         helper.make_node("Mul", ["s_out", "y_t"], ["o"])],
        "body8", [vi("s_in", F32, [2]), vi("x_t", F32, [2]), vi("y_t", F32, [2])],
        [vi("s_out", F32, [2]), vi("o", F32, [2])])
    attrs = {"num_scan_inputs": 2}
    if directions is not None:
        attrs["directions"] = directions
    inputs = [vi("s0", F32, [batch, 2]), vi("X", F32, [batch, 4, 2]),
              vi("Y", F32, [batch, 4, 2])]
    nodes = [helper.make_node("Scan", [lens, "s0", "X", "Y"], ["s", "outs"], body=body,
                              **attrs)]
    return make_model(nodes, inputs,
                      [vi("s", F32, [batch, 2]), vi("outs", F32, [batch, 4, 2])], opset=8)


@pytest.mark.parametrize("directions", [None, [0, 0], [1, 0], [1, 1]])
def test_scan8_batch_axis(directions, tmp_path: Path) -> None:
    feeds = {"s0": RNG.standard_normal((3, 2)).astype(F32),
             "X": RNG.standard_normal((3, 4, 2)).astype(F32),
             "Y": RNG.standard_normal((3, 4, 2)).astype(F32)}
    ir = check_conversion(_scan8_model(directions), feeds, tmp_path)
    assert [layer.type for layer in ir.graph.layers
            if layer.type in ("Loop", "TensorIterator")] == ["Loop"]


@pytest.mark.parametrize("directions", [None, [1, 0]])
def test_scan8_batch_of_one_is_a_bare_tensor_iterator(directions, tmp_path: Path) -> None:
    """No batch loop around the scan when the batch is 1 (OpenVINO runs that faster)."""
    feeds = {"s0": RNG.standard_normal((1, 2)).astype(F32),
             "X": RNG.standard_normal((1, 4, 2)).astype(F32),
             "Y": RNG.standard_normal((1, 4, 2)).astype(F32)}
    ir = check_conversion(_scan8_model(directions, batch=1), feeds, tmp_path)
    assert [layer.type for layer in ir.graph.layers
            if layer.type in ("Loop", "TensorIterator")] == ["TensorIterator"]


def test_scan8_full_length_sequence_lens_is_accepted(tmp_path: Path) -> None:
    model = _scan8_model(lens="lens")
    model.graph.node.insert(0, const_node("lens", [4, 4, 4], np.int64))
    feeds = {"s0": np.ones((3, 2), F32), "X": RNG.standard_normal((3, 4, 2)).astype(F32),
             "Y": RNG.standard_normal((3, 4, 2)).astype(F32)}
    check_conversion(model, feeds, tmp_path)


def test_scan8_short_sequence_lens_is_a_clear_error() -> None:
    model = _scan8_model(lens="lens")
    model.graph.input.append(vi("lens", np.int64, [3]))
    with pytest.raises(irtool.ConversionError, match="sequence_lens") as err:
        irtool.convert(model)
    assert "node Scan(s, outs)" in str(err.value)


def _scan8_one_input(x_shape: list, lens: list[int] | None = None) -> object:
    """Scan-8 over X (``[batch, sequence, *element]``): s += x_t, scan output s * x_t;
    ``lens``: a constant sequence_lens."""
    elem = list(x_shape[2:])
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
         helper.make_node("Mul", ["s_out", "x_t"], ["o"])],
        "body8", [vi("s_in", F32, elem), vi("x_t", F32, elem)],
        [vi("s_out", F32, elem), vi("o", F32, elem)])
    nodes = [helper.make_node("Scan", ["" if lens is None else "lens", "s0", "X"],
                              ["s", "outs"], body=body, num_scan_inputs=1)]
    if lens is not None:
        nodes.insert(0, const_node("lens", lens, np.int64))
    s_shape = [x_shape[0], *elem]
    return make_model(nodes, [vi("s0", F32, s_shape), vi("X", F32, x_shape)],
                      [vi("s", F32, s_shape), vi("outs", F32, x_shape)], opset=8)


@pytest.mark.parametrize(("x_shape", "shape", "lens"), [
    ([None, 4, 2], (3, 4, 2), None),     # a batch known only at run time
    ([3, 4], (3, 4), [4, 4, 4]),         # scalar elements, full-length sequence_lens
    ([3, 1, 2], (3, 1, 2), [1, 1, 1]),   # sequences of length 1, said so
])
def test_scan8_shapes_and_full_sequence_lens(x_shape: list, shape: tuple, lens: list | None,
                                             tmp_path: Path) -> None:
    feeds = {"s0": RNG.standard_normal((shape[0], *shape[2:])).astype(F32),
             "X": RNG.standard_normal(shape).astype(F32)}
    check_conversion(_scan8_one_input(x_shape, lens), feeds, tmp_path)


@pytest.mark.parametrize("x_shape", [[3, 4, 2], [3, 4]])
def test_scan8_constant_short_sequence_lens_is_a_clear_error(x_shape: list) -> None:
    """A constant sequence_lens with one sequence shorter than the scan inputs."""
    with pytest.raises(irtool.ConversionError) as err:
        irtool.convert(_scan8_one_input(x_shape, [4, 3, 4]))
    assert str(err.value) == (
        "node Scan(s, outs): Scan: sequence_lens shorter than the scan inputs is not "
        "supported (only the full sequence length, given as a constant, converts)")


def test_scan8_sequence_lens_with_a_sequence_length_unknown_is_a_clear_error() -> None:
    """A constant sequence_lens equal to X's static sequence length, but Y's is known only
    at run time: nothing shows every sequence is full length, so it does not convert."""
    model = _scan8_model(lens="lens")
    model.graph.node.insert(0, const_node("lens", [4, 4, 4], np.int64))
    model.graph.input[2].type.tensor_type.shape.dim[1].dim_param = "n"  # Y [3, n, 2]
    with pytest.raises(irtool.ConversionError) as err:
        irtool.convert(model)
    assert "sequence_lens shorter than the scan inputs is not supported" in str(err.value)


def test_scan8_rank_1_scan_input_with_sequence_lens_is_a_clear_error() -> None:
    """A Scan-8 scan input of rank 1 has no sequence axis (onnxruntime refuses it: "Expected
    2 dimensions or more"): a ConversionError, not a crash."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
         helper.make_node("Identity", ["s_out"], ["o"])],
        "body8", [vi("s_in", F32, []), vi("x_t", F32, [])],
        [vi("s_out", F32, []), vi("o", F32, [])])
    model = make_model(
        [const_node("lens", [4, 4, 4], np.int64),
         helper.make_node("Scan", ["lens", "s0", "X"], ["s", "outs"], body=body,
                          num_scan_inputs=1)],
        [vi("s0", F32, [3]), vi("X", F32, [3])], [vi("s", F32, [3]), vi("outs", F32, [3])],
        opset=8)
    with pytest.raises(irtool.ConversionError, match="node Scan"):
        irtool.convert(model)
