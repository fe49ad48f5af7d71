"""``irtool.diff``: what counts as a difference in meaning, and what does not.

Nothing between an IR and its load+save round trip (irtool's and OpenVINO's IRs, nested
bodies included); nothing for what does not change meaning (ids renumbered with their
references, layers, edges, ports' attributes and rt_info entries in another order, other
formatting, the .bin laid out otherwise); and a change made with OpenVINO's own API is
reported on the layer and line where OpenVINO wrote it. The fuzzer's mutations, one by
one, are in ``test_diff_mutations.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import openvino as ov
import pytest
from fixtures.ir_producers.producer_irs import load_manifest
from support.fuzz_ir import irtool_seeds

import irtool
from irtool.tools.diff import diff_files
from irtool.tools.diff_dirs import compare_with_references

PRODUCER_IRS = load_manifest()


def _round_trip(xml: Path, folder: Path) -> Path:
    return irtool.save(irtool.load(xml, strict=False), folder / f"copy_{xml.name}")


@pytest.mark.parametrize("ir", PRODUCER_IRS, ids=[ir.name for ir in PRODUCER_IRS])
def test_nothing_between_an_openvino_ir_and_irtools_round_trip(ir, tmp_path: Path) -> None:
    copy = _round_trip(ir.xml, tmp_path)
    assert [d.format() for d in diff_files(ir.xml, copy, rt_info=True)] == []
    assert [d.format() for d in diff_files(copy, ir.xml, rt_info=True)] == []


def test_nothing_between_control_flow_irs_and_their_round_trips(
        ov_control_flow_irs: dict[str, Path], tmp_path: Path) -> None:
    """OpenVINO's Loop, TensorIterator and If IRs, and irtool's own (nested bodies)."""
    written = []
    for name, xml, weights in irtool_seeds():
        path = tmp_path / f"{name}.xml"
        path.write_bytes(xml)
        path.with_suffix(".bin").write_bytes(weights)
        written.append(path)
    for xml in [*ov_control_flow_irs.values(), *written]:
        copy = _round_trip(xml, tmp_path)
        assert [d.format() for d in diff_files(xml, copy, rt_info=True)] == [], xml


# -- a small IR written by hand, then rewritten without changing what it means ------------

BASE = """<?xml version="1.0"?>
<net name="m" version="11">
\t<layers>
\t\t<layer id="0" name="x" type="Parameter" version="opset1">
\t\t\t<data shape="2" element_type="f32" />
\t\t\t<output><port id="0" precision="FP32" names="x"><dim>2</dim></port></output>
\t\t</layer>
\t\t<layer id="1" name="w" type="Const" version="opset1">
\t\t\t<data element_type="f32" shape="2" offset="0" size="8" />
\t\t\t<output><port id="0" precision="FP32"><dim>2</dim></port></output>
\t\t</layer>
\t\t<layer id="2" name="b" type="Const" version="opset1">
\t\t\t<data element_type="f32" shape="2" offset="8" size="8" />
\t\t\t<output><port id="0" precision="FP32"><dim>2</dim></port></output>
\t\t</layer>
\t\t<layer id="3" name="mul" type="Multiply" version="opset1">
\t\t\t<data auto_broadcast="numpy" />
\t\t\t<rt_info><attribute name="a" value="1" /><attribute name="b" value="2" /></rt_info>
\t\t\t<input><port id="0" precision="FP32"><dim>2</dim></port>
\t\t\t<port id="1" precision="FP32"><dim>2</dim></port></input>
\t\t\t<output><port id="2" precision="FP32" names="m1,m2"><dim>2</dim></port></output>
\t\t</layer>
\t\t<layer id="4" name="add" type="Add" version="opset1">
\t\t\t<data auto_broadcast="numpy" />
\t\t\t<input><port id="0" precision="FP32"><dim>2</dim></port>
\t\t\t<port id="1" precision="FP32"><dim>2</dim></port></input>
\t\t\t<output><port id="2" precision="FP32" names="y"><dim>2</dim></port></output>
\t\t</layer>
\t\t<layer id="5" name="y" type="Result" version="opset1">
\t\t\t<input><port id="0" precision="FP32"><dim>2</dim></port></input>
\t\t</layer>
\t</layers>
\t<edges>
\t\t<edge from-layer="0" from-port="0" to-layer="3" to-port="0" />
\t\t<edge from-layer="1" from-port="0" to-layer="3" to-port="1" />
\t\t<edge from-layer="3" from-port="2" to-layer="4" to-port="0" />
\t\t<edge from-layer="2" from-port="0" to-layer="4" to-port="1" />
\t\t<edge from-layer="4" from-port="2" to-layer="5" to-port="0" />
\t</edges>
</net>
"""
W = np.array([2, 3], np.float32).tobytes()
B = np.array([5, 7], np.float32).tobytes()


def _write(folder: Path, name: str, xml: str, weights: bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.xml"
    path.write_text(xml)
    path.with_suffix(".bin").write_bytes(weights)
    return path


def _line(xml: str, text: str) -> int:
    """The line of ``xml`` that holds ``text`` (expected lines come from the text)."""
    hits = [i + 1 for i, ln in enumerate(xml.splitlines()) if text in ln]
    assert len(hits) == 1, (text, hits)
    return hits[0]


def _rewritten() -> tuple[str, bytes]:
    """BASE with ids renumbered (references follow), layers and edges in another order,
    Const bytes laid out the other way round, other whitespace and quoting, attributes,
    tensor names and rt_info entries in another order."""
    renumber = {"0": "10", "1": "11", "2": "12", "3": "13", "4": "14", "5": "15"}
    text = re.sub(r'(id|from-layer|to-layer)="(\d)"',
                  lambda m: f'{m.group(1)}="{renumber[m.group(2)]}"'
                  if m.group(1) != "id" or "layer" in m.string[m.start() - 8:m.start()]
                  else m.group(0), BASE)
    text = text.replace('offset="0" size="8"', 'offset="X"').replace(
        'offset="8" size="8"', 'offset="0" size="8"').replace('offset="X"', 'size="8" offset="8"')
    layers = re.findall(r"\t\t<layer .*?</layer>\n", text, re.S)
    edges = re.findall(r"\t\t<edge .*?/>\n", text)
    text = text.replace("".join(layers), "".join(reversed(layers)))
    text = text.replace("".join(edges), "".join(reversed(edges)))
    text = text.replace('names="m1,m2"', 'names="m2,m1"').replace(
        '<attribute name="a" value="1" /><attribute name="b" value="2" />',
        '<attribute value="2" name="b"/><attribute name="a" value="1"/>')
    text = text.replace("\t", "    ").replace('"', "'").replace("<?xml version='1.0'?>\n", "")
    return text, B + W


def test_what_does_not_change_meaning_is_no_difference(tmp_path: Path) -> None:
    a = _write(tmp_path, "a", BASE, W + B)
    text, weights = _rewritten()
    b = _write(tmp_path, "b", text, weights)
    assert "id='13'" in text and text.index("name='y'") < text.index("name='x'")  # rewritten
    assert [d.format() for d in diff_files(a, b, rt_info=True)] == []
    assert diff_files(a, b, layout=True)[0].kind == "layout"  # not the same document


def test_renamed_layers_are_matched_by_structure(tmp_path: Path) -> None:
    a = _write(tmp_path, "a", BASE, W + B)
    text = BASE.replace('name="mul"', 'name="mul_1"').replace('name="add"', 'name="add_2"')
    b = _write(tmp_path, "b", text, W + B)
    found = diff_files(a, b)
    assert [(d.what, d.before, d.after, d.a.line, d.b.line) for d in found] == [
        ("name", "mul", "mul_1", _line(BASE, 'name="mul"'), _line(text, 'name="mul_1"')),
        ("name", "add", "add_2", _line(BASE, 'name="add"'), _line(text, 'name="add_2"'))]
    # without any names at all: matched by position and structure, nothing else differs
    anonymous = re.sub(r' name="[^"]*"', "", BASE)
    c = _write(tmp_path, "c", anonymous, W + B)
    assert {d.what for d in diff_files(a, c)} == {"name", "net.name"}
    assert diff_files(_write(tmp_path, "d", anonymous, W + B), c) == []


def test_a_removed_layer_and_its_rewiring(tmp_path: Path) -> None:
    a = _write(tmp_path, "a", BASE, W + B)
    layer = re.search(r"\t\t<layer id=\"3\" name=\"mul\".*?</layer>\n", BASE, re.S).group(0)
    text = BASE.replace(layer, "").replace(
        '<edge from-layer="0" from-port="0" to-layer="3" to-port="0" />\n', "").replace(
        '<edge from-layer="1" from-port="0" to-layer="3" to-port="1" />\n', "").replace(
        'from-layer="3" from-port="2" to-layer="4"', 'from-layer="0" from-port="0" to-layer="4"')
    b = _write(tmp_path, "b", text, W + B)
    found = {(d.kind, d.message.split(":")[0]) for d in diff_files(a, b)}
    # the Multiply is gone (its edges with it: one line) and the Add's input 0 now comes
    # from x; w is now unused but unchanged
    assert found == {("layer", "layer removed"), ("edge", "edge added")}
    rewired = next(d for d in diff_files(a, b) if d.kind == "edge")
    assert 'Parameter "x" port 0 -> Add "add" port 0' in rewired.message
    assert rewired.b.line == _line(text, 'from-layer="0" from-port="0" to-layer="4"')


def test_weights_compared_by_their_bytes(tmp_path: Path) -> None:
    a = _write(tmp_path, "a", BASE, W + B)
    b = _write(tmp_path, "b", BASE, W + np.array([5, 8], np.float32).tobytes())
    [found] = diff_files(a, b)
    assert (found.kind, found.layer, found.a.line) == (
        "weights", 'Const "b"', _line(BASE, 'offset="8"'))


def test_rt_info_counts_only_when_asked(tmp_path: Path) -> None:
    a = _write(tmp_path, "a", BASE, W + B)
    text = BASE.replace('<attribute name="b" value="2" />', '<attribute name="b" value="3" />')
    b = _write(tmp_path, "b", text, W + B)
    assert diff_files(a, b) == []
    [found] = diff_files(a, b, rt_info=True)
    assert found.kind == "rt_info" and 'value="2"' in found.message and 'value="3"' in found.message


def test_a_change_made_with_openvino_is_found_where_openvino_wrote_it(tmp_path: Path) -> None:
    """Two models built with OpenVINO's API (an If with two bodies beside a MaxPool), one
    attribute apart, saved by OpenVINO: the attribute is reported on its layer at the line
    OpenVINO wrote it on, and otherwise only the shapes OpenVINO inferred from it."""
    from openvino import opset13 as ops

    def model(pads: list[int]) -> ov.Model:
        x = ops.parameter([1, 1, 4, 4], np.float32, name="x")
        pool = ops.max_pool(x, [1, 1], [1, 1], [0, 0], pads, [2, 2], name="pool")
        bodies = []
        for tag, op in (("then", ops.relu), ("else", ops.abs)):
            px = ops.parameter([1, 1, 4, 4], np.float32, name=f"{tag}_x")
            bodies.append((ov.Model([ops.result(op(px, name=tag), name=f"{tag}_out")], [px]),
                           px))
        branch = ops.if_op(ops.constant(np.array(True), name="c"))
        branch.set_friendly_name("branch")
        branch.set_then_body(bodies[0][0])
        branch.set_else_body(bodies[1][0])
        branch.set_input(x.output(0), bodies[0][1], bodies[1][1])
        out = branch.set_output(bodies[0][0].get_results()[0], bodies[1][0].get_results()[0])
        return ov.Model([ops.result(pool.output(0), name="pooled"),
                         ops.result(out, name="branched")], [x], "m")

    a, b = tmp_path / "a.xml", tmp_path / "b.xml"
    ov.save_model(model([0, 0]), str(a))
    ov.save_model(model([1, 1]), str(b))
    found = diff_files(a, b)
    [pads] = [d for d in found if d.what == "data.pads_end"]
    assert pads.layer == 'MaxPool "pool"'
    assert pads.a.line == _line(a.read_text(), 'pads_end="0, 0"')
    assert pads.b.line == _line(b.read_text(), 'pads_end="1, 1"')
    assert {d.what.split(" ", 2)[-1] for d in found if d is not pads} == {"shape"}


def test_reference_folder_pairs_files_by_name(tmp_path: Path) -> None:
    ref, out = tmp_path / "ref", tmp_path / "out"
    _write(ref, "same", BASE, W + B)
    _write(ref / "sub", "changed", BASE, W + B)
    _write(ref, "gone", BASE, W + B)
    _write(out, "same", BASE, W + B)
    _write(out / "sub", "changed", BASE.replace('name="m"', 'name="n"'), W + B)
    _write(out, "new", BASE, W + B)
    results = {r.name: r for r in compare_with_references([out], ref)}
    assert {n: r.status for n, r in results.items()} == {
        "same.xml": "equal", "sub/changed.xml": "different", "new.xml": "extra",
        "gone.xml": "missing"}
    assert [d.what for d in results["sub/changed.xml"].differences] == ["net.name"]
    # files given one by one: no folder, so no reference counts as missing
    files = compare_with_references([out / "same.xml", out / "new.xml"], ref)
    assert [(r.name, r.status) for r in files] == [("same.xml", "equal"), ("new.xml", "extra")]
    with pytest.raises(FileNotFoundError):
        compare_with_references([out], tmp_path / "nowhere")
