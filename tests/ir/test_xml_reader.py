"""The IR reader on its own: both of its parsers (the stream ``irtool.load`` and
``validate`` use, the whole tree ``read_model_bytes`` and ``validate``'s fall-back use)
read and refuse alike, a strict read's one-line error says ``file:line``, layer and what,
and markup IR never needs (a DOCTYPE, nesting past libxml2's default depth) is refused.

Expected lines and names are counted by hand in the documents written here; expected
shapes and names of the good documents come from OpenVINO's own ``read_model``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import openvino as ov
import pytest
from lxml import etree

import irtool
from irtool.core.errors import IRParseError
from irtool.ir import GraphBuilder, Model, read_model, read_model_bytes
from irtool.ir.serde import xml_reader

# A Parameter f32[2] -> Result; line numbers are counted from 1 at the declaration.
GOOD = """<?xml version="1.0"?>
<net name="m" version="11">
	<layers>
		<layer id="0" name="x" type="Parameter" version="opset1">
			<data shape="2" element_type="f32"/>
			<output>
				<port id="0" precision="FP32" names="x">
					<dim>2</dim>
				</port>
			</output>
		</layer>
		<layer id="1" name="out" type="Result" version="opset1">
			<input>
				<port id="0" precision="FP32">
					<dim>2</dim>
				</port>
			</input>
		</layer>
	</layers>
	<edges>
		<edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>
	</edges>
	<rt_info>
		<note value="kept"/>
	</rt_info>
</net>
"""


def _stream(xml: Path) -> Model:
    """The stream parser, strict (``irtool.load(strict=False)`` reads only)."""
    return irtool.load(xml, strict=False)


def _tree(xml: Path) -> Model:
    """The whole-tree parser, strict, as ``validate`` falls back to it."""
    root = xml_reader.parse_xml(xml.read_bytes(), str(xml))
    return xml_reader.model_from_xml(root, xml_reader.open_weights(xml), file=str(xml))


def _bytes(xml: Path) -> Model:
    """The whole-tree parser on a document in memory (named by ``file``, no path)."""
    return read_model_bytes(xml.read_bytes(), file=str(xml))


READERS: dict[str, Callable[[Path], Model]] = {"stream": _stream, "tree": _tree,
                                               "bytes": _bytes}


def _write(tmp_path: Path, text: str | bytes) -> Path:
    xml = tmp_path / "m.xml"
    xml.write_bytes(text.encode() if isinstance(text, str) else text)
    return xml


# How GOOD is broken -> the one-line error a strict read gives (``{xml}``: the file).
BROKEN = {
    "dim_not_a_number": (("<dim>2</dim>", "<dim>two</dim>"),
                         "{xml}:8: layer 0 'x': port 0 has dim 'two', not an integer"),
    "layer_without_type": (('name="out" type="Result" ', 'name="out" '),
                           "{xml}:12: layer 1 'out': layer lacks the 'type' attribute"),
    "edge_to_nowhere": (('to-layer="1"', 'to-layer="7"'),
                        "{xml}:21: layer 0 'x': edge 0:0 -> 7:0 names layer 7, which does not "
                        "exist"),
    "ir_version_12": (('version="11"', 'version="12"'),
                      "{xml}:2: IR version 12 is not supported (10 or 11)"),
    "dim_empty": (("<dim>2</dim>", "<dim></dim>"),
                  "{xml}:8: layer 0 'x': port 0 has dim '', not an integer"),
    "dim_below_dynamic": (("<dim>2</dim>", "<dim>-2</dim>"),
                          "{xml}:8: layer 0 'x': port 0 has dim -2, outside -1..1099511627776"),
    "malformed": (("</layers>", "</layer>"), "{xml}:19: malformed XML: "),
    "doctype": (('<?xml version="1.0"?>', '<?xml version="1.0"?>\n<!DOCTYPE net>'),
                "{xml}:2: DOCTYPE/ENTITY declarations are not allowed in IR XML"),
}


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("case", BROKEN)
def test_strict_read_names_file_line_and_layer(case: str, reader: str, tmp_path: Path) -> None:
    (old, new), expected = BROKEN[case]
    assert GOOD.count(old) >= 1
    xml = _write(tmp_path, GOOD.replace(old, new, 1))
    with pytest.raises(IRParseError) as err:
        READERS[reader](xml)
    message = str(err.value)
    assert message.startswith(expected.format(xml=xml)), message
    assert "\n" not in message


@pytest.mark.parametrize("reader", READERS)
def test_both_parsers_read_what_openvino_reads(reader: str, tmp_path: Path) -> None:
    """Comments and processing instructions are no content: OpenVINO reads the dims and
    names through them, and so do both parsers (an XML comment inside <dim> or among a
    layer's children, a processing instruction in rt_info)."""
    text = (GOOD.replace("<dim>2</dim>", "<dim><!-- two -->2<?pi x?></dim>", 1)
            .replace('<data shape="2"', '<!-- c --><?pi y?><data shape="2"', 1)
            .replace('<note value="kept"/>', '<!-- c --><?pi z?><note value="kept"/>', 1))
    xml = _write(tmp_path, text)
    ov_model = ov.Core().read_model(str(xml))
    model = READERS[reader](xml)
    assert model.path == (None if reader == "bytes" else str(xml))
    (param,) = model.inputs
    assert param.outputs[0].dims == tuple(ov_model.inputs[0].get_partial_shape().to_shape())
    assert param.outputs[0].names == tuple(ov_model.inputs[0].get_names())
    assert [(n.tag, n.attrs) for n in model.rt_info or []] == [("note", {"value": "kept"})]
    assert ov_model.get_rt_info("note").astype(str) == "kept"


@pytest.mark.parametrize("reader", READERS)
def test_nesting_past_the_default_depth_is_refused(reader: str, tmp_path: Path) -> None:
    """libxml2 refuses nesting past 256 levels unless asked for huge trees; IR never
    needs it, and both parsers keep the limit (1000 levels in the model's rt_info)."""
    deep = "<a>" * 1000 + "</a>" * 1000
    xml = _write(tmp_path, GOOD.replace('<note value="kept"/>', deep, 1))
    with pytest.raises(IRParseError, match="malformed XML"):
        READERS[reader](xml)


def test_the_tree_parser_refuses_a_document_over_the_size_cap(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cap (2 GiB) made small: a document of exactly the cap is read, one byte more
    is refused by name before it is parsed."""
    xml = _write(tmp_path, GOOD)
    size = len(GOOD.encode())
    monkeypatch.setattr(xml_reader, "MAX_XML_BYTES", size)
    _tree(xml)
    xml.write_bytes(GOOD.encode() + b" ")
    with pytest.raises(IRParseError) as err:
        _tree(xml)
    assert str(err.value) == f"{xml}: XML is {size + 1} bytes, over the {size} limit"


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("entity", ['"boom"', 'SYSTEM "http://127.0.0.1:9/x"',
                                    'SYSTEM "missing.txt"'])
def test_a_doctype_only_the_parser_can_see_is_refused(entity: str, reader: str,
                                                      tmp_path: Path) -> None:
    """In UTF-7 the "<!" of a DOCTYPE can be written shifted (base64), which no byte search
    finds and libxml2 decodes: the reader refuses it once parsed, and its entity (used in
    rt_info) was neither expanded nor loaded on the way (an entity that cannot be loaded
    would be a parse error first)."""
    text = GOOD.replace('<?xml version="1.0"?>\n', '<?xml version="1.0" encoding="UTF-7"?>'
                        f'<!DOCTYPE net [<!ENTITY x {entity}>]>\n', 1)
    data = text.replace('<note value="kept"/>', "<note>&x;</note>", 1).encode("utf-7")
    xml = _write(tmp_path, data.replace(b"<!", b"+ADwAIQ-"))
    with pytest.raises(IRParseError) as err:
        READERS[reader](xml)
    assert str(err.value) == f"{xml}:1: DOCTYPE/ENTITY declarations are not allowed in IR XML"


def _const_model(tmp_path: Path) -> tuple[Path, np.ndarray]:
    """A saved IR whose one Const (f32[3], by numpy) feeds the Result."""
    build = GraphBuilder()
    values = np.array([1.5, -2.0, 4.25], np.float32)
    build.result(build.const(values))
    return irtool.save(Model(build.graph), tmp_path / "m.xml"), values


def test_read_model_takes_the_bin_given_and_collects_problems(tmp_path: Path) -> None:
    """``read_model(xml, bin)`` reads the Consts from the .bin named, wherever it is (and
    ``read_model_bytes`` from the bytes given), and with ``problems`` collects what is
    wrong instead of raising."""
    xml, values = _const_model(tmp_path)
    moved = tmp_path / "elsewhere" / "weights.bin"
    moved.parent.mkdir()
    xml.with_suffix(".bin").rename(moved)
    for model in (read_model(xml, moved), read_model_bytes(xml.read_bytes(), moved.read_bytes())):
        const = next(layer for layer in model.graph.layers if layer.type == "Const")
        assert np.array_equal(np.frombuffer(const.const.view(), np.float32), values)
    xml.write_text(xml.read_text().replace("<dim>3</dim>", "<dim>three</dim>", 1))
    found: list = []
    model = read_model(xml, moved, problems=found)
    assert [d.code for d in found] == ["BAD_DIM"] and model.path == str(xml)


def test_the_tree_read_has_the_weights_and_the_nets_line(tmp_path: Path) -> None:
    """A file the schema refuses is read again as a whole tree: its Consts still come from
    the .bin (no FILE_UNREADABLE), and a .bin of other bytes is reported on <net>'s line."""
    xml, _ = _const_model(tmp_path)
    text = xml.read_text()
    assert text.splitlines()[1].startswith("<net ")
    xml.write_text(text.replace("<layers>", '<layers extra="1">', 1))  # not in the schema
    data = bytearray(xml.with_suffix(".bin").read_bytes())
    data[0] ^= 1
    xml.with_suffix(".bin").write_bytes(bytes(data))
    found = irtool.validate(xml)
    assert sorted(d.code for d in found) == ["BIN_MISMATCH", "XSD"], found
    assert [d.line for d in found if d.code == "BIN_MISMATCH"] == [2]


@pytest.mark.saves_invalid_ir
@pytest.mark.parametrize("reader", READERS)
def test_what_the_net_holds_is_read_and_written_back(reader: str, tmp_path: Path) -> None:
    """Below <net>: the layers and edges, the model's rt_info (the weights record added on
    save) and an element IR does not have, kept after them (the schema has no place for
    it: the copy breaks the schema as the source does); OpenVINO reads the copy."""
    text = GOOD.replace("</net>", '\t<extra a="1"><b/></extra>\n</net>', 1)
    text = text.replace('<port id="0" precision="FP32">', '<note/><port id="0" precision="FP32" '
                        'custom="y">', 1)  # in the Result's <input>
    text = text.replace("\t\t</layer>\n\t</layers>", '\t\t\t<custom k="v"/>\n\t\t</layer>\n'
                        '\t</layers>', 1)  # the Result's last child
    xml = _write(tmp_path, text)
    model = READERS[reader](xml)
    assert [(p.id, p.extra) for p in model.graph.layer(1).inputs] == [(0, {"custom": "y"})]
    out = irtool.save(model, tmp_path / "out" / "m.xml")
    root = etree.parse(str(out)).getroot()
    assert [child.tag for child in root] == ["layers", "edges", "rt_info", "extra"]
    assert [child.tag for child in root.find("rt_info")] == ["note", "irtool_weights"]
    assert [(layer.get("id"), layer.get("type")) for layer in root.find("layers")] == [
        ("0", "Parameter"), ("1", "Result")]
    assert [(child.tag, dict(child.attrib)) for child in root.find("layers")[1]][-1] == (
        "custom", {"k": "v"})
    extra = root.find("extra")
    assert (extra.attrib, [child.tag for child in extra]) == ({"a": "1"}, ["b"])
    assert root.find("layers").find("layer").find("rt_info") is None
    assert ov.Core().read_model(str(out)).get_rt_info("note").astype(str) == "kept"


def test_a_lenient_read_places_a_problem_of_no_layer_in_no_scope(tmp_path: Path) -> None:
    xml = _write(tmp_path, GOOD.replace('version="11"', 'version="12"', 1))
    for reader in (lambda found: read_model(xml, problems=found),
                   lambda found: read_model_bytes(xml.read_bytes(), file=str(xml),
                                                  problems=found)):
        found: list = []
        reader(found)
        assert [(d.code, d.line, d.layer_id, d.scope) for d in found] == [
            ("IR_VERSION", 2, None, "")]
    found = []
    xml.write_text(GOOD.replace("<dim>2</dim>", "<dim>two</dim>", 1))
    model = read_model(xml, problems=found)
    assert [d.code for d in found] == ["BAD_DIM"]
    assert model.graph.layer(0).outputs[0].dims == (-1,)  # read as a dynamic dim
    for dim, problems, dims in ((-5, ["BAD_DIM"], (-1,)), (2**40, [], (2**40,))):
        found = []
        xml.write_text(GOOD.replace("<dim>2</dim>", f"<dim>{dim}</dim>", 1))
        model = read_model(xml, problems=found)
        assert ([d.code for d in found], model.graph.layer(0).outputs[0].dims) == (problems, dims)


def test_a_document_in_memory_is_named_memory() -> None:
    with pytest.raises(IRParseError) as err:
        read_model_bytes(GOOD.replace("<dim>2</dim>", "<dim>two</dim>", 1).encode())
    assert str(err.value).startswith("<memory>:8: layer 0 'x': port 0 has dim 'two'")


# How the saved f32[3] Const is broken -> the one problem the reader reports on its layer
# (an absent shape is the empty one, a scalar's, as IR writes scalars).
CONST_BREAKS = {
    "no-shape": (' shape="3"', "", None,
                 ("CONST_SIZE", "Const of f32[] needs 4 bytes but size is 12")),
    "unknown-type": ('element_type="f32"', 'element_type="f99"', None,
                     ("ELEMENT_TYPE", "Const has unknown element_type 'f99'")),
    "no-type": ('element_type="f32" ', "", None,
                ("ELEMENT_TYPE", "Const has unknown element_type None")),
    "absurd-dim": ('shape="3"', f'shape="{2**40 + 1}"', None,
                   ("BAD_DIM", f"Const shape '{2**40 + 1}' has an absurd dimension")),
    "bin-ends-inside": ("", "", 8,
                        ("CONST_OUT_OF_BOUNDS",
                         "Const data [0, 12) lies beyond the end of the .bin (8 bytes)")),
}


@pytest.mark.parametrize("case", CONST_BREAKS)
def test_a_broken_const_is_one_problem_on_its_layer(case: str, tmp_path: Path) -> None:
    old, new, cut, (code, message) = CONST_BREAKS[case]
    xml, _ = _const_model(tmp_path)
    text = xml.read_text()
    assert old in text
    xml.write_text(text.replace(old, new, 1))
    if cut is not None:
        xml.with_suffix(".bin").write_bytes(xml.with_suffix(".bin").read_bytes()[:cut])
    const = etree.parse(str(xml)).getroot().find("layers/layer[@type='Const']")
    found: list = []
    read_model(xml, problems=found)
    assert [(d.code, d.message, d.line, d.layer_id) for d in found] == [
        (code, message, const.sourceline, int(const.get("id")))]


def test_a_layer_without_version_is_named_with_none(tmp_path: Path) -> None:
    """A layer with no version attribute: the reader says so, and the operation it names
    has no version (shown as "?"), not one made up."""
    xml = _write(tmp_path, GOOD.replace(' version="opset1">', ">", 1))
    found = irtool.validate(xml)
    assert sorted(d.code for d in found) == ["LAYER_ATTR", "UNKNOWN_OP", "XSD"]
    (unknown,) = [d.message for d in found if d.code == "UNKNOWN_OP"]
    assert unknown.startswith("operation Parameter-? is known neither")
