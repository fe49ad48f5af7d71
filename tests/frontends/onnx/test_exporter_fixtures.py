"""ONNX models written by the real exporters (tests/fixtures/onnx_exporters/), through irtool.

The fixtures were made by ``tests/fixtures/onnx_exporters/export.py`` with torch's
TorchScript and dynamo exporters, onnxscript, tf2onnx, skl2onnx and onnxmltools; its
MANIFEST.json names each file's producer and versions. Only the checked-in files are
needed here. For every fixture ``irtool.check`` converts it and runs it on its
checked-in inputs: irtool's runtime and OpenVINO on irtool's IR must match onnxruntime
(computed now, never stored).

What irtool does not handle yet is listed in ``KNOWN_GAPS`` (both tests of the fixture
are expected to fail) or, where only OpenVINO running irtool's IR disagrees, in
``OPENVINO_GAPS`` (only irtool's runtime: ``IRTOOL_GAPS``). All are strict: a fixture
that starts to pass fails its test until its entry is removed.
"""

from __future__ import annotations

import functools
import hashlib
import json

import numpy as np
import pytest
from support import REPO

import irtool
from irtool.tools.check import CheckReport

FOLDER = REPO / "tests" / "fixtures" / "onnx_exporters"
MANIFEST = json.loads((FOLDER / "MANIFEST.json").read_text())
FIXTURES = {entry["name"]: entry for entry in MANIFEST["fixtures"]}


# name -> why irtool does not convert or run it yet (issue 10 says what to build).
KNOWN_GAPS: dict[str, str] = {}

# name -> why irtool's runtime refuses or disagrees while OpenVINO on irtool's IR agrees.
IRTOOL_GAPS: dict[str, str] = {}

# name -> why OpenVINO running irtool's IR disagrees with onnxruntime while irtool agrees.
OPENVINO_GAPS: dict[str, str] = {
    "skl_pipeline_onehot_strings": "OpenVINO's CPU plugin has no Equal on strings "
                                  "(OneHotEncoder of string categories)",
    "skl_knn_imputer": "OpenVINO's CPU plugin refuses an If whose branches give outputs of "
                       "different ranks ('If operation with dynamic rank')",
    "skl_gaussian_process_f64_small_noise": "OpenVINO's CPU plugin computes float64 in "
                                            "float32 (std off by 2.7e-4)",
}


def _params(gaps: dict[str, str]) -> list[pytest.param]:
    # Only irtool's own refusals and wrong values count as the gap; any other error fails.
    def xfail(reason: str) -> pytest.MarkDecorator:
        return pytest.mark.xfail(reason=reason, strict=True,
                                 raises=(irtool.IRToolError, AssertionError))
    return [pytest.param(name, id=name, marks=xfail(gaps[name])) if name in gaps
            else pytest.param(name, id=name) for name in sorted(FIXTURES)]


def _inputs(entry: dict) -> dict[str, np.ndarray]:
    with np.load(FOLDER / entry["inputs_file"]) as npz:
        return {name: npz[name] for name in npz.files}


@functools.cache
def _check(name: str) -> CheckReport:
    """One conversion and one run per backend, shared by both tests of a fixture."""
    entry = FIXTURES[name]
    return irtool.check(FOLDER / entry["file"], _inputs(entry))


def _assert_matches(report: CheckReport, backend: str) -> None:
    assert report.reference == "onnxruntime", "\n".join(report.failures())
    result = report.backend(backend)
    problems = [line for line in report.failures() if line.startswith(f"{backend}")]
    assert result.ok, "\n".join(problems)
    assert [r.output for r in result.rows] == report.outputs


@pytest.mark.parametrize("name", _params({**KNOWN_GAPS, **IRTOOL_GAPS}))
def test_irtool_runtime_matches_onnxruntime(name: str) -> None:
    _assert_matches(_check(name), "irtool")


@pytest.mark.parametrize("name", _params({**KNOWN_GAPS, **OPENVINO_GAPS}))
def test_openvino_on_irtool_ir_matches_onnxruntime(name: str) -> None:
    _assert_matches(_check(name), "openvino")


def test_gap_lists_name_fixtures() -> None:
    listed = sorted(set(KNOWN_GAPS) | set(OPENVINO_GAPS) | set(IRTOOL_GAPS))
    assert [n for n in listed if n not in FIXTURES] == []
    assert not set(KNOWN_GAPS) & set(OPENVINO_GAPS)
    assert not set(KNOWN_GAPS) & set(IRTOOL_GAPS)


def test_manifest_matches_the_files() -> None:
    """Every listed file is there as exported (hash), small, with inputs of the declared
    names, dtypes and shapes; nothing unlisted lies beside them."""
    listed = set()
    for entry in MANIFEST["fixtures"]:
        data = (FOLDER / entry["file"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"], entry["name"]
        assert len(data) < 200 * 1024, entry["name"]
        feed = _inputs(entry)
        assert list(feed) == [i["name"] for i in entry["inputs"]], entry["name"]
        for spec in entry["inputs"]:
            value = feed[spec["name"]]
            assert list(value.shape) == spec["feed_shape"], (entry["name"], spec["name"])
            dtype = "str" if value.dtype.kind in "US" else value.dtype.name
            assert dtype == spec["feed_dtype"] == spec["dtype"], (entry["name"], spec["name"])
        listed |= {entry["file"], entry["inputs_file"]}
    on_disk = {p.name for p in FOLDER.iterdir() if p.suffix in (".onnx", ".npz")}
    assert on_disk == listed
