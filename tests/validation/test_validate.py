"""``irtool.validate`` / ``irtool validate``: no false alarms on IR that OpenVINO wrote,
the API and CLI contracts, and the documented rule table.

Ground truth for "sound" is OpenVINO itself: every IR here was written by
``ov.save_model`` (from the ONNX control-flow node cases, from OpenVINO's own
Python op builders, or the whole ONNX node corpus of ``irtool/tools/corpus.py``)
and compiled by OpenVINO's CPU plugin, so the validator must report no error.
The rule-by-rule tests on mutated IR are in ``test_validate_rules.py``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest
from lxml import etree
from support import CORPUS_CASES, REPO
from support.ov_irs import ONNX_CONTROL_FLOW

import irtool
from irtool import Diagnostic
from irtool.ir import read_model
from irtool.validation import RULES

# `irtool.validate` is the function; the module of the same name is reached this way.


def run_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """``python -m irtool ARGS`` in a child process, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "irtool", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def errors(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diagnostics if d.severity == "error"]


# ---------------------------------------------------------------------------
# IR written by OpenVINO


def _axes(*values: int) -> ov.Node:
    return ops.constant(np.array(values, dtype=np.int64))


def _ti(reverse: bool) -> ov.Model:
    """A TensorIterator over axis 0 of X[4,3,2] (optionally backwards) with a carried sum."""
    x = ops.parameter([4, 3, 2], np.float32, name="X")
    h0 = ops.parameter([3, 2], np.float32, name="H0")
    xi = ops.parameter([1, 3, 2], np.float32)
    hi = ops.parameter([3, 2], np.float32)
    h = ops.add(ops.squeeze(xi, _axes(0)), hi)
    r_h, r_y = ops.result(h), ops.result(ops.unsqueeze(h, _axes(0)))
    ti = ops.tensor_iterator()
    ti.set_body(ov.Model([r_h, r_y], [xi, hi]))
    if reverse:
        ti.set_sliced_input(xi, x.output(0), -1, -1, 1, 0, 0)
    else:
        ti.set_sliced_input(xi, x.output(0), 0, 1, 1, -1, 0)
    ti.set_merged_input(hi, h0.output(0), r_h.output(0))
    return ov.Model([ti.get_iter_value(r_h.output(0), -1),
                     ti.get_concatenated_slices(r_y.output(0), 0, 1, 1, -1, 0)], [x, h0])


def _loop_with_if() -> ov.Model:
    """A Loop slicing X[5,2], carrying an accumulator, counting iterations, with an If
    (two inputs in then, one in else) nested in its body."""
    x = ops.parameter([5, 2], np.float32, name="X")
    a = ops.parameter([2], np.float32, name="A")
    it = ops.parameter([], np.int64)
    xi = ops.parameter([1, 2], np.float32)
    ai = ops.parameter([2], np.float32)
    row = ops.squeeze(xi, _axes(0))
    # If (iteration is even): row + acc, else: acc * acc
    even = ops.equal(ops.mod(it, ops.constant(np.array(2, np.int64))),
                     ops.constant(np.array(0, np.int64)))
    t_row, t_acc = ops.parameter([2], np.float32), ops.parameter([2], np.float32)
    then_body = ov.Model([ops.result(ops.add(t_row, t_acc))], [t_row, t_acc])
    e_acc = ops.parameter([2], np.float32)
    else_body = ov.Model([ops.result(ops.multiply(e_acc, e_acc))], [e_acc])
    # Pass the Output: opset13.if_op(<non-Parameter Node>) silently drops the condition
    # (OpenVINO still reads the resulting IR; irtool validate reports IF_CONDITION).
    branch = ops.if_op(even.output(0))
    branch.set_then_body(then_body)
    branch.set_else_body(else_body)
    branch.set_input(row.output(0), t_row, None)
    branch.set_input(ai.output(0), t_acc, e_acc)
    acc = branch.set_output(then_body.get_results()[0], else_body.get_results()[0])
    cond = ops.less(it, ops.constant(np.array(10, np.int64)))
    r_c, r_a = ops.result(cond), ops.result(acc)
    r_s = ops.result(ops.unsqueeze(acc, _axes(0)))
    loop = ops.loop(ops.constant(np.array(5, np.int64)), ops.constant(np.array(True)))
    loop.set_function(ov.Model([r_c, r_a, r_s], [it, xi, ai]))
    loop.set_special_body_ports([0, 0])
    loop.set_sliced_input(xi, x.output(0), 0, 1, 1, -1, 0)
    loop.set_merged_input(ai, a.output(0), r_a.output(0))
    return ov.Model([loop.get_iter_value(r_a.output(0), -1),
                     loop.get_concatenated_slices(r_s.output(0), 0, 1, 1, -1, 0)], [x, a])


def _ti_in_loop() -> ov.Model:
    """A Loop (one trip) whose body is ``_ti(False)``'s model plus a true condition: X
    passed in whole, the sum carried. (OpenVINO refuses a TensorIterator in a
    TensorIterator.)"""
    inner = _ti(False)
    cond = ops.result(ops.constant(np.array(True)))
    body = ov.Model([*inner.get_results(), cond], list(inner.get_parameters()))
    x = ops.parameter([4, 3, 2], np.float32, name="X")
    h0 = ops.parameter([3, 2], np.float32, name="H0")
    loop = ops.loop(ops.constant(np.array(1, np.int64)), ops.constant(np.array(True)))
    loop.set_function(body)
    loop.set_special_body_ports([-1, 2])
    x_in, h_in = body.get_parameters()
    loop.set_invariant_input(x_in, x.output(0))
    loop.set_merged_input(h_in, h0.output(0), body.get_results()[0].output(0))
    return ov.Model([loop.get_iter_value(body.get_results()[0].output(0), -1)], [x, h0])


def _dynamic_shapes() -> ov.Model:
    """Dynamic rank, interval and empty dims: written without <dim> / as -1 by OpenVINO."""
    x = ops.parameter(ov.PartialShape.dynamic(), np.float32, name="x")
    y = ops.parameter(ov.PartialShape([ov.Dimension(1, 10), -1, 3]), np.float32, name="y")
    empty = ops.constant(np.zeros((0, 3), np.float32))
    return ov.Model([ops.relu(x), ops.concat([y, ops.unsqueeze(empty, _axes(0))], 1)], [x, y])


OV_BUILT: dict[str, Callable[[], ov.Model]] = {
    "ti_forward": lambda: _ti(False),
    "ti_reverse": lambda: _ti(True),
    "loop_with_nested_if": _loop_with_if,
    "ti_in_loop": _ti_in_loop,
    "dynamic_shapes": _dynamic_shapes,
}


@pytest.fixture(scope="session")
def ov_built_irs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """IR of models built with OpenVINO's op API, saved by OpenVINO, by name."""
    root = tmp_path_factory.mktemp("ov-built")
    out = {}
    for name, build in OV_BUILT.items():
        xml = root / f"{name}.xml"
        ov.save_model(build(), str(xml), compress_to_fp16=False)
        out[name] = xml
    return out


# ---------------------------------------------------------------------------
# No false alarms


@pytest.mark.parametrize("name", ONNX_CONTROL_FLOW)
def test_openvino_written_control_flow_ir_is_clean(name: str,
                                                   ov_control_flow_irs: dict[str, Path]) -> None:
    xml = ov_control_flow_irs[name]
    ov.Core().compile_model(str(xml), "CPU")  # OpenVINO itself accepts it
    found = irtool.validate(xml)
    assert errors(found) == [], "\n".join(d.format() for d in found)
    # The in-memory model (semantic rules only) is clean too.
    assert errors(irtool.validate(irtool.load(xml))) == []


@pytest.mark.parametrize("name", sorted(OV_BUILT))
def test_openvino_built_ir_is_clean(name: str, ov_built_irs: dict[str, Path]) -> None:
    xml = ov_built_irs[name]
    ov.Core().read_model(str(xml))  # OpenVINO reads it back (the CPU plugin refuses dynamic rank)
    found = irtool.validate(xml)
    assert found == [], "\n".join(d.format() for d in found)


def test_nested_if_in_loop_is_walked(ov_built_irs: dict[str, Path]) -> None:
    """The rules reach the If inside the Loop body: breaking it there is found there."""
    xml = ov_built_irs["loop_with_nested_if"]
    text = xml.read_text()
    # The then body's first Parameter loses its then_port_map input.
    broken = re.sub(r'(<then_port_map>\s*)<input external_port_id="\d+" internal_layer_id="0" />',
                    r"\1", text, count=1)
    assert broken != text
    bad = xml.with_name("nested_broken.xml")
    bad.write_text(broken)
    bad.with_suffix(".bin").write_bytes(xml.with_suffix(".bin").read_bytes())
    model = read_model(xml)
    loop = model.graph.layers_of_type("Loop")[0]
    branch = loop.bodies["body"].layers_of_type("If")[0]
    found = errors(irtool.validate(bad))
    hits = [d for d in found if d.code == "PARAMETER_UNMAPPED"]
    assert len(hits) == 1, found
    assert hits[0].scope == f"{loop.id}/body/{branch.id}/then_body"
    assert hits[0].layer_id == 0


def _edited(root: etree._Element, xml: Path, folder: Path) -> Path:
    """``root`` (an edited tree of the IR ``xml``) written to ``folder/model.xml``, with a
    copy of ``xml``'s .bin beside it."""
    bad = folder / "model.xml"
    etree.ElementTree(root).write(str(bad), xml_declaration=True, encoding="utf-8")
    bad.with_suffix(".bin").write_bytes(xml.with_suffix(".bin").read_bytes())
    return bad


def test_a_port_map_rule_on_the_nested_if_names_its_scope(ov_built_irs: dict[str, Path],
                                                          tmp_path: Path) -> None:
    """A rule on the If's own port map (not on a layer of its bodies) reports the If in the
    Loop's body scope, as the rules on the body's layers do."""
    xml = ov_built_irs["loop_with_nested_if"]
    root = etree.parse(str(xml)).getroot()
    loop = root.xpath("/net/layers/layer[@type='Loop']")[0]
    branch = loop.xpath("body/layers/layer[@type='If']")[0]
    entry = branch.xpath("then_port_map/output")[0]
    entry.getparent().remove(entry)
    bad = _edited(root, xml, tmp_path)
    hits = [d for d in errors(irtool.validate(bad)) if d.code == "OUTPUT_UNMAPPED"]
    assert [(d.layer_id, d.scope) for d in hits] == [
        (int(branch.get("id")), f"{loop.get('id')}/body")]


def test_a_rule_of_a_nested_tensor_iterator_names_its_body_scope(
        ov_built_irs: dict[str, Path], tmp_path: Path) -> None:
    """The inner TensorIterator's carried Parameter loses its port_map input and back edge:
    PARAMETER_UNMAPPED on it, in the TensorIterator's body scope inside the Loop's."""
    xml = ov_built_irs["ti_in_loop"]
    root = etree.parse(str(xml)).getroot()
    outer = root.xpath("/net/layers/layer[@type='Loop']")[0]
    inner = outer.xpath("body/layers/layer[@type='TensorIterator']")[0]
    edge = inner.xpath("back_edges/edge")[0]
    carried = edge.get("to-layer")
    for el in (edge, *inner.xpath(f"port_map/input[@internal_layer_id='{carried}']")):
        el.getparent().remove(el)
    bad = _edited(root, xml, tmp_path)
    hits = [d for d in errors(irtool.validate(bad)) if d.code == "PARAMETER_UNMAPPED"]
    assert [(d.layer_id, d.scope) for d in hits] == [
        (int(carried), f"{outer.get('id')}/body/{inner.get('id')}/body")]


# A back edge or port-map entry of the TensorIterator inside the Loop's body broken: the
# reader names the TensorIterator, in the Loop's body scope, on the element's line. An entry
# it cannot read is left out (so its Parameter and input port are unmapped, and with the
# sliced input gone the concatenated output slices nothing), the entries after it are still
# read, also past an element IR does not have (which only the schema reports), and a back
# edge with an unreadable end is not compared further.
_UNMAPPED = ["PARAMETER_UNMAPPED", "INPUT_UNMAPPED"]
NESTED_TI_BREAKS = {
    "back-edge-from": ("back_edges/edge", {"from-layer": "x"}, ["BACK_EDGE_ATTR"]),
    "back-edge-to": ("back_edges/edge", {"to-layer": "y"}, ["BACK_EDGE_ATTR"]),
    "back-edge-to-missing": ("back_edges/edge", {"to-layer": None}, ["BACK_EDGE_ATTR"]),
    "entry-external": ("port_map/input[1]", {"external_port_id": "x"},
                       ["PORT_MAP_ATTR", "ITERATION_COUNT", *_UNMAPPED]),
    "entry-internal-missing": ("port_map/input[1]", {"internal_layer_id": None},
                               ["PORT_MAP_ATTR", "ITERATION_COUNT", *_UNMAPPED]),
    "entry-stride": ("port_map/input[1]", {"stride": "s"}, ["PORT_MAP_ATTR"]),
    "back-edge-after-another-element": ("back_edges/edge", "note", []),
    "entry-after-another-element": ("port_map/input[1]", "note", []),
}


@pytest.mark.parametrize("case", NESTED_TI_BREAKS)
def test_a_broken_entry_of_a_nested_tensor_iterator_is_read_around(
        case: str, ov_built_irs: dict[str, Path], tmp_path: Path) -> None:
    path, change, codes = NESTED_TI_BREAKS[case]
    xml = ov_built_irs["ti_in_loop"]
    root = etree.parse(str(xml)).getroot()
    outer = root.xpath("/net/layers/layer[@type='Loop']")[0]
    inner = outer.xpath("body/layers/layer[@type='TensorIterator']")[0]
    el = inner.xpath(path)[0]
    if isinstance(change, str):
        el.addprevious(etree.Element(change))
    else:
        for name, value in change.items():
            if value is None:
                del el.attrib[name]
            else:
                el.set(name, value)
    bad = _edited(root, xml, tmp_path)
    found = irtool.validate(bad)
    assert sorted(d.code for d in found) == sorted(["XSD", *codes]), found
    if codes:
        (hit,) = [d for d in found if d.code == codes[0]]
        assert (hit.layer_id, hit.layer_name, hit.scope, hit.line) == (
            int(inner.get("id")), inner.get("name"), f"{outer.get('id')}/body", el.sourceline)


def test_entries_after_a_broken_or_unknown_one_are_read(ov_built_irs: dict[str, Path],
                                                       tmp_path: Path) -> None:
    """Before the nested TensorIterator's back edge and first port-map entry: an element IR
    does not have and a copy with an unreadable id. The reader reports the copies, skips
    them and the unknown elements, and reads every good entry after them."""
    import copy

    xml = ov_built_irs["ti_in_loop"]
    root = etree.parse(str(xml)).getroot()
    outer = root.xpath("/net/layers/layer[@type='Loop']")[0]
    inner = outer.xpath("body/layers/layer[@type='TensorIterator']")[0]
    want_edges = [(int(e.get("from-layer")), int(e.get("to-layer")))
                  for e in inner.xpath("back_edges/edge")]
    want_entries = [(e.tag, int(e.get("external_port_id")), int(e.get("internal_layer_id")))
                    for e in inner.find("port_map")]
    for first, attr in ((inner.find("back_edges")[0], "from-layer"),
                        (inner.find("port_map")[0], "external_port_id")):
        broken = copy.deepcopy(first)
        broken.set(attr, "x")
        first.addprevious(etree.Element("note"))
        first.addprevious(broken)
    bad = _edited(root, xml, tmp_path)
    found: list[Diagnostic] = []
    model = read_model(bad, problems=found)
    assert [d.code for d in found] == ["PORT_MAP_ATTR", "BACK_EDGE_ATTR"]
    ti = model.graph.layer(int(outer.get("id"))).bodies["body"].layer(int(inner.get("id")))
    assert [(e.from_layer, e.to_layer) for e in ti.back_edges] == want_edges
    assert [(e.kind, e.external_port_id, e.internal_layer_id)
            for e in ti.port_maps["port_map"]] == want_entries


@pytest.mark.parametrize("break_", ["no-layers", "edge-port", "edges-to-nowhere",
                                    "port-precision", "port-dim", "input-port-dim"])
def test_a_problem_of_a_nested_body_names_its_scope(break_: str, ov_built_irs: dict[str, Path],
                                                    tmp_path: Path) -> None:
    """The TensorIterator's body inside the Loop's body without <layers>, with an edge whose
    port is not a number, or with its first and last edges to a layer that does not exist
    (each reported): in that body's scope, on the element's line."""
    xml = ov_built_irs["ti_in_loop"]
    root = etree.parse(str(xml)).getroot()
    outer = root.xpath("/net/layers/layer[@type='Loop']")[0]
    inner = outer.xpath("body/layers/layer[@type='TensorIterator']")[0]
    body = inner.find("body")
    scope = f"{outer.get('id')}/body/{inner.get('id')}/body"
    if break_ == "no-layers":
        body.remove(body.find("layers"))
        code, want = "XML_STRUCTURE", [("<body> has no <layers>", scope, body.sourceline)]
    elif break_ == "edge-port":
        el = body.find("edges")[0]
        el.set("from-port", "x")
        code, want = "EDGE_ATTR", [("<edge> from-port='x' is not an integer", scope,
                                    el.sourceline)]
    elif break_ in ("port-precision", "port-dim", "input-port-dim"):
        if break_ == "input-port-dim":
            el = body.find("layers/layer[@type='Result']/input/port")
        else:
            el = body.find("layers/layer[@type='Parameter']/output/port")
        if break_ == "port-precision":
            el.set("precision", "F99")
            code, message = "ELEMENT_TYPE", f"port {el.get('id')} has unknown precision 'F99'"
        else:
            port_id, el = el.get("id"), el.find("dim")
            el.text = "x"
            code, message = "BAD_DIM", f"port {port_id} has dim 'x', not an integer"
        want = [(message, scope, el.sourceline)]
    else:
        code, want = "EDGE_UNKNOWN_LAYER", []
        for el in (body.find("edges")[0], body.find("edges")[-1]):
            el.set("to-layer", "99")
            want.append((f"edge {el.get('from-layer')}:{el.get('from-port')} -> "
                         f"99:{el.get('to-port')} names layer 99, which does not exist",
                         scope, el.sourceline))
    bad = _edited(root, xml, tmp_path)
    hits = [d for d in irtool.validate(bad) if d.code == code]
    assert [(d.message, d.scope, d.line) for d in hits] == want


@pytest.mark.saves_invalid_ir
def test_attributes_irtool_does_not_model_survive_a_round_trip(
        ov_built_irs: dict[str, Path], tmp_path: Path) -> None:
    """An attribute of a back edge or of a port-map entry that irtool has no field for is
    written back where it was (the schema allows none there: the copy breaks it as the
    source did)."""
    xml = ov_built_irs["ti_in_loop"]
    root = etree.parse(str(xml)).getroot()
    inner = root.xpath("//layer[@type='TensorIterator']")[0]
    inner.xpath("back_edges/edge")[0].set("note", "kept")
    inner.xpath("port_map/input[1]")[0].set("note", "kept too")
    src = tmp_path / "model.xml"
    etree.ElementTree(root).write(str(src), xml_declaration=True, encoding="utf-8")
    src.with_suffix(".bin").write_bytes(xml.with_suffix(".bin").read_bytes())
    out = irtool.save(irtool.load(src, strict=False), tmp_path / "out" / "model.xml")
    written = etree.parse(str(out)).getroot().xpath("//layer[@type='TensorIterator']")[0]
    edge, entry = written.xpath("back_edges/edge")[0], written.xpath("port_map/input[1]")[0]
    assert dict(edge.attrib) == {"from-layer": "7", "to-layer": "1", "note": "kept"}
    assert entry.get("note") == "kept too" and entry.get("external_port_id") == "0"


@pytest.mark.slow
def test_whole_ov_corpus_is_clean() -> None:
    """Every IR of the OpenVINO-written ONNX node corpus validates with no error."""
    from irtool.tools import corpus as ov_corpus

    cases = ov_corpus.corpus_cases()
    assert len(cases) >= CORPUS_CASES, f"{len(cases)} corpus cases, not {CORPUS_CASES}"
    dirty = {}
    for case in cases:
        found = errors(irtool.validate(case.xml))
        if found:
            dirty[case.name] = [d.format() for d in found[:3]]
    assert dirty == {}, f"{len(dirty)} of {len(cases)} corpus IRs have errors: {dirty}"


# ---------------------------------------------------------------------------
# API


def test_validate_returns_diagnostics_and_stays_callable(ov_control_flow_irs: dict) -> None:
    xml = ov_control_flow_irs["test_loop11"]
    first = irtool.validate(xml)
    second = irtool.validate(str(xml))  # `irtool.validate` is still the function
    assert callable(irtool.validate) and first == second


def test_model_validation_has_no_file(ov_control_flow_irs: dict) -> None:
    model = irtool.load(ov_control_flow_irs["test_loop11"])
    loop = model.graph.layers_of_type("Loop")[0]
    loop.back_edges[0].from_layer = 2  # a Const of the body
    found = irtool.validate(model)
    hit = next(d for d in found if d.code == "BACK_EDGE_ENDPOINT")
    assert hit.file is None and hit.layer_id == loop.id and hit.line == loop.back_edges[0].line
    assert hit.format().startswith("<model>:")


def test_diagnostic_format_names_scope_layer_and_line() -> None:
    d = Diagnostic("CYCLE", "layers form a cycle", "m.xml", 12, 4, "add", "3/body")
    assert d.format() == 'm.xml:12: CYCLE layer 3/body/4 "add": layers form a cycle'


def test_rule_families_are_the_rule_modules() -> None:
    """Each code's family is the module of irtool.validation that emits it (``reading`` also
    passes on the lenient IR reader's codes), and every rule module has a family."""
    package = REPO / "irtool" / "validation"
    reader = (REPO / "irtool" / "ir" / "serde" / "xml_reader.py").read_text()
    families = {rule.family for rule in RULES.values()}
    for code, rule in RULES.items():
        module = package / f"{rule.family}.py"
        assert module.is_file(), f"{code}: family {rule.family!r} is no module"
        source = module.read_text() + (reader if rule.family == "reading" else "")
        assert f'"{code}"' in source, f"{code} is not checked in {module.name}"
    helpers = {"__init__", "checker", "codes", "report"}
    assert {p.stem for p in package.glob("*.py")} - helpers == families


# ---------------------------------------------------------------------------
# CLI


def test_cli_clean_files_exit_zero(ov_control_flow_irs: dict) -> None:
    files = [ov_control_flow_irs[n] for n in ("test_loop11", "test_scan9_sum", "test_if")]
    proc = run_cli("validate", *files)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 file(s) valid" in proc.stdout
    assert proc.stderr == ""


def test_cli_reports_file_line_and_exits_one(ov_control_flow_irs: dict, tmp_path: Path) -> None:
    src = ov_control_flow_irs["test_loop11"]
    bad = tmp_path / "bad.xml"
    bad.write_text(src.read_text().replace('purpose="execution_condition"', 'purpose="cond"'))
    (tmp_path / "bad.bin").write_bytes(src.with_suffix(".bin").read_bytes())
    loop = read_model(src).graph.layers_of_type("Loop")[0].id
    proc = run_cli("validate", bad, src)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    for code in ("PORT_MAP_PURPOSE", "LOOP_BODY_CONDITION"):
        assert any(re.match(rf"{re.escape(str(bad))}:[1-9]\d*: {code} layer {loop} ", ln)
                   for ln in lines), proc.stdout
    assert str(src) not in proc.stdout  # the clean file has nothing to say
    assert "Traceback" not in proc.stderr and "1 file" not in proc.stdout


def test_cli_json_has_a_summary_and_an_entry_per_file(ov_control_flow_irs: dict,
                                                      tmp_path: Path) -> None:
    src = ov_control_flow_irs["test_scan9_sum"]
    proc = run_cli("validate", "--json", src)
    assert proc.returncode == 0
    report = json.loads(proc.stdout)
    assert report["summary"] == {"files": 1, "valid": 1, "errors": 0, "warnings": 0}
    assert report["files"] == [{"file": str(src), "valid": True, "errors": 0, "warnings": 0,
                                "diagnostics": []}]
    bad = tmp_path / "m.xml"
    bad.write_text(src.read_text().replace('axis="0" external_port_id="0"',
                                           'axis="7" external_port_id="0"'))
    proc = run_cli("validate", "--json", src, bad)
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["summary"]["files"] == 2 and report["summary"]["valid"] == 1
    assert [f["file"] for f in report["files"]] == [str(src), str(bad)]
    assert report["files"][0]["valid"] and not report["files"][1]["valid"]
    items = report["files"][1]["diagnostics"]
    assert report["summary"]["errors"] == report["files"][1]["errors"] == sum(
        1 for i in items if i["severity"] == "error") > 0
    assert {"code", "message", "file", "line", "layer_id", "layer_name", "scope",
            "severity"} <= set(items[0])
    ti = read_model(src).graph.layers_of_type("TensorIterator")[0]
    assert {(i["code"], i["layer_id"], i["file"]) for i in items} >= {("SLICE_AXIS", ti.id,
                                                                         str(bad))}


def test_cli_warnings_alone_exit_zero(ov_control_flow_irs: dict, tmp_path: Path) -> None:
    src = ov_control_flow_irs["test_if"]
    odd = tmp_path / "odd.xml"
    odd.write_text(src.read_text().replace('type="If" version="opset8"',
                                           'type="If" version="opset3"'))
    (tmp_path / "odd.bin").write_bytes(src.with_suffix(".bin").read_bytes())
    proc = run_cli("validate", odd)
    assert proc.returncode == 0, proc.stdout
    branch = read_model(src).graph.layers_of_type("If")[0]
    assert re.search(rf"^{re.escape(str(odd))}:\d+: UNKNOWN_OP layer {branch.id} "
                     rf"\"{branch.name}\": .*\[warning\]$",
                     proc.stdout, re.MULTILINE), proc.stdout
    assert "1 file(s) valid (1 warning(s))" in proc.stdout
