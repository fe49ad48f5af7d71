"""The streamed first read checks the schema without its identity constraints
(``xsd.load_stream_schema``: they were most of the schema's time on large IRs); a file
that breaks one of them must get exactly the diagnostics the whole schema gives, and a
valid file must not be read twice.

The IR is OpenVINO's (an ONNX Loop read by OpenVINO and saved), each mutation made with
lxml, the expected diagnostics those of a read against the whole schema.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import openvino as ov
import pytest
from lxml import etree
from onnx import TensorProto, helper

import irtool
from irtool.validation import reading, xsd

PARSER = etree.XMLParser(remove_blank_text=False)


@pytest.fixture(scope="module")
def loop_xml(tmp_path_factory: pytest.TempPathFactory) -> Path:
    body = helper.make_graph(
        [helper.make_node("Add", ["x_in", "one"], ["x_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_in", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_out", TensorProto.FLOAT, [2])],
        [onnx.numpy_helper.from_array(np.ones(2, np.float32), "one")])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["n", "c", "x"], ["y"], body=body)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        [onnx.numpy_helper.from_array(np.array(3, np.int64), "n"),
         onnx.numpy_helper.from_array(np.array(True), "c")])
    out = tmp_path_factory.mktemp("loop")
    onnx.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
                    out / "m.onnx")
    ov.save_model(ov.Core().read_model(out / "m.onnx"), out / "m.xml", compress_to_fp16=False)
    return out / "m.xml"


def _duplicate_layer_id(net: etree._Element) -> None:
    first, second = net.findall("layers/layer")[:2]
    second.set("id", first.get("id"))


def _duplicate_body_layer_id(net: etree._Element) -> None:
    first, second = net.findall(".//body/layers/layer")[:2]
    second.set("id", first.get("id"))


def _dangling_edge(net: etree._Element) -> None:
    net.find("edges/edge").set("to-layer", "4242")


def _duplicate_port_id(net: etree._Element) -> None:
    layer = next(el for el in net.iter("layer") if el.find("input/port") is not None
                 and el.find("output/port") is not None)
    layer.find("output/port").set("id", layer.find("input/port").get("id"))


MUTATIONS: dict[str, tuple[Callable[[etree._Element], None], str]] = {
    "duplicate layer id": (_duplicate_layer_id, "Duplicate key-sequence"),
    "duplicate body layer id": (_duplicate_body_layer_id, "Duplicate key-sequence"),
    "dangling edge": (_dangling_edge, "No match found for key-sequence"),
    "duplicate port id": (_duplicate_port_id, "Duplicate key-sequence"),
}


def _mutated(loop_xml: Path, tmp_path: Path, mutate: Callable[[etree._Element], None]) -> Path:
    tree = etree.parse(str(loop_xml), PARSER)
    mutate(tree.getroot())
    xml = tmp_path / "m.xml"
    tree.write(str(xml))
    xml.with_suffix(".bin").write_bytes(loop_xml.with_suffix(".bin").read_bytes())
    return xml


def _formatted(found: list) -> list[str]:
    return [d.format() for d in found]


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_identity_breaks_get_the_whole_schemas_diagnostics(
        loop_xml: Path, tmp_path: Path, mutation: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    mutate, message = MUTATIONS[mutation]
    xml = _mutated(loop_xml, tmp_path, mutate)
    streamed = irtool.validate(xml)
    assert any(d.code == "XSD" and message in d.message for d in streamed), \
        _formatted(streamed)
    # The same as when the stream checks the whole schema (identity constraints included).
    monkeypatch.setattr(reading, "load_stream_schema", xsd.load_schema)
    assert _formatted(streamed) == _formatted(irtool.validate(xml))


def test_a_valid_file_is_read_once(loop_xml: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def second_read(*args: object) -> None:
        raise AssertionError("a valid file was read a second time")

    monkeypatch.setattr(reading, "_read_tree", second_read)
    assert irtool.validate(loop_xml) == []


def test_the_stream_schema_has_no_identity_constraints() -> None:
    schema, why = xsd.load_stream_schema(11)
    assert schema is not None, why
    whole, _ = xsd.load_schema(11)
    doc = etree.fromstring(b'<net name="n" version="11"><layers>'
                           b'<layer id="0" name="a" type="Parameter" version="opset1"/>'
                           b'<layer id="0" name="b" type="Parameter" version="opset1"/>'
                           b'</layers><edges/></net>')
    assert schema.validate(doc) and not whole.validate(doc)
