"""ONNX Attention (the node case's expanded function) where one batch item has no key to
attend to (``nonpad_kv_seqlen`` 0): irtool gives what ONNX's reference evaluator and
onnxruntime give; OpenVINO's CPU plugin, on the same IR, gives NaN for that item
(docs/openvino-quirks.md; found by ``bench/fuzz.py --target onnx --seed 12``)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx.backend.test.case.node import collect_testcases
from onnx.reference import ReferenceEvaluator
from support.conversion import run_onnxruntime
from support.ir_builders import run_openvino

import irtool

CASE = "test_attention_4d_causal_nonpad_batch_prefill_expanded"


@pytest.fixture(scope="module")
def case():  # type: ignore[no-untyped-def]
    model = next(c.model for c in collect_testcases(None) if c.name == CASE)
    rng = np.random.default_rng(7)
    feeds = {"Q": rng.standard_normal((3, 2, 2, 8)).astype(np.float32),
             "K": rng.standard_normal((3, 2, 6, 8)).astype(np.float32),
             "V": rng.standard_normal((3, 2, 6, 8)).astype(np.float32),
             "nonpad_kv_seqlen": np.array([4, 0, 3], np.int64)}
    with np.errstate(all="ignore"):
        reference = ReferenceEvaluator(model).run(None, feeds)[0]
    return model, feeds, reference


def test_irtool_and_onnxruntime_match_the_reference(case) -> None:  # type: ignore[no-untyped-def]
    model, feeds, reference = case
    assert not np.isnan(reference).any()
    np.testing.assert_allclose(next(iter(run_onnxruntime(model, feeds).values())), reference,
                               rtol=1e-5, atol=1e-6)
    got = next(iter(irtool.run(irtool.convert(model), feeds).values()))
    np.testing.assert_allclose(got, reference, rtol=1e-5, atol=1e-6)


@pytest.mark.xfail(strict=True, reason="OpenVINO's CPU plugin gives NaN for a batch item with "
                   "no key to attend to (nonpad_kv_seqlen 0)")
def test_openvino_matches_the_reference(case) -> None:  # type: ignore[no-untyped-def]
    model, feeds, reference = case
    got = next(iter(run_openvino(irtool.convert(model), feeds).values()))
    np.testing.assert_allclose(got, reference, rtol=1e-5, atol=1e-6)
