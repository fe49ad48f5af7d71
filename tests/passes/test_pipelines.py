"""The one pass interface: every rewrite returns a ``PassResult`` (what it rewrote and how
many changes), a ``Pipeline`` runs passes in order, and the pipelines are the ones
``convert``, ``save`` and the runtime's compiler run."""

from __future__ import annotations

import numpy as np
from support.ir_builders import Net, info

from irtool.ir import Model
from irtool.passes import pipelines
from irtool.passes.base import Pass, PassResult, Pipeline
from irtool.passes.constant_folding import FoldConstants
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
    assert names == ["Prune", "VectorizeLoops", "Prune", "DropIdentities"]
    names = [type(p).__name__ for p in pipelines.conversion(vectorize=False,
                                                            slice_inputs=True).passes]
    assert names == ["Prune", "DropIdentities", "SliceLoopInputs", "Prune"]
    assert [type(p) for p in pipelines.COMPILE.passes] == [FoldConstants, FusePools]
    assert pipelines.saving().passes == []
