"""Sequences lowered to tensors: built in a Loop (SequenceEmpty before, SequenceInsert per
iteration), read by SequenceAt / SequenceLength / ConcatFromSequence after; straight-line
SequenceConstruct and insert chains; clear errors where elements differ or sequences
cross the graph boundary. Expected values from onnxruntime."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper
from support.compare import assert_same
from support.conversion import (
    check_conversion,
    const_node,
    loop_layers,
    make_model,
    run_onnxruntime,
    vi,
)
from support.quirks import QuirkRecorder

import irtool

F32, I64, BOOL = np.float32, np.int64, np.bool_
X = np.random.default_rng(5).standard_normal((4, 3, 2)).astype(F32)


def _seq(name: str) -> object:
    return helper.make_tensor_sequence_value_info(name, TensorProto.FLOAT, None)


def built_in_loop(axis: int, new_axis: int, prepend: bool = False) -> object:
    body_nodes = [
        helper.make_node("Identity", ["c_in"], ["c_out"]),
        helper.make_node("Gather", ["X", "i"], ["row"], axis=0),
        helper.make_node("Mul", ["row", "two"], ["r2"]),
        helper.make_node("SequenceInsert", ["s_in", "r2", "zero"] if prepend else ["s_in", "r2"],
                         ["s_out"]),
    ]
    body = helper.make_graph(body_nodes, "body",
                             [vi("i", I64, []), vi("c_in", BOOL, []), _seq("s_in")],
                             [vi("c_out", BOOL, []), _seq("s_out")])
    nodes = [const_node("two", F32(2)), const_node("zero", 0, I64), const_node("one", 1, I64),
             helper.make_node("SequenceEmpty", [], ["s0"], dtype=TensorProto.FLOAT),
             helper.make_node("Shape", ["X"], ["sh"]),
             helper.make_node("Gather", ["sh", "zero"], ["M"]),
             helper.make_node("Loop", ["M", "", "s0"], ["s"], body=body, name="loop"),
             helper.make_node("ConcatFromSequence", ["s"], ["cat"], axis=axis,
                              new_axis=new_axis),
             helper.make_node("SequenceAt", ["s", "one"], ["second"]),
             helper.make_node("SequenceLength", ["s"], ["n"])]
    rank = 3 if new_axis else 2
    return make_model(nodes, [vi("X", F32, [4, 3, 2])],
                      [vi("cat", F32, [None] * rank), vi("second", F32, [3, 2]),
                       vi("n", I64, [])])


def _output_axes(loop: object) -> list[int | None]:
    """The concatenation axis of each Loop output (None: a carried value's last)."""
    return [e.axis for e in loop.port_maps["port_map"]  # type: ignore[attr-defined]
            if e.kind == "output" and e.purpose is None]


@pytest.mark.parametrize(("axis", "new_axis"), [(0, 0), (1, 0), (-1, 0), (0, 1), (1, 1),
                                                (2, 1), (-1, 1)])
def test_sequence_built_in_a_loop(axis: int, new_axis: int, tmp_path: Path) -> None:
    (tmp_path / "loop").mkdir()
    ir = check_conversion(built_in_loop(axis, new_axis), {"X": X}, tmp_path / "loop",
                          vectorize=False)
    (loop,) = loop_layers(ir)
    # One element appended per iteration: the Loop stacks them itself (a concatenated
    # output along axis 0), nothing is carried.
    assert _output_axes(loop) == [0]
    assert loop.back_edges == []
    # So its iterations are independent: by default the Loop is vectorised away.
    assert not loop_layers(check_conversion(built_in_loop(axis, new_axis), {"X": X},
                                            tmp_path))


def test_prepending_insert(tmp_path: Path) -> None:
    ir = check_conversion(built_in_loop(0, 1, prepend=True), {"X": X}, tmp_path)
    (loop,) = loop_layers(ir)
    carried = loop.bodies["body"].layer(loop.back_edges[-1].to_layer)
    assert carried.outputs[0].dims == (-1, 3, 2)  # grows along the sequence axis


def appended_in_loop(piece: list[object], axis: int, new_axis: int,
                     read_back: bool = False) -> object:
    """A Loop over the rows of X (``[n, 3]``) appending ``piece`` per iteration to a list
    that starts empty; ONNX infers no static element shape for it."""
    slicer = {
        # X[0:i+1]: one more row each time (a ragged list)
        "prefix": [helper.make_node("Add", ["i", "one"], ["i1"]),
                   helper.make_node("Unsqueeze", ["i1", "ax0"], ["end"]),
                   helper.make_node("Slice", ["X", "zero1", "end", "ax0"], ["elem"])],
        # X[i:i+1] times the iteration: one row of a dynamic-width view each time
        "row": [helper.make_node("Add", ["i", "one"], ["i1"]),
                helper.make_node("Unsqueeze", ["i", "ax0"], ["begin"]),
                helper.make_node("Unsqueeze", ["i1", "ax0"], ["end"]),
                helper.make_node("Slice", ["X", "begin", "end", "ax0"], ["elem"])],
    }[piece[0]]  # type: ignore[index]
    body = helper.make_graph(
        [*slicer, helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("SequenceInsert", ["s_in", "elem"], ["s_out"])], "body",
        [vi("i", I64, []), vi("c_in", BOOL, []), _seq("s_in")],
        [vi("c_out", BOOL, []), _seq("s_out")])
    nodes = [const_node("zero", 0, I64), const_node("one", 1, I64),
             const_node("zero1", [0], I64), const_node("ax0", [0], I64),
             helper.make_node("SequenceEmpty", [], ["s0"], dtype=TensorProto.FLOAT),
             helper.make_node("Shape", ["X"], ["sh"]),
             helper.make_node("Gather", ["sh", "zero"], ["M"]),
             helper.make_node("Loop", ["M", "", "s0"], ["s"], body=body, name="loop"),
             helper.make_node("ConcatFromSequence", ["s"], ["cat"], axis=axis,
                              new_axis=new_axis, name="concat")]
    outputs = [vi("cat", F32, [None] * (3 if new_axis else 2))]
    if read_back:
        nodes.append(helper.make_node("SequenceAt", ["s", "one"], ["second"], name="at"))
        outputs.append(vi("second", F32, [None, 3]))
    return make_model(nodes, [vi("X", F32, [None, 3])], outputs)


ROWS = np.random.default_rng(7).standard_normal((5, 3)).astype(F32)


@pytest.mark.parametrize(("axis", "new_axis", "stacked"),
                         [(0, 1, True), (1, 1, True), (-1, 0, True), (0, 0, False)])
def test_list_of_rows_without_static_shape(axis: int, new_axis: int, stacked: bool,
                                           tmp_path: Path) -> None:
    """Pieces X[i:i+1] ([?, 3] to ONNX and irtool): stacked by the Loop (a scan output)
    when stacked or concatenated along the static axis; along the axis whose length is
    not known, a carried Concat, which holds any lengths."""
    ir = check_conversion(appended_in_loop(["row"], axis, new_axis), {"X": ROWS}, tmp_path)
    (loop,) = loop_layers(ir)
    assert _output_axes(loop) == ([0] if stacked else [None])


def test_ragged_list_concatenated_is_a_carried_concat(tmp_path: Path) -> None:
    """Pieces X[0:1], X[0:2], ... concatenated along axis 0 (rows 1+2+...+5 = 15): a
    carried tensor that a Concat grows."""
    ir = check_conversion(appended_in_loop(["prefix"], 0, 0), {"X": ROWS}, tmp_path)
    (loop,) = loop_layers(ir)
    assert _output_axes(loop) == [None]
    body = loop.bodies["body"]
    grown = body.layer(loop.back_edges[-1].to_layer)
    assert grown.outputs[0].dims == (-1, 3)
    assert any(layer.type == "Concat" for layer in body.layers)


def prefixes_in_loop(x_decl: list, axis: int) -> object:
    """A Loop over X's ``axis`` appending X[0:i+1] along ``axis`` per iteration (a ragged
    list), concatenated along ``axis`` after: a carried tensor that a Concat grows."""
    body = helper.make_graph(
        [helper.make_node("Add", ["i", "one"], ["i1"]),
         helper.make_node("Unsqueeze", ["i1", "ax0"], ["end"]),
         helper.make_node("Slice", ["X", "zero1", "end", "axk"], ["elem"]),
         helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("SequenceInsert", ["s_in", "elem"], ["s_out"])], "body",
        [vi("i", I64, []), vi("c_in", BOOL, []), _seq("s_in")],
        [vi("c_out", BOOL, []), _seq("s_out")])
    nodes = [const_node("one", 1, I64), const_node("zero1", [0], I64),
             const_node("ax0", [0], I64), const_node("axk", [axis], I64),
             const_node("k", axis, I64),
             helper.make_node("SequenceEmpty", [], ["s0"], dtype=TensorProto.FLOAT),
             helper.make_node("Shape", ["X"], ["sh"]),
             helper.make_node("Gather", ["sh", "k"], ["M"]),
             helper.make_node("Loop", ["M", "", "s0"], ["s"], body=body, name="loop"),
             helper.make_node("ConcatFromSequence", ["s"], ["cat"], axis=axis, name="concat")]
    return make_model(nodes, [vi("X", F32, x_decl)], [vi("cat", F32, [None] * len(x_decl))])


def test_ragged_list_grown_along_axis_1(tmp_path: Path) -> None:
    """Pieces X[:, 0:1], X[:, 0:2], ... ([3, ?]) concatenated along axis 1 (1+2+3+4 = 10
    columns): the carried tensor starts as [3, 0] and grows along axis 1."""
    x = np.random.default_rng(2).standard_normal((3, 4)).astype(F32)
    ir = check_conversion(prefixes_in_loop([3, None], 1), {"X": x}, tmp_path)
    (loop,) = loop_layers(ir)
    assert _output_axes(loop) == [None]
    assert loop.bodies["body"].layer(loop.back_edges[-1].to_layer).outputs[0].dims == (3, -1)


def test_ragged_list_of_empty_rows() -> None:
    """Pieces X[0:1], X[0:2], ... of an X with 0 columns: a static dim of 0 is a static
    dim; onnxruntime gives the [10, 0] concatenation. (OpenVINO's CPU plugin gives [0, 0]
    here, so it is not asked.)"""
    model = prefixes_in_loop([None, 0], 0)
    feeds = {"X": np.zeros((4, 0), F32)}
    expected = run_onnxruntime(model, feeds)
    assert expected["cat"].shape == (10, 0)
    assert_same(irtool.run(irtool.convert(model), feeds), expected, "irtool")


@pytest.mark.parametrize(("x_decl", "axis", "shape"), [
    ([None, None, 2], 0, (4, 3, 2)), ([None, None], 1, (3, 4)), ([2, None, None], 1, (2, 3, 5))])
def test_ragged_list_with_dynamic_other_dims(x_decl: list, axis: int, shape: tuple,
                                             tmp_path: Path) -> None:
    """Pieces whose other dims are dynamic too: the carry starts empty along ``axis`` and
    of size 1 in those dims, and is broadcast to each piece's dims before the Concat."""
    x = np.random.default_rng(3).standard_normal(shape).astype(F32)
    ir = check_conversion(prefixes_in_loop(x_decl, axis), {"X": x}, tmp_path)
    (loop,) = loop_layers(ir)
    assert _output_axes(loop) == [None]
    assert any(layer.type == "Broadcast" for layer in loop.bodies["body"].layers)


def test_ragged_list_with_dynamic_other_dims_of_size_0() -> None:
    """Pieces of [?, ?, 0]: a static dim of 0 stays 0 in the start; onnxruntime gives the
    [10, 3, 0] concatenation. (OpenVINO's CPU plugin gives [0, 0, 0] for empty pieces,
    as in ``test_ragged_list_of_empty_rows``, so it is not asked.)"""
    model = prefixes_in_loop([None, None, 0], 0)
    feeds = {"X": np.zeros((4, 3, 0), F32)}
    expected = run_onnxruntime(model, feeds)
    assert expected["cat"].shape == (10, 3, 0)
    assert_same(irtool.run(irtool.convert(model), feeds), expected, "irtool")


def test_ragged_list_stacked_or_read_back_is_a_clear_error() -> None:
    with pytest.raises(irtool.ConversionError,
                       match=r"node loop: Loop: the sequence the body grows by .* cannot be "
                             r"lowered to a tensor: .*node at|at.* reads them one by one"):
        irtool.convert(appended_in_loop(["prefix"], 0, 0, read_back=True))


def test_construct_and_insert_chain(tmp_path: Path) -> None:
    nodes = [helper.make_node("SequenceConstruct", ["a", "b"], ["s1"]),
             helper.make_node("SequenceInsert", ["s1", "c"], ["s2"]),
             helper.make_node("ConcatFromSequence", ["s2"], ["stacked"], axis=1, new_axis=1),
             helper.make_node("ConcatFromSequence", ["s2"], ["joined"], axis=0),
             helper.make_node("SequenceLength", ["s2"], ["n"])]
    model = make_model(nodes, [vi(n, F32, [2, 3]) for n in "abc"],
                       [vi("stacked", F32, [2, 3, 3]), vi("joined", F32, [6, 3]),
                        vi("n", I64, [])])
    rng = np.random.default_rng(1)
    check_conversion(model, {n: rng.standard_normal((2, 3)).astype(F32) for n in "abc"},
                     tmp_path)


def test_elements_of_different_shapes_are_a_clear_error() -> None:
    nodes = [helper.make_node("SequenceConstruct", ["a", "b"], ["s"], name="pack"),
             helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)]
    model = make_model(nodes, [vi("a", F32, [2, 3]), vi("b", F32, [4, 3])],
                       [vi("y", F32, [6, 3])])
    with pytest.raises(irtool.ConversionError, match=r"node pack: SequenceConstruct: .*shapes"):
        irtool.convert(model)


@pytest.mark.parametrize("where", ["input", "output"])
def test_sequence_graph_input_or_output_is_unsupported_type(where: str) -> None:
    if where == "input":
        model = make_model([helper.make_node("SequenceLength", ["s"], ["n"])],
                           [_seq("s")], [vi("n", I64, [])])
    else:
        model = make_model([helper.make_node("SequenceConstruct", ["a"], ["s"])],
                           [vi("a", F32, [2])], [_seq("s")])
    with pytest.raises(irtool.ConversionError,
                       match=f"graph {where} 's' has an unsupported type \\(sequence of"):
        irtool.convert(model)


@pytest.mark.parametrize("position", [None, 0, 1, -1, -2])
def test_sequence_erase(position, tmp_path: Path) -> None:
    inputs = ["s"] if position is None else ["s", "p"]
    nodes = [helper.make_node("SequenceConstruct", ["a", "b", "c"], ["s"]),
             helper.make_node("SequenceErase", inputs, ["t"]),
             helper.make_node("ConcatFromSequence", ["t"], ["y"], axis=0, new_axis=1)]
    if position is not None:
        nodes.insert(0, const_node("p", position, I64))
    model = make_model(nodes, [vi(n, F32, [2]) for n in "abc"], [vi("y", F32, [2, 2])])
    feeds = {n: np.array([i, i + 0.5], F32) for i, n in enumerate("abc")}
    check_conversion(model, feeds, tmp_path)


@pytest.mark.parametrize(("split", "axis", "keepdims"), [
    (None, 0, 1), (None, 1, 0), (None, -1, 1), ("ones", 1, 0), (2, 1, 1), ([2, 2], 1, 1)])
def test_split_to_sequence(split, axis: int, keepdims: int, tmp_path: Path) -> None:
    """Equal parts along an axis, read back by SequenceAt, SequenceLength and a concat."""
    nodes = []
    inputs = ["x"]
    if split == "ones":  # the idiom ConstantOfShape(Shape(x)[axis], 1)
        nodes += [helper.make_node("Shape", ["x"], ["sh"], start=axis, end=axis + 1),
                  helper.make_node("ConstantOfShape", ["sh"], ["parts"],
                                   value=helper.make_tensor("v", TensorProto.INT64, [1], [1]))]
        inputs.append("parts")
    elif split is not None:
        nodes.append(const_node("parts", split, I64))
        inputs.append("parts")
    kept = keepdims or split is not None  # elements keep the split axis (size >= 1)
    nodes += [helper.make_node("SplitToSequence", inputs, ["s"], axis=axis, keepdims=keepdims),
              const_node("one", 1, I64),
              helper.make_node("SequenceAt", ["s", "one"], ["second"]),
              helper.make_node("SequenceLength", ["s"], ["n"]),
              # Concatenating (or, without the axis, stacking) the parts gives x back.
              helper.make_node("ConcatFromSequence", ["s"], ["back"], axis=axis,
                               new_axis=0 if kept else 1)]
    model = make_model(nodes, [vi("x", F32, [3, 4])],
                       [vi("second", F32, [None] * (2 if kept else 1)), vi("n", I64, []),
                        vi("back", F32, [None, None])])
    x = np.arange(12, dtype=F32).reshape(3, 4)
    check_conversion(model, {"x": x}, tmp_path)


def test_openvino_reshape_of_an_empty_tensor_to_shapes_of_shapeof(
        openvino_quirk: QuirkRecorder) -> None:
    """Why a ragged carry with dynamic other dims is broadcast, not reshaped: Reshape-1 of
    a [0, 0] tensor to [ShapeOf(p)[0], ShapeOf(q)[1]] is [0, 3] by the spec (and numpy) for
    q of [1, 3]; OpenVINO's CPU plugin (2026.4) gives [0, 0], its target rewritten to
    [0, -1] (docs/openvino-quirks.md). Recorded: a plugin that gives [0, 3] passes too."""
    import openvino as ov
    import openvino.opset13 as ops

    p = ops.parameter([-1, -1], np.float32, name="p")
    q = ops.parameter([-1, -1], np.float32, name="q")

    def i64(v: object) -> object:
        return ops.constant(np.array(v, np.int64))

    target = ops.concat([ops.gather(ops.shape_of(p), i64([0]), i64(0)),
                         ops.gather(ops.shape_of(q), i64([1]), i64(0))], 0)
    shape = ops.shape_of(ops.reshape(p, target, False))
    compiled = ov.Core().compile_model(ov.Model([ops.result(shape)], [p, q]), "CPU")
    got = compiled({"p": np.zeros((0, 0), F32), "q": np.zeros((1, 3), F32)})[0]
    assert np.zeros((0, 0), F32).reshape(0, 3).shape == (0, 3)  # the spec's answer
    openvino_quirk("reshape-empty-to-shapeof", behaves=tuple(got) == (0, 3),
                   reproduced=tuple(got) == (0, 0), answer=f"shape {tuple(got)}")


def ragged_read_by(readers: list[object], x_decl: list | None = None) -> object:
    """The ragged list of ``appended_in_loop(["prefix"])`` (pieces X[0:1], X[0:2], ...,
    [?, 3] to ONNX) read by ``readers`` (nodes reading ``s``, output ``y0``, ``y1``...)."""
    model = appended_in_loop(["prefix"], 0, 0)
    graph = model.graph
    del graph.node[-1], graph.output[:]  # its ConcatFromSequence and output
    graph.node.extend(readers)  # type: ignore[arg-type]
    graph.output.extend(vi(f"y{k}", F32, None) for k in range(len(readers)))
    if x_decl is not None:
        graph.input[0].CopyFrom(vi("X", F32, x_decl))
    return model


def _reader(op: str, k: int, **attrs: object) -> object:
    inputs = ["s", "one"] if op == "SequenceAt" else ["s"]
    return helper.make_node(op, inputs, [f"y{k}"], name=f"r{k}", **attrs)


@pytest.mark.parametrize(("readers", "message"), [
    # every reader that takes the pieces one by one is named, in order
    ([_reader("SequenceAt", 0), _reader("SequenceAt", 1)],
     "its elements, of shape [?,3] not known statically, may differ between iterations, and "
     "r0, r1 reads them one by one (only ConcatFromSequence takes such a list as a tensor)"),
    # concatenated by one reader, and read in the branch of an If (the If and the node in
    # its branch are named)
    ([_reader("ConcatFromSequence", 0, axis=0),
      helper.make_node("If", ["c"], ["y1"], name="r1", then_branch=helper.make_graph(
          [helper.make_node("SequenceLength", ["s"], ["n"])], "then", [],
          [vi("n", I64, [])]), else_branch=helper.make_graph(
          [const_node("m", -1, I64)], "else", [], [vi("m", I64, [])]))],
     "its elements, of shape [?,3] not known statically, may differ between iterations, and "
     "r1, SequenceLength(n) reads them one by one (only ConcatFromSequence takes such a list "
     "as a tensor)"),
    # stacked by one reader and concatenated along the ragged axis by another
    ([_reader("ConcatFromSequence", 0, axis=0, new_axis=1),
      _reader("ConcatFromSequence", 1, axis=0)],
     "its elements, of shape [?,3], are concatenated along axes whose length may differ "
     "between iterations by more than one reader"),
])
def test_ragged_list_read_otherwise_names_why(readers: list, message: str) -> None:
    """A ragged list (pieces of different lengths) that is not only concatenated along its
    ragged axis has no tensor form: one line naming the readers and the element shape."""
    model = ragged_read_by(readers)
    model.graph.input.append(vi("c", BOOL, []))
    with pytest.raises(irtool.ConversionError) as err:
        irtool.convert(model)
    assert str(err.value) == ("node loop: Loop: the sequence the body grows by "
                              f"SequenceInsert(s_out) cannot be lowered to a tensor: {message}")


@pytest.mark.parametrize(("attrs", "message"), [
    ({"axis": 2}, "ConcatFromSequence: axis 2 is out of range for elements of rank 2"),
    ({"axis": -3}, "ConcatFromSequence: axis -3 is out of range for elements of rank 2"),
    ({}, "ConcatFromSequence: axis None is out of range for elements of rank 2"),
])
def test_ragged_list_concatenated_along_no_axis_of_it(attrs: dict, message: str) -> None:
    """ConcatFromSequence along an axis the elements do not have (or none: ``axis`` is
    required) is its own error, also when the list is ragged (onnxruntime refuses these
    models too)."""
    with pytest.raises(irtool.ConversionError, match=f"node r0: {re.escape(message)}$"):
        irtool.convert(ragged_read_by([_reader("ConcatFromSequence", 0, **attrs)]))


def test_ragged_list_returned_by_an_if_branch_is_named() -> None:
    """The list grown in a Loop inside an If branch and returned by it: the branch's graph
    output reads the pieces one by one, and the message says so."""
    inner = appended_in_loop(["prefix"], 0, 0)
    nodes = [n for n in inner.graph.node if n.op_type != "ConcatFromSequence"]
    branch = helper.make_graph(nodes, "then", [], [_seq("s")])
    other = helper.make_graph([helper.make_node("SequenceEmpty", [], ["e"],
                                                dtype=TensorProto.FLOAT)], "else", [],
                              [_seq("e")])
    model = make_model([const_node("c", True, BOOL),
                        helper.make_node("If", ["c"], ["t"], then_branch=branch,
                                         else_branch=other, name="if"),
                        helper.make_node("ConcatFromSequence", ["t"], ["y"], axis=0)],
                       [vi("X", F32, [None, 3])], [vi("y", F32, [None, 3])])
    with pytest.raises(irtool.ConversionError,
                       match=r"node loop: .* graph output reads them one by one"):
        irtool.convert(model)


def test_ragged_list_concatenated_along_a_negative_axis(tmp_path: Path) -> None:
    """Axis -2 of [?, 3] pieces is their ragged axis 0: a carried Concat, as for axis 0."""
    x = np.random.default_rng(4).standard_normal((4, 3)).astype(F32)
    model = ragged_read_by([_reader("ConcatFromSequence", 0, axis=-2)])
    model.graph.output[0].CopyFrom(vi("y0", F32, [None, 3]))
    ir = check_conversion(model, {"X": x}, tmp_path)
    (loop,) = loop_layers(ir)
    assert _output_axes(loop) == [None]


def test_rows_concatenated_along_a_static_axis_of_length_0() -> None:
    """Pieces X[i:i+1] of an X with 0 columns ([?, 0]) concatenated along axis 1: a static
    length of 0 is a static length, so the Loop stacks the pieces (a scan output); the
    values are onnxruntime's [1, 0]. (OpenVINO's CPU plugin mishandles empty pieces, as in
    ``test_ragged_list_of_empty_rows``: not asked.)"""
    model = appended_in_loop(["row"], 1, 0)
    model.graph.input[0].CopyFrom(vi("X", F32, [None, 0]))
    feeds = {"X": np.zeros((5, 0), F32)}
    expected = run_onnxruntime(model, feeds)
    assert expected["cat"].shape == (1, 0)
    ir = irtool.convert(model)
    assert_same(irtool.run(ir, feeds), expected, "irtool")
    (loop,) = loop_layers(ir)
    assert _output_axes(loop) == [0]


def test_elements_of_unknown_rank() -> None:
    """A sequence of tensors whose rank nothing tells (each reshaped to a shape fed at run
    time): built, grown, shortened, read by position and counted, as onnxruntime does."""
    nodes = [*(helper.make_node("Reshape", [n, "shape"], [f"{n}r"]) for n in "abc"),
             helper.make_node("SequenceConstruct", ["ar", "br"], ["s1"]),
             helper.make_node("SequenceInsert", ["s1", "cr"], ["s2"]),
             helper.make_node("SequenceErase", ["s2"], ["s3"]),
             const_node("one", 1, I64),
             helper.make_node("SequenceAt", ["s3", "one"], ["second"]),
             helper.make_node("SequenceLength", ["s3"], ["n"])]
    model = make_model(nodes, [*(vi(n, F32, [6]) for n in "abc"), vi("shape", I64, [None])],
                       [vi("second", F32, [None, None]), vi("n", I64, [])])
    rng = np.random.default_rng(6)
    feeds = {**{n: rng.standard_normal(6).astype(F32) for n in "abc"},
             "shape": np.array([2, 3], np.int64)}
    # (OpenVINO's CPU plugin has no Reshape to a dynamic rank: irtool's runtime only)
    assert_same(irtool.run(irtool.convert(model), feeds), run_onnxruntime(model, feeds),
                "irtool")


def test_elements_declared_static_and_dynamic(tmp_path: Path) -> None:
    """SequenceConstruct of a [?, 3] and a [2, 3] tensor: one shape as far as anything
    static says, so it converts, and stacks to onnxruntime's [2, 2, 3]."""
    nodes = [helper.make_node("SequenceConstruct", ["a", "b"], ["s"]),
             helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0, new_axis=1)]
    model = make_model(nodes, [vi("a", F32, [None, 3]), vi("b", F32, [2, 3])],
                       [vi("y", F32, [2, None, 3])])
    rng = np.random.default_rng(8)
    check_conversion(model, {n: rng.standard_normal((2, 3)).astype(F32) for n in "ab"},
                     tmp_path)


@pytest.mark.parametrize(("a", "b"), [((0, 3), (2, 3)), ((2, 0), (2, 3))])
def test_elements_with_a_static_dim_of_0_differ(a: tuple, b: tuple) -> None:
    """A static 0 is a static dim: [0, 3] and [2, 3] are different shapes."""
    nodes = [helper.make_node("SequenceConstruct", ["a", "b"], ["s"], name="pack"),
             helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)]
    model = make_model(nodes, [vi("a", F32, list(a)), vi("b", F32, list(b))],
                       [vi("y", F32, None)])
    with pytest.raises(irtool.ConversionError, match=r"node pack: SequenceConstruct: .*shapes"):
        irtool.convert(model)


def test_elements_of_different_types_are_a_clear_error() -> None:
    """ONNX sequences hold one element type: f32 with i64 is refused, naming the node."""
    nodes = [helper.make_node("SequenceConstruct", ["a", "b"], ["s"], name="pack"),
             helper.make_node("SequenceLength", ["s"], ["n"])]
    model = make_model(nodes, [vi("a", F32, [2]), vi("b", I64, [2])], [vi("n", I64, [])])
    with pytest.raises(irtool.ConversionError,
                       match=r"node pack: SequenceConstruct: sequence elements of different "
                             r"shapes or types cannot be lowered"):
        irtool.convert(model)


def _split_model(split_nodes: list, x_decl: list, extra_inputs: list = ()) -> object:
    nodes = [*split_nodes,
             helper.make_node("SplitToSequence", ["x", "parts"], ["s"], axis=1,
                              name="split"),
             helper.make_node("ConcatFromSequence", ["s"], ["back"], axis=1)]
    return make_model(nodes, [vi("x", F32, x_decl), *extra_inputs],
                      [vi("back", F32, [None, None])])


def test_split_into_ones_of_a_dynamic_axis(tmp_path: Path) -> None:
    """``ConstantOfShape(Shape(x)[1:2], 1)``, x's width known only at run time: parts of
    one, read through the Broadcast ConstantOfShape becomes; x back, as onnxruntime."""
    nodes = [helper.make_node("Shape", ["x"], ["sh"], start=1, end=2),
             helper.make_node("ConstantOfShape", ["sh"], ["parts"],
                              value=helper.make_tensor("v", TensorProto.INT64, [1], [1]))]
    x = np.arange(12, dtype=F32).reshape(3, 4)
    check_conversion(_split_model(nodes, [3, None]), {"x": x}, tmp_path)


@pytest.mark.parametrize("how", ["unequal constant", "expanded input"])
def test_split_into_parts_not_known_equal_is_refused(how: str) -> None:
    """Parts [1, 3] (constant, unequal), or an input expanded to two parts (equal only at
    run time, if at all): tensors of different shapes, refused naming the node."""
    if how == "unequal constant":
        model = _split_model([const_node("parts", [1, 3], I64)], [3, 4])
    else:
        model = _split_model([const_node("two", [2], I64),
                              helper.make_node("Expand", ["p", "two"], ["parts"])],
                             [3, 4], [vi("p", I64, [1])])
    with pytest.raises(irtool.ConversionError,
                       match=r"node split: SplitToSequence: only a split into equal parts"):
        irtool.convert(model)


def _two_lists_loop(body_inputs: int, body_outputs: int, body: bool = True) -> object:
    """A Loop appending rows of X to two lists that start empty, its body cut to
    ``body_inputs`` inputs and ``body_outputs`` outputs (or without a body at all)."""
    nodes = [helper.make_node("Identity", ["c_in"], ["c_out"]),
             helper.make_node("Gather", ["X", "i"], ["row"], axis=0),
             helper.make_node("SequenceInsert", ["s_in", "row"], ["s_out"]),
             helper.make_node("SequenceInsert", ["t_in", "row"], ["t_out"])]
    inputs = [vi("i", I64, []), vi("c_in", BOOL, []), _seq("s_in"), _seq("t_in")]
    outputs = [vi("c_out", BOOL, []), _seq("s_out"), _seq("t_out")]
    graph = helper.make_graph(nodes, "body", inputs[:body_inputs], outputs[:body_outputs])
    loop = helper.make_node("Loop", ["M", "", "s0", "s0"], ["s", "t"], name="loop",
                            **({"body": graph} if body else {}))
    return make_model([const_node("M", 2, I64),
                       helper.make_node("SequenceEmpty", [], ["s0"], dtype=TensorProto.FLOAT),
                       loop, helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)],
                      [vi("X", F32, [2, 3])], [vi("y", F32, [None])])


NO_ELEMENT_SHAPE = ("node SequenceEmpty(s0): SequenceEmpty: the element shape of this empty "
                    "sequence is not known statically (needed to lower the sequence to a "
                    "tensor)")


def _bodiless_loop_first() -> object:
    """A Loop without a body, then (in node order) an insert into an empty list made
    before it: the list's elements are known all the same."""
    nodes = [helper.make_node("SequenceEmpty", [], ["e"], dtype=TensorProto.FLOAT),
             const_node("M", 2, I64),
             helper.make_node("Loop", ["M", ""], ["ys"], name="loop"),
             helper.make_node("SequenceInsert", ["e", "a"], ["s"]),
             helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0, new_axis=1)]
    return make_model(nodes, [vi("a", F32, [3])], [vi("y", F32, [1, 3]),
                                                   vi("ys", F32, [2, 3])])


def _two_lists_one_output() -> object:
    """``_two_lists_loop`` whose Loop lists one output for its two lists."""
    model = _two_lists_loop(4, 3)
    del model.graph.node[2].output[1]
    return model


@pytest.mark.parametrize(("model", "message"), [
    (_bodiless_loop_first(), "node loop: Loop: the 'body' attribute is missing"),
    (_two_lists_one_output(),
     "node loop: Loop: the body has 3 outputs; 1 + 2 carried + 0 scan outputs expected"),
    (_two_lists_loop(4, 3, body=False), NO_ELEMENT_SHAPE),
    (_two_lists_loop(3, 3), NO_ELEMENT_SHAPE),
    (_two_lists_loop(4, 2),
     "node loop: Loop: the body has 2 outputs; 1 + 2 carried + 0 scan outputs expected"),
], ids=["no body, an insert after", "a Loop output short", "no body", "an input short",
        "an output short"])
def test_a_loop_body_that_does_not_fit_its_lists_is_refused(model: object,
                                                            message: str) -> None:
    """Lists that start empty and grow in a Loop whose body lacks, or has too few inputs or
    outputs for them (onnxruntime refuses these models too): no list is an appended one,
    so the first node that cannot convert says why in one line (the empty list, whose
    elements nothing else shows, or the Loop), not a failure while looking for appended
    lists."""
    with pytest.raises(irtool.ConversionError) as err:
        irtool.convert(model)
    assert str(err.value) == message


@pytest.mark.parametrize("where", ["before", "after"])
def test_a_list_also_read_in_a_nested_branch_is_carried(where: str, tmp_path: Path) -> None:
    """The body appends a row to the list and also reads the list, for its length, once
    directly and once in an If branch, ``where`` in the body: the list is read besides the
    append, so it is carried whole, not made a scan output; values as onnxruntime's."""
    then = helper.make_graph([helper.make_node("SequenceLength", ["s_in"], ["len"])], "then",
                             [], [vi("len", I64, [])])
    other = helper.make_graph([const_node("none", -1, I64)], "else", [], [vi("none", I64, [])])
    branch = [helper.make_node("Greater", ["i", "zero"], ["later"]),
              helper.make_node("If", ["later"], ["n"], then_branch=then, else_branch=other)]
    append = [helper.make_node("Gather", ["X", "i"], ["row"], axis=0),
              helper.make_node("SequenceLength", ["s_in"], ["m"]),
              helper.make_node("SequenceInsert", ["s_in", "row"], ["s_out"])]
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         *(branch + append if where == "before" else append + branch)], "body",
        [vi("i", I64, []), vi("c_in", BOOL, []), _seq("s_in")],
        [vi("c_out", BOOL, []), _seq("s_out"), vi("n", I64, []), vi("m", I64, [])])
    model = make_model([const_node("zero", 0, I64), const_node("M", 4, I64),
                        helper.make_node("SequenceEmpty", [], ["s0"], dtype=TensorProto.FLOAT),
                        helper.make_node("Loop", ["M", "", "s0"], ["s", "ns", "ms"],
                                         body=body),
                        helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0,
                                         new_axis=1)],
                       [vi("X", F32, [4, 3])],
                       [vi("y", F32, [4, 3]), vi("ns", I64, [4]), vi("ms", I64, [4])])
    x = np.random.default_rng(9).standard_normal((4, 3)).astype(F32)
    ir = check_conversion(model, {"X": x}, tmp_path, vectorize=False)
    (loop,) = loop_layers(ir)
    assert loop.back_edges  # the list is carried


def test_lists_of_every_kind_in_one_loop(tmp_path: Path) -> None:
    """One Loop carrying a tensor and five lists: rows prepended (an insert with a
    position: carried whole), prefixes X[0:i+1] appended (ragged: concatenated in a
    carried tensor), a list passed on unchanged (read once, by an Identity, no insert), a
    list whose grown value is also read in the body (its length: carried whole) and a
    list the body appends to a copy of and drops (it stays empty). Each is told apart by
    its own body input and output, whatever the values before it are; values as
    onnxruntime's."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Add", ["acc_in", "one"], ["acc_out"]),
         helper.make_node("Gather", ["X", "i"], ["row"], axis=0),
         helper.make_node("SequenceInsert", ["s_in", "row", "zero"], ["s_out"]),
         helper.make_node("Add", ["i", "one"], ["i1"]),
         helper.make_node("Unsqueeze", ["i1", "ax0"], ["end"]),
         helper.make_node("Slice", ["X", "zero1", "end", "ax0"], ["prefix"]),
         helper.make_node("SequenceInsert", ["t_in", "prefix"], ["t_out"]),
         helper.make_node("Identity", ["u_in"], ["u_out"]),
         helper.make_node("SequenceInsert", ["v_in", "row"], ["v_out"]),
         helper.make_node("SequenceLength", ["v_out"], ["v_len"]),
         helper.make_node("SequenceInsert", ["w_in", "row"], ["dropped"])], "body",
        [vi("i", I64, []), vi("c_in", BOOL, []), vi("acc_in", I64, []), _seq("s_in"),
         _seq("t_in"), _seq("u_in"), _seq("v_in"), _seq("w_in")],
        [vi("c_out", BOOL, []), vi("acc_out", I64, []), _seq("s_out"), _seq("t_out"),
         _seq("u_out"), _seq("v_out"), _seq("w_in"), vi("v_len", I64, [])])
    nodes = [const_node("zero", 0, I64), const_node("one", 1, I64),
             const_node("zero1", [0], I64), const_node("ax0", [0], I64),
             *(helper.make_node("SequenceEmpty", [], [f"{n}0"], dtype=TensorProto.FLOAT)
               for n in "stvw"),
             helper.make_node("SequenceConstruct", ["X"], ["u0"]),
             helper.make_node("Shape", ["X"], ["sh"]),
             helper.make_node("Gather", ["sh", "zero"], ["M"]),
             helper.make_node("Loop", ["M", "", "zero", "s0", "t0", "u0", "v0", "w0"],
                              ["acc", "s", "t", "u", "v", "w", "lengths"], body=body,
                              name="loop"),
             helper.make_node("ConcatFromSequence", ["s"], ["rows"], axis=0, new_axis=1),
             helper.make_node("ConcatFromSequence", ["t"], ["prefixes"], axis=0),
             helper.make_node("SequenceLength", ["u"], ["n"]),
             helper.make_node("ConcatFromSequence", ["v"], ["v_rows"], axis=0, new_axis=1),
             helper.make_node("SequenceLength", ["w"], ["w_len"])]
    model = make_model(nodes, [vi("X", F32, [None, 3])],
                       [vi("acc", I64, []), vi("rows", F32, [None, 3]),
                        vi("prefixes", F32, [None, 3]), vi("n", I64, []),
                        vi("v_rows", F32, [None, 3]), vi("w_len", I64, []),
                        vi("lengths", I64, [None])])
    x = np.random.default_rng(10).standard_normal((4, 3)).astype(F32)
    check_conversion(model, {"X": x}, tmp_path)


def test_a_sequence_of_one_element(tmp_path: Path) -> None:
    """SequenceConstruct of one tensor, stacked and counted: [1, 2, 3] and 1, as
    onnxruntime gives."""
    nodes = [helper.make_node("SequenceConstruct", ["a"], ["s"]),
             helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0, new_axis=1),
             helper.make_node("SequenceLength", ["s"], ["n"])]
    model = make_model(nodes, [vi("a", F32, [2, 3])], [vi("y", F32, [1, 2, 3]),
                                                       vi("n", I64, [])])
    a = np.random.default_rng(12).standard_normal((2, 3)).astype(F32)
    check_conversion(model, {"a": a}, tmp_path)


def test_two_empty_lists_each_take_their_own_elements(tmp_path: Path) -> None:
    """Two lists started empty and grown by inserts outside any loop, of rows [3] and of
    matrices [2, 2]: each empty list takes the element shape of what is inserted into it
    (through an Identity for the second), not the other's; values as onnxruntime's."""
    nodes = [helper.make_node("SequenceEmpty", [], ["e1"], dtype=TensorProto.FLOAT),
             helper.make_node("SequenceInsert", ["e1", "a"], ["s1"]),
             helper.make_node("SequenceInsert", ["s1", "a"], ["s2"]),
             helper.make_node("SequenceEmpty", [], ["f1"], dtype=TensorProto.FLOAT),
             helper.make_node("Identity", ["f1"], ["f2"]),
             helper.make_node("SequenceInsert", ["f2", "b"], ["t1"]),
             helper.make_node("ConcatFromSequence", ["s2"], ["rows"], axis=0, new_axis=1),
             helper.make_node("ConcatFromSequence", ["t1"], ["mats"], axis=0, new_axis=1)]
    model = make_model(nodes, [vi("a", F32, [3]), vi("b", F32, [2, 2])],
                       [vi("rows", F32, [2, 3]), vi("mats", F32, [1, 2, 2])])
    rng = np.random.default_rng(13)
    check_conversion(model, {"a": rng.standard_normal(3).astype(F32),
                             "b": rng.standard_normal((2, 2)).astype(F32)}, tmp_path)


@pytest.mark.parametrize("cond", [True, False])
def test_an_empty_list_takes_its_elements_from_the_other_branch(cond: bool,
                                                                 tmp_path: Path) -> None:
    """An If whose then-branch returns a list built by SequenceConstruct and shortened by
    SequenceErase, and whose else-branch returns an empty list: the empty list's elements
    are those of the other branch's, through the erase; onnxruntime's values either way."""
    then = helper.make_graph([helper.make_node("SequenceConstruct", ["a", "a"], ["pair"]),
                              helper.make_node("SequenceErase", ["pair"], ["one"])],
                             "then", [], [_seq("one")])
    other = helper.make_graph([helper.make_node("SequenceEmpty", [], ["none"],
                                                dtype=TensorProto.FLOAT)], "else", [],
                              [_seq("none")])
    # (counted: onnxruntime concatenates no empty list)
    nodes = [helper.make_node("If", ["c"], ["s"], then_branch=then, else_branch=other),
             helper.make_node("SequenceLength", ["s"], ["n"])]
    model = make_model(nodes, [vi("c", BOOL, []), vi("a", F32, [2, 3])], [vi("n", I64, [])])
    a = np.random.default_rng(14).standard_normal((2, 3)).astype(F32)
    check_conversion(model, {"c": np.array(cond), "a": a}, tmp_path)


def test_an_element_read_back_does_not_loosen_the_list_it_joins(tmp_path: Path) -> None:
    """A [2, 3] tensor and one read back from another list (SequenceAt of a list of [?, 3]
    tensors) inserted into an empty list: the read-back element tells nothing new, so the
    list's elements are [2, 3]; onnxruntime's values."""
    nodes = [helper.make_node("SequenceConstruct", ["c"], ["src"]),
             const_node("zero", 0, I64),
             helper.make_node("SequenceAt", ["src", "zero"], ["back"]),
             helper.make_node("SequenceEmpty", [], ["e"], dtype=TensorProto.FLOAT),
             helper.make_node("SequenceInsert", ["e", "a"], ["s1"]),
             helper.make_node("SequenceInsert", ["s1", "back"], ["s2"]),
             helper.make_node("ConcatFromSequence", ["s2"], ["y"], axis=0, new_axis=1)]
    model = make_model(nodes, [vi("a", F32, [2, 3]), vi("c", F32, [None, 3])],
                       [vi("y", F32, [2, 2, 3])])
    a, c = np.random.default_rng(15).standard_normal((2, 2, 3)).astype(F32)
    check_conversion(model, {"a": a, "c": c}, tmp_path)


def lists_linked_by_one_end(kinds: list[str]) -> object:
    """A Loop over the rows of X carrying, in order, ``kinds``: "acc" a counter; "in" a
    list started empty whose body input is grown (the grown copy only counted, a scan
    output) while the body returns a new empty list, so its elements are known through
    its body input alone; "out" a list started empty that the body replaces by [row],
    its body input unread, so its elements are known through its body output alone."""
    nodes = [helper.make_node("Identity", ["c_in"], ["c_out"]),
             helper.make_node("Gather", ["X", "i"], ["row"], axis=0)]
    inputs, outputs, scans, inits, after, results = [], [], [], [], [], []
    for k, kind in enumerate(kinds):
        if kind == "acc":
            nodes.append(helper.make_node("Add", [f"v{k}_in", "one"], [f"v{k}_out"]))
            inputs.append(vi(f"v{k}_in", I64, []))
            outputs.append(vi(f"v{k}_out", I64, []))
            inits.append("zero")
            results.append(vi(f"v{k}", I64, []))
            continue
        inputs.append(_seq(f"v{k}_in"))
        outputs.append(_seq(f"v{k}_out"))
        inits.append(f"e{k}")
        after.append(helper.make_node("SequenceEmpty", [], [f"e{k}"], dtype=TensorProto.FLOAT))
        if kind == "in":
            nodes += [helper.make_node("SequenceInsert", [f"v{k}_in", "row"], [f"x{k}"]),
                      helper.make_node("SequenceLength", [f"x{k}"], [f"n{k}"]),
                      helper.make_node("SequenceEmpty", [], [f"v{k}_out"],
                                       dtype=TensorProto.FLOAT)]
            scans.append(vi(f"n{k}", I64, []))
            after.append(helper.make_node("SequenceLength", [f"w{k}"], [f"v{k}"]))
            results.append(vi(f"v{k}", I64, []))
        else:
            nodes.append(helper.make_node("SequenceConstruct", ["row"], [f"v{k}_out"]))
            after.append(helper.make_node("ConcatFromSequence", [f"w{k}"], [f"v{k}"], axis=0,
                                          new_axis=1))
            results.append(vi(f"v{k}", F32, [1, 3]))
    body = helper.make_graph(nodes, "body",
                             [vi("i", I64, []), vi("c_in", BOOL, []), *inputs],
                             [vi("c_out", BOOL, []), *outputs, *scans])
    loop_outs = [f"w{k}" if kind != "acc" else f"v{k}" for k, kind in enumerate(kinds)]
    loop_outs += [s.name + "s" for s in scans]
    loop = helper.make_node("Loop", ["M", "", *inits], loop_outs, body=body, name="loop")
    return make_model([const_node("zero", 0, I64), const_node("one", 1, I64),
                       const_node("M", 3, I64), *[n for n in after if n.op_type ==
                                                  "SequenceEmpty"], loop,
                       *[n for n in after if n.op_type != "SequenceEmpty"]],
                      [vi("X", F32, [3, 3])],
                      [*results, *(vi(s.name + "s", I64, [3]) for s in scans)])


@pytest.mark.parametrize("kinds", [["acc", "in", "in"], ["acc", "out", "out"]],
                         ids=["through the body input", "through the body output"])
def test_empty_lists_whose_elements_one_end_of_the_body_shows(kinds: list[str],
                                                              tmp_path: Path) -> None:
    """Lists started empty and carried by a Loop whose elements only the body input (or
    only the body output) of their own place links to an insert, second and last among
    the carried values: each takes those elements; onnxruntime's values."""
    x = np.random.default_rng(16).standard_normal((3, 3)).astype(F32)
    check_conversion(lists_linked_by_one_end(kinds), {"X": x}, tmp_path, vectorize=False)


def test_an_empty_list_of_no_output_is_one_line() -> None:
    """A SequenceEmpty node without an output (not valid ONNX): one line, not a failure
    while looking for the lists Loops append to."""
    nodes = [helper.make_node("SequenceEmpty", [], [], dtype=TensorProto.FLOAT, name="lost"),
             helper.make_node("Identity", ["a"], ["y"])]
    model = make_model(nodes, [vi("a", F32, [3])], [vi("y", F32, [3])])
    with pytest.raises(irtool.ConversionError, match=r"^not a valid ONNX model: node lost: "):
        irtool.convert(model)


def test_lists_typed_only_after_the_loop_or_the_if(tmp_path: Path) -> None:
    """Empty lists that a Loop passes on unchanged, and that both branches of an If return
    empty, get their elements from an insert into the Loop's (the If's) output: each
    output is one list with what feeds it; onnxruntime's values."""
    body = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"]),
                              helper.make_node("Identity", ["s_in"], ["s_out"])], "body",
                             [vi("i", I64, []), vi("c_in", BOOL, []), _seq("s_in")],
                             [vi("c_out", BOOL, []), _seq("s_out")])

    def empty_branch(name: str) -> object:
        return helper.make_graph([helper.make_node("SequenceEmpty", [], [name],
                                                   dtype=TensorProto.FLOAT)], name, [],
                                 [_seq(name)])
    nodes = [const_node("M", 2, I64),
             helper.make_node("SequenceEmpty", [], ["s0"], dtype=TensorProto.FLOAT),
             helper.make_node("Loop", ["M", "", "s0"], ["s"], body=body),
             helper.make_node("SequenceInsert", ["s", "a"], ["s1"]),
             helper.make_node("If", ["c"], ["t"], then_branch=empty_branch("e1"),
                              else_branch=empty_branch("e2")),
             helper.make_node("SequenceInsert", ["t", "a"], ["t1"]),
             helper.make_node("ConcatFromSequence", ["s1"], ["y"], axis=0, new_axis=1),
             helper.make_node("ConcatFromSequence", ["t1"], ["z"], axis=0, new_axis=1)]
    model = make_model(nodes, [vi("a", F32, [3]), vi("c", BOOL, [])],
                       [vi("y", F32, [1, 3]), vi("z", F32, [1, 3])])
    a = np.random.default_rng(17).standard_normal(3).astype(F32)
    check_conversion(model, {"a": a, "c": np.array(True)}, tmp_path)


def test_elements_static_and_dynamic_leave_an_empty_list_unknown() -> None:
    """An empty list grown by a [?, 3] tensor, then a [2, 3] one: its elements' shape is
    not static (the union of both), so the empty list is refused, naming it."""
    nodes = [helper.make_node("SequenceEmpty", [], ["e"], dtype=TensorProto.FLOAT, name="e"),
             helper.make_node("SequenceInsert", ["e", "c"], ["s1"]),
             helper.make_node("SequenceInsert", ["s1", "a"], ["s2"]),
             helper.make_node("ConcatFromSequence", ["s2"], ["y"], axis=0, new_axis=1)]
    model = make_model(nodes, [vi("c", F32, [None, 3]), vi("a", F32, [2, 3])],
                       [vi("y", F32, [2, None, 3])])
    with pytest.raises(irtool.ConversionError,
                       match=r"^node e: SequenceEmpty: the element shape of this empty "
                             r"sequence is not known statically"):
        irtool.convert(model)


def test_an_if_branch_with_fewer_outputs_than_the_if_is_one_line() -> None:
    """An If of one output whose then-branch has none (not valid ONNX): the If's one-line
    error, not a failure while following lists through If outputs."""
    then = helper.make_graph([], "then", [], [])
    other = helper.make_graph([helper.make_node("Identity", ["a"], ["b"])], "else", [],
                              [vi("b", F32, [3])])
    model = make_model([helper.make_node("If", ["c"], ["t"], then_branch=then,
                                         else_branch=other, name="if")],
                       [vi("a", F32, [3]), vi("c", BOOL, [])], [vi("t", F32, [3])])
    with pytest.raises(irtool.ConversionError,
                       match=r"^node if: If: then_branch has 0 outputs, the node 1$"):
        irtool.convert(model)
