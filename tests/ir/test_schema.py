"""Tests of the IR XML schemas (schemas/ir_v11.xsd, schemas/ir_v10.xsd).

Positive: every IR that OpenVINO wrote for the ONNX node test cases (the
corpus of irtool/tools/corpus.py, slow) and a few IRs written here with OpenVINO
(Loop with an If in its body, rt_info at every level) must validate with no
error at all.  Negative: single mutations of a real IR must be rejected, with
the error reported on the line of the mutated element, because
``irtool validate`` prints ``file:line`` from the lxml error log.

Only lxml, onnx and openvino are used, never irtool, so the schema is tested
on its own.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import pytest
from lxml import etree
from support import CORPUS_CASES, REPO

from irtool.tools import corpus as ov_corpus

SCHEMAS = REPO / "schemas"

# What irtool reads IR with: no entities, no network.
PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)


def _schema(name: str) -> etree.XMLSchema:
    return etree.XMLSchema(etree.parse(str(SCHEMAS / name), PARSER))


@pytest.fixture(scope="module")
def schema11() -> etree.XMLSchema:
    return _schema("ir_v11.xsd")


@pytest.fixture(scope="module")
def schema10() -> etree.XMLSchema:
    return _schema("ir_v10.xsd")


def _errors(schema: etree.XMLSchema, doc: etree._Element | etree._ElementTree) -> list[str]:
    """All schema errors as ``line: message`` strings (empty when valid)."""
    if schema.validate(doc):
        return []
    return [f"{e.line}: {e.message}" for e in schema.error_log]


# ---------------------------------------------------------------------------
# IRs written by OpenVINO in this test (fast; the corpus test is the slow one)


def _loop_if_onnx():  # -> onnx.ModelProto
    """Loop whose body holds an If; the branches capture from two scopes up."""
    from onnx import TensorProto
    from onnx import helper as h

    def vi(name: str, elem: int, shape: list[int | str | None]):
        return h.make_tensor_value_info(name, elem, shape)

    def const(name: str, value: int):
        tensor = h.make_tensor(f"{name}_t", TensorProto.INT64, [], [value])
        return h.make_node("Constant", [], [name], value=tensor)

    f32, i64, b = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
    then_g = h.make_graph(
        [h.make_node("Add", ["acc_in", "x"], ["then_out"])], "then", [], [vi("then_out", f32, [3])]
    )
    else_g = h.make_graph(
        [h.make_node("Sub", ["acc_in", "x"], ["else_out"])], "else", [], [vi("else_out", f32, [3])]
    )
    body = h.make_graph(
        [
            const("two", 2),
            const("zero", 0),
            h.make_node("Mod", ["iter", "two"], ["rem"]),
            h.make_node("Equal", ["rem", "zero"], ["even"]),
            h.make_node("If", ["even"], ["acc_out"], then_branch=then_g, else_branch=else_g),
            h.make_node("Identity", ["cond_in"], ["cond_out"]),
            h.make_node("Identity", ["acc_out"], ["scan_out"]),
        ],
        "body",
        [vi("iter", i64, []), vi("cond_in", b, []), vi("acc_in", f32, [3])],
        [vi("cond_out", b, []), vi("acc_out", f32, [3]), vi("scan_out", f32, [3])],
    )
    graph = h.make_graph(
        [h.make_node("Loop", ["M", "cond", "acc0"], ["acc", "scan"], body=body)],
        "loop_if",
        [vi("M", i64, []), vi("cond", b, []), vi("acc0", f32, [3]), vi("x", f32, [3])],
        [vi("acc", f32, [3]), vi("scan", f32, [None, 3])],
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])


@pytest.fixture(scope="module")
def loop_if_xml(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import onnx
    import openvino as ov

    out = tmp_path_factory.mktemp("loop_if")
    onnx.save_model(_loop_if_onnx(), out / "m.onnx")
    model = ov.Core().read_model(out / "m.onnx")
    ov.save_model(model, out / "m.xml", compress_to_fp16=False)
    return out / "m.xml"


def _if_in_if_onnx():  # -> onnx.ModelProto
    """An If in the then-branch of an If: the same identity constraints nest."""
    from onnx import TensorProto
    from onnx import helper as h

    f32, b = TensorProto.FLOAT, TensorProto.BOOL

    def branch(op: str, out: str, nodes=()):
        return h.make_graph([*nodes, h.make_node(op, ["x", "x"], [out])], out, [],
                            [h.make_tensor_value_info(out, f32, [2])])

    inner = h.make_node("If", ["c2"], ["inner_out"], then_branch=branch("Add", "a"),
                        else_branch=branch("Mul", "m"))
    then_g = h.make_graph([inner, h.make_node("Sub", ["inner_out", "x"], ["t"])], "then", [],
                          [h.make_tensor_value_info("t", f32, [2])])
    graph = h.make_graph(
        [h.make_node("If", ["c1"], ["y"], then_branch=then_g, else_branch=branch("Div", "d"))],
        "if_in_if",
        [h.make_tensor_value_info(n, b, []) for n in ("c1", "c2")]
        + [h.make_tensor_value_info("x", f32, [2])],
        [h.make_tensor_value_info("y", f32, [2])],
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])


def test_if_inside_if_is_valid(schema11: etree.XMLSchema, tmp_path: Path) -> None:
    import onnx
    import openvino as ov

    onnx.save_model(_if_in_if_onnx(), tmp_path / "m.onnx")
    ov.save_model(ov.Core().read_model(tmp_path / "m.onnx"), tmp_path / "m.xml",
                  compress_to_fp16=False)
    doc = etree.parse(str(tmp_path / "m.xml"))
    assert len(doc.findall(".//then_body//layer[@type='If']")) == 1
    assert _errors(schema11, doc) == []


@pytest.fixture(scope="module")
def rt_info_xml(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An IR with rt_info on the model (nested, odd keys), a layer and ports."""
    import openvino as ov
    from openvino import opset13 as ops
    from openvino.preprocess import PrePostProcessor

    param = ops.parameter([1, 3], ov.Type.f32, name="x")
    relu = ops.relu(param)
    relu.get_rt_info()["user_data_note"] = "layer-level"
    relu.output(0).get_rt_info()["user_data_port"] = "port-level"
    model = ov.Model([ops.result(relu)], [param], "rt")
    model.set_rt_info("onnx", ["conversion_parameters", "framework"])
    model.set_rt_info("1", ["a key that is no XML name", "x"])
    ppp = PrePostProcessor(model)
    ppp.input().tensor().set_layout(ov.Layout("NC")).set_element_type(ov.Type.u8)
    model = ppp.build()
    out = tmp_path_factory.mktemp("rt_info") / "m.xml"
    ov.save_model(model, out, compress_to_fp16=False)
    return out


# ---------------------------------------------------------------------------
# The schemas themselves


@pytest.mark.parametrize("version", ["11", "10"])
def test_schemas_load_and_tell_good_from_bad(
    schema11: etree.XMLSchema, schema10: etree.XMLSchema, loop_if_xml: Path, version: str
) -> None:
    """Each schema accepts an IR OpenVINO wrote (in its version) and rejects the same IR
    with a layer that lost its required ``id``."""
    schema = schema11 if version == "11" else schema10
    good = etree.parse(str(loop_if_xml), PARSER)
    good.getroot().set("version", version)
    assert _errors(schema, good) == []
    bad = copy.deepcopy(good)
    layer = bad.find("layers/layer")
    del layer.attrib["id"]
    errors = _errors(schema, bad)
    assert errors, "a layer without id was accepted"
    assert any(e.startswith(f"{layer.sourceline}:") and "'id'" in e for e in errors), errors


def test_v10_schema_is_v11_with_version_10() -> None:
    """ir_v10.xsd is generated from ir_v11.xsd (see its header); keep them in step."""
    v11 = (SCHEMAS / "ir_v11.xsd").read_text(encoding="utf-8")
    v10 = (SCHEMAS / "ir_v10.xsd").read_text(encoding="utf-8")
    assert v11.replace('value="11"', 'value="10"').replace("IR v11", "IR v10") == v10


def test_version_selects_schema(
    schema11: etree.XMLSchema, schema10: etree.XMLSchema, loop_if_xml: Path
) -> None:
    tree = etree.parse(str(loop_if_xml), PARSER)
    assert _errors(schema11, tree) == []
    assert _errors(schema10, tree), "v10 schema must reject version 11"
    tree.getroot().set("version", "10")
    assert _errors(schema10, tree) == []
    assert _errors(schema11, tree), "v11 schema must reject version 10"


# ---------------------------------------------------------------------------
# Positive


def test_loop_with_if_body_is_valid(schema11: etree.XMLSchema, loop_if_xml: Path) -> None:
    tree = etree.parse(str(loop_if_xml), PARSER)
    types = {layer.get("type") for layer in tree.iter("layer")}
    assert {"Loop", "If"} <= types, "OpenVINO should keep both sub-graph operations"
    assert _errors(schema11, tree) == []


def test_rt_info_everywhere_is_valid(schema11: etree.XMLSchema, rt_info_xml: Path) -> None:
    tree = etree.parse(str(rt_info_xml), PARSER)
    # Make sure the IR really exercises the lax parts of the schema.
    assert tree.find("layers/layer/output/port/rt_info/attribute") is not None
    assert tree.find("layers/layer/rt_info/user_data") is not None
    assert tree.find("rt_info/conversion_parameters/framework") is not None
    assert _errors(schema11, tree) == []


@pytest.mark.slow
def test_whole_ov_corpus_is_valid(schema11: etree.XMLSchema) -> None:
    """Every IR OpenVINO wrote for the ONNX node tests validates with zero errors."""
    cases = ov_corpus.corpus_cases()
    assert len(cases) >= CORPUS_CASES, f"{len(cases)} corpus cases, not {CORPUS_CASES}"
    ops = {t for case in cases for t in case.op_types}
    assert {"Loop", "If", "TensorIterator"} <= ops, "corpus lacks control flow"
    failures = {}
    for case in cases:
        errors = _errors(schema11, etree.parse(str(case.xml), PARSER))
        if errors:
            failures[case.name] = errors[:3]
    assert failures == {}


# ---------------------------------------------------------------------------
# Negative: one mutation, rejected on the mutated element's line


def _dim_abc(net: etree._Element) -> tuple[etree._Element, str]:
    # A dim deep inside the Loop body, to check lines are right in bodies too.
    dim = net.find("layers/layer/body/layers/layer/output/port/dim")
    dim.text = "abc"
    return dim, "'abc' is not a valid value"


def _layer_copy(layers: etree._Element) -> etree._Element:
    """A copy of the first layer (a Parameter) right after it; no edge names it."""
    first = layers.find("layer")
    assert first.get("type") == "Parameter"
    twin = copy.deepcopy(first)
    first.addnext(twin)
    return twin


def _missing_layer_id(net: etree._Element) -> tuple[etree._Element, str]:
    twin = _layer_copy(net.find("layers"))
    del twin.attrib["id"]
    return twin, "attribute 'id' is required but missing"


def _duplicate_layer_id(net: etree._Element) -> tuple[etree._Element, str]:
    return _layer_copy(net.find("layers")), "Duplicate key-sequence"


def _duplicate_body_layer_id(net: etree._Element) -> tuple[etree._Element, str]:
    return _layer_copy(net.find("layers/layer/body/layers")), "Duplicate key-sequence"


def _unknown_precision(net: etree._Element) -> tuple[etree._Element, str]:
    port = net.find("layers/layer/output/port")
    port.set("precision", "FP31")
    return port, "'FP31' is not an element of the set"


def _port_map_without_layer(net: etree._Element) -> tuple[etree._Element, str]:
    entry = net.find("layers/layer/port_map/input")
    del entry.attrib["internal_layer_id"]
    return entry, "attribute 'internal_layer_id' is required but missing"


def _bad_purpose(net: etree._Element) -> tuple[etree._Element, str]:
    entry = net.find("layers/layer/port_map/input[@purpose]")
    entry.set("purpose", "iteration")
    return entry, "'iteration' is not an element of the set"


def _dangling_edge(net: etree._Element) -> tuple[etree._Element, str]:
    edge = net.find("edges/edge")
    edge.set("to-layer", "4242")
    return edge, "No match found for key-sequence ['4242']"


def _negative_edge_port(net: etree._Element) -> tuple[etree._Element, str]:
    edge = net.find("edges/edge")
    edge.set("from-port", "-1")
    return edge, "'-1' is not a valid value"


def _dim_below_minus_one(net: etree._Element) -> tuple[etree._Element, str]:
    dim = net.find(".//dim")
    dim.text = "-2"
    return dim, "less than the minimum value allowed ('-1')"


def _unknown_layer_child(net: etree._Element) -> tuple[etree._Element, str]:
    layer = net.find("layers/layer")
    extra = etree.SubElement(layer, "blobs")
    return extra, "This element is not expected"


MUTATIONS: dict[str, Callable[[etree._Element], tuple[etree._Element, str]]] = {
    "dim_abc": _dim_abc,
    "missing_layer_id": _missing_layer_id,
    "duplicate_layer_id": _duplicate_layer_id,
    "duplicate_body_layer_id": _duplicate_body_layer_id,
    "unknown_precision": _unknown_precision,
    "port_map_without_internal_layer_id": _port_map_without_layer,
    "bad_purpose": _bad_purpose,
    "dangling_edge": _dangling_edge,
    "negative_edge_port": _negative_edge_port,
    "dim_below_minus_one": _dim_below_minus_one,
    "unknown_layer_child": _unknown_layer_child,
}


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_mutation_rejected_on_its_line(
    schema11: etree.XMLSchema, loop_if_xml: Path, mutation: str
) -> None:
    tree = etree.parse(str(loop_if_xml), PARSER)
    target, expected = MUTATIONS[mutation](tree.getroot())
    path = tree.getpath(target)
    # Serialise and parse again so that source lines are those of the
    # mutated text, as a user's file would have them.
    text = etree.tostring(tree, encoding="unicode")
    mutated = etree.fromstring(text.encode(), PARSER).getroottree()
    line = mutated.xpath(path)[0].sourceline

    assert not schema11.validate(mutated)
    errors = [(e.line, e.message) for e in schema11.error_log]
    assert errors, "no error reported"
    assert any(msg_line == line and expected in msg for msg_line, msg in errors), (
        f"expected {expected!r} at line {line}, got {errors}"
    )
    # The mutation is the only thing wrong: nothing is reported elsewhere.
    assert {msg_line for msg_line, _ in errors} == {line}, errors
