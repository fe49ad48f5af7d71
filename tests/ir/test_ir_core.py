"""In-memory IR and XML/.bin round trip on IR that OpenVINO writes itself."""

from __future__ import annotations

import os
from pathlib import Path

import networkx as nx
import numpy as np
import openvino as ov
import pytest
from onnx.backend.test.case.node import collect_testcases

import irtool
from irtool.ir import (
    ConstData,
    GraphBuilder,
    Model,
    element_type,
    parse_shape,
    serialize,
)
from irtool.ir.graph import Graph, join_names, split_names

CONTROL_FLOW_CASES = ["test_loop11", "test_scan9_sum", "test_scan_sum", "test_if"]


@pytest.fixture(scope="module")
def node_cases() -> dict:
    return {c.name: c for c in collect_testcases()}


def _ov_files(case, tmp: Path) -> Path:
    import onnx

    onnx_path = tmp / f"{case.name}.onnx"
    onnx.save(case.model, onnx_path)
    xml = tmp / f"{case.name}.xml"
    ov.save_model(ov.Core().read_model(str(onnx_path)), str(xml), compress_to_fp16=False)
    return xml


def _infer(xml: Path, inputs: list[np.ndarray]) -> list[np.ndarray]:
    compiled = ov.Core().compile_model(str(xml), "CPU")
    result = compiled(inputs)
    return [np.asarray(result[o]) for o in compiled.outputs]


@pytest.mark.parametrize("name", CONTROL_FLOW_CASES)
def test_round_trip_control_flow_ir_is_bit_identical(name: str, node_cases: dict,
                                                     tmp_path: Path) -> None:
    case = node_cases[name]
    xml = _ov_files(case, tmp_path)
    inputs = list(case.data_sets[0][0])
    model = irtool.load(xml)
    out = tmp_path / "rt" / "m.xml"
    out.parent.mkdir()
    irtool.save(model, out)
    expected = _infer(xml, inputs)
    actual = _infer(out, inputs)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype and a.shape == e.shape
        assert a.tobytes() == e.tobytes()
    # Writing is deterministic: the same model gives the same bytes.
    assert serialize(model) == serialize(irtool.load(out))


def _scan_ir(tmp: Path, reverse: bool) -> Path:
    """OpenVINO's IR of an ONNX Scan running a sum over the rows of x[4, 2] (both the input
    and the stacked output reversed when ``reverse``): a TensorIterator whose port map
    slices with start/end/stride (-1/0/-1 reversed)."""
    import onnx
    from onnx import helper
    from support.conversion import make_model, vi

    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "row"], ["s_out"]),
         helper.make_node("Identity", ["s_out"], ["y_row"])], "body",
        [vi("s_in", np.float32, [2]), vi("row", np.float32, [2])],
        [vi("s_out", np.float32, [2]), vi("y_row", np.float32, [2])])
    scan = helper.make_node("Scan", ["init", "x"], ["total", "y"], body=body, num_scan_inputs=1,
                            scan_input_directions=[int(reverse)],
                            scan_output_directions=[int(reverse)])
    model = make_model([scan], [vi("init", np.float32, [2]), vi("x", np.float32, [4, 2])],
                       [vi("total", np.float32, [2]), vi("y", np.float32, [4, 2])])
    onnx.save(model, tmp / "scan.onnx")
    xml = tmp / "scan.xml"
    ov.save_model(ov.Core().read_model(str(tmp / "scan.onnx")), str(xml), compress_to_fp16=False)
    return xml


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reversed"])
def test_tensor_iterator_slicing_attributes_survive(reverse: bool, tmp_path: Path) -> None:
    """The port map's start/end/stride/part_size are written back as OpenVINO wrote them,
    and OpenVINO runs the written IR in the same direction: a running sum of x's rows
    (suffix sums, reversed), by hand."""
    from lxml import etree

    xml = _scan_ir(tmp_path, reverse)
    out = irtool.save(irtool.load(xml), tmp_path / "rt" / "m.xml")

    def port_maps(path: Path) -> list[dict[str, str]]:
        root = etree.parse(str(path)).getroot()
        return [dict(e.attrib) for e in root.iterfind(".//layer[@type='TensorIterator']/"
                                                     "port_map/*")]

    written, original = port_maps(out), port_maps(xml)
    assert written == original
    sliced = [e for e in original if "axis" in e]
    assert sliced and all(e["stride"] == ("-1" if reverse else "1") for e in sliced)
    init = np.array([10, 20], np.float32)
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    rows = x[::-1] if reverse else x
    sums = init + np.cumsum(rows, axis=0)
    total, y = _infer(out, [init, x])
    assert np.array_equal(total, sums[-1])
    assert np.array_equal(y, sums[::-1] if reverse else sums)


def test_rt_info_and_unknown_attributes_survive(node_cases: dict, tmp_path: Path) -> None:
    xml = _ov_files(node_cases["test_loop11"], tmp_path)
    text = xml.read_text()
    text = text.replace('type="Loop" version="opset5">',
                        'type="Loop" version="opset5" my_attr="kept">'
                        '<rt_info><attribute name="fused_names" version="0" value="a,b"/>'
                        '</rt_info>', 1)
    xml.write_text(text)
    model = irtool.load(xml)
    loop = model.graph.layers_of_type("Loop")[0]
    assert loop.extra["my_attr"] == "kept"
    assert loop.rt_info and loop.rt_info[0].attrs["value"] == "a,b"
    xml2, _ = serialize(model)
    assert b'my_attr="kept"' in xml2 and b'value="a,b"' in xml2
    assert b'name="OpenVINO Runtime"' in xml2  # the model's own rt_info


def test_constants_are_deduplicated_in_bin(tmp_path: Path) -> None:
    """Equal payloads are stored once; distinct ones one after the other, in the order
    they are met, with nothing between them (the .bin the XML's offsets point into)."""
    build = GraphBuilder()
    first = np.arange(6, dtype=np.float32).reshape(2, 3)
    other = np.full((2, 3), 7, np.float32)
    a = build.const(first)
    b = build.const(first.copy())
    c = build.const(other)
    (s,) = build.op("Add", "opset1", [a, b], {"auto_broadcast": "numpy"}, outputs=[a.info])
    build.result(build.op("Add", "opset1", [s, c], {"auto_broadcast": "numpy"},
                          outputs=[a.info])[0])
    g = build.graph
    _, payload = serialize(Model(g))
    assert payload == first.tobytes() + other.tobytes()
    irtool.save(Model(g), tmp_path / "m.xml")
    assert (tmp_path / "m.bin").read_bytes() == first.tobytes() + other.tobytes()
    assert np.array_equal(_infer(tmp_path / "m.xml", [])[0], 2 * first + other)
    assert oct((tmp_path / "m.xml").stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _one_constant_model() -> Model:
    build = GraphBuilder()
    build.result(build.const(np.ones(3, dtype=np.float32)))
    return Model(build.graph)


def test_save_creates_missing_folders(tmp_path: Path) -> None:
    target = tmp_path / "new" / "deeper" / "m.xml"
    irtool.save(_one_constant_model(), target)
    assert sorted(p.name for p in target.parent.iterdir()) == ["m.bin", "m.xml"]
    assert np.array_equal(ov.Core().read_model(target).get_results()[0].input_value(0)
                          .get_node().get_data(), np.ones(3, np.float32))


@pytest.mark.parametrize("blocker", ["file_in_path", "xml_is_a_folder"])
def test_failed_save_leaves_nothing(tmp_path: Path, blocker: str) -> None:
    if blocker == "file_in_path":
        (tmp_path / "plain").write_text("not a folder")
        target = tmp_path / "plain" / "sub" / "m.xml"
    else:
        target = tmp_path / "m.xml"
        target.mkdir()
    before = sorted(tmp_path.rglob("*"))
    with pytest.raises(irtool.IRToolError) as err:
        irtool.save(_one_constant_model(), target)
    assert str(tmp_path) in str(err.value)
    assert sorted(tmp_path.rglob("*")) == before


def test_names_escape_commas() -> None:
    assert split_names(join_names(["a,b", "c"])) == ("a,b", "c")
    assert split_names("x") == ("x",)


@pytest.mark.parametrize("text, shape", [
    ("", ()), ("2,3", (2, 3)), ("?", (-1,)), ("1..10,4", (-1, 4)), ("...", None),
    ("[2,?]", (2, -1)),
])
def test_parse_shape(text: str, shape) -> None:
    assert parse_shape(text) == shape


def test_element_types_cover_openvino() -> None:
    for t in (ov.Type.f32, ov.Type.f16, ov.Type.bf16, ov.Type.i4, ov.Type.u1, ov.Type.u4,
              ov.Type.nf4, ov.Type.f8e4m3, ov.Type.f8e5m2, ov.Type.boolean, ov.Type.string,
              ov.Type.i64, ov.Type.u64, ov.Type.f64):
        et = element_type(t.get_type_name())
        assert et.bitwidth == (8 if t == ov.Type.string else t.bitwidth)
    assert element_type("FP32").dtype == np.float32
    assert element_type("BOOL").name == "boolean"


def test_const_data_packed_4bit_unpacks_low_nibble_first() -> None:
    data = ConstData(bytes([0x21, 0x0F]))
    assert data.to_numpy(element_type("u4"), (4,)).tolist() == [1, 2, 15, 0]
    assert data.to_numpy(element_type("i4"), (4,)).tolist() == [1, 2, -1, 0]


def test_string_constants_round_trip() -> None:
    arr = np.array(["ab", "", "xyz"], dtype=object)
    data = ConstData.from_array(arr)
    assert data.to_numpy(element_type("string"), (3,)).tolist() == ["ab", "", "xyz"]


@pytest.mark.parametrize("edges, acyclic", [
    ([], True),
    ([(0, 1), (1, 2), (0, 2), (2, 3)], True),  # a diamond: two paths to one layer
    ([(0, 1), (0, 1), (1, 2)], True),  # two edges between one pair of layers
    ([(0, 0)], False),  # a layer feeding itself
    ([(0, 1), (1, 2), (2, 1), (2, 3)], False),  # a cycle past the first layer
    ([(0, 1), (1, 0), (1, 0)], False),
])
def test_is_acyclic(edges: list[tuple[int, int]], acyclic: bool) -> None:
    graph = Graph()
    graph.nx.add_nodes_from(range(4))
    for u, v in edges:
        graph.connect(u, 0, v, 0)
    assert graph.is_acyclic() is acyclic
    assert nx.is_directed_acyclic_graph(graph.nx) is acyclic  # networkx agrees
