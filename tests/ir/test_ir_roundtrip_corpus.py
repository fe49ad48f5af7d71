"""Round trip over every IR of the OpenVINO-written corpus (issue: IR core).

For each case: irtool reads OpenVINO's files and writes its own, which must be
canonically equal XML with a byte-identical .bin (``round_trip_difference``);
OpenVINO then compiles both and infers on the same feed. The outputs must be
bit-identical, which shows that nothing OpenVINO needs was lost or changed in between.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import pytest
from support import CORPUS_CASES, CORPUS_CONTROL_FLOW_CASES

import irtool
from irtool.ir import round_trip_difference
from irtool.tools.corpus import CONTROL_FLOW_OPS, CorpusCase, cases_with_ops, corpus_cases

# One thread, f32: the same results every run, independent of the machine's load.
CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": "1"}


def _infer(core: ov.Core, xml: Path, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
    compiled = core.compile_model(str(xml), "CPU", CONFIG)
    values = list(feed.values())
    by_port = {}
    for index, port in enumerate(compiled.inputs):
        hits = sorted(n for n in port.get_names() if n in feed)
        by_port[port] = feed[hits[0]] if hits else values[index]
    result = compiled.create_infer_request().infer(by_port)
    return [np.array(result[port]) for port in compiled.outputs]


def _round_trip_mismatch(case: CorpusCase, core: ov.Core, out_dir: Path) -> str | None:
    """None when OpenVINO computes the same bits on irtool's copy; else why not."""
    copy = out_dir / f"{case.name}.xml"
    irtool.save(irtool.load(case.xml), copy)
    difference = round_trip_difference(case.xml, copy)
    if difference:
        return difference
    try:
        expected = _infer(core, case.xml, case.inputs)
        actual = _infer(core, copy, case.inputs)
    except Exception as err:  # a reload failure is a finding, reported with the case
        return f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
    if len(actual) != len(expected):
        return f"{len(actual)} outputs, expected {len(expected)}"
    for index, (a, e) in enumerate(zip(actual, expected)):
        if a.dtype != e.dtype or a.shape != e.shape:
            return f"output {index}: {a.dtype}{a.shape} vs {e.dtype}{e.shape}"
        if a.tobytes() != e.tobytes():
            return f"output {index}: values differ"
    return None


def test_control_flow_corpus_round_trips_bit_identical(tmp_path: Path) -> None:
    cases = cases_with_ops(CONTROL_FLOW_OPS)
    assert len(cases) >= CORPUS_CONTROL_FLOW_CASES, \
        f"{len(cases)} Loop/TensorIterator/If cases in the corpus, not {CORPUS_CONTROL_FLOW_CASES}"
    core = ov.Core()
    misses = {c.name: m for c in cases if (m := _round_trip_mismatch(c, core, tmp_path))}
    assert misses == {}


@pytest.mark.slow
def test_whole_corpus_round_trips_bit_identical(tmp_path: Path) -> None:
    cases = corpus_cases()
    assert len(cases) >= CORPUS_CASES, f"{len(cases)} corpus cases, not {CORPUS_CASES}"
    core = ov.Core()
    misses = {}
    for case in cases:
        mismatch = _round_trip_mismatch(case, core, tmp_path)
        if mismatch:
            misses[case.name] = mismatch
        for path in tmp_path.iterdir():  # keep the temp dir small over ~1,400 cases
            path.unlink()
    print(f"\nround trip: {len(cases) - len(misses)} of {len(cases)} corpus IRs bit-identical")
    assert misses == {}
