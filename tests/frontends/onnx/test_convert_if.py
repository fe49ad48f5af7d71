"""ONNX If -> If-8: captures as inputs (one per distinct outer value), conditions that are
not boolean scalars, branches of different shapes, nesting. Expected values from
onnxruntime; the IR runs on OpenVINO and irtool."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnxruntime.capi.onnxruntime_pybind11_state import Fail as OrtFail
from support.conversion import (
    check_conversion,
    const_node,
    loop_layers,
    make_model,
    run_onnxruntime,
    vi,
)

import irtool

F32, BOOL = np.float32, np.bool_
X = np.array([1.0, -2.0, 3.0], F32)
Y = np.array([0.5, 0.25, -4.0], F32)


def _select_model(cond_shape: tuple = ()) -> object:
    then = helper.make_graph([helper.make_node("Add", ["x", "y"], ["s"]),
                              helper.make_node("Mul", ["s", "x"], ["t"])],
                             "then", [], [vi("t", F32, [3])])
    other = helper.make_graph([helper.make_node("Sub", ["y", "x"], ["d"])], "else", [],
                              [vi("d", F32, [3])])
    nodes = [helper.make_node("If", ["cond"], ["z"], then_branch=then, else_branch=other)]
    inputs = [vi("cond", BOOL, list(cond_shape)), vi("x", F32, [3]), vi("y", F32, [3])]
    return make_model(nodes, inputs, [vi("z", F32, [3])])


@pytest.mark.parametrize("flag", [True, False])
def test_if_with_captures(flag: bool, tmp_path: Path) -> None:
    ir = check_conversion(_select_model(), {"cond": np.array(flag), "x": X, "y": Y}, tmp_path)
    (layer,) = loop_layers(ir, "If")
    # x and y are read by both branches but enter the If once each.
    assert len(layer.inputs) == 3
    for key in ("then_port_map", "else_port_map"):
        entries = layer.port_maps[key]
        assert {e.external_port_id for e in entries if e.kind == "input"} <= {1, 2}
        assert [e.external_port_id for e in entries if e.kind == "output"] == [3]


@pytest.mark.parametrize("flag", [True, False])
def test_condition_of_shape_one(flag: bool, tmp_path: Path) -> None:
    model = _select_model(cond_shape=(1,))
    check_conversion(model, {"cond": np.array([flag]), "x": X, "y": Y}, tmp_path)


def test_branches_of_different_shapes(tmp_path: Path) -> None:
    """then gives [3], else [2]: the If output gets a dynamic dimension."""
    then = helper.make_graph([helper.make_node("Neg", ["x"], ["n"])], "then", [],
                             [vi("n", F32, [3])])
    other = helper.make_graph([const_node("k", np.array([7.0, 8.0], F32))], "else", [],
                              [vi("k", F32, [2])])
    model = make_model([helper.make_node("If", ["cond"], ["z"], then_branch=then,
                                         else_branch=other)],
                       [vi("cond", BOOL, []), vi("x", F32, [3])], [vi("z", F32, [None])])
    for flag in (True, False):
        where = tmp_path / str(flag)
        where.mkdir()
        ir = check_conversion(model, {"cond": np.array(flag), "x": X}, where)
    (layer,) = loop_layers(ir, "If")
    assert layer.outputs[0].dims == (-1,)


def test_nested_if(tmp_path: Path) -> None:
    inner_then = helper.make_graph([helper.make_node("Identity", ["x"], ["xx"])], "inner_then",
                                   [], [vi("xx", F32, [3])])
    inner_else = helper.make_graph([helper.make_node("Abs", ["y"], ["ay"])], "inner_else", [],
                                   [vi("ay", F32, [3])])
    then = helper.make_graph([helper.make_node("If", ["c2"], ["r"], then_branch=inner_then,
                                               else_branch=inner_else)],
                             "then", [], [vi("r", F32, [3])])
    other = helper.make_graph([helper.make_node("Identity", ["y"], ["yy"])], "else", [],
                              [vi("yy", F32, [3])])
    model = make_model([helper.make_node("If", ["c1"], ["z"], then_branch=then,
                                         else_branch=other)],
                       [vi("c1", BOOL, []), vi("c2", BOOL, []), vi("x", F32, [3]),
                        vi("y", F32, [3])], [vi("z", F32, [3])])
    for c1 in (True, False):
        for c2 in (True, False):
            where = tmp_path / f"{c1}{c2}"
            where.mkdir()
            check_conversion(model, {"c1": np.array(c1), "c2": np.array(c2), "x": X, "y": Y},
                             where)


@pytest.mark.parametrize("flag", [True, False])
@pytest.mark.parametrize("opset", [9, 11, 13, 16, 19, 21, 23])  # 9: If-1
def test_if_versions(opset: int, flag: bool, tmp_path: Path) -> None:
    model = _select_model()
    model.opset_import[0].version = opset
    check_conversion(model, {"cond": np.array(flag), "x": X, "y": Y}, tmp_path)


def test_branch_output_counts_must_match() -> None:
    then = helper.make_graph([helper.make_node("Neg", ["x"], ["n"])], "then", [],
                             [vi("n", F32, [3])])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["m"]),
                               helper.make_node("Abs", ["x"], ["a"])], "else", [],
                              [vi("m", F32, [3]), vi("a", F32, [3])])
    model = make_model([helper.make_node("If", ["cond"], ["z"], then_branch=then,
                                         else_branch=other, name="pick")],
                       [vi("cond", BOOL, []), vi("x", F32, [3])], [vi("z", F32, [3])])
    with pytest.raises(irtool.ConversionError, match="node pick: If: else_branch has 2"):
        irtool.convert(model)


def test_branch_element_types_must_match() -> None:
    """then gives f32, else f64: onnxruntime refuses the model, and so does the converter,
    naming the node and both types (an If output has one element type)."""
    then = helper.make_graph([helper.make_node("Neg", ["x"], ["n"])], "then", [],
                             [vi("n", F32, [3])])
    other = helper.make_graph([helper.make_node("Cast", ["x"], ["d"], to=TensorProto.DOUBLE)],
                              "else", [], [vi("d", np.float64, [3])])
    model = make_model([helper.make_node("If", ["cond"], ["z"], then_branch=then,
                                         else_branch=other, name="pick")],
                       [vi("cond", BOOL, []), vi("x", F32, [3])], [vi("z", F32, [3])])
    with pytest.raises(OrtFail, match="Mismatched tensor element type"):
        run_onnxruntime(model, {"cond": np.array(True), "x": X})
    with pytest.raises(irtool.ConversionError,
                       match="node pick: If: output 0 is f32 in then_branch but f64 in "
                             "else_branch"):
        irtool.convert(model)


@pytest.mark.parametrize("flag", [True, False])
def test_condition_known_when_converting_keeps_one_branch(flag: bool, tmp_path: Path) -> None:
    """A condition computed from constants and static shapes only (here: is x of rank 1?)
    selects its branch at conversion time, as OpenVINO would fold it: no If layer."""
    model = _select_model()
    model.graph.node.insert(0, helper.make_node("Shape", ["x"], ["shape"]))
    model.graph.node.insert(1, helper.make_node("Size", ["shape"], ["rank"]))
    model.graph.node.insert(2, const_node("want", 1 if flag else 2, np.int64))
    model.graph.node.insert(3, helper.make_node("Equal", ["rank", "want"], ["cond"]))
    del model.graph.input[0]
    ir = check_conversion(model, {"x": X, "y": Y}, tmp_path)
    assert loop_layers(ir, "If") == []
