"""The reports of a batch (``irtool.tools.reports``), read by what CI and review tools use:
SARIF checked against the official SARIF 2.1.0 JSON schema (OASIS, in tests/fixtures/sarif),
JUnit read by junitparser (as Jenkins' and GitLab's readers see testcases, failures and
errors), GitHub workflow commands escaped as GitHub's documentation says, and each
resumable report read back into the rows it was written from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from irtool.core.diagnostics import Diagnostic
from irtool.tools.baseline import Baseline
from irtool.tools.batch import Row
from irtool.tools.reports import (
    Context,
    ReportWriter,
    Summary,
    document,
    github_lines,
    judge,
    parse_line,
    read_report,
)

SCHEMA = Path(__file__).resolve().parent.parent / "fixtures" / "sarif" / "sarif-schema-2.1.0.json"


def rows(folder: Path) -> list[Row]:
    """Three models: clean; an error in a nested body and a warning; a crash. Names with
    quotes, colons and commas, as IR allows."""
    bad = str(folder / "zoo" / "bad, model.xml")
    return [
        Row(str(folder / "zoo" / "good.xml"), "validate", seconds=0.01),
        Row(bad, "validate", diagnostics=[
            Diagnostic("EDGE_TYPE_MISMATCH", 'edge 3 -> 4: "f32" vs "i64": 100%', bad, 42, 4,
                       'add: "x", y', "3/body", "error"),
            Diagnostic("UNKNOWN_OP", "operation If-opset3 is unknown", bad, 7, 1, "if",
                       severity="warning")], seconds=0.2),
        Row(str(folder / "crash.xml"), "validate", "crash", [Diagnostic(
            "MODEL_CRASHED", "the worker died (SIGSEGV) on this model, 2 times",
            str(folder / "crash.xml"))], seconds=1.5),
    ]


def test_judge_strict_and_baseline(tmp_path: Path) -> None:
    _, bad, _ = rows(tmp_path)
    assert judge(bad).failing == [True, False]
    assert judge(bad, strict=True).failing == [True, True]
    baseline = Baseline.of(str(tmp_path / "b.json"), [(bad.diagnostics[0], bad.file)])
    j = judge(bad, strict=True, baseline=baseline)
    assert j.baselined == [True, False] and j.failing == [False, True]
    assert Summary.of("validate", [j]).to_dict() == {
        "files": 1, "valid": 0, "errors": 0, "warnings": 1, "baselined": 1}


def test_sarif_is_valid_sarif_2_1_0(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text())
    good, bad, crash = rows(tmp_path)
    baseline = Baseline.of(str(tmp_path / "b.json"), [(bad.diagnostics[1], bad.file)])
    ctx = Context("validate", baseline=baseline.path, base=str(tmp_path / "zoo"))
    judged = [judge(r, baseline=baseline) for r in (good, bad, crash)]
    doc = json.loads(document("sarif", judged, ctx))
    jsonschema.validate(doc, schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)
    [run] = doc["runs"]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    results = run["results"]
    assert [r["ruleId"] for r in results] == ["EDGE_TYPE_MISMATCH", "UNKNOWN_OP",
                                              "MODEL_CRASHED"]
    for r in results:
        assert rules[r["ruleIndex"]] == r["ruleId"]
    first = results[0]
    assert first["level"] == "error" and results[1]["level"] == "warning"
    loc = first["locations"][0]
    assert loc["physicalLocation"]["artifactLocation"] == {
        "uri": "bad%2C%20model.xml", "uriBaseId": "SRCROOT", "index": 1}
    assert loc["physicalLocation"]["region"] == {"startLine": 42}
    assert loc["logicalLocations"][0]["fullyQualifiedName"] == "3/body/4"
    assert first["baselineState"] == "new" and "suppressions" not in first
    assert results[1]["baselineState"] == "unchanged"
    assert results[1]["suppressions"][0]["kind"] == "external"
    # outside the base folder: an absolute file URI
    assert results[2]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
        (tmp_path / "crash.xml").as_uri()
    assert run["originalUriBaseIds"]["SRCROOT"]["uri"] == (tmp_path / "zoo").as_uri() + "/"


def test_junit_as_ci_readers_see_it(tmp_path: Path) -> None:
    junitparser = pytest.importorskip("junitparser")
    judged = [judge(r) for r in rows(tmp_path)]
    path = tmp_path / "report.xml"
    path.write_bytes(document("junit", judged, Context("validate")))
    xml = junitparser.JUnitXml.fromfile(str(path))
    [suite] = list(xml)
    assert (suite.tests, suite.failures, suite.errors) == (3, 1, 1)
    cases = {Path(c.name).name: c for c in suite}
    assert cases["good.xml"].is_passed and cases["good.xml"].classname == "irtool.validate"
    [failure] = cases["bad, model.xml"].result  # the warning does not fail: system-out
    assert isinstance(failure, junitparser.Failure)
    assert failure.type == "EDGE_TYPE_MISMATCH" and failure.message.startswith("edge 3 -> 4")
    assert failure.text.startswith(f"{rows(tmp_path)[1].file}:42: error: EDGE_TYPE_MISMATCH")
    assert "warning: UNKNOWN_OP" in cases["bad, model.xml"].system_out
    [error] = cases["crash.xml"].result
    assert isinstance(error, junitparser.Error) and error.type == "MODEL_CRASHED"
    assert cases["bad, model.xml"].time == pytest.approx(0.2)


def test_github_workflow_commands_are_escaped() -> None:
    """GitHub's rules: data escapes %, CR, LF; properties also ':' and ','."""
    row = Row("a:b,c.xml", "validate", diagnostics=[
        Diagnostic("XSD", "50% done\nnext: line", "a:b,c.xml", 3, 2, "n", severity="error"),
        Diagnostic("UNKNOWN_OP", "odd", "a:b,c.xml", None, severity="warning")])
    assert github_lines(judge(row)) == [
        '::error file=a%3Ab%2Cc.xml,line=3,title=irtool XSD::layer 2 "n": 50%25 done%0Anext: '
        'line',
        "::warning file=a%3Ab%2Cc.xml,title=irtool UNKNOWN_OP::odd"]


@pytest.mark.parametrize("fmt", ["json", "junit", "sarif"])
def test_a_report_reads_back_into_its_rows(fmt: str, tmp_path: Path) -> None:
    written = rows(tmp_path)
    path = tmp_path / f"report.{fmt}"
    writer = ReportWriter(fmt, Context("validate"), str(path))
    for row in written:
        writer.add(judge(row))
    writer.close()
    got_fmt, got = read_report(str(path))
    assert got_fmt == fmt
    assert [(r.file, r.status, r.diagnostics) for r in got] == \
        [(r.file, r.status, r.diagnostics) for r in written]


def test_parse_line_with_a_layer_name_holding_the_separator() -> None:
    d = Diagnostic("X", 'b": c', "m.xml", 5, 7, 'a": x', "2/then_body", "warning")
    assert parse_line(d.format(), "m.xml", d.message) == d
    plain = Diagnostic("FILE_UNREADABLE", "cannot read: gone", "m.xml")
    assert parse_line(plain.format(), "m.xml") == plain


def test_a_document_report_on_file_holds_each_row_from_the_start(tmp_path: Path) -> None:
    """Rewritten as rows come: a killed run leaves a readable report (REWRITE_SECONDS=0)."""
    import irtool.tools.reports as reports

    path = tmp_path / "r.json"
    old = reports.REWRITE_SECONDS
    reports.REWRITE_SECONDS = 0.0
    try:
        writer = ReportWriter("json", Context("validate"), str(path))
        assert json.loads(path.read_text())["files"] == []
        for row in rows(tmp_path)[:2]:
            writer.add(judge(row))
        assert len(json.loads(path.read_text())["files"]) == 2  # before close()
    finally:
        reports.REWRITE_SECONDS = old


def test_the_cli_names_the_formats_the_reports_write() -> None:
    """``cli/_batch.FORMATS`` (the parser's choices, kept there so that building the parser
    loads no report code) is ``tools.reports.FORMATS``."""
    from irtool.cli._batch import FORMATS as CLI_FORMATS
    from irtool.tools.reports import FORMATS

    assert CLI_FORMATS == FORMATS
