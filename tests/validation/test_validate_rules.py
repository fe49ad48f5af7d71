"""Every validator rule bites: one mutation of real IR per code.

Each case takes an IR that OpenVINO wrote (``ov.save_model`` of the ONNX node
cases test_loop11 / test_scan9_sum / test_if, or of a model built with
OpenVINO's op API), breaks exactly one thing in the XML (or the .bin), and
expects that code on the layer the break is in, at the line of the element
that is wrong. The expected layer, scope and line are read from the mutated
XML with XPath, never from irtool. The CLI must print ``file:line: CODE`` and
exit 1 (0 for warnings). A few rules only an in-memory ``Model`` can break are
tested on the ``Model`` at the end.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import openvino as ov
import pytest
from lxml import etree
from support.ov_irs import ONNX_CONTROL_FLOW
from support.stateful import two_variables

import irtool
from irtool.cli import main as cli_main
from irtool.ir import ConstData, GraphBuilder, Model, TensorInfo, element_type
from irtool.ir.graph import Port
from irtool.validation import RULES

SOURCES = {"loop": "test_loop11", "ti": "test_scan9_sum", "if": "test_if"}
# "state": two variables built with OpenVINO's opset3/opset6 read_value and assign
# (support.stateful.two_variables), written for each case.
LOOP = "/net/layers/layer[@type='Loop']"
TI = "/net/layers/layer[@type='TensorIterator']"
IF = "/net/layers/layer[@type='If']"
LBODY = f"{LOOP}/body/layers/layer"
TBODY = f"{TI}/body/layers/layer"
SLICED = f"{TI}/port_map/input[@axis]"
CONCAT = f"{LOOP}/port_map/output[@axis]"
CARRIED = f"{LOOP}/port_map/input[@external_port_id='2']"  # y -> body y_in (back edge)
COND_ENTRY = f"{LOOP}/port_map/output[@purpose='execution_condition']"
ITER_ENTRY = f"{LOOP}/port_map/input[@purpose='current_iteration']"


def top(name: str) -> str:
    return f"/net/layers/layer[@name='{name}']"


def body(name: str) -> str:
    return f"{LBODY}[@name='{name}']"


# -- XML surgery -------------------------------------------------------------------


def one(root: etree._Element, xpath: str) -> etree._Element:
    hits = root.xpath(xpath)
    assert len(hits) == 1, f"{xpath} matches {len(hits)} elements"
    return hits[0]


def add(parent: etree._Element, xml: str) -> etree._Element:
    el = etree.fromstring(xml)
    parent.append(el)
    return el


def remove(root: etree._Element, xpath: str) -> None:
    el = one(root, xpath)
    el.getparent().remove(el)


def set_attr(xpath: str, **attrs: str) -> Callable[[Doc], None]:
    def mutate(doc: Doc) -> None:
        el = one(doc.root, xpath)
        for key, value in attrs.items():
            el.set(key.replace("__", "-"), value)
    return mutate


def drop(*xpaths: str) -> Callable[[Doc], None]:
    def mutate(doc: Doc) -> None:
        for xpath in xpaths:
            remove(doc.root, xpath)
    return mutate


def edge(frm: int | str, fp: int, to: int | str, tp: int) -> str:
    return f'<edge from-layer="{frm}" from-port="{fp}" to-layer="{to}" to-port="{tp}" />'


def lid(root: etree._Element, xpath: str) -> str:
    return one(root, xpath).get("id")


@dataclass
class Doc:
    """A copy of a source IR being mutated."""

    root: etree._Element
    xml: Path
    bin: Path
    text: Callable[[str], str] | None = None  # a text-level mutation instead of the tree
    delete: bool = False


@dataclass(frozen=True)
class Case:
    code: str
    source: str
    mutate: Callable[[Doc], None]
    layer: str | None  # XPath of the <layer> the diagnostic must name (None: no layer)
    line: str | None = None  # XPath of the element whose line must be reported
    name: str = ""
    says: str = ""  # words one of the diagnostics must contain (for rules with branches)

    @property
    def id(self) -> str:
        return f"{self.code}-{self.name}" if self.name else self.code


def expected_scope(el: etree._Element) -> str:
    """``"3/body"`` for a layer inside Loop 3's body: body tags and their owners, outermost
    first."""
    parts: list[str] = []
    child = el
    for anc in el.iterancestors():
        if anc.tag == "layer" and child.tag in ("body", "then_body", "else_body"):
            parts[:0] = [anc.get("id"), child.tag]
        child = anc
    return "/".join(parts)


# -- the mutations -------------------------------------------------------------------


def _xxe(text: str) -> str:
    return text.replace('<?xml version="1.0"?>', '<?xml version="1.0"?>\n<!DOCTYPE net '
                        '[<!ENTITY x SYSTEM "file:///etc/passwd">]>', 1)


def _param_to(name: str, et: str, precision: str, loop_port: int) -> Callable[[Doc], None]:
    """Top Parameter ``name`` and the Loop input it feeds become ``et``/``precision``."""
    def mutate(doc: Doc) -> None:
        param = one(doc.root, top(name))
        one(param, "data").set("element_type", et)
        one(param, "output/port").set("precision", precision)
        one(doc.root, f"{LOOP}/input/port[@id='{loop_port}']").set("precision", precision)
    return mutate


def _cond_of_two(doc: Doc) -> None:
    param = one(doc.root, top("cond"))
    one(param, "data").set("shape", "2")
    add(one(param, "output/port"), "<dim>2</dim>")
    add(one(doc.root, f"{LOOP}/input/port[@id='1']"), "<dim>2</dim>")


def _y_in_to_f16(doc: Doc) -> None:
    y_in = one(doc.root, body("y_in"))
    one(y_in, "data").set("element_type", "f16")
    one(y_in, "output/port").set("precision", "FP16")


def _y_in_rank_2(doc: Doc) -> None:
    y_in = one(doc.root, body("y_in"))
    one(y_in, "data").set("shape", "?,?")
    add(one(y_in, "output/port"), "<dim>-1</dim>")


def _scan_result(doc: Doc) -> str:
    return one(doc.root, CONCAT).get("internal_layer_id")


def _back_edge_from_scan_result(doc: Doc) -> None:
    one(doc.root, f"{LOOP}/back_edges/edge").set("from-layer", _scan_result(doc))


def _second_back_edge(doc: Doc) -> None:
    y_in = lid(doc.root, body("y_in"))
    add(one(doc.root, f"{LOOP}/back_edges"),
        f'<edge from-layer="{_scan_result(doc)}" to-layer="{y_in}" />')


def _truncate_bin(doc: Doc) -> None:
    doc.bin.write_bytes(doc.bin.read_bytes()[:10])


def _cycle(doc: Doc) -> None:
    # y_out (Add) takes its second input from scan_out (Identity), which y_out feeds.
    y_out, scan_out = lid(doc.root, body("y_out")), lid(doc.root, body("scan_out"))
    e = one(doc.root, f"{LOOP}/body/edges/edge[@to-layer='{y_out}'][@to-port='1']")
    e.set("from-layer", scan_out)
    e.set("from-port", one(doc.root, f"{body('scan_out')}/output/port").get("id"))


def _duplicate_producer(doc: Doc) -> None:
    y_in, y_out = lid(doc.root, body("y_in")), lid(doc.root, body("y_out"))
    add(one(doc.root, f"{LOOP}/body/edges"), edge(y_in, 0, y_out, 1))


def _parts_of_two(doc: Doc) -> None:
    """The TI slices x (3 rows) in parts of 2 and its body takes [2, 2]: 3 rows do not
    split into parts of 2 (the body side is consistent, so only SLICE_DIM applies)."""
    entry = one(doc.root, SLICED)
    entry.set("part_size", "2")
    param = one(doc.root, f"{TBODY}[@id='{entry.get('internal_layer_id')}']")
    one(param, "data").set("shape", "2,2")
    one(param, "output/port/dim[1]").text = "2"


def _longer_bin(doc: Doc) -> None:
    doc.bin.write_bytes(doc.bin.read_bytes() + b"\0" * 8)


def _foreign_bin(doc: Doc) -> None:
    """Saved by irtool (so the .xml records its weights), then one weight byte changed:
    the .bin of another model of the same shapes."""
    original = doc.xml.with_name("original.xml")
    etree.ElementTree(doc.root).write(str(original), xml_declaration=True, encoding="utf-8")
    doc.bin.rename(original.with_suffix(".bin"))
    saved = doc.xml.with_name("saved.xml")
    irtool.save(irtool.load(original), saved)
    doc.root[:] = list(etree.parse(str(saved)).getroot())  # the tree build() writes
    data = bytearray(saved.with_suffix(".bin").read_bytes())
    data[-1] ^= 0xFF
    doc.bin.write_bytes(bytes(data))


def _else_f16(doc: Doc) -> None:
    const = one(doc.root, f"{IF}/else_body/layers/layer[@type='Const']")
    one(const, "data").set("element_type", "f16")
    one(const, "data").set("size", "10")
    one(const, "output/port").set("precision", "FP16")
    one(doc.root, f"{IF}/else_body/layers/layer[@type='Result']/input/port").set("precision",
                                                                                 "FP16")


ASSIGN_PREV = top("assign_prev")
ASSIGN_ACC = "/net/layers/layer[@type='Assign'][data/@variable_id='acc']"


def _drop_assign_acc(doc: Doc) -> None:
    layer = lid(doc.root, ASSIGN_ACC)
    remove(doc.root, ASSIGN_ACC)
    remove(doc.root, f"/net/edges/edge[@to-layer='{layer}']")


def _acc_read_twice_as_f16(doc: Doc) -> None:
    """read_prev becomes a ReadValue-6 of ``acc`` declaring f16: one id, two types."""
    layer = one(doc.root, top("read_prev"))
    layer.set("version", "opset6")
    layer.find("data").attrib.update({"variable_id": "acc", "variable_type": "f16",
                                      "variable_shape": "2,3"})


# the body's Unsqueeze making the scan output's [1, ?] (OpenVINO numbers its names per process)
SCAN_UNSQUEEZE = f"{LBODY}[@type='Unsqueeze'][count(output/port/dim)=2]"
# name -> the case; what each engine does with it is in test_unclear_cases_by_both_engines
UNCLEAR: dict[str, Case] = {
    "ti-input-start-1": Case("ITERATION_COUNT", "ti", set_attr(SLICED, start="1"), TI,
                             f"{TI}/port_map/output[@axis]", name="input-start-1",
                             says="irtool reads start=1 as the spec does"),
    "ti-output-start-1": Case("ITERATION_COUNT", "ti",
                              set_attr(f"{TI}/port_map/output[@axis]", start="1"), TI,
                              f"{TI}/port_map/output[@axis]", name="output-start-1",
                              says="they hold 2 part(s)"),
    "ti-stride-1000000": Case("SLICE_DIM", "ti", set_attr(SLICED, stride="1000000"), TI,
                              SLICED, name="stride-beyond-the-range",
                              says="do not split into parts of 1 every 1000000"),
    # the whole-axis pairs read against the stride: the walk runs away from its end
    "ti-output-0-to-minus-1-backwards": Case(
        "ITERATION_COUNT", "ti", set_attr(f"{TI}/port_map/output[@axis]", stride="-1"), TI,
        f"{TI}/port_map/output[@axis]", name="output-0-to-minus-1-backwards",
        says="start=0 end=-1 of the declared [3,2]: stride=-1 runs away from end=-1"),
    "ti-output-minus-1-to-0-forward": Case(
        "ITERATION_COUNT", "ti", set_attr(f"{TI}/port_map/output[@axis]", start="-1", end="0"),
        TI, f"{TI}/port_map/output[@axis]", name="output-minus-1-to-0-forward",
        says="start=-1 end=0 of the declared [3,2]: stride=1 runs away from end=0"),
    "ti-concat-axis-minus-1": Case("PORT_MAP_SHAPE", "ti",
                                   set_attr(f"{TI}/port_map/output[@axis]", axis="-1"), TI,
                                   f"{TI}/port_map/output[@axis]", name="concat-axis-minus-1",
                                   says="along axis -1 keeps dim 0 at 1"),
    # the bytes at offset 20 of test_loop11's .bin are the body's axes Consts (0): now
    # 99999, as a corrupted file may hold
    "corrupted-axes": Case("AXIS_RANGE", "loop", lambda d: d.bin.write_bytes(
        d.bin.read_bytes()[:20] + np.int64(99999).tobytes() + d.bin.read_bytes()[28:]),
        SCAN_UNSQUEEZE, SCAN_UNSQUEEZE, name="corrupted-axes-Const",
        says="99999 is outside rank 2"),
    "auto-broadcast-huge": Case("ATTR_VALUE", "loop",
                                set_attr(f"{body('y_out')}/data",
                                         auto_broadcast="99999999999999999999"),
                                body("y_out"), body("y_out"), name="auto_broadcast-number",
                                says="auto_broadcast='99999999999999999999' is not one of"),
}


# -- each branch of the control-flow rules (what mutation testing found untested) ----------

TIOUT = f"{TI}/port_map/output[@axis]"  # z: the concatenated output, 3 parts of [1, 2]
Z_RESULT_PORT = f"{top('z/sink_port_0')}/input/port"  # the top Result of z
TI_NEXT = f"{TBODY}[@name='next']"  # the body Parameter the sliced input feeds, [1, 2]
IF_COND_PORT = f"{IF}/input/port[@id='0']"
LOOP_COND_RESULT = f"{LBODY}[@type='Result'][input/port/@precision='BOOL']"


def set_dims(xpath: str, *dims: int, shape: bool = False) -> Callable[[Doc], None]:
    """The ``<port>`` at ``xpath`` gets ``dims`` (and its layer's ``data/@shape`` too, for a
    Parameter, with ``shape``)."""
    def mutate(doc: Doc) -> None:
        port = one(doc.root, xpath)
        for dim in port.findall("dim"):
            port.remove(dim)
        for d in dims:
            add(port, f"<dim>{d}</dim>")
        if shape:
            text = ",".join("?" if d < 0 else str(d) for d in dims)
            one(port.getparent().getparent(), "data").set("shape", text)
    return mutate


def both(*mutations: Callable[[Doc], None]) -> Callable[[Doc], None]:
    def mutate(doc: Doc) -> None:
        for m in mutations:
            m(doc)
    return mutate


def _if_extra_parameter(doc: Doc) -> None:
    add(one(doc.root, f"{IF}/then_body/layers"),
        '<layer id="2" name="extra" type="Parameter" version="opset1">'
        '<data shape="" element_type="f32" /><output><port id="0" precision="FP32" />'
        "</output></layer>")


def _if_second_then_output_first(doc: Doc) -> None:
    """then_body gets a second Result, mapped (first in its port map) to a new If output 2
    that else_body does not produce; else_body's output 1 becomes f16."""
    add(one(doc.root, f"{IF}/then_body/layers"),
        '<layer id="2" name="then_extra" type="Result" version="opset1"><input>'
        '<port id="0" precision="FP32"><dim>5</dim></port></input></layer>')
    add(one(doc.root, f"{IF}/then_body/edges"), edge(0, 0, 2, 0))
    one(doc.root, f"{IF}/then_port_map").insert(
        0, etree.fromstring('<output external_port_id="2" internal_layer_id="2" />'))
    add(one(doc.root, f"{IF}/output"), '<port id="2" precision="FP32"><dim>5</dim></port>')
    _else_f16(doc)


def _ti_second_concat_output(doc: Doc) -> None:
    """A second concatenated output of the scan Result, declared [2, 2] (3 parts of [1, 2]
    make [3, 2]), after the right one."""
    add(one(doc.root, f"{TI}/output"),
        '<port id="4" precision="FP32"><dim>2</dim><dim>2</dim></port>')
    result = one(doc.root, TIOUT).get("internal_layer_id")
    add(one(doc.root, f"{TI}/port_map"),
        f'<output axis="0" external_port_id="4" internal_layer_id="{result}" start="0" '
        'end="-1" stride="1" part_size="1" />')


def _x_passed_whole(doc: Doc, rows: int) -> None:
    """x, one row [1, 2], goes to the body whole (its port map entry slices nothing); z is
    declared for ``rows`` rows."""
    entry = one(doc.root, SLICED)
    for name in ("axis", "start", "end", "stride", "part_size"):
        del entry.attrib[name]
    set_dims(f"{top('x')}/output/port", 1, 2, shape=True)(doc)
    set_dims(f"{TI}/input/port[@id='0']", 1, 2)(doc)
    set_dims(f"{TI}/output/port[@id='3']", rows, 2)(doc)
    set_dims(Z_RESULT_PORT, rows, 2)(doc)


def _x_empty(doc: Doc) -> None:
    """x of static size [0, 2], sliced row by row; z declared [0, 2]."""
    set_dims(f"{top('x')}/output/port", 0, 2, shape=True)(doc)
    set_dims(f"{TI}/input/port[@id='0']", 0, 2)(doc)
    set_dims(f"{TI}/output/port[@id='3']", 0, 2)(doc)
    set_dims(Z_RESULT_PORT, 0, 2)(doc)


def _next_listed_last(doc: Doc) -> None:
    """The sliced input's body Parameter moves to the end of the body's <layers>."""
    layer = one(doc.root, TI_NEXT)
    parent = layer.getparent()
    parent.remove(layer)
    parent.append(layer)


def _loop_cond_entry_twice(doc: Doc) -> None:
    cond = one(doc.root, COND_ENTRY)
    add(one(doc.root, f"{LOOP}/port_map"),
        f'<output external_port_id="-1" internal_layer_id="{cond.get("internal_layer_id")}" '
        'purpose="execution_condition" />')


def _loop_iter_entry_twice(doc: Doc) -> None:
    entry = one(doc.root, ITER_ENTRY)
    add(one(doc.root, f"{LOOP}/port_map"),
        f'<input external_port_id="-1" internal_layer_id="{entry.get("internal_layer_id")}" '
        'purpose="current_iteration" />')


def _iter_param(doc: Doc) -> etree._Element:
    return one(doc.root, f"{LBODY}[@id='{one(doc.root, ITER_ENTRY).get('internal_layer_id')}']")


def _iter_param_f32(doc: Doc) -> None:
    param = _iter_param(doc)
    one(param, "data").set("element_type", "f32")
    one(param, "output/port").set("precision", "FP32")


def _iter_param_of_two(doc: Doc) -> None:
    param = _iter_param(doc)
    one(param, "data").set("shape", "2")
    add(one(param, "output/port"), "<dim>2</dim>")


# Each is a valid IR with exactly one thing wrong (port maps and slicing as both engines
# read them: part_size elements every |stride| from start up to end, end exclusive and a
# negative value counted from one past the last element; ir.graph.sliced_range).
BRANCHES: list[Case] = [
    # TensorIterator: slicing and the iteration count
    Case("SLICE_PARAMS", "ti", set_attr(TIOUT, start="1", end="0", stride="0"), TI, TIOUT,
         name="output-stride-0",
         says="port_map output external_port_id=3 internal_layer_id=9: stride=0 never advances"),
    Case("PORT_MAP_SHAPE", "ti", set_dims(f"{TI_NEXT}/output/port", 2, shape=True), TI, SLICED,
         name="slice-rank", says="a slice of [3,2] has rank 2 but body Parameter 1 has [2]"),
    Case("PORT_MAP_SHAPE", "ti", set_dims(f"{TI_NEXT}/output/port", 2, 2, shape=True), TI,
         SLICED, name="slice-size",
         says="slices along axis 0 have size 1 but body Parameter 1 has [2,2]"),
    Case("SLICE_AXIS", "ti", set_attr(SLICED, axis="-3"), TI, SLICED, name="minus-3",
         says="axis=-3 is outside the rank 2 of the sliced input [3,2]"),
    Case("SLICE_DIM", "ti", set_attr(SLICED, start="3"), TI, SLICED, name="start-at-the-dim",
         says="start=3 end=-1 name no element of the sliced dimension of size 3"),
    Case("SLICE_DIM", "ti", set_attr(SLICED, start="2", end="0"), TI, SLICED,
         name="runs-away-forward", says="stride=1 runs away from end=0 (start=2, dimension 3)"),
    # (test_a_tensor_iterator_over_an_empty_dim_is_refused: OpenVINO refuses it)
    Case("SLICE_DIM", "ti", _x_empty, TI, SLICED, name="empty-dim",
         says="start=0 end=-1 name no element of the sliced dimension of size 0"),
    Case("SLICE_DIM", "ti", both(set_dims(f"{TI}/input/port[@id='0']", 1, 2),
                                 set_attr(SLICED, start="5")), TI, SLICED, name="dim-1",
         says="start=5 end=-1 fall outside the sliced dimension of size 1"),
    # one row, either direction (end is exclusive; a negative value counts from one past
    # the last row, as both engines read it)
    Case("ITERATION_COUNT", "ti", set_attr(SLICED, start="1", end="-2"), TI, TIOUT,
         name="one-row",
         says="its sliced input on port 0 cuts 1 part(s), which concatenate to 1 x 1 along "
              "axis 0, but the output port declares [3,2]; irtool reads start=1"),
    Case("ITERATION_COUNT", "ti", set_attr(SLICED, start="-2", end="1", stride="-1"), TI,
         TIOUT, name="one-row-backwards", says="cuts 1 part(s), which concatenate to 1 x 1"),
    # a range OpenVINO reads otherwise (the engines' records: test_openvino_reads_*)
    Case("SLICE_OPENVINO", "ti", set_attr(SLICED, start="1", end="-1"), TI, SLICED,
         name="start-1", says="start=1 end=-1 stride=1: OpenVINO's CPU plugin reads only "
                             "start=0 with a negative end"),
    # the whole dimension as one part
    Case("ITERATION_COUNT", "ti", both(set_attr(SLICED, part_size="3"),
                                       set_dims(f"{TI_NEXT}/output/port", 3, 2, shape=True)),
         TI, TIOUT, name="one-part-of-3", says="cuts 1 part(s), which concatenate to 1 x 1"),
    # rows 0 and 3 of 4
    Case("ITERATION_COUNT", "ti", both(set_dims(f"{TI}/input/port[@id='0']", 4, 2),
                                       set_attr(SLICED, stride="3")), TI, TIOUT,
         name="stride-3-of-4", says="cuts 2 part(s), which concatenate to 2 x 1"),
    Case("ITERATION_COUNT", "ti", set_attr(f"{TI}/port_map/input[@external_port_id='1']",
                                           axis="0", start="0", end="-1", stride="1",
                                           part_size="1"), TI,
         f"{TI}/port_map/input[@external_port_id='1']", name="two-sliced-inputs",
         says="port_map input external_port_id=1: cuts 2 part(s), but its sliced input on "
              "port 0 cuts 3 part(s)"),
    Case("ITERATION_COUNT", "ti", both(set_attr(SLICED, end="-2"),
                                       set_attr(TIOUT, start="-1", end="0", stride="-1")),
         TI, TIOUT, name="reversed-output",
         says="port_map output external_port_id=3: its sliced input on port 0 cuts 2 part(s), "
              "which concatenate to 2 x 1 along axis 0, but the output port declares [3,2]"),
    Case("ITERATION_COUNT", "ti", set_attr(TIOUT, start="7"), TI, TIOUT, name="output-start-7",
         says="port_map output external_port_id=3: its sliced input on port 0 cuts 3 part(s), "
              "but start=7 end=-1 of the declared [3,2]: start=7 end=-1 fall outside the "
              "sliced dimension of size 3"),
    Case("ITERATION_COUNT", "ti", set_dims(f"{TI}/output/port[@id='3']", 0, 2), TI, TIOUT,
         name="output-dim-0", says="concatenate to 3 x 1 along axis 0, but the output port "
                                   "declares [0,2]"),
    Case("ITERATION_COUNT", "ti", set_dims(f"{TBODY}[@id='9']/input/port", 0, 2), TI, TIOUT,
         name="body-dim-0", says="concatenate to 3 x 0 along axis 0"),
    Case("ITERATION_COUNT", "ti", _ti_second_concat_output, TI,
         f"{TI}/port_map/output[@external_port_id='4']", name="second-output",
         says="port_map output external_port_id=4: its sliced input on port 0 cuts 3 part(s), "
              "which concatenate to 3 x 1 along axis 0, but the output port declares [2,2]"),
    Case("ITERATION_COUNT", "ti", both(_ti_second_concat_output,
                                       set_dims(f"{TI}/output/port[@id='3']", -1, 2),
                                       set_dims(Z_RESULT_PORT, -1, 2)), TI,
         f"{TI}/port_map/output[@external_port_id='4']", name="second-output-after-a-dynamic",
         says="port_map output external_port_id=4: its sliced input on port 0 cuts 3 part(s), "
              "which concatenate to 3 x 1 along axis 0, but the output port declares [2,2]"),
    Case("ITERATION_COUNT", "ti", both(set_attr(TIOUT, stride="0"), _ti_second_concat_output),
         TI, f"{TI}/port_map/output[@external_port_id='4']", name="second-output-after-a-stride-0",
         says="port_map output external_port_id=4: its sliced input on port 0 cuts 3 part(s), "
              "which concatenate to 3 x 1 along axis 0, but the output port declares [2,2]"),
    # x passed whole: the body runs once (test_a_tensor_iterator_slicing_no_input_runs_once)
    Case("ITERATION_COUNT", "ti", lambda d: _x_passed_whole(d, 3), TI, TIOUT,
         name="no-sliced-input",
         says="port_map output external_port_id=3: it slices no input, so its body runs once: "
              "1 part, which concatenate to 1 x 1 along axis 0, but the output port declares "
              "[3,2]"),
    # the concatenated output's rank and dims
    Case("CONCAT_AXIS", "ti", both(set_attr(TIOUT, axis="1"),
                                   set_dims(f"{TI}/output/port[@id='3']", 6)), TI, TIOUT,
         name="rank-of-the-output", says="axis=1 is outside the rank 1 of the concatenated "
                                         "output [6]"),
    Case("CONCAT_AXIS", "ti", both(set_attr(TIOUT, axis="2"),
                                   set_dims(f"{TI}/output/port[@id='3']")), TI, TIOUT,
         name="rank-of-the-body", says="axis=2 is outside the rank 2 of the concatenated "
                                       "output [1,2]"),
    Case("PORT_MAP_SHAPE", "ti", set_dims(f"{TI}/output/port[@id='3']", 3, 2, 1), TI, TIOUT,
         name="concat-rank",
         says="port_map output external_port_id=3 internal_layer_id=9: concatenating [1,2] "
              "gives rank 2, but the output port is [3,2,1]"),
    Case("PORT_MAP_SHAPE", "ti", set_dims(f"{TI}/output/port[@id='3']", 3, 0), TI, TIOUT,
         name="concat-dim-0-outside",
         says="concatenating [1,2] along axis 0 keeps dim 1 at 2, but the output port "
              "declares [3,0]"),
    Case("PORT_MAP_SHAPE", "ti", set_dims(f"{TBODY}[@id='9']/input/port", 1, 0), TI, TIOUT,
         name="concat-dim-0-inside",
         says="concatenating [1,0] along axis 0 keeps dim 1 at 0, but the output port "
              "declares [3,2]"),
    # an output port without dims (a scalar or dynamic rank): nothing to count it against
    Case("PORT_MAP_TYPE", "ti", both(set_dims(f"{TI}/output/port[@id='3']"),
                                     set_attr(f"{TI}/input/port[@id='1']", precision="FP16")),
         TI, f"{TI}/port_map/input[@external_port_id='1']", name="output-without-dims"),
    # what feeds the body, and what the outer ports feed
    Case("PORT_MAP_SHAPE", "loop", set_dims(f"{body('y_in')}/output/port", 2, shape=True), LOOP,
         CARRIED, name="static-dim", says="dim 0 is 1 on the Loop port but 2 on body Parameter 1"),
    Case("INPUT_UNMAPPED", "loop", drop(f"{LOOP}/port_map"), LOOP, f"{LOOP}/input/port[@id='2']",
         name="no-port_map"),
    Case("INPUT_UNMAPPED", "ti", drop(SLICED), TI, f"{TI}/input/port[@id='0']",
         name="TensorIterator-port-0"),
    Case("INPUT_UNMAPPED", "ti", drop(f"{TI}/port_map/input[@external_port_id='1']"), TI,
         f"{TI}/input/port[@id='1']", name="TensorIterator-port-1"),
    Case("PARAMETER_UNMAPPED", "ti",
         drop(f"{TI}/port_map/input[@external_port_id='1']", f"{TI}/back_edges/edge"),
         f"{TBODY}[@name='sum_in']", f"{TBODY}[@name='sum_in']", name="TensorIterator",
         says="nothing feeds this body Parameter: no port_map input of TensorIterator 2 or "
              "back edge"),
    Case("PORT_COUNT", "loop", drop(f"{LBODY}[@id='21']/input"), f"{LBODY}[@id='21']",
         f"{LBODY}[@id='21']", name="body-Result-without-port"),
    # the port map's entries: their ports, purposes and Parameters
    Case("PORT_MAP_BAD_PORT", "loop", set_attr(f"{LOOP}/port_map/output[@external_port_id='3']",
                                               external_port_id="2"), LOOP,
         f"{LOOP}/port_map/output[@external_port_id='2']", name="output-on-an-input",
         says="port_map output external_port_id=2 internal_layer_id=20: port 2 is an input "
              "port of the Loop"),
    Case("PORT_MAP_BAD_PORT", "loop", set_attr(CARRIED, external_port_id="9"), LOOP,
         f"{LOOP}/port_map/input[@external_port_id='9']", name="no-such-port",
         says="port_map input external_port_id=9 internal_layer_id=1: the Loop has no port 9"),
    Case("PORT_MAP_BAD_PORT", "loop", set_attr(CARRIED, external_port_id="-1"), LOOP,
         f"{LOOP}/port_map/input[@external_port_id='-1'][not(@purpose)]", name="minus-1",
         says="port_map input external_port_id=-1 internal_layer_id=1: external_port_id -1 "
              "(not connected) needs a purpose"),
    Case("PORT_MAP_PURPOSE", "loop", set_attr(CARRIED, purpose="execution_condition"), LOOP,
         CARRIED, name="wrong-kind",
         says="purpose='execution_condition' belongs on an output entry"),
    Case("PORT_MAP_DUPLICATE", "loop",
         lambda d: add(one(d.root, f"{LOOP}/port_map"),
                       '<input external_port_id="0" internal_layer_id="1" />'), LOOP,
         f"{LOOP}/port_map/input[last()]", name="Parameter-fed-twice",
         says="body Parameter 1 is already fed by the entry on line"),
    Case("PARAMETER_UNMAPPED", "ti", drop(SLICED), TI_NEXT, TI_NEXT,
         name="after-a-fed-one"),
    Case("PARAMETER_UNMAPPED", "ti", both(drop(SLICED), _next_listed_last), TI_NEXT, TI_NEXT,
         name="listed-after-other-layers"),
    Case("PARAMETER_UNMAPPED", "ti", drop(SLICED, f"{TI}/port_map/input[@external_port_id='1']"),
         TI_NEXT, TI_NEXT, name="after-a-back-edge-target"),
    Case("BACK_EDGE_MISMATCH", "loop",
         both(set_attr(f"{LOOP}/back_edges/edge", from__layer="77"), _second_back_edge), LOOP,
         f"{LOOP}/back_edges/edge[2]", name="after-a-bad-edge",
         says="the Result has rank 2 [1,?] but the Parameter rank 1 [?]"),
    # edges: which end is wrong, and mismatches inside a body and of static dims
    Case("EDGE_UNKNOWN_PORT", "loop",
         lambda d: one(d.root, f"{LOOP}/body/edges/edge[@from-layer="
                       f"'{lid(d.root, body('slice_out'))}']").set("from-port", "0"),
         body("slice_out"), f"{LOOP}/body/edges/edge[@from-layer='13']",
         name="from-an-input-port", says="port 0 of the source is an input port"),
    Case("EDGE_UNKNOWN_PORT", "loop", set_attr("/net/edges/edge[@to-layer='4']", to__port="9"),
         top("res_y/sink_port_0"), "/net/edges/edge[@to-layer='4']", name="to-no-port",
         says="port 9 of the destination is not a port, not an input port"),
    Case("EDGE_TYPE_MISMATCH", "loop", set_attr(f"{body('y_out')}/output/port", precision="FP16"),
         body("scan_out"), f"{LOOP}/body/edges/edge[@from-layer='14'][@to-layer='15']",
         name="in-the-body", says="edge 14:2 -> 15:0 joins f16 to f32"),
    Case("EDGE_SHAPE_MISMATCH", "loop", both(set_dims(f"{body('y_out')}/output/port", 2),
                                             set_dims(f"{body('scan_out')}/input/port", 3)),
         body("scan_out"), f"{LOOP}/body/edges/edge[@from-layer='14'][@to-layer='15']",
         name="in-the-body", says="edge 14:2 -> 15:0 joins [2] to [3]"),
    Case("EDGE_SHAPE_MISMATCH", "loop", set_dims(f"{LOOP}/input/port[@id='2']", 2), LOOP,
         "/net/edges/edge[@to-layer='3'][@to-port='2']", name="static-dim",
         says="edge 2:0 -> 3:2 joins [1] to [2]"),
    # Loop: the inputs and special ports
    Case("LOOP_CONDITION", "loop",
         drop(f"{LOOP}/input/port[@id='1']", f"{LOOP}/input/port[@id='2']", CARRIED,
              "/net/edges/edge[@to-layer='3'][@to-port='1']",
              "/net/edges/edge[@to-layer='3'][@to-port='2']"), LOOP, None, name="no-input-1",
         says="the Loop has no input 1 (execution condition)"),
    Case("LOOP_BODY_CONDITION", "loop", _loop_cond_entry_twice, LOOP,
         f"{LOOP}/port_map/output[last()]", name="two", says="found 2 (lines "),
    Case("LOOP_BODY_CONDITION", "loop",
         set_attr(f"{LOOP_COND_RESULT}/input/port", precision="FP32"), LOOP, COND_ENTRY,
         name="f32", says="the execution_condition Result 19 is f32, not boolean"),
    Case("LOOP_BODY_CONDITION", "loop", set_dims(f"{LOOP_COND_RESULT}/input/port", 2), LOOP,
         COND_ENTRY, name="of-two",
         says="the execution_condition Result 19 has shape [2], not a 1-element scalar/1D"),
    Case("LOOP_CURRENT_ITERATION", "loop", _loop_iter_entry_twice, LOOP,
         f"{LOOP}/port_map/input[last()]", name="two",
         says='2 port_map inputs have purpose="current_iteration"; at most one may'),
    Case("LOOP_CURRENT_ITERATION", "loop", _iter_param_f32, LOOP, ITER_ENTRY, name="f32",
         says="the current_iteration Parameter 0 is f32, not i32/i64"),
    Case("LOOP_CURRENT_ITERATION", "loop", _iter_param_of_two, LOOP, ITER_ENTRY, name="of-two",
         says="the current_iteration Parameter 0 has shape [2], not a 1-element scalar/1D"),
    Case("LOOP_TRIP_COUNT", "loop",
         lambda d: (one(d.root, f"{top('trip_count')}/data").set("element_type", "f32"),
                    one(d.root, f"{top('trip_count')}/output/port").set("precision", "FP32")),
         LOOP, f"{LOOP}/input/port[@id='0']", name="producer-f32",
         says="the trip count (input 0) is f32 by its producer's port; it must be i32 or i64"),
    Case("UNCONNECTED_INPUT", "loop", drop("/net/edges/edge[@to-layer='3'][@to-port='0']"),
         LOOP, f"{LOOP}/input/port[@id='0']", name="Loop-trip-count"),
    # back edges: both ends, and nothing more said of an edge whose end is wrong
    Case("BACK_EDGE_ENDPOINT", "loop", set_attr(f"{LOOP}/back_edges/edge", to__layer="77"),
         LOOP, f"{LOOP}/back_edges/edge", name="to-nowhere",
         says="back edge 20 -> 77: to-layer 77 does not exist; it must be a body Parameter"),
    Case("BACK_EDGE_ENDPOINT", "loop", set_attr(f"{LOOP}/back_edges/edge", from__layer="77"),
         LOOP, f"{LOOP}/back_edges/edge", name="from-nowhere",
         says="back edge 77 -> 1: from-layer 77 does not exist; it must be a body Result"),
    Case("BACK_EDGE_ENDPOINT", "loop", set_attr(f"{LOOP}/back_edges/edge", from__layer="4"),
         LOOP, f"{LOOP}/back_edges/edge", name="from-an-Unsqueeze",
         says="back edge 4 -> 1: from-layer 4 is a Unsqueeze; it must be a body Result"),
    Case("BACK_EDGE_ENDPOINT", "loop", set_attr(f"{LOOP}/back_edges/edge", to__layer="4"),
         LOOP, f"{LOOP}/back_edges/edge", name="to-an-Unsqueeze",
         says="back edge 20 -> 4: to-layer 4 is a Unsqueeze; it must be a body Parameter"),
    # If: the condition, both branches, their port maps
    Case("IF_CONDITION", "if", drop(f"{IF}/input", "/net/edges/edge[@to-layer='1']"), IF, None,
         name="none", says="an If needs its condition as input 0"),
    Case("IF_CONDITION", "if",
         lambda d: (one(d.root, f"{top('cond')}/data").set("element_type", "f32"),
                    one(d.root, f"{top('cond')}/output/port").set("precision", "FP32")),
         IF, IF_COND_PORT, name="producer-f32",
         says="the condition (input 0) is f32 by its producer's port; it must be boolean"),
    Case("IF_CONDITION", "if", both(set_dims(f"{top('cond')}/output/port", 2, shape=True),
                                    set_dims(IF_COND_PORT, 2)), IF, IF_COND_PORT,
         name="of-two", says="the condition (input 0) has shape [2] by its input port; it "
                             "must be a scalar or a 1D tensor of one element"),
    # the condition port has no producer: the rule reads the port alone
    Case("UNCONNECTED_INPUT", "if", drop("/net/edges/edge[@to-layer='1']"), IF, IF_COND_PORT,
         name="If-condition"),
    Case("BODY_MISSING", "if", drop(f"{IF}/then_body"), IF, None, name="If-then_body",
         says="an If needs a <then_body>"),
    # with then_body missing, else_body is still checked
    Case("OUTPUT_UNMAPPED", "if", drop(f"{IF}/then_body", f"{IF}/else_port_map/output"), IF,
         f"{IF}/output/port[@id='1']", name="If-else-without-then",
         says="output port 1 is produced by no else_body Result (no else_port_map output "
              "entry)"),
    Case("OUTPUT_UNMAPPED", "if", drop(f"{IF}/then_port_map/output"), IF,
         f"{IF}/output/port[@id='1']", name="If-then",
         says="output port 1 is produced by no then_body Result (no then_port_map output "
              "entry)"),
    Case("OUTPUT_UNMAPPED", "if", drop(f"{IF}/then_port_map"), IF, f"{IF}/output/port[@id='1']",
         name="If-no-then_port_map", says="no then_body Result"),
    Case("PORT_MAP_UNKNOWN_LAYER", "if",
         set_attr(f"{IF}/then_port_map/output", internal_layer_id="7"), IF,
         f"{IF}/then_port_map/output", name="If",
         says="then_port_map output external_port_id=1 internal_layer_id=7: the body has no "
              "layer 7"),
    Case("PORT_MAP_PURPOSE", "if",
         set_attr(f"{IF}/then_port_map/output", purpose="execution_condition"), IF,
         f"{IF}/then_port_map/output", name="If",
         says="purpose='execution_condition' is not known for If (allowed: none)"),
    Case("PARAMETER_UNMAPPED", "if", _if_extra_parameter, f"{IF}/then_body/layers/layer[@id='2']",
         f"{IF}/then_body/layers/layer[@id='2']", name="If",
         says="nothing feeds this then_body Parameter: no then_port_map input of If 1"),
    # the first then-output has no else counterpart; the second's types still compared
    Case("IF_BRANCH_MISMATCH", "if", _if_second_then_output_first, IF, IF, name="second-output",
         says="output port 1 is f32 from then_body Result 1 but f16 from else_body Result 1"),
]


CASES: list[Case] = [
    # the file
    Case("FILE_UNREADABLE", "loop", lambda d: setattr(d, "delete", True), None),
    Case("XML_MALFORMED", "loop", lambda d: setattr(d, "text", lambda t: t[: len(t) // 2]), None),
    Case("XML_DTD", "loop", lambda d: setattr(d, "text", _xxe), None),
    Case("XSD", "loop", lambda d: add(one(d.root, body("y_out")), "<foo />"), body("y_out"),
         f"{body('y_out')}/foo"),
    # reading
    Case("XML_STRUCTURE", "loop", drop(f"{LOOP}/body/layers"), None, f"{LOOP}/body"),
    Case("IR_VERSION", "loop", set_attr("/net", version="9"), None, "/net"),
    Case("LAYER_ATTR", "loop", lambda d: one(d.root, body("y_out")).attrib.pop("type"),
         body("y_out"), body("y_out")),
    Case("PORT_ATTR", "loop", set_attr(f"{body('y_out')}/output/port", id="two"), body("y_out"),
         f"{body('y_out')}/output/port"),
    Case("EDGE_ATTR", "loop", set_attr("/net/edges/edge[@from-layer='2']", from__port="zero"),
         None, "/net/edges/edge[@from-layer='2']"),
    Case("PORT_MAP_ATTR", "loop", set_attr(CONCAT, internal_layer_id="twenty"), LOOP, CONCAT),
    Case("BACK_EDGE_ATTR", "loop", set_attr(f"{LOOP}/back_edges/edge", from__layer="x"), LOOP,
         f"{LOOP}/back_edges/edge"),
    # graph structure
    Case("DUPLICATE_LAYER_ID", "loop",
         lambda d: one(d.root, body("scan_out")).set("id", lid(d.root, body("y_out"))),
         body("scan_out"), body("scan_out")),
    Case("DUPLICATE_PORT_ID", "loop", set_attr(f"{body('y_out')}/output/port", id="1"),
         body("y_out"), f"{body('y_out')}/output/port"),
    Case("EDGE_UNKNOWN_LAYER", "loop", set_attr("/net/edges/edge[@to-layer='4']", to__layer="44"),
         LOOP, "/net/edges/edge[@to-layer='44']"),
    Case("EDGE_UNKNOWN_PORT", "loop",
         lambda d: one(d.root, f"{LOOP}/body/edges/edge[@from-layer="
                       f"'{lid(d.root, body('slice_out'))}']").set("from-port", "9"),
         body("slice_out"), f"{LOOP}/body/edges/edge[@from-port='9']",
         says="port 9 of the source is not a port, not an output port"),
    Case("MULTIPLE_PRODUCERS", "loop", _duplicate_producer, body("y_out"),
         f"{LOOP}/body/edges/edge[last()]"),
    Case("CYCLE", "loop", _cycle, body("y_out"), body("y_out"),
         says="layers form a cycle: 14 -> 15 -> 14"),
    Case("UNCONNECTED_INPUT", "loop", drop("/net/edges/edge[@to-layer='4']"),
         top("res_y/sink_port_0"), f"{top('res_y/sink_port_0')}/input/port"),
    Case("PARAMETER_HAS_INPUT", "loop",
         lambda d: add(one(d.root, top("y")), '<input><port id="1" precision="FP32" /></input>'),
         top("y"), top("y")),
    Case("RESULT_HAS_OUTPUT", "loop",
         lambda d: add(one(d.root, top("res_y/sink_port_0")),
                       '<output><port id="1" precision="FP32" /></output>'),
         top("res_y/sink_port_0"), top("res_y/sink_port_0")),
    Case("PORT_COUNT", "loop", drop(f"{top('res_scan/sink_port_0')}/input"),
         top("res_scan/sink_port_0"), top("res_scan/sink_port_0")),
    Case("UNKNOWN_OP", "loop", set_attr(body("scan_out"), type="Frobnicate"), body("scan_out"),
         body("scan_out")),
    # element types, shapes, constants
    Case("ELEMENT_TYPE", "loop", set_attr(f"{top('y')}/data", element_type="f33"), top("y"),
         top("y")),
    Case("BAD_DIM", "loop",
         lambda d: setattr(one(d.root, f"{top('y')}/output/port/dim"), "text", str(10**30)),
         top("y"), f"{top('y')}/output/port/dim"),
    Case("SHAPE_ATTR", "loop", set_attr(f"{top('y')}/data", shape="1,x"), top("y"), top("y")),
    Case("ATTR_PORT_MISMATCH", "loop", set_attr(f"{top('y')}/data", shape="2"), top("y"),
         f"{top('y')}/output/port"),
    Case("EDGE_TYPE_MISMATCH", "loop",
         set_attr(f"{top('res_y/sink_port_0')}/input/port", precision="FP16"),
         top("res_y/sink_port_0"), "/net/edges/edge[@to-layer='4']",
         says="edge 3:3 -> 4:0 joins f32 to f16"),
    Case("EDGE_SHAPE_MISMATCH", "loop",
         lambda d: add(one(d.root, f"{top('res_scan/sink_port_0')}/input/port"),
                       "<dim>-1</dim>"),
         top("res_scan/sink_port_0"), "/net/edges/edge[@to-layer='5']"),
    Case("CONST_DATA", "loop", lambda d: one(d.root, f"{body('x')}/data").attrib.pop("offset"),
         body("x"), body("x")),
    Case("CONST_OUT_OF_BOUNDS", "loop", _truncate_bin, body("x"), body("x")),
    Case("CONST_SIZE", "loop", set_attr(f"{body('x')}/data", size="16"), body("x"), body("x")),
    Case("CONST_SHAPE", "loop", set_attr(f"{body('x')}/data", shape="?"), body("x"), body("x")),
    Case("BIN_SIZE", "loop", _longer_bin, None, "/net"),
    Case("BIN_MISMATCH", "loop", _foreign_bin, None, "/net"),
    # Loop / TensorIterator / If
    Case("BODY_MISSING", "loop", drop(f"{LOOP}/body"), LOOP, LOOP),
    Case("PORT_MAP_UNKNOWN_LAYER", "loop",
         set_attr(f"{LOOP}/port_map/output[@external_port_id='3']", internal_layer_id="77"),
         LOOP, f"{LOOP}/port_map/output[@external_port_id='3']"),
    Case("PORT_MAP_WRONG_KIND", "loop",
         lambda d: one(d.root, CONCAT).set("internal_layer_id", lid(d.root, body("x"))),
         LOOP, CONCAT, name="output-on-a-Const"),
    Case("PORT_MAP_WRONG_KIND", "loop",
         lambda d: one(d.root, CARRIED).set("internal_layer_id", _scan_result(d)),
         LOOP, CARRIED, name="input-on-a-Result"),
    Case("PORT_MAP_BAD_PORT", "loop", set_attr(CARRIED, external_port_id="3"), LOOP,
         f"{LOOP}/port_map/input[@external_port_id='3']",
         says="port_map input external_port_id=3 internal_layer_id=1: port 3 is an output port "
              "of the Loop"),
    Case("PORT_MAP_DUPLICATE", "loop",
         lambda d: add(one(d.root, f"{LOOP}/port_map"),
                       f'<output external_port_id="3" internal_layer_id="{_scan_result(d)}" />'),
         LOOP, f"{LOOP}/port_map/output[last()]"),
    Case("PORT_MAP_PURPOSE", "ti",
         set_attr(f"{TI}/port_map/input[@external_port_id='1']", purpose="current_iteration"),
         TI, f"{TI}/port_map/input[@external_port_id='1']", name="TensorIterator"),
    Case("PORT_MAP_PURPOSE", "loop", set_attr(COND_ENTRY, purpose="condition"), LOOP,
         f"{LOOP}/port_map/output[@purpose='condition']", name="unknown"),
    Case("PORT_MAP_TYPE", "loop", _y_in_to_f16, LOOP, CARRIED,
         says="port_map input external_port_id=2 internal_layer_id=1: the Loop port is f32 "
              "but body Parameter 1 is f16"),
    Case("PORT_MAP_SHAPE", "loop", _y_in_rank_2, LOOP, CARRIED,
         says="the Loop port has rank 1 [1] but body Parameter 1 has rank 2 [?,?]"),
    Case("PARAMETER_UNMAPPED", "loop", drop(CARRIED, f"{LOOP}/back_edges/edge"), body("y_in"),
         body("y_in"), says="nothing feeds this body Parameter: no port_map input of Loop 3, "
                            "back edge or current_iteration purpose"),
    Case("INPUT_UNMAPPED", "loop", drop(CARRIED), LOOP, f"{LOOP}/input/port[@id='2']"),
    Case("OUTPUT_UNMAPPED", "loop", drop(f"{LOOP}/port_map/output[@external_port_id='3']"),
         LOOP, f"{LOOP}/output/port[@id='3']"),
    Case("BACK_EDGE_ENDPOINT", "loop", lambda d: one(d.root, f"{LOOP}/back_edges/edge").set(
        "from-layer", lid(d.root, f"{LBODY}[@type='Const'][data/@element_type='boolean']")),
        LOOP, f"{LOOP}/back_edges/edge"),
    Case("BACK_EDGE_DUPLICATE", "loop", _second_back_edge, LOOP, f"{LOOP}/back_edges/edge[2]"),
    Case("BACK_EDGE_NO_INIT", "loop", drop(CARRIED), LOOP, f"{LOOP}/back_edges/edge"),
    Case("BACK_EDGE_MISMATCH", "loop", _back_edge_from_scan_result, LOOP,
         f"{LOOP}/back_edges/edge", name="rank",
         says="the Result has rank 2 [1,?] but the Parameter rank 1 [?]"),
    Case("BACK_EDGE_MISMATCH", "loop", _y_in_to_f16, LOOP, f"{LOOP}/back_edges/edge",
         name="type", says="the Result is f32 but the Parameter is f16"),
    Case("SLICE_AXIS", "ti", set_attr(SLICED, axis="2"), TI, SLICED),
    Case("CONCAT_AXIS", "loop", set_attr(CONCAT, axis="2"), LOOP, CONCAT),
    Case("SLICE_PARAMS", "ti", set_attr(SLICED, part_size="0"), TI, SLICED,
         says="port_map input external_port_id=0 internal_layer_id=1: part_size=0 must be "
              "at least 1"),
    Case("SLICE_DIM", "ti", set_attr(SLICED, start="5"), TI, SLICED, name="outside",
         says="fall outside"),
    Case("SLICE_DIM", "ti", set_attr(SLICED, stride="-1"), TI, SLICED, name="runs-away",
         says="stride=-1 runs away from end=-1"),
    Case("SLICE_DIM", "ti", _parts_of_two, TI, SLICED, name="parts",
         says="the 3 sliced elements of dimension 3 do not split into parts of 2"),
    Case("LOOP_TRIP_COUNT", "loop", _param_to("trip_count", "f32", "FP32", 0), LOOP,
         f"{LOOP}/input/port[@id='0']"),
    Case("LOOP_CONDITION", "loop", _cond_of_two, LOOP, f"{LOOP}/input/port[@id='1']",
         says="the execution condition (input 1) has shape [2] by its input port"),
    Case("LOOP_BODY_CONDITION", "loop", drop(COND_ENTRY), LOOP, None, name="entry-removed"),
    Case("LOOP_BODY_CONDITION", "loop",
         lambda d: remove(d.root, f"{LBODY}[@id='{one(d.root, COND_ENTRY).get('internal_layer_id')}"
                                  "']"), LOOP, None, name="Result-removed"),
    Case("LOOP_CURRENT_ITERATION", "loop", set_attr(ITER_ENTRY, external_port_id="0"), LOOP,
         ITER_ENTRY),
    Case("IF_CONDITION", "if",
         lambda d: (one(d.root, f"{top('cond')}/data").set("element_type", "f32"),
                    one(d.root, f"{top('cond')}/output/port").set("precision", "FP32"),
                    one(d.root, f"{IF}/input/port[@id='0']").set("precision", "FP32")),
         IF, f"{IF}/input/port[@id='0']"),
    Case("IF_BRANCH_MISMATCH", "if", drop(f"{IF}/else_port_map/output"), IF, IF, name="count",
         says="then_body produces 1 output(s) but else_body 0"),
    Case("IF_BRANCH_MISMATCH", "if", _else_f16, IF, IF, name="type"),
    # Variables (ReadValue / Assign)
    Case("VARIABLE_ID", "state", lambda d: one(d.root, f"{ASSIGN_PREV}/data").attrib.pop(
        "variable_id"), ASSIGN_PREV, ASSIGN_PREV),
    Case("VARIABLE_NO_ASSIGN", "state", _drop_assign_acc, top("read_acc"), top("read_acc")),
    Case("VARIABLE_NO_READ", "state", set_attr(f"{ASSIGN_PREV}/data", variable_id="later"),
         ASSIGN_PREV, ASSIGN_PREV),
    Case("VARIABLE_TYPE", "state", set_attr(f"{top('read_acc')}/data", variable_type="f16"),
         top("read_acc"), f"{top('read_acc')}/output/port", name="type",
         says="the output is f32 [2,3] but variable 'acc' is f16 [2,3]"),
    Case("VARIABLE_TYPE", "state", set_attr(f"{top('read_acc')}/data", variable_shape="2,4"),
         top("read_acc"), f"{top('read_acc')}/output/port", name="shape",
         says="variable 'acc' is f32 [2,4]"),
    Case("VARIABLE_TYPE", "state", set_attr(f"{ASSIGN_ACC}/input/port", precision="I32"),
         ASSIGN_ACC, f"{ASSIGN_ACC}/input/port", name="Assign-input",
         says="the input is i32 [2,3] but variable 'acc' is f32 [2,3]"),
    Case("VARIABLE_CONFLICT", "state", _acc_read_twice_as_f16, top("read_acc"),
         top("read_acc"), name="two-types",
         says="variable 'acc' is f32 [2,3] here but f16 [2,3] at layer"),
    Case("VARIABLE_CONFLICT", "state",
         lambda d: (set_attr(f"{top('read_prev')}/data", variable_id="acc")(d),
                    set_attr(f"{ASSIGN_PREV}/data", variable_id="acc")(d)),
         ASSIGN_PREV, ASSIGN_PREV, name="two-Assigns", says="is assigned here and at layer"),
    # IR that validate rejected but the runtime or inspect once tripped over (issue 11)
    Case("EDGE_UNKNOWN_PORT", "loop",
         set_attr("/net/edges/edge[@to-layer='3'][@to-port='2']", to__port="3"), LOOP,
         "/net/edges/edge[@to-layer='3'][@to-port='3']", name="into-an-output-port",
         says="is an output port"),
    Case("PORT_COUNT", "loop", drop(f"{top('y')}/output"), top("y"), top("y"),
         name="Parameter-without-port"),
    Case("PORT_COUNT", "loop", drop(f"{body('x')}/output"), body("x"), body("x"),
         name="Const-without-port"),
    Case("ELEMENT_TYPE", "loop", set_attr(f"{top('y')}/output/port", precision="x"), top("y"),
         f"{top('y')}/output/port", name="port-precision-x"),
    Case("EDGE_UNKNOWN_PORT", "loop", drop(f"{body('scan_out')}/input"), body("scan_out"),
         None, name="body-layer-without-input-port"),
    Case("ATTR_PORT_MISMATCH", "loop", set_attr(f"{top('y')}/data", element_type="bf16"),
         top("y"), f"{top('y')}/output/port", name="bf16-Parameter-f32-port",
         says="element_type bf16 but the output port says f32"),
    Case("PORT_COUNT", "loop", drop(f"{top('res_y/sink_port_0')}/input"),
         top("res_y/sink_port_0"), top("res_y/sink_port_0"), name="Result-without-port"),
    Case("ELEMENT_TYPE", "loop", set_attr(f"{top('y')}/data", element_type="x"), top("y"),
         top("y"), name="element_type-x"),
    # what validate passed while the engines disagreed or both refused (issue 11): the
    # spec's reading decides (see test_unclear_cases_by_both_engines)
    *UNCLEAR.values(),
    # each branch of the control-flow rules (mutation testing, issue 15)
    *BRANCHES,
]


def build(case: Case, sources: dict[str, Path], folder: Path) -> tuple[Path, Doc]:
    """Write the mutated copy of the case's source IR into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    if case.source == "state":
        (folder / "source").mkdir(exist_ok=True)
        src = two_variables(folder / "source" / "state.xml")
    else:
        src = sources[SOURCES[case.source]]
    xml, bin_ = folder / "model.xml", folder / "model.bin"
    shutil.copyfile(src.with_suffix(".bin"), bin_)
    root = etree.parse(str(src)).getroot()
    doc = Doc(root, xml, bin_)
    case.mutate(doc)
    if doc.delete:
        pass  # no .xml at all
    elif doc.text is not None:
        xml.write_text(doc.text(src.read_text()))
    else:
        etree.ElementTree(root).write(str(xml), xml_declaration=True, encoding="utf-8")
    return xml, doc


def reparse(xml: Path) -> etree._Element:
    return etree.parse(str(xml), etree.XMLParser(resolve_entities=False, no_network=True)
                       ).getroot()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule_bites(case: Case, ov_control_flow_irs: dict[str, Path], tmp_path: Path,
                    capsys: pytest.CaptureFixture[str]) -> None:
    xml, _ = build(case, ov_control_flow_irs, tmp_path)
    found = irtool.validate(xml)
    hits = [d for d in found if d.code == case.code]
    listing = "\n".join(d.format() for d in found)
    assert hits, f"{case.code} not reported; got:\n{listing}"
    assert all(d.severity == RULES[case.code].severity for d in hits)
    assert any(case.says in d.message for d in hits), listing
    assert all(d.file == str(xml) for d in found)
    root = reparse(xml) if xml.exists() and case.code not in ("XML_MALFORMED", "XML_DTD") \
        else None
    if case.layer is not None:
        assert root is not None
        layer_el = one(root, case.layer)
        want = (int(layer_el.get("id")), layer_el.get("name"), expected_scope(layer_el))
        assert want in {(d.layer_id, d.layer_name, d.scope) for d in hits}, listing
    else:
        assert any(d.layer_id is None for d in hits), listing
    if case.line is not None:
        assert root is not None
        line = one(root, case.line).sourceline
        assert line in {d.line for d in hits}, f"line {line} expected:\n{listing}"
    # The command line: `file:line: CODE ...`, exit 1 for an error, 0 for a warning alone.
    rc = cli_main(["validate", str(xml)])
    out = capsys.readouterr()
    errors = [d for d in found if d.severity == "error"]
    assert rc == (1 if errors else 0)
    line_pat = r"\d+" if case.code == "FILE_UNREADABLE" else r"[1-9]\d*"
    assert re.search(rf"^{re.escape(str(xml))}:{line_pat}: {case.code}\b", out.out,
                     re.MULTILINE), out.out
    if errors:
        assert "error(s)" in out.err


@pytest.mark.parametrize("case", [c for c in CASES if RULES[c.code].severity == "error"],
                         ids=lambda c: c.id)
def test_the_gate_refuses_what_validate_rejects(case: Case, ov_control_flow_irs: dict[str, Path],
                                               tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """``load`` (strict), ``run`` (either backend) and ``inspect`` refuse every IR
    ``validate`` calls wrong, with validate's first error line; nothing reaches the runtime,
    OpenVINO or the inspector."""
    xml, _ = build(case, ov_control_flow_irs, tmp_path)
    first = next(d for d in irtool.validate(xml) if d.severity == "error")
    with pytest.raises(irtool.IRValidationError) as info:
        irtool.load(xml)
    assert str(info.value).startswith(first.format()), (str(info.value), first.format())
    assert case.code in {d.code for d in info.value.diagnostics}
    for command, *more in (("run",), ("run", "--backend", "openvino"), ("inspect",)):
        assert cli_main([command, str(xml), *more]) == 1
        out = capsys.readouterr()
        assert out.err.startswith(f"irtool {command}: {first.format()}"), out.err
        assert out.err.count("\n") == 1 and not out.out


def test_the_execution_condition_count_names_the_entries_lines(
        ov_control_flow_irs: dict[str, Path], tmp_path: Path) -> None:
    """Two execution_condition entries: the message lists the lines of both; none: it
    ends at the count."""
    xml, _ = build(Case("", "loop", _loop_cond_entry_twice, None), ov_control_flow_irs,
                   tmp_path / "two")
    lines = [el.sourceline for el in reparse(xml).xpath(f"{LOOP}/port_map/output[@purpose="
                                                        "'execution_condition']")]
    found = [d.message for d in irtool.validate(xml) if d.code == "LOOP_BODY_CONDITION"]
    assert len(found) == 1 and found[0].endswith(f"found 2 (lines {lines[0]}, {lines[1]})")
    xml, _ = build(Case("", "loop", drop(COND_ENTRY), None), ov_control_flow_irs,
                   tmp_path / "none")
    found = [d.message for d in irtool.validate(xml) if d.code == "LOOP_BODY_CONDITION"]
    assert len(found) == 1 and found[0].endswith("found 0"), found


@pytest.mark.parametrize("end", ["from-layer", "to-layer"])
def test_a_back_edge_with_a_wrong_end_is_not_also_compared(
        end: str, ov_control_flow_irs: dict[str, Path], tmp_path: Path) -> None:
    """A back edge whose end is not a Result / Parameter is BACK_EDGE_ENDPOINT alone: the
    types of the wrong layer's ports (here an Unsqueeze of the i64 iteration number) are not
    compared with the other end's."""
    xml, _ = build(Case("", "loop", set_attr(f"{LOOP}/back_edges/edge", **{
        end.replace("-", "__"): lid(ov_control_flow_irs_root(ov_control_flow_irs),
                                    f"{LBODY}[@name='slice_start']")}), None),
        ov_control_flow_irs, tmp_path)
    codes = {d.code for d in irtool.validate(xml)}
    assert "BACK_EDGE_ENDPOINT" in codes and "BACK_EDGE_MISMATCH" not in codes, codes


def ov_control_flow_irs_root(irs: dict[str, Path]) -> etree._Element:
    return etree.parse(str(irs[SOURCES["loop"]])).getroot()


def test_a_second_back_edge_names_the_first_ones_line(ov_control_flow_irs: dict[str, Path],
                                                      tmp_path: Path) -> None:
    xml, _ = build(Case("", "loop", _second_back_edge, None), ov_control_flow_irs, tmp_path)
    first = reparse(xml).xpath(f"{LOOP}/back_edges/edge")[0].sourceline
    found = [d.message for d in irtool.validate(xml) if d.code == "BACK_EDGE_DUPLICATE"]
    assert len(found) == 1 and found[0].endswith(f"by the back edge on line {first}"), found


# the graph-structure rules (validation/structure.py): on a Model they are all there is (the
# XML reader reports several of them first when validating the file). A duplicate layer id
# or an edge to a missing layer the reader refuses even with strict=False: those are tested
# on a hand-built Model (test_model_*).
STRUCTURE_CODES = ("DUPLICATE_PORT_ID", "EDGE_UNKNOWN_PORT", "MULTIPLE_PRODUCERS", "CYCLE",
                   "UNCONNECTED_INPUT",
                   "PARAMETER_HAS_INPUT", "RESULT_HAS_OUTPUT", "PORT_COUNT",
                   "EDGE_TYPE_MISMATCH", "EDGE_SHAPE_MISMATCH")


@pytest.mark.parametrize("case", [c for c in CASES if c.code in STRUCTURE_CODES],
                         ids=lambda c: c.id)
def test_structure_rules_bite_on_the_model_read_from_the_file(
        case: Case, ov_control_flow_irs: dict[str, Path], tmp_path: Path) -> None:
    """The same break, validated as the ``Model`` that ``load(strict=False)`` reads: the
    same code on the same layer, scope and line (read from the XML with XPath)."""
    xml, _ = build(case, ov_control_flow_irs, tmp_path)
    found = irtool.validate(irtool.load(xml, strict=False))
    hits = [d for d in found if d.code == case.code]
    listing = "\n".join(d.format() for d in found)
    assert hits and any(case.says in d.message for d in hits), listing
    root = reparse(xml)
    layer_el = one(root, case.layer)
    assert (int(layer_el.get("id")), layer_el.get("name"), expected_scope(layer_el)) in {
        (d.layer_id, d.layer_name, d.scope) for d in hits}, listing
    if case.line is not None:
        assert one(root, case.line).sourceline in {d.line for d in hits}, listing


def test_every_code_has_a_mutation() -> None:
    covered = {c.code for c in CASES} | MODEL_ONLY | {"XSD_UNAVAILABLE"}
    assert covered == set(RULES), set(RULES) ^ covered


def test_cli_subprocess_on_every_broken_file(ov_control_flow_irs: dict[str, Path],
                                            tmp_path: Path) -> None:
    """One real ``python -m irtool validate`` over all the broken files at once."""
    files = []
    for i, case in enumerate(CASES):
        if case.code == "FILE_UNREADABLE" or RULES[case.code].severity != "error":
            continue
        xml, _ = build(case, ov_control_flow_irs, tmp_path / f"{i:02d}")
        files.append((case, xml))
    proc = subprocess.run([sys.executable, "-m", "irtool", "validate", *(str(x) for _, x in files)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    for case, xml in files:
        assert re.search(rf"^{re.escape(str(xml))}:[1-9]\d*: {case.code}\b", proc.stdout,
                         re.MULTILINE), case.id


def test_missing_schema_is_a_warning(ov_control_flow_irs: dict[str, Path], tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from irtool.validation import xsd

    monkeypatch.setattr(xsd, "schema_candidates", lambda version: [tmp_path / "none.xsd"])
    found = irtool.validate(ov_control_flow_irs["test_loop11"])
    assert [(d.code, d.severity) for d in found] == [("XSD_UNAVAILABLE", "warning")]


# -- what cannot be said wrongly in XML (or is clearer on a Model) -------------------

MODEL_ONLY = {"LAYER_ID_MISMATCH"}


def _small_model() -> tuple[Model, dict[str, int]]:
    build = GraphBuilder()
    f32x2 = TensorInfo(element_type("f32"), (2,))
    x = build.parameter(f32x2, name="x")
    c = build.const(np.array([1.0, 2.0], np.float32), name="c")
    (add_,) = build.op("Add", "opset1", [x, c], {"auto_broadcast": "numpy"}, outputs=[f32x2],
                       name="add")
    r = build.result(add_, name="r")
    return Model(build.graph), {"x": x.layer, "c": c.layer, "add": add_.layer, "r": r.id}


def _codes_on(model: Model, layer_id: int) -> set[str]:
    return {d.code for d in irtool.validate(model) if d.layer_id == layer_id}


def test_hand_built_model_is_clean() -> None:
    model, _ = _small_model()
    assert irtool.validate(model) == []


def test_model_layer_id_mismatch() -> None:
    model, ids = _small_model()
    model.graph.layer(ids["add"]).id = 42
    assert "LAYER_ID_MISMATCH" in _codes_on(model, 42)


def test_model_duplicate_layer_id() -> None:
    """add takes c's id: the later of the two is DUPLICATE_LAYER_ID (naming the other), and
    not also LAYER_ID_MISMATCH."""
    model, ids = _small_model()
    model.graph.layer(ids["add"]).id = ids["c"]
    hits = [d for d in irtool.validate(model)
            if d.code in ("DUPLICATE_LAYER_ID", "LAYER_ID_MISMATCH")]
    assert [(d.code, d.layer_id, d.layer_name, d.scope) for d in hits] == [
        ("DUPLICATE_LAYER_ID", ids["c"], "add", "")]
    assert hits[0].message == f"layer id {ids['c']} is used twice (also by 'c')"


def test_model_duplicate_port_id() -> None:
    model, ids = _small_model()
    model.graph.layer(ids["add"]).outputs[0].id = 1
    hits = [d for d in irtool.validate(model) if d.code == "DUPLICATE_PORT_ID"]
    assert [(d.layer_id, d.scope) for d in hits] == [(ids["add"], "")]
    assert hits[0].message == "port id 1 is used by two ports (input and output)"


def test_a_second_producer_added_in_memory_is_the_one_reported(
        ov_control_flow_irs: dict[str, Path]) -> None:
    """Of two producers of one input, the edge read from the file (it has a line) comes
    first; the one connected afterwards, without a line, is reported."""
    model = irtool.load(ov_control_flow_irs["test_loop11"])
    root = reparse(ov_control_flow_irs["test_loop11"])
    res_scan, y = int(lid(root, top("res_scan/sink_port_0"))), int(lid(root, top("y")))
    model.graph.connect(y, 0, res_scan, 0)
    hits = [d for d in irtool.validate(model) if d.code == "MULTIPLE_PRODUCERS"]
    assert [d.layer_id for d in hits] == [res_scan]
    loop = lid(root, LOOP)  # its output port 4 feeds res_scan in the file
    assert hits[0].message == f"input port 0 is fed by {loop}:4 and again by {y}:0"


def test_structure_rules_in_a_body_name_its_scope(ov_control_flow_irs: dict[str, Path]) -> None:
    """Broken in memory inside the Loop's body: each rule names the body's scope."""
    xml = ov_control_flow_irs["test_loop11"]
    model, root = irtool.load(xml), reparse(xml)
    loop = int(lid(root, LOOP))
    ids = {name: int(lid(root, body(name))) for name in ("y_in", "x", "slice_out", "y_out",
                                                          "scan_out")}
    graph = model.graph.layer(loop).bodies["body"]
    graph.layer(ids["scan_out"]).id = ids["y_out"]  # one id, two layers
    graph.layer(ids["slice_out"]).id = 42  # stored under another node
    # edges without a line, checked after the file's, in this order: each problem does not
    # stop the later edges from being checked
    graph.connect(ids["y_in"], 0, 99, 0)  # to nowhere
    graph.connect(ids["y_in"], 5, ids["y_out"], 0)  # from no port, into a fed port
    graph.connect(ids["x"], 0, ids["y_in"], 0)  # into a Parameter
    graph.connect(ids["x"], 0, ids["y_out"], 1)  # into a fed port
    found = irtool.validate(model)
    scope = f"{loop}/body"
    fed_twice = sorted(d.message for d in found if d.code == "MULTIPLE_PRODUCERS")
    assert fed_twice == [f"input port 0 is fed by {ids['y_in']}:0 and again by {ids['y_in']}:5",
                         f"input port 1 is fed by {ids['slice_out']}:5 and again by "
                         f"{ids['x']}:0"]
    got = {(d.code, d.layer_id, d.layer_name, d.scope): d.message for d in found}
    assert got[("DUPLICATE_LAYER_ID", ids["y_out"], "scan_out", scope)] == (
        f"layer id {ids['y_out']} is used twice (also by 'y_out')")
    assert got[("LAYER_ID_MISMATCH", 42, "slice_out", scope)] == (
        f"layer 'slice_out' has id 42 but is stored under node {ids['slice_out']}")
    assert got[("EDGE_UNKNOWN_LAYER", ids["y_in"], "y_in", scope)] == (
        f"edge {ids['y_in']}:0 -> 99:0 names layer 99, which does not exist")
    assert got[("PARAMETER_HAS_INPUT", ids["y_in"], "y_in", scope)] == (
        "a Parameter takes no inputs but has 0 input port(s) and incoming edges")


def test_port_rules_in_a_body_name_its_scope(ov_control_flow_irs: dict[str, Path]) -> None:
    """Ports added in memory inside the Loop's body, with no edge to them: a Parameter's
    input port (and no incoming edge, so the message says none), a Result's output port, an
    Add's third input; each rule names the body's scope."""
    xml = ov_control_flow_irs["test_loop11"]
    model, root = irtool.load(xml), reparse(xml)
    loop = int(lid(root, LOOP))
    ids = {name: int(lid(root, body(name))) for name in ("iter_count", "y_out")}
    graph = model.graph.layer(loop).bodies["body"]
    result = graph.results()[0]
    graph.layer(ids["iter_count"]).inputs.append(Port(7))
    result.outputs.append(Port(8))
    graph.layer(ids["y_out"]).inputs.append(Port(9))
    scope = f"{loop}/body"
    got = {(d.code, d.layer_id, d.scope): d.message for d in irtool.validate(model)}
    assert got[("PARAMETER_HAS_INPUT", ids["iter_count"], scope)] == (
        "a Parameter takes no inputs but has 1 input port(s)")
    assert got[("RESULT_HAS_OUTPUT", result.id, scope)] == (
        "a Result has no outputs but has 1 output port(s)")
    assert got[("UNCONNECTED_INPUT", ids["y_out"], scope)] == "input port 9 has no producer"


def test_model_edge_between_two_missing_layers() -> None:
    model, _ = _small_model()
    model.graph.connect(98, 0, 99, 0)
    hits = [d for d in irtool.validate(model) if d.code == "EDGE_UNKNOWN_LAYER"]
    assert [(d.layer_id, d.layer_name) for d in hits] == [(98, None)]


def test_model_a_loop_only_through_a_missing_layer_is_not_a_cycle() -> None:
    """add -> 99 -> add: both edges name a layer that does not exist (EDGE_UNKNOWN_LAYER);
    the layers that exist form no cycle."""
    model, ids = _small_model()
    model.graph.connect(ids["add"], 2, 99, 0)
    model.graph.connect(99, 0, ids["add"], 1)
    codes = {d.code for d in irtool.validate(model)}
    assert "EDGE_UNKNOWN_LAYER" in codes and "CYCLE" not in codes, codes


def test_model_const_without_data_or_wrong_size() -> None:
    model, ids = _small_model()
    const = model.graph.layer(ids["c"])
    const.const = ConstData(b"\x00" * 12)
    assert "CONST_SIZE" in _codes_on(model, ids["c"])
    const.const = ConstData(b"\x00" * 8, offset=4, size=8)
    assert "CONST_OUT_OF_BOUNDS" in _codes_on(model, ids["c"])
    const.const = None
    assert "CONST_DATA" in _codes_on(model, ids["c"])


def test_model_edges_to_nowhere_and_cycles() -> None:
    model, ids = _small_model()
    model.graph.connect(ids["add"], 2, 99, 0)
    hits = [d for d in irtool.validate(model) if d.code == "EDGE_UNKNOWN_LAYER"]
    assert [(d.layer_id, d.file, d.scope) for d in hits] == [(ids["add"], None, "")]
    assert hits[0].message == f"edge {ids['add']}:2 -> 99:0 names layer 99, which does not exist"
    model, ids = _small_model()
    model.graph.connect(99, 0, ids["add"], 1)  # from nowhere
    hits = [d for d in irtool.validate(model) if d.code == "EDGE_UNKNOWN_LAYER"]
    assert [(d.layer_id, d.layer_name) for d in hits] == [(ids["add"], "add")]
    assert hits[0].message == f"edge 99:0 -> {ids['add']}:1 names layer 99, which does not exist"
    model, ids = _small_model()
    model.graph.disconnect_input(ids["add"], 1)
    model.graph.connect(ids["add"], 2, ids["add"], 1)  # feeds itself
    assert "CYCLE" in _codes_on(model, ids["add"])


def test_model_bad_dims_and_types() -> None:
    model, ids = _small_model()
    layer = model.graph.layer(ids["add"])
    layer.outputs[0].dims = (2, -5)
    layer.inputs[0].precision = "FP33"  # type: ignore[assignment]
    codes = _codes_on(model, ids["add"])
    assert {"BAD_DIM", "ELEMENT_TYPE"} <= codes
    layer.outputs[0] = Port(2, element_type("f32"), (2,))
    model.graph.layer(ids["x"]).attrs["shape"] = str(10**30)
    assert "BAD_DIM" in _codes_on(model, ids["x"])


# -- documented non-findings -----------------------------------------------------------


def test_dropping_a_back_edge_leaves_a_valid_loop(ov_control_flow_irs: dict[str, Path],
                                                  tmp_path: Path) -> None:
    """Without its back edge the carried Parameter keeps its port_map input and becomes a
    loop invariant: a different loop, but a sound one, which OpenVINO reads and runs.
    (What a dropped back edge can break -- a Parameter left without any source -- is
    PARAMETER_UNMAPPED / BACK_EDGE_NO_INIT above.)"""
    case = Case("", "loop", drop(f"{LOOP}/back_edges/edge"), None)
    xml, _ = build(case, ov_control_flow_irs, tmp_path)
    compiled = ov.Core().compile_model(str(xml), "CPU")
    compiled([np.array(3, np.int64), np.array(True), np.array([1.0], np.float32)])
    assert [d for d in irtool.validate(xml) if d.severity == "error"] == []


def test_control_flow_sources_are_the_onnx_cases() -> None:
    assert set(SOURCES.values()) <= set(ONNX_CONTROL_FLOW)


# -- the unclear cases: what each engine does (why the validator decides them) ------------

X3 = np.arange(6, dtype=np.float32).reshape(3, 2)
FEEDS = {"ti": {"initial": np.zeros(2, np.float32), "x": X3},
         "loop": {"trip_count": np.array(3, np.int64), "cond": np.array(True),
                  "y": np.array([1.0], np.float32)}}
# name -> (what OpenVINO does, what irtool's runtime does without the gate): "refuses", or
# the values it returns (hand numpy)
ENGINES = {
    # OpenVINO runs 2 iterations on rows 0..1 (not the rows 1..2 start=1 names); irtool's
    # runtime cuts rows 1..2 and then finds the declared [3, 2] wrong.
    "ti-input-start-1": ({"y": X3[:2].sum(0), "z": X3[:2].cumsum(0)}, "refuses"),
    # OpenVINO refuses (numIterations); irtool's runtime ignores the output's start.
    "ti-output-start-1": ("refuses", {"y": X3.sum(0), "z": X3.cumsum(0)}),
    "ti-stride-1000000": ("refuses", "refuses"),
    # OpenVINO refuses both; irtool's runtime walks the output by its stride alone
    "ti-output-0-to-minus-1-backwards": ("refuses", {"y": X3.sum(0), "z": X3.cumsum(0)[::-1]}),
    "ti-output-minus-1-to-0-forward": ("refuses", {"y": X3.sum(0), "z": X3.cumsum(0)}),
    "ti-concat-axis-minus-1": ("refuses", "refuses"),
    "auto-broadcast-huge": ("refuses", "refuses"),
    "corrupted-axes": ("refuses", "refuses"),
}


def _outcome(run: Callable[[], dict]) -> dict | str:
    try:
        return run()
    except Exception:  # either engine's refusal, whatever its type
        return "refuses"


def _engines(xml: Path, feed: dict[str, np.ndarray]) -> tuple[dict | str, dict | str]:
    """What OpenVINO's CPU plugin and irtool's runtime (without the gate) make of ``xml``."""
    from irtool.runtime import Executor

    ov_got = _outcome(lambda: {o.any_name: np.asarray(v) for o, v in
                               ov.Core().compile_model(str(xml), "CPU")(feed).items()})
    ours = _outcome(lambda: Executor(irtool.load(xml, strict=False), check=False).run(feed))
    return ov_got, ours



@pytest.mark.parametrize("name", sorted(UNCLEAR))
def test_unclear_cases_by_both_engines(name: str, ov_control_flow_irs: dict[str, Path],
                                       tmp_path: Path) -> None:
    """validate once passed these; the engines disagree or both refuse, so the validator
    rejects them (UNCLEAR above), and the gate keeps them from irtool's runtime."""
    case = UNCLEAR[name]
    xml, _ = build(case, ov_control_flow_irs, tmp_path)
    for got, want in zip(_engines(xml, FEEDS[case.source]), ENGINES[name]):
        if want == "refuses":
            assert got == "refuses", got
        else:
            assert isinstance(got, dict) and set(got) == set(want), got
            for key in want:
                np.testing.assert_array_equal(got[key], want[key])
    assert case.code in {d.code for d in irtool.validate(xml) if d.severity == "error"}
    with pytest.raises(irtool.IRValidationError, match=case.code):
        irtool.load(xml)


def _sliced_range_case(start: int, end: int, stride: int, parts: int) -> Case:
    """test_scan9_sum's TensorIterator slicing ``start``/``end``/``stride`` of x's 3 rows,
    its concatenated output z declared for ``parts`` rows."""
    return Case("", "ti", both(
        set_attr(SLICED, start=str(start), end=str(end), stride=str(stride)),
        set_dims(f"{TI}/output/port[@id='3']", parts, 2), set_dims(Z_RESULT_PORT, parts, 2)),
        None)


def _summing(rows: list[int]) -> dict[str, np.ndarray]:
    """What the scan computes over ``rows`` of X3, in that order (hand numpy)."""
    return {"y": X3[rows].sum(0), "z": X3[rows].cumsum(0)}


def _assert_values(got: dict | str, want: dict[str, np.ndarray]) -> None:
    assert isinstance(got, dict), got
    for key, value in want.items():
        np.testing.assert_array_equal(got[key], value)


# (start, end, stride) -> (rows OpenVINO's CPU plugin takes, rows irtool's runtime takes:
# the range written, end exclusive). validate's only finding is the SLICE_OPENVINO warning.
OPENVINO_ELSEWHERE = {
    (1, -1, 1): ([0, 1], [1, 2]),
    (2, -1, 1): ([0], [2]),
    (-2, 0, -1): ([2, 1], [1, 0]),
    (-3, 0, -1): ([2], [0]),
}


@pytest.mark.parametrize("key", sorted(OPENVINO_ELSEWHERE))
def test_openvino_reads_other_rows_than_written(key: tuple[int, int, int],
                                               ov_control_flow_irs: dict[str, Path],
                                               tmp_path: Path) -> None:
    """Ranges that fit and agree with the declared output, but OpenVINO cuts from the
    first (last) row whatever start says: a warning, since irtool runs them as written."""
    ov_rows, our_rows = OPENVINO_ELSEWHERE[key]
    xml, _ = build(_sliced_range_case(*key, len(our_rows)), ov_control_flow_irs, tmp_path)
    ov_got, ours = _engines(xml, FEEDS["ti"])
    _assert_values(ov_got, _summing(ov_rows))
    _assert_values(ours, _summing(our_rows))
    assert [(d.code, d.severity) for d in irtool.validate(xml)] == [("SLICE_OPENVINO",
                                                                    "warning")]
    irtool.load(xml)  # a warning does not stop the gate


# Ranges both engines read alike: from the first row forward with a negative end, from the
# last row back with an end of 0 or more. validate finds nothing.
READ_ALIKE = {(0, -2, 1): [0, 1], (0, -3, 1): [0], (-1, 1, -1): [2, 1], (-1, 2, -1): [2],
              (0, -1, 1): [0, 1, 2], (-1, 0, -1): [2, 1, 0]}


@pytest.mark.parametrize("key", sorted(READ_ALIKE))
def test_ranges_both_engines_read_alike(key: tuple[int, int, int],
                                        ov_control_flow_irs: dict[str, Path],
                                        tmp_path: Path) -> None:
    rows = READ_ALIKE[key]
    xml, _ = build(_sliced_range_case(*key, len(rows)), ov_control_flow_irs, tmp_path)
    for got in _engines(xml, FEEDS["ti"]):
        _assert_values(got, _summing(rows))
    assert irtool.validate(xml) == []


# Ranges the spec's "last index" would read as all 3 rows (as validate once did, passing
# them): both engines read end as exclusive and refuse the output declared for 3.
BOTH_REFUSE = [(0, 2, 1), (2, 0, -1), (2, -3, -1), (-1, -3, -1), (-3, 2, 1), (-3, -1, 1)]


@pytest.mark.parametrize("key", BOTH_REFUSE)
def test_ranges_both_engines_refuse_are_errors(key: tuple[int, int, int],
                                               ov_control_flow_irs: dict[str, Path],
                                               tmp_path: Path) -> None:
    xml, _ = build(_sliced_range_case(*key, 3), ov_control_flow_irs, tmp_path)
    assert _engines(xml, FEEDS["ti"]) == ("refuses", "refuses")
    errors = {d.code for d in irtool.validate(xml) if d.severity == "error"}
    assert errors & {"ITERATION_COUNT", "SLICE_DIM"}, errors


# A concatenated output's range: besides the default pairs, these name all 3 rows, forward
# or backward (end exclusive, a negative value from one past the last row); both engines
# write the running sums there. validate finds nothing.
OUTPUT_READ_ALIKE = {(0, 3, 1): False, (-4, -1, 1): False, (3, 0, -1): True,
                     (-1, -4, -1): True}  # -> backward


@pytest.mark.parametrize("key", sorted(OUTPUT_READ_ALIKE))
def test_output_ranges_both_engines_read_alike(key: tuple[int, int, int],
                                               ov_control_flow_irs: dict[str, Path],
                                               tmp_path: Path) -> None:
    start, end, stride = key
    xml, _ = build(Case("", "ti", set_attr(TIOUT, start=str(start), end=str(end),
                                           stride=str(stride)), None),
                   ov_control_flow_irs, tmp_path)
    sums = X3.cumsum(0)
    want = {"y": X3.sum(0), "z": sums[::-1] if OUTPUT_READ_ALIKE[key] else sums}
    for got in _engines(xml, FEEDS["ti"]):
        _assert_values(got, want)
    assert irtool.validate(xml) == []


@pytest.mark.parametrize("rows", [1, 3])
def test_a_tensor_iterator_slicing_no_input_runs_once(rows: int,
                                                      ov_control_flow_irs: dict[str, Path],
                                                      tmp_path: Path) -> None:
    """x passed whole: OpenVINO runs the body once, whatever z declares; validate passes z
    declared for that one row and refuses it declared for 3."""
    xml, _ = build(Case("", "ti", lambda d: _x_passed_whole(d, rows), None),
                   ov_control_flow_irs, tmp_path)
    x = X3[:1]
    ov_got, ours = _engines(xml, {"initial": FEEDS["ti"]["initial"], "x": x})
    want = {"y": x[0], "z": x}  # one step: the sum is the row, z holds it once
    _assert_values(ov_got, want)
    assert ov_got["z"].shape == (1, 2)
    found = irtool.validate(xml)
    if rows == 1:
        _assert_values(ours, want)
        assert found == []
    else:
        assert [(d.code, d.severity) for d in found] == [("ITERATION_COUNT", "error")]
        assert found[0].message.endswith("but the output port declares [3,2]"), found[0].message


def test_a_tensor_iterator_over_an_empty_dim_is_refused(ov_control_flow_irs: dict[str, Path],
                                                        tmp_path: Path) -> None:
    """x of static size 0: OpenVINO's CPU plugin refuses the TensorIterator when it compiles
    (its check of the sliced range, src < dst); irtool's runtime would run it zero times. So
    validate refuses it, and the gate keeps it from the runtime."""
    xml, _ = build(Case("", "ti", _x_empty, None), ov_control_flow_irs, tmp_path)
    initial = np.array([1.0, 2.0], np.float32)
    ov_got, ours = _engines(xml, {"initial": initial, "x": np.zeros((0, 2), np.float32)})
    assert ov_got == "refuses"
    _assert_values(ours, {"y": initial, "z": np.zeros((0, 2), np.float32)})
    assert [(d.code, d.severity) for d in irtool.validate(xml)] == [("SLICE_DIM", "error")]
    with pytest.raises(irtool.IRValidationError, match="SLICE_DIM"):
        irtool.load(xml)


# -- valid variants: validate passes them and both engines agree with hand numpy ----------

# name -> the change to test_scan9_sum's TensorIterator (y = initial + x.sum(0), z = the
# running sums, row by row); each reads the same rows, so the same values come out
VALID_TI: dict[str, Callable[[Doc], None]] = {
    "output-dim-dynamic": both(set_dims(f"{TI}/output/port[@id='3']", -1, 2),
                               set_dims(Z_RESULT_PORT, -1, 2)),
    "body-slice-dim-dynamic": set_dims(f"{TI_NEXT}/output/port", -1, 2, shape=True),
    # x of dynamic size: the iteration count is known only at run time, so the output's
    # static [3, 2] is not checked against one
    "sliced-input-dim-dynamic": both(set_dims(f"{top('x')}/output/port", -1, 2, shape=True),
                                     set_dims(f"{TI}/input/port[@id='0']", -1, 2)),
    # the carried sum's body Parameter of dynamic rank (no dims)
    "carried-of-dynamic-rank": both(set_dims(f"{TBODY}[@name='sum_in']/output/port"),
                                    set_attr(f"{TBODY}[@name='sum_in']/data", shape="...")),
    # x on input port 1 and the initial sum on port 0: a back edge's first value may come
    # through any port, 0 too
    "inputs-swapped": lambda d: _ti_inputs_swapped(d),
}


def _ti_inputs_swapped(doc: Doc) -> None:
    swap = {"0": "1", "1": "0"}
    ports = doc.root.xpath(f"{TI}/input/port")
    for port in ports:
        port.set("id", swap[port.get("id")])
    parent = ports[0].getparent()
    parent.remove(ports[0])
    parent.append(ports[0])  # in id order
    for entry in doc.root.xpath(f"{TI}/port_map/input"):
        entry.set("external_port_id", swap[entry.get("external_port_id")])
    for e in doc.root.xpath("/net/edges/edge[@to-layer='2']"):
        e.set("to-port", swap[e.get("to-port")])


@pytest.mark.parametrize("name", sorted(VALID_TI))
def test_valid_variants_pass_and_both_engines_agree(name: str,
                                                    ov_control_flow_irs: dict[str, Path],
                                                    tmp_path: Path) -> None:
    from irtool.runtime import Executor

    xml, _ = build(Case("", "ti", VALID_TI[name], None), ov_control_flow_irs, tmp_path)
    assert [d.format() for d in irtool.validate(xml) if d.severity == "error"] == []
    feed = FEEDS["ti"]
    want = {"y": X3.sum(0), "z": np.cumsum(X3, axis=0)}
    got_ov = {o.any_name: np.asarray(v) for o, v in
              ov.Core().compile_model(str(xml), "CPU")(feed).items()}
    got_irtool = Executor(irtool.load(xml)).run(feed)
    for got in (got_ov, got_irtool):
        assert set(got) == set(want)
        for key in want:
            np.testing.assert_allclose(got[key], want[key], rtol=1e-6)
