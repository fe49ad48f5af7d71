"""Sequences lowered to tensors: built in a Loop (SequenceEmpty before, SequenceInsert per
iteration), read by SequenceAt / SequenceLength / ConcatFromSequence after; straight-line
SequenceConstruct and insert chains; clear errors where elements differ or sequences
cross the graph boundary. Expected values from onnxruntime."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper
from support.conversion import check_conversion, const_node, loop_layers, make_model, vi

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


@pytest.mark.parametrize(("axis", "new_axis"), [(0, 0), (1, 0), (-1, 0), (0, 1), (1, 1),
                                                (2, 1), (-1, 1)])
def test_sequence_built_in_a_loop(axis: int, new_axis: int, tmp_path: Path) -> None:
    ir = check_conversion(built_in_loop(axis, new_axis), {"X": X}, tmp_path)
    (loop,) = loop_layers(ir)
    carried = loop.bodies["body"].layer(loop.back_edges[-1].to_layer)
    assert carried.outputs[0].dims == (-1, 3, 2)  # grows along the sequence axis


def test_prepending_insert(tmp_path: Path) -> None:
    check_conversion(built_in_loop(0, 1, prepend=True), {"X": X}, tmp_path)


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
