"""``irtool validate PATH...`` as a deployment gate: folders and globs, the compiler-style
lines, the summary, exit codes 0/1/2, --strict, --baseline / --write-baseline, --jobs,
--resume, and a model that crashes or hangs its worker as one failed row.

The IR is OpenVINO's (``ov_control_flow_irs``), broken by edits whose codes the spec
fixes (``support.gate``); what is asserted is what the gate does with the findings.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.gate import copy_ir, hazard_extension, hazard_ir, irtool, make_zoo

SUMMARY = re.compile(r"^irtool validate: (\d+) file\(s\): (\d+) valid, (\d+) failed; "
                     r"(\d+) error\(s\), (\d+) warning\(s\), (\d+) baselined$")


@pytest.fixture()
def zoo(ov_control_flow_irs: dict[str, Path], tmp_path: Path) -> dict[str, Path]:
    return make_zoo(ov_control_flow_irs, tmp_path / "zoo")


def summary(stderr: str) -> tuple[int, ...]:
    m = SUMMARY.match(stderr.strip().splitlines()[-1])
    assert m, stderr
    return tuple(int(g) for g in m.groups())


def findings(stdout: str) -> list[tuple[str, str, str]]:
    """(file name, severity, code) of each compiler line."""
    out = []
    for line in stdout.splitlines():
        m = re.match(r"^(.*?):(\d+): (error|warning): ([A-Z_0-9]+) ", line)
        assert m, f"not a compiler line: {line!r}"
        out.append((Path(m.group(1)).name, m.group(3), m.group(4)))
    return out


def test_a_folder_is_searched_and_each_finding_is_a_compiler_line(zoo: dict[str, Path]) -> None:
    proc = irtool("validate", zoo["good"].parent)
    assert proc.returncode == 1, proc.stderr
    found = findings(proc.stdout)
    assert {("broken.xml", "error", "PORT_MAP_PURPOSE"),
            ("broken.xml", "error", "LOOP_BODY_CONDITION"),
            ("warned.xml", "warning", "UNKNOWN_OP")} <= set(found)
    assert {f for f, _, _ in found} == {"broken.xml", "warned.xml"}  # not .cache/hidden.xml
    files, valid, failed, errors, warnings, baselined = summary(proc.stderr)
    assert (files, valid, failed, warnings, baselined) == (4, 3, 1, 1, 0)
    assert errors == sum(s == "error" for _, s, _ in found)


def test_a_glob_is_expanded_by_irtool_and_a_clean_run_exits_zero(zoo: dict[str, Path]) -> None:
    root = zoo["good"].parent
    proc = irtool("validate", "good.xml", "sub/deep/*.xml", "**/nested.xml", cwd=root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == ""
    assert summary(proc.stderr) == (2, 2, 0, 0, 0, 0)  # nested.xml once


def test_usage_errors_exit_two(zoo: dict[str, Path], tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for args, words in [(["empty"], "no IR file (.xml) in this folder"),
                        (["empty", "--jobs", "2"], "no IR file"),  # workers started early
                        (["nothing/*.xml"], "matches this pattern"),
                        ([str(zoo["good"]), "--openvino", "1999.1"], "1999.1"),
                        ([str(zoo["good"]), "--json", "--format", "sarif"], "two formats"),
                        ([str(zoo["good"]), "--baseline", "missing.json"], "missing.json"),
                        ([str(zoo["good"]), "--jobs", "0"], "--jobs")]:
        proc = irtool("validate", *args, cwd=tmp_path)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert len(proc.stderr.splitlines()) == 1 and words in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr


def test_strict_fails_on_warnings(zoo: dict[str, Path]) -> None:
    assert irtool("validate", zoo["warned"]).returncode == 0
    proc = irtool("validate", zoo["warned"], "--strict")
    assert proc.returncode == 1
    assert summary(proc.stderr)[:3] == (1, 0, 1)


def test_a_baseline_accepts_known_findings_but_not_new_ones(zoo: dict[str, Path],
                                                            tmp_path: Path) -> None:
    root = zoo["good"].parent
    baseline = tmp_path / "ci" / "baseline.json"
    baseline.parent.mkdir()
    proc = irtool("validate", root, "--write-baseline", baseline, "--strict")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(baseline.read_text())
    assert {(f["file"], f["code"]) for f in data["findings"]} >= {
        ("../zoo/sub/broken.xml", "PORT_MAP_PURPOSE"), ("../zoo/warned.xml", "UNKNOWN_OP")}
    assert all("line" not in f for f in data["findings"])

    # The same findings, run from another folder: accepted, even under --strict.
    proc = irtool("validate", "zoo", "--baseline", "ci/baseline.json", "--strict",
                  cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == ""  # accepted findings are shown with -v only
    files, valid, failed, errors, warnings, baselined = summary(proc.stderr)
    assert (files, valid, failed, errors, warnings) == (4, 4, 0, 0, 0)
    assert baselined == len(data["findings"])

    # Lines moved by an edit elsewhere: still the same findings.
    broken = zoo["broken"]
    broken.write_text(broken.read_text().replace("<layers>", "<layers>\n\n\n", 1))
    proc = irtool("validate", root, "--baseline", baseline, "--strict")
    assert proc.returncode == 0, proc.stdout

    # A new finding fails, and only it is printed.
    copy_ir(zoo["good"], root / "new.xml", edit=('axis="0" external_port_id="0"',
                                                 'axis="7" external_port_id="0"'))
    proc = irtool("validate", root, "--baseline", baseline, "--strict")
    assert proc.returncode == 1
    assert {f for f, _, _ in findings(proc.stdout)} == {"new.xml"}


@pytest.mark.slow
def test_jobs_give_the_same_report(zoo: dict[str, Path], tmp_path: Path) -> None:
    root = zoo["good"].parent
    one = irtool("validate", root, "--format", "json")
    two = irtool("validate", root, "--format", "json", "--jobs", "2")
    assert one.returncode == two.returncode == 1
    strip = [{k: v for k, v in f.items() if k != "seconds"}
             for f in json.loads(one.stdout)["files"]]
    assert strip == [{k: v for k, v in f.items() if k != "seconds"}
                     for f in json.loads(two.stdout)["files"]]


@pytest.mark.slow
def test_a_crash_and_a_hang_are_one_failed_row_each(zoo: dict[str, Path],
                                                    tmp_path: Path) -> None:
    extension = hazard_extension(tmp_path)
    crash, hang = hazard_ir(tmp_path / "h", "crash"), hazard_ir(tmp_path / "h", "hang")
    report = tmp_path / "report.json"
    proc = irtool("validate", zoo["good"], crash, hang, zoo["nested"], "--extension",
                  extension, "--jobs", "2", "--model-timeout", "20", "--report", report)
    assert proc.returncode == 1, proc.stderr
    rows = {Path(f["file"]).name: f for f in json.loads(report.read_text())["files"]}
    assert list(rows) == ["good.xml", "hazard_crash.xml", "hazard_hang.xml", "nested.xml"]
    assert rows["good.xml"]["valid"] and rows["nested.xml"]["valid"]
    assert rows["hazard_crash.xml"]["status"] == "crash"
    [why] = rows["hazard_crash.xml"]["diagnostics"]
    assert why["code"] == "MODEL_CRASHED" and "SIGSEGV" in why["message"]
    assert rows["hazard_hang.xml"]["status"] == "timeout"
    assert [d["code"] for d in rows["hazard_hang.xml"]["diagnostics"]] == ["MODEL_TIMEOUT"]
    assert "hazard_crash.xml: error: MODEL_CRASHED: " in proc.stdout  # echoed as it came


def test_resume_skips_what_the_report_holds(zoo: dict[str, Path], tmp_path: Path) -> None:
    root = zoo["good"].parent
    report = tmp_path / "report.sarif"
    first = irtool("validate", zoo["broken"], zoo["good"], "--report", report)
    assert first.returncode == 1
    # Were good.xml validated again, its edit would show: it is not, its row is kept.
    zoo["good"].write_text(zoo["good"].read_text().replace('axis="0" external_port_id="0"',
                                                           'axis="7" external_port_id="0"'))
    proc = irtool("validate", root, "--resume", report, "-v")
    assert proc.returncode == 1
    assert "resuming" in proc.stderr and "2 model(s) done, 2 to do" in proc.stderr
    doc = json.loads(report.read_text())
    files = [a["properties"]["irtool"]["file"] for a in doc["runs"][0]["artifacts"]]
    assert sorted(Path(f).name for f in files) == ["broken.xml", "good.xml", "nested.xml",
                                                   "warned.xml"]
    assert not any(Path(r["properties"]["irtool"]["file"]).name == "good.xml"
                   for r in doc["runs"][0]["results"])
    assert irtool("validate", root, "--resume", tmp_path / "r.txt").returncode == 2


def test_only_ir_skips_other_xml_named_as_a_hook_passes_them(zoo: dict[str, Path]) -> None:
    pom = zoo["good"].parent / "pom.xml"
    assert irtool("validate", pom).returncode == 1  # named: validated, and it is no IR
    proc = irtool("validate", "--only-ir", pom, zoo["good"])
    assert proc.returncode == 0 and summary(proc.stderr)[0] == 1
    assert irtool("validate", "--only-ir", pom).returncode == 0
