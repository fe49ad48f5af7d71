"""Shared by the opset kernel tests: compare irtool with OpenVINO on corpus cases.

Expected values are OpenVINO's (``expected.npz`` of the corpus, or OpenVINO run
here on an IR it wrote); irtool only ever supplies the actual values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import openvino as ov
import pytest

import irtool
from irtool.opset import lookup
from irtool.runtime import Executor
from irtool.tools import corpus as ov_corpus

BOUNDARY = frozenset({"Parameter", "Const", "Result"})
RTOL, ATOL = 1e-4, 1e-5
CPU_CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}


def share_predicate(modules: Iterable[str]) -> Callable[[str, str], bool]:
    """``in_share(type, version)``: whether one of ``modules`` of irtool.opset implements it."""
    names = frozenset(modules)

    def in_share(op_type: str, version: str) -> bool:
        cls = lookup(op_type, version)
        return cls is not None and cls.__module__.rsplit(".", 1)[-1] in names

    return in_share


def mismatch(actual: np.ndarray, expected: np.ndarray) -> str | None:
    """Why ``actual`` differs from OpenVINO's ``expected`` (shape, dtype, values), or None."""
    actual = np.asarray(actual)
    if actual.shape != expected.shape:
        return f"shape {actual.shape} != {expected.shape}"
    if actual.dtype != expected.dtype:
        return f"dtype {actual.dtype} != {expected.dtype}"
    if expected.dtype.kind not in "fc":
        if not np.array_equal(actual, expected):
            return f"{int(np.count_nonzero(actual != expected))} values differ"
        return None
    if not np.allclose(actual, expected, rtol=RTOL, atol=ATOL, equal_nan=True):
        err = np.nanmax(np.abs(actual.astype(np.float64) - expected.astype(np.float64)))
        return f"values differ (max abs err {err:.3g})"
    return None


def run_irtool(xml: Path, inputs: dict[str, np.ndarray] | list[np.ndarray]) -> list[np.ndarray]:
    """irtool's outputs for an IR file, in Result order."""
    return list(Executor(irtool.load(xml)).run(inputs).values())


def case_problem(case: ov_corpus.CorpusCase) -> str | None:
    """Why irtool's outputs differ from OpenVINO's for a corpus case, or None."""
    executor = Executor(irtool.load(case.xml))
    inputs = case.inputs
    if set(inputs) != set(executor.input_names) and len(inputs) == len(executor.input_names):
        inputs = dict(zip(executor.input_names, inputs.values()))  # renamed by OpenVINO
    got = list(executor.run(inputs).values())
    if len(got) != len(case.expected):
        return f"{len(got)} outputs, OpenVINO has {len(case.expected)}"
    # expected.npz is keyed by OpenVINO's any_name, which may be another name of the same
    # tensor; the order of the outputs is the model's either way.
    for actual, (name, want) in zip(got, case.expected.items()):
        why = mismatch(actual, want)
        if why:
            return f"output {name!r}: {why}"
    return None


def load_fast_corpus(names: Iterable[str],
                     tmp_path_factory: pytest.TempPathFactory) -> dict[str, ov_corpus.CorpusCase]:
    """The corpus cases called ``names``: from the cached corpus when it is complete,
    otherwise converted and run with OpenVINO here (a few seconds)."""
    wanted = tuple(names)
    manifest = ov_corpus.read_manifest()
    if manifest and manifest.get("complete") and \
            (manifest.get("openvino"), manifest.get("onnx")) == ov_corpus.versions():
        cases = {c.name: c for c in ov_corpus.corpus_cases() if c.name in wanted}
        if len(cases) == len(wanted):
            return cases
    root = tmp_path_factory.mktemp("fast-corpus")
    (root / ov_corpus.BUILD_SUBDIR / "partial").mkdir(parents=True)
    by_name = {c.name: c for c in ov_corpus.collect_cases() if c.name in wanted}
    core = ov.Core()
    out: dict[str, ov_corpus.CorpusCase] = {}
    for name in wanted:
        record = ov_corpus.run_case(by_name[name], root, core, CPU_CONFIG)
        assert record["ok"], f"OpenVINO itself fails {name}: {record['reason']}"
        xml = root / name / "model.xml"
        out[name] = ov_corpus.CorpusCase(name, xml, xml.with_suffix(".bin"),
                                         tuple((t, v) for t, v in record["ops"]))
    return out


def share_case_names(in_share: Callable[[str, str], bool]) -> list[str]:
    """Corpus cases whose layers all belong to a share (``in_share``), building the corpus
    if it is not cached yet, so that a fresh checkout parametrizes every case too."""
    return [case.name for case in ov_corpus.corpus_cases()
            if all(t in BOUNDARY or in_share(t, v) for t, v in case.ops)]
