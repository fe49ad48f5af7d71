"""``irtool.tools.baseline``: findings matched by relative file, code, layer name and
message (never the line), counted; a file that is no baseline is one clear error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from irtool.core.diagnostics import Diagnostic
from irtool.tools.baseline import Baseline, BaselineError


def finding(file: Path, line: int, message: str = "bad axis", layer: str | None = "add"
            ) -> Diagnostic:
    return Diagnostic("AXIS_RANGE", message, str(file), line, 3, layer)


def test_matching_ignores_lines_and_counts_duplicates(tmp_path: Path) -> None:
    model = tmp_path / "zoo" / "m.xml"
    path = tmp_path / "ci" / "baseline.json"
    path.parent.mkdir()
    Baseline.of(str(path), [(finding(model, 10), str(model))]).write()
    data = json.loads(path.read_text())
    assert data == {"irtool_baseline": 1, "findings": [
        {"file": "../zoo/m.xml", "code": "AXIS_RANGE", "layer": "add",
         "message": "bad axis", "count": 1}]}
    baseline = Baseline.load(str(path))
    # moved lines: accepted; a second identical finding, another layer or message: new
    assert baseline.match([finding(model, 99), finding(model, 100),
                           finding(model, 5, layer="mul"), finding(model, 5, "other")],
                          str(model)) == [True, False, False, False]
    other = tmp_path / "zoo" / "n.xml"
    assert baseline.match([finding(other, 10)], str(other)) == [False]


def test_a_file_that_is_no_baseline(tmp_path: Path) -> None:
    bad = tmp_path / "b.json"
    bad.write_text('{"findings": []}')
    with pytest.raises(BaselineError, match=r"b\.json: not an irtool baseline"):
        Baseline.load(str(bad))
    bad.write_text("{")
    with pytest.raises(BaselineError, match="not an irtool baseline"):
        Baseline.load(str(bad))
    with pytest.raises(BaselineError, match="cannot read the baseline"):
        Baseline.load(str(tmp_path / "missing.json"))
