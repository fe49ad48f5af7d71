"""Translators ask for an input's rank only where they use it: each op here gets an
input whose rank neither ONNX nor irtool knows (reshaped to a shape fed at run time)
and a negative axis the IR op counts from the end itself. Expected values from onnxruntime;
irtool's runtime runs the saved IR. OpenVINO's CPU plugin runs no tensor of dynamic
rank at all ("CPU plug-in doesn't support Reshape operation with dynamic rank"), so it
cannot take part here; the IR must still pass irtool's validator."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper
from support.compare import assert_same
from support.conversion import const_node, make_model, run_onnxruntime, vi

import irtool

F32, I64 = np.float32, np.int64
X = np.random.default_rng(11).standard_normal((2, 3, 4)).astype(F32)


INPUTS = [vi("flat", F32, [None]), vi("shape", I64, [None])]
UNRANKED = helper.make_node("Reshape", ["flat", "shape"], ["x"])
"""``x``: ``flat`` reshaped to ``shape``, a rank known only at run time."""


def feeds(x: np.ndarray) -> dict[str, np.ndarray]:
    return {"flat": x.ravel(), "shape": np.array(x.shape, I64)}


def _model(nodes: list[onnx.NodeProto], out_rank: int, dtype: object = F32,
           outputs: int = 1) -> onnx.ModelProto:
    names = ["y", "z"][:outputs]
    types = [dtype, I64][:outputs]
    return make_model([UNRANKED, *nodes], INPUTS,
                      [vi(n, t, [None] * out_rank) for n, t in zip(names, types)], opset=18)


CASES = {
    "Gather": (lambda: _model([const_node("i", [2, 0], I64),
                               helper.make_node("Gather", ["x", "i"], ["y"], axis=-1)], 3), {}),
    "GatherElements": (lambda: _model(
        [const_node("i", np.tile(np.array([[2], [0]], I64), (2, 1, 4)), I64),
         helper.make_node("GatherElements", ["x", "i"], ["y"], axis=-2)], 3), {}),
    "ScatterElements": (lambda: _model(
        [const_node("i", np.array([[[3, 0]] * 3] * 2), I64),
         const_node("u", np.ones((2, 3, 2), F32), F32),
         helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=-1)], 3), {}),
    "TopK": (lambda: _model([const_node("k", [2], I64),
                             helper.make_node("TopK", ["x", "k"], ["y", "z"])], 3,
                            outputs=2), {}),
    "Softmax": (lambda: _model([helper.make_node("Softmax", ["x"], ["y"], axis=-2)], 3), {}),
    "LogSoftmax": (lambda: _model([helper.make_node("LogSoftmax", ["x"], ["y"])], 3), {}),
    "ArgMax": (lambda: _model([helper.make_node("ArgMax", ["x"], ["y"], axis=-1,
                                                keepdims=0)], 2, I64), {}),
    "ArgMin keepdims": (lambda: _model([helper.make_node("ArgMin", ["x"], ["y"], axis=-2)], 3,
                                       I64), {}),
    "Concat": (lambda: _model([helper.make_node("Concat", ["x", "x"], ["y"], axis=-1)], 3), {}),
    "Split": (lambda: _model([const_node("s", [1, 3], I64),
                              helper.make_node("Split", ["x", "s"], ["y", "w"], axis=-1)], 3),
              {}),
    "Squeeze without axes": (lambda: _model([helper.make_node("Squeeze", ["x"], ["y"])], 2),
                             feeds(X[:, :1])),
    "Squeeze negative axes": (lambda: _model(
        [const_node("a", [-2], I64), helper.make_node("Squeeze", ["x", "a"], ["y"])], 2),
        feeds(X[:, :1])),
    "Flatten": (lambda: _model([helper.make_node("Flatten", ["x"], ["y"], axis=2)], 2), {}),
    "Flatten axis 0": (lambda: _model([helper.make_node("Flatten", ["x"], ["y"], axis=0)], 2),
                       {}),
    "Reshape": (lambda: _model([const_node("s", [0, -1], I64),
                                helper.make_node("Reshape", ["x", "s"], ["y"])], 2), {}),
    "Slice": (lambda: _model([const_node("b", [1], I64), const_node("e", [3], I64),
                              const_node("a", [-1], I64),
                              helper.make_node("Slice", ["x", "b", "e", "a"], ["y"])], 3), {}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_unknown_rank(case: str, tmp_path: Path) -> None:
    build, given = CASES[case]
    model, inputs = build(), given or feeds(X)
    onnx.checker.check_model(model)
    expected = run_onnxruntime(model, inputs)
    ir = irtool.convert(model)
    assert [p.format() for p in irtool.validate(ir) if p.severity == "error"] == []
    xml = irtool.save(ir, tmp_path / "model.xml")
    assert_same(irtool.run(irtool.load(xml), inputs), expected, "irtool", 1e-5, 1e-6,
                float_dtypes=False)


def test_rank_still_asked_where_used() -> None:
    """ArgMax's last index reverses the axis: that needs the rank, and says so."""
    model = _model([helper.make_node("ArgMax", ["x"], ["y"], axis=-1, keepdims=0,
                                     select_last_index=1, name="last")], 2, I64)
    with pytest.raises(irtool.ConversionError, match=r"node last: ArgMax: the input rank "
                                                      r"must be known"):
        irtool.convert(model)
