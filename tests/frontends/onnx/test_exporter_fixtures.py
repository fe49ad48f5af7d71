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

import contextlib
import functools
import hashlib
import json
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest
from support import REPO
from support.compare import assert_same
from support.conversion import run_onnxruntime, run_openvino

import irtool
from irtool.engines.openvino import cpu_plugin_refusals
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
    "skl_gaussian_process_f64_small_noise": "OpenVINO's CPU plugin computes float64 in "
                                            "float32 (std off by 2.7e-4)",
}

# name -> the If node (as irtool names its layer) whose branches give one output two ranks,
# with data or a dynamic input dim choosing the branch: OpenVINO's CPU plugin has no If of
# dynamic rank, and check's OpenVINO column names that node first (``cpu_plugin_refusals``).
OPENVINO_REFUSES: dict[str, str] = {
    "skl_knn_imputer": "Opset-N24__3",
    "ts_if_on_shape": "/If",
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
    report = _check(name)
    result = report.backend("openvino")
    if name in OPENVINO_REFUSES and result.error is not None:
        # A record of this CPU plugin: where it compiles the If, its values must match.
        assert result.error.startswith(f"node {OPENVINO_REFUSES[name]} (If): output "), \
            result.error
        assert "OpenVINO's CPU plugin has no If of dynamic rank" in result.error
        return
    _assert_matches(report, "openvino")


def test_gap_lists_name_fixtures() -> None:
    listed = sorted(set(KNOWN_GAPS) | set(OPENVINO_GAPS) | set(IRTOOL_GAPS)
                    | set(OPENVINO_REFUSES))
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


# -- what OpenVINO's CPU plugin cannot compile, and declared output shapes that are wrong --------


@contextlib.contextmanager
def _irtool_warnings() -> Iterator[list[str]]:
    """The warning lines irtool logs meanwhile (a handler of its own: the command line's
    logging setup stops the "irtool" logger from propagating to pytest's)."""
    lines: list[str] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: lines.append(record.getMessage())  # type: ignore[method-assign]
    logger = logging.getLogger("irtool")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    try:
        yield lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _ops(model: irtool.Model) -> set[str]:
    return {layer.type for _, layer in model.graph.walk()}


@pytest.mark.parametrize("rows", [2, 3])
def test_if_decided_by_an_input_dim_is_resolved_with_input_shapes(rows: int,
                                                                  tmp_path: Path) -> None:
    """ts_if_on_shape's If (x.size(0) > 2, branches of rank 1 and 2) converts to the branch
    ``--input`` picks: no If is left, OpenVINO compiles the IR, and both engines match
    onnxruntime. The 2-row branch contradicts the output's declared [4]: one warning
    naming it; 3 rows, none."""
    entry = FIXTURES["ts_if_on_shape"]
    feed = {"x": np.random.default_rng(rows).standard_normal((rows, 4)).astype(np.float32)}
    expected = run_onnxruntime(onnx.load(FOLDER / entry["file"]), feed)
    with _irtool_warnings() as warned:
        model = irtool.convert(FOLDER / entry["file"], input_shapes={"x": (rows, 4)})
    assert "If" not in _ops(model)
    assert cpu_plugin_refusals(model) == []
    assert warned == ([] if rows == 3 else [
        "warning: graph output 'y' is declared [4] but is [2,4]; the computed value is the "
        "output (the declaration is wrong, as onnxruntime also finds)"])
    xml = irtool.save(model, tmp_path / "m.xml")
    assert_same(run_openvino(xml, feed), expected, "openvino")
    assert_same(irtool.run(irtool.load(xml), feed), expected, "irtool")


def test_if_of_two_ranks_is_named_where_the_ir_is_for_openvino(tmp_path: Path) -> None:
    """Without ``--input`` the If stays (irtool's runtime runs it): ``irtool convert`` writes
    the IR and says in one line which ONNX node OpenVINO's CPU plugin will refuse."""
    done = subprocess.run([sys.executable, "-m", "irtool", "convert",
                           str(FOLDER / "ts_if_on_shape.onnx"), "-o", str(tmp_path) + "/"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "ts_if_on_shape.xml").is_file()
    assert done.stderr.splitlines() == [
        "irtool: warning: node /If (If): output 0 has rank 1 in then_branch and 2 in "
        "else_branch, and which runs is known only at run time: OpenVINO's CPU plugin has no "
        "If of dynamic rank (irtool's runtime runs it; --input resolves an If that input "
        "shapes decide)"]


def test_knn_imputer_if_depends_on_data() -> None:
    """skl2onnx's KNNImputer: each of the 4 expanded calls of its column function holds an
    If on whether a column's donors are all NaN (data), output 1 of rank 3 or 2."""
    model = irtool.convert(FOLDER / "skl_knn_imputer.onnx", input_shapes={"X": (7, 4)})
    assert [line.split(" (If)")[0] for line in cpu_plugin_refusals(model)] == [
        "node Opset-N24__3", "node Opset-N24__6", "node Opset-N24__9", "node Opset-N24__12"]
    assert "output 1 has rank 3 in then_branch and 2 in else_branch" in \
        cpu_plugin_refusals(model)[0]


def test_declared_label_shape_that_is_wrong_warns_once_and_runs() -> None:
    """onnxmltools declares LightGBM's label [1] for any number of rows. ONNX takes an
    output's declared shape as an assertion about the computed value; onnxruntime returns
    the 7 labels (and warns), and so do irtool and OpenVINO on irtool's IR; ``check`` says
    so once, naming the output."""
    entry = FIXTURES["lgbm_classifier"]
    with _irtool_warnings() as warned:
        report = irtool.check(FOLDER / entry["file"], _inputs(entry))
    assert report.ok, "\n".join(report.failures())
    assert warned == [
        "warning: graph output 'label' is declared [1] but is [7]; the computed value is the "
        "output (the declaration is wrong, as onnxruntime also finds)"]
    with _irtool_warnings() as warned:  # rows fixed at conversion: said there, once
        irtool.convert(FOLDER / entry["file"], input_shapes={"X": (7, 4)})
    assert warned == [
        "warning: graph output 'label' is declared [1] but is [7]; the computed value is the "
        "output (the declaration is wrong, as onnxruntime also finds)"]
