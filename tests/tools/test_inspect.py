"""``irtool inspect``: the summary in words and the graphviz drawing.

The IR under inspection is written by OpenVINO (not by irtool's converter), and
the expected port maps / back edges are read from that XML with ElementTree,
independently of irtool's reader.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import onnx
import openvino as ov
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from support.onnx_models import predict_net_model

from irtool.cli import main


def _ov_ir(model: onnx.ModelProto, folder: Path, name: str) -> Path:
    onnx_path = folder / f"{name}.onnx"
    onnx.save(model, str(onnx_path))
    xml = folder / f"{name}.xml"
    ov.save_model(ov.Core().read_model(str(onnx_path)), str(xml), compress_to_fp16=False)
    return xml


def if_in_loop_model() -> onnx.ModelProto:
    """Loop(3) whose body holds an If on (i == 0): x+1 on the first iteration, x*2 after."""
    then_g = h.make_graph([h.make_node("Add", ["x_in", "one"], ["t"])], "then", [],
                          [h.make_tensor_value_info("t", T.FLOAT, [2])])
    else_g = h.make_graph([h.make_node("Mul", ["x_in", "two"], ["e"])], "else", [],
                          [h.make_tensor_value_info("e", T.FLOAT, [2])])
    body = h.make_graph(
        [h.make_node("Equal", ["i", "zero"], ["first"]),
         h.make_node("If", ["first"], ["x_out"], then_branch=then_g, else_branch=else_g),
         h.make_node("Identity", ["c_in"], ["c_out"])],
        "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("c_in", T.BOOL, []),
         h.make_tensor_value_info("x_in", T.FLOAT, [2])],
        [h.make_tensor_value_info("c_out", T.BOOL, []),
         h.make_tensor_value_info("x_out", T.FLOAT, [2])],
        initializer=[h.make_tensor("zero", T.INT64, [], [0])])
    graph = h.make_graph(
        [h.make_node("Loop", ["M", "", "x"], ["y"], body=body)], "if_in_loop",
        [h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_value_info("y", T.FLOAT, [2])],
        initializer=[h.make_tensor("M", T.INT64, [], [3]), h.make_tensor("one", T.FLOAT, [], [1]),
                     h.make_tensor("two", T.FLOAT, [], [2])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 16)])


@pytest.fixture(scope="module")
def predict_xml(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _ov_ir(predict_net_model(), tmp_path_factory.mktemp("pn"), "predict_net")


def _xml_loop(xml: Path) -> tuple[ET.Element, dict[str, str]]:
    """The first Loop layer and its body's layer names by id, read with ElementTree."""
    root = ET.parse(xml).getroot()
    loop = next(el for el in root.iter("layer") if el.get("type") == "Loop")
    names = {el.get("id"): el.get("name") for el in loop.find("body").find("layers")}
    return loop, names


def _inspect(capsys: pytest.CaptureFixture, *args: str) -> str:
    assert main(["inspect", *args]) == 0
    return capsys.readouterr().out


def test_summary_states_port_map_and_back_edges(predict_xml: Path,
                                                capsys: pytest.CaptureFixture) -> None:
    out = _inspect(capsys, str(predict_xml))
    loop, names = _xml_loop(predict_xml)
    root = ET.parse(predict_xml).getroot()
    top = root.find("layers")
    for param in (el for el in top if el.get("type") == "Parameter"):
        et = param.find("data").get("element_type")
        assert re.search(rf"^  {re.escape(param.get('name'))}: {et}\[", out, re.M)
    assert re.search(r"^  Loop-opset5\s+1$", out, re.M)
    assert re.search(r"^  Add-opset1\s+2$", out, re.M)  # the two Adds of the body count
    assert re.search(r'trip count: input port 0 <- Const "[^"]+" = 10$', out, re.M)
    assert re.search(r'execution condition: input port 1 <- Parameter "keepgoing"$', out, re.M)
    edges = loop.find("back_edges")
    assert len(edges) == 2
    for edge in edges:
        line = f'Result "{names[edge.get("from-layer")]}" -> ' \
               f'Parameter "{names[edge.get("to-layer")]}"'
        assert line in out
    for entry in loop.find("port_map"):
        ext = int(entry.get("external_port_id"))
        lid = entry.get("internal_layer_id")
        inner = f'"{names[lid]}" (layer {lid})'
        hits = [ln for ln in out.splitlines() if inner in ln]
        assert hits, f"port map entry for {inner} not described"
        if ext >= 0:
            port = f"input port {ext}" if entry.tag == "input" else f"output port {ext}"
            assert any(port in ln for ln in hits), hits
        else:
            assert any(f"purpose {entry.get('purpose')}" in ln for ln in hits), hits
        if entry.get("axis") is not None:
            assert any(f"axis {entry.get('axis')}, start" in ln for ln in hits), hits
        if entry.tag == "output" and ext >= 0:
            role = "concatenated over iterations" if entry.get("axis") is not None \
                else "value of the last iteration"
            assert any(role in ln for ln in hits), hits


def test_nested_control_flow_is_indented(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    xml = _ov_ir(if_in_loop_model(), tmp_path, "nested")
    out = _inspect(capsys, str(xml))
    lines = out.splitlines()
    loop_line = next(ln for ln in lines if re.match(r"\s*Loop \"", ln))
    if_line = next(ln for ln in lines if re.match(r"\s*If \"", ln))
    indent = len(loop_line) - len(loop_line.lstrip())
    assert len(if_line) - len(if_line.lstrip()) > indent
    assert lines.index(if_line) > lines.index(loop_line)
    assert any("then port map:" in ln for ln in lines)
    else_at = next(i for i, ln in enumerate(lines) if "else_body:" in ln)
    assert "Multiply-opset1" in lines[else_at + 1]
    assert re.search(r"condition: input port 0 <- Equal ", out)


def test_onnx_input_is_converted_first(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "pn.onnx"
    onnx.save(predict_net_model(), str(path))
    out = _inspect(capsys, str(path))
    assert "converted to IR with irtool first" in out
    assert "Loop" in out and "back edges:" in out


# -- DOT --------------------------------------------------------------------------------------


@dataclass
class DotGraph:
    """A parsed (sub)graph: node ids, edges with attributes, nested subgraphs."""

    name: str
    nodes: set[str] = field(default_factory=set)
    edges: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    subgraphs: list[DotGraph] = field(default_factory=list)

    def all_nodes(self) -> set[str]:
        out = set(self.nodes)
        for sub in self.subgraphs:
            out |= sub.all_nodes()
        return out

    def all_edges(self) -> list[tuple[str, str, dict[str, str]]]:
        out = list(self.edges)
        for sub in self.subgraphs:
            out += sub.all_edges()
        return out

    def all_subgraphs(self) -> list[DotGraph]:
        out = []
        for sub in self.subgraphs:
            out += [sub, *sub.all_subgraphs()]
        return out


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|->|[{}\[\];=,]|[A-Za-z0-9_.]+')


def parse_dot(text: str) -> DotGraph:
    """A small DOT parser for what irtool writes: statements, attribute lists, subgraphs."""
    tokens = [t[1:-1] if t.startswith('"') else t for t in _TOKEN.findall(text)]
    pos = 0

    def attrs() -> dict[str, str]:
        nonlocal pos
        out: dict[str, str] = {}
        assert tokens[pos] == "["
        pos += 1
        while tokens[pos] != "]":
            key = tokens[pos]
            assert tokens[pos + 1] == "="
            out[key] = tokens[pos + 2]
            pos += 3
            if tokens[pos] == ",":
                pos += 1
        pos += 1
        return out

    def body(graph: DotGraph) -> None:
        nonlocal pos
        assert tokens[pos] == "{"
        pos += 1
        while tokens[pos] != "}":
            tok = tokens[pos]
            if tok == "subgraph":
                sub = DotGraph(tokens[pos + 1])
                pos += 2
                body(sub)
                graph.subgraphs.append(sub)
            elif tok in ("graph", "node", "edge") and tokens[pos + 1] == "[":
                pos += 1
                attrs()
            elif tokens[pos + 1] == "=":
                pos += 3
            elif tokens[pos + 1] == "->":
                src, dst = tok, tokens[pos + 2]
                pos += 3
                graph.edges.append((src, dst, attrs() if tokens[pos] == "[" else {}))
            else:
                graph.nodes.add(tok)
                pos += 1
                if tokens[pos] == "[":
                    attrs()
            if tokens[pos] == ";":
                pos += 1
        pos += 1

    assert tokens[0] == "digraph"
    graph = DotGraph(tokens[1])
    pos = 2
    body(graph)
    assert pos == len(tokens), "trailing tokens"
    return graph


def test_dot_has_a_cluster_per_body_and_dashed_back_edges(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    xml = _ov_ir(if_in_loop_model(), tmp_path, "nested")
    dot_path = tmp_path / "g.dot"
    _inspect(capsys, str(xml), "--dot", str(dot_path))
    graph = parse_dot(dot_path.read_text())
    clusters = graph.all_subgraphs()
    assert all(c.name.startswith("cluster_") for c in clusters)
    assert len(clusters) == 3  # Loop body, If then_body, If else_body
    loop_body = graph.subgraphs[0]
    assert {c.name for c in loop_body.subgraphs} and len(loop_body.subgraphs) == 2
    root = ET.parse(xml).getroot()
    loop = next(el for el in root.iter("layer") if el.get("type") == "Loop")
    back = [(s, d) for s, d, a in graph.all_edges()
            if a.get("style") == "dashed" and a.get("color") == "red"]
    assert len(back) == len(loop.find("back_edges")) == 1
    for src, dst in back:  # both ends are body layers, drawn inside the Loop's cluster
        assert src in loop_body.nodes and dst in loop_body.nodes
    dotted = [(s, d) for s, d, a in graph.all_edges() if a.get("style") == "dotted"]
    connected = [e for el in root.iter("layer") if el.get("type") in ("Loop", "If")
                 for tag in ("port_map", "then_port_map", "else_port_map")
                 for e in (el.find(tag) if el.find(tag) is not None else [])
                 if int(e.get("external_port_id")) >= 0]
    assert len(dotted) == len(connected)
    everything = graph.all_nodes()
    for src, dst in dotted:  # one end outside each body, one inside it
        assert src in everything and dst in everything
        assert (src in loop_body.all_nodes()) != (dst in loop_body.all_nodes()) or \
            any((src in c.nodes) != (dst in c.nodes) for c in loop_body.subgraphs)


def test_predict_net_dot_edges_match_the_ir(predict_xml: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture) -> None:
    dot_path = tmp_path / "pn.dot"
    _inspect(capsys, str(predict_xml), "--dot", str(dot_path))
    graph = parse_dot(dot_path.read_text())
    loop, names = _xml_loop(predict_xml)
    (cluster,) = graph.subgraphs
    back = {(s, d) for s, d, a in cluster.edges if a.get("style") == "dashed"}
    lid = loop.get("id")
    expected = {(f"{lid}/body/{e.get('from-layer')}", f"{lid}/body/{e.get('to-layer')}")
                for e in loop.find("back_edges")}
    assert back == expected
    assert len(cluster.nodes) == len(names)


# CI installs graphviz (.ci/run), so there a missing `dot` is a failure, not a skip.
@pytest.mark.skipif(shutil.which("dot") is None and not os.environ.get("CI"),
                    reason="graphviz `dot` is not installed (apt-get install graphviz)")
def test_svg_render(predict_xml: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    svg = tmp_path / "pn.svg"
    _inspect(capsys, str(predict_xml), "--svg", str(svg))
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    assert "back edge" in svg.read_text()


def test_svg_without_graphviz_says_how_to_install(predict_xml: Path, tmp_path: Path) -> None:
    env = dict(os.environ, PATH=str(tmp_path / "empty"))  # no `dot` on this PATH
    proc = subprocess.run([sys.executable, "-m", "irtool", "inspect", str(predict_xml),
                           "--dot", str(tmp_path / "g.dot"), "--svg", str(tmp_path / "g.svg")],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert "apt-get install graphviz" in proc.stderr.strip().splitlines()[-1]
    assert (tmp_path / "g.dot").is_file() and not (tmp_path / "g.svg").exists()


def _node_labels(text: str) -> dict[str, str]:
    """Node id -> label, over the whole DOT text (parse_dot keeps no node attributes)."""
    return {m.group(1): m.group(2).replace("\\n", "\n") for m in
            re.finditer(r'^\s*"([^"]+)" \[label="((?:[^"\\]|\\.)*)"', text, re.MULTILINE)}


def test_drawing_labels_port_maps_by_purpose(predict_xml: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture) -> None:
    """OpenVINO's own IR of the spec's Loop: the Loop is drawn above its body (every port-map
    arrow runs from the Loop down), each port map says what it is for, the iteration number
    and the condition are marked, edges carry OpenVINO's types, and there is a legend."""
    dot_path = tmp_path / "pn.dot"
    _inspect(capsys, str(predict_xml), "--dot", str(dot_path))
    text = dot_path.read_text()
    graph = parse_dot(text)
    labels = _node_labels(text)
    loop, _ = _xml_loop(predict_xml)
    lid = loop.get("id")
    dotted = [(s, d, a) for s, d, a in graph.all_edges() if a.get("style") == "dotted"]
    assert dotted and all(s == lid for s, _, _ in dotted)  # Loop above: it is every tail
    by_body_layer = {d: a for _, d, a in dotted}
    for entry in loop.find("port_map"):
        body_id = f"{lid}/body/{entry.get('internal_layer_id')}"
        purpose = entry.get("purpose")
        if purpose == "current_iteration":
            assert "(iteration number)" in labels[body_id]
            continue
        if purpose == "execution_condition":
            assert "(condition" in labels[body_id]
            continue
        label = by_body_layer[body_id]["label"]
        assert label.startswith(f"port {entry.get('external_port_id')}: ")
        axis = entry.get("axis")
        if entry.tag == "input":
            assert label.endswith("carried: initial value") if axis is None else \
                f"sliced on axis {axis}" in label
        else:
            assert by_body_layer[body_id].get("dir") == "back"
            assert label.endswith("last iteration's value") if axis is None else \
                f"concatenated on axis {axis}" in label
    back = [a for _, _, a in graph.all_edges() if a.get("style") == "dashed"]
    assert len(back) == len(loop.find("back_edges")) and all(
        a["label"] == "back edge" for a in back)
    # data edges: the element type and shape OpenVINO gives each model input
    model = ov.Core().read_model(str(predict_xml))
    types = {i.get_any_name(): f"{i.get_element_type().get_type_name()}"
             f"{str(i.get_partial_shape()).replace(' ', '')}" for i in model.inputs}
    root = ET.parse(predict_xml).getroot()
    params = {el.get("id"): el.get("name") for el in root.find("layers")
              if el.get("type") == "Parameter"}
    seen = set()
    for src, dst, attrs in graph.edges:
        if src in params and dst == lid:
            assert attrs["label"].split("\\n")[-1] == types[params[src]]
            seen.add(src)
    assert seen == set(params)
    # the trip count and condition inputs say so
    incoming = {a["label"].split("\\n")[0] for s, d, a in graph.edges if d == lid}
    assert {"trip count", "condition"} <= incoming
    legend = re.search(r'^\s*legend \[.*label="((?:[^"\\]|\\.)*)"', text, re.MULTILINE)
    assert "legend" in graph.nodes and legend is not None
    for words in ("back edge", "port map", "element type[shape]", "iteration number"):
        assert words in legend.group(1)


@pytest.mark.parametrize("sample", ["predict_net", "scan_cumsum", "if_select"])
@pytest.mark.skipif(shutil.which("dot") is None and not os.environ.get("CI"),
                    reason="graphviz `dot` is not installed (apt-get install graphviz)")
def test_samples_render_to_png(sample: str, tmp_path: Path,
                               capsys: pytest.CaptureFixture) -> None:
    from support import SAMPLES

    png = tmp_path / f"{sample}.png"
    _inspect(capsys, str(SAMPLES / f"{sample}.onnx"), "--png", str(png))
    data = png.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 1000


def test_the_readme_shows_a_rendered_loop() -> None:
    from support import REPO

    assert "![" in (REPO / "README.md").read_text() and "docs/loop.png" in (
        REPO / "README.md").read_text()
    assert (REPO / "docs" / "loop.png").read_bytes().startswith(b"\x89PNG")


def test_inspect_lists_variables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A stateful IR written by OpenVINO: each variable id with the type and shape its
    ReadValue-6 declares and the layers reading and assigning it (ids read from the XML)."""
    from support.stateful import two_variables

    xml = two_variables(tmp_path / "vars.xml")
    root = ET.parse(xml).getroot()
    layers = {(el.get("type"), el.find("data").get("variable_id")): el
              for el in root.iter("layer") if el.get("type") in ("ReadValue", "Assign")}
    assert main(["inspect", str(xml)]) == 0
    out = capsys.readouterr().out
    read, assign = layers[("ReadValue", "acc")], layers[("Assign", "acc")]
    assert (f'  "acc" f32[2,3]: read by {read.get("id")} "{read.get("name")}", assigned by '
            f'{assign.get("id")} "{assign.get("name")}"') in out.splitlines()
    read, assign = layers[("ReadValue", "prev")], layers[("Assign", "prev")]
    assert (f'  "prev": read by {read.get("id")} "{read.get("name")}", assigned by '
            f'{assign.get("id")} "{assign.get("name")}"') in out.splitlines()


def test_inspect_json_lists_variables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from support.stateful import two_variables

    xml = two_variables(tmp_path / "vars.xml")
    root = ET.parse(xml).getroot()
    assigns = {el.find("data").get("variable_id"): int(el.get("id"))
               for el in root.iter("layer") if el.get("type") == "Assign"}
    assert main(["inspect", str(xml), "--json"]) == 0
    found = {v["id"]: v for v in json.loads(capsys.readouterr().out)["variables"]}
    assert (found["acc"]["type"], found["acc"]["shape"]) == ("f32", "2,3")
    assert (found["prev"]["type"], found["prev"]["shape"]) == (None, None)
    assert {vid: [w["layer"] for w in v["assigned_by"]] for vid, v in found.items()} == {
        vid: [layer] for vid, layer in assigns.items()}
