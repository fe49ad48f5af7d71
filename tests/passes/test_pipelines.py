"""The one pass interface: every rewrite returns a ``PassResult`` (what it rewrote and how
many changes), a ``Pipeline`` runs passes in order, and the pipelines are the ones
``convert``, ``save`` and the runtime's compiler run."""

from __future__ import annotations

import numpy as np
import pytest
from support.ir_builders import Net, info

from irtool.ir import Model
from irtool.passes import pipelines
from irtool.passes.base import Pass, PassResult, Pipeline
from irtool.passes.constant_folding import FoldConstants, FoldDecompression
from irtool.passes.fp16 import CompressToFP16
from irtool.passes.pool_fusion import FusePools
from irtool.passes.prune import Prune


def _model_with_dead_layer() -> Model:
    """x -> Relu -> Result, plus a Negative of x that nothing reads."""
    net = Net()
    x = net.param("x", "f32", (2,))
    (y,) = net.builder.op("Relu", "opset1", [x], outputs=[info("f32", (2,))])
    net.builder.op("Negative", "opset1", [x], outputs=[info("f32", (2,))])
    net.builder.result(y)
    return Model(net.graph)


def test_a_pass_returns_what_it_rewrote_and_how_much() -> None:
    model = _model_with_dead_layer()
    result = Prune()(model)
    assert isinstance(result, PassResult) and result.target is model
    assert result.changes == 1 and result.modified
    assert sorted(layer.type for layer in model.graph) == ["Parameter", "Relu", "Result"]
    again = Prune()(model)
    assert again.changes == 0 and not again.modified


def test_a_pipeline_runs_its_passes_in_order_and_adds_their_changes() -> None:
    seen: list[str] = []

    class Mark(Pass[list]):
        def __init__(self, name: str) -> None:
            self.label = name

        def apply(self, target: list) -> PassResult[list]:
            seen.append(self.label)
            return PassResult([*target, self.label], 1)

    result = Pipeline([Mark("a"), Mark("b"), Mark("c")])([])
    assert seen == ["a", "b", "c"] and result.target == ["a", "b", "c"]
    assert result.changes == 3


def test_a_copying_pass_leaves_its_input_alone() -> None:
    net = Net()
    x = net.param("x", "f32", (2,))
    w = net.builder.const(np.array([1.5, -2.0], dtype=np.float32))
    (y,) = net.builder.op("Add", "opset1", [x, w], outputs=[info("f32", (2,))])
    net.builder.result(y)
    model = Model(net.graph)
    before = sorted((layer.type, layer.attrs.get("element_type")) for layer in model.graph)
    result = CompressToFP16()(model)
    assert not CompressToFP16.in_place and result.target is not model and result.changes == 1
    assert sorted((layer.type, layer.attrs.get("element_type"))
                  for layer in model.graph) == before
    assert ("Const", "f16") in {(layer.type, layer.attrs.get("element_type"))
                                for layer in result.target.graph}


def test_the_pipelines_are_declared_in_one_place() -> None:
    names = [type(p).__name__ for p in pipelines.conversion().passes]
    assert names == ["Prune", "LoopsOverUnreadSlices", "VectorizeLoops", "Prune",
                     "DropIdentities", "CopyBackEdges"]
    names = [type(p).__name__ for p in pipelines.conversion(vectorize=False,
                                                            slice_inputs=True).passes]
    assert names == ["Prune", "LoopsOverUnreadSlices", "DropIdentities", "CopyBackEdges",
                     "SliceLoopInputs", "Prune"]
    assert [type(p) for p in pipelines.compiling().passes] == [FoldDecompression,
                                                               FoldConstants, FusePools]
    assert pipelines.saving().passes == []


@pytest.mark.parametrize("options", [{}, {"vectorize": False, "slice_inputs": True}])
def test_without_optimisations_a_pipeline_keeps_only_what_is_not_one(options: dict) -> None:
    """``optimize=False`` leaves out exactly the passes that declare an ``optimisation``:
    pruning, the Loops and back-edge copies OpenVINO needs and the weight decompression
    semantics stay."""
    full = pipelines.conversion(**options).passes
    plain = pipelines.conversion(**options, optimize=False).passes
    assert [type(p).__name__ for p in plain] == ["Prune", "LoopsOverUnreadSlices",
                                                 "CopyBackEdges"]
    assert {type(p) for p in full} - {type(p) for p in plain} == \
        {type(p) for p in full if p.optimisation is not None}
    assert [type(p) for p in pipelines.compiling(optimize=False).passes] == \
        [FoldDecompression]
    assert all(p.optimisation is None for p in plain)
    assert all(p.optimisation for p in (FoldConstants(), FusePools()))


def test_a_pipeline_reports_its_optimisations_by_name() -> None:
    """``PassResult.applied``: each optimising pass's changes under its ``optimisation``
    name, summed over the pipeline (a pass that changed nothing is listed with 0); a pass
    that is not an optimisation is not listed."""

    class Add(Pass[list]):
        def __init__(self, n: int, optimisation: str | None) -> None:
            self.n = n
            self.optimisation = optimisation  # type: ignore[misc]

        def apply(self, target: list) -> PassResult[list]:
            return PassResult([*target, self.n], self.n)

    result = Pipeline([Add(2, "tidied"), Add(5, None), Add(3, "tidied"), Add(0, "fused")])([])
    assert result.changes == 10 and result.target == [2, 5, 3, 0]
    assert dict(result.applied) == {"tidied": 5, "fused": 0}
    assert Prune()(_model_with_dead_layer()).applied == {}
