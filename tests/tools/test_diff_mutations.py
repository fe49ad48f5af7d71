"""``irtool diff`` reports every mutation kind of irtool's IR fuzzer once, at the right place.

Each case makes one mutation with the fuzzer's own functions (``support.fuzz_ir``: the
mutations of the XML tree, of the .bin, the XML cut short) on a seed IR, OpenVINO's or
irtool's, recording what the fuzzer picked (its ``pick`` wrapped). The expected report is
worked out here from that record and the seed's XML alone: how many differences (none when
the mutation changes nothing that means anything: the same value again, an id nothing
refers to, an element type spelled another way, bytes no Const reads) and the line of the
element in A (the seed) and in B (the mutant), read from the two files' trees. Both
directions are checked: diff(seed, mutant) and diff(mutant, seed).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest
import support.fuzz_ir as fuzz_ir
from lxml import etree
from support.fuzz_ir import ONNX_CONTROL_FLOW, irtool_seeds, read_seeds
from support.fuzzing import RandomChooser, pick

from irtool.ir.graph import split_names
from irtool.ir.types import element_type
from irtool.tools.diff import diff_files

KINDS = {f.__name__: f for f in fuzz_ir.TREE_MUTATIONS}
CASES_PER_SEED = 12
SEEDS: list = []


@pytest.fixture(scope="module", autouse=True)
def seeds(ov_control_flow_irs: dict[str, Path]) -> None:
    SEEDS[:] = [*read_seeds([(f"ov_{n}", ov_control_flow_irs[n]) for n in ONNX_CONTROL_FLOW]),
                *irtool_seeds()]


def _seed(*parts: object) -> int:
    """A chooser's seed from the case's parts, the same in every process (``hash`` of a
    string is not)."""
    return zlib.crc32("/".join(map(str, parts)).encode())


@dataclass
class Picked:
    """One decision of the fuzzer: an element (its path, attributes and text as they were
    when picked) or a value."""

    value: object
    path: str | None = None
    attrib: dict | None = None
    text: str | None = None


class Recorder:
    def __init__(self) -> None:
        self.picks: list[Picked] = []

    def __call__(self, chooser, items):
        item = pick(chooser, items)
        if isinstance(item, etree._Element):
            self.picks.append(Picked(item, item.getroottree().getpath(item), dict(item.attrib),
                                     item.text))
        else:
            self.picks.append(Picked(item))
        return item


@dataclass
class Expected:
    count: int
    a_line: int | None = None  # None: not checked (the element is on one side only)
    b_line: int | None = None


def _ancestor(el: etree._Element, tag: str) -> etree._Element | None:
    node = el
    while node is not None:
        if node.tag == tag:
            return node
        node = node.getparent()
    return None


def _rt_info_entry(el: etree._Element) -> etree._Element | None:
    """The child of an ``<rt_info>`` that ``el`` is in (or is), the ``<rt_info>`` itself for
    ``el`` being one; None outside rt_info."""
    node, below = el, None
    while node is not None:
        if node.tag == "rt_info":
            return below if below is not None else node
        below, node = node, node.getparent()
    return None


def _in_weights_record(el: etree._Element) -> bool:
    return _ancestor(el, "irtool_weights") is not None


def _graph_of(layer: etree._Element) -> etree._Element:
    return layer.getparent().getparent()  # <layers>'s parent: <net> or a body


def _owner(graph: etree._Element) -> etree._Element | None:
    """The layer a body belongs to (None for the main graph)."""
    return graph.getparent() if graph.tag != "net" else None


def _layer_referenced(layer: etree._Element, old: str) -> bool:
    graph = _graph_of(layer)
    edges = graph.find("edges")
    if edges is not None and any(old in (e.get("from-layer"), e.get("to-layer")) for e in edges):
        return True
    owner = _owner(graph)
    if owner is None:
        return False
    maps = [m for m in owner if m.tag.endswith("port_map")]
    if any(e.get("internal_layer_id") == old for m in maps for e in m):
        return True
    back = owner.find("back_edges")
    return back is not None and any(old in (e.get("from-layer"), e.get("to-layer"))
                                    for e in back)


def _port_referenced(port: etree._Element, old: str) -> bool:
    layer = port.getparent().getparent()
    lid = layer.get("id")
    graph = _graph_of(layer)
    pairs = [(e.get("from-layer"), e.get("from-port")) for e in graph.findall("edges/edge")]
    pairs += [(e.get("to-layer"), e.get("to-port")) for e in graph.findall("edges/edge")]
    owner = _owner(graph)
    if owner is not None:
        for e in owner.findall("back_edges/edge"):
            pairs += [(e.get("from-layer"), e.get("from-port")), (e.get("to-layer"),
                                                                   e.get("to-port"))]
    if (lid, old) in pairs:
        return True
    return any(e.get("external_port_id") == old
               for m in layer if m.tag.endswith("port_map") for e in m)


def _same_bytes(layer: etree._Element, key: str, new: str | None, weights: bytes) -> bool:
    """Whether a Const whose ``key`` (offset or size) becomes ``new`` still reads the bytes
    it read."""
    data = layer.find("data")
    try:
        offset, size = int(data.get("offset")), int(data.get("size"))
        new_offset = int(new) if key == "offset" else offset
        new_size = int(new) if key == "size" else size
    except (TypeError, ValueError):
        return False
    if new_offset < 0 or new_size < 0 or new_offset + new_size > len(weights):
        return False
    return weights[offset:offset + size] == weights[new_offset:new_offset + new_size]


def _value_same(el: etree._Element, key: str, old: str | None, new: str | None) -> bool:
    """Whether ``old`` and ``new`` mean the same for that attribute."""
    if old == new:
        return True
    if old is None or new is None:
        return False
    if el.tag == "port" and key == "precision":
        try:
            return element_type(old) == element_type(new)
        except KeyError:
            return False
    if el.tag == "port" and key == "names":
        return set(split_names(old)) == set(split_names(new))
    if el.getparent() is not None and el.getparent().tag.endswith("port_map") \
            and key not in ("purpose",):
        try:
            return int(old) == int(new)
        except ValueError:
            return False
    return False


def expect_attribute(a_root, el_a: etree._Element, key: str, old: str | None,
                     new: str | None, weights: bytes) -> Expected:
    """One attribute of ``el_a`` (A's element) set to ``new`` (None: removed)."""
    line = el_a.sourceline
    if _in_weights_record(el_a):
        return Expected(0)
    entry = _rt_info_entry(el_a)
    if entry is not None:
        return Expected(0) if old == new else Expected(1, entry.sourceline, entry.sourceline)
    if _value_same(el_a, key, old, new):
        return Expected(0)
    if el_a.tag == "layer" and key == "id":
        taken = [x.get("id") for x in el_a.getparent() if x is not el_a]
        hit = old is not None and _layer_referenced(el_a, old)
        return Expected(1, line, line) if hit or new in taken else Expected(0)
    if el_a.tag == "port" and key == "id" and el_a.getparent().tag in ("input", "output"):
        layer = el_a.getparent().getparent()
        taken = [p.get("id") for p in layer.iter("port") if p is not el_a]
        hit = old is not None and _port_referenced(el_a, old)
        return Expected(1, line, line) if hit or new in taken else Expected(0)
    if el_a.tag == "data" and key in ("offset", "size") \
            and el_a.getparent().get("type") == "Const":
        return Expected(0) if _same_bytes(el_a.getparent(), key, new, weights) \
            else Expected(1, line, line)
    return Expected(1, line, line)


def _content(el: etree._Element) -> bool:
    """Whether an element holds anything that means something once it is gone."""
    return bool(len(el) or el.attrib or (el.text or "").strip())


def expect_drop(el_a: etree._Element) -> Expected:
    if _in_weights_record(el_a):
        return Expected(0)
    entry = _rt_info_entry(el_a)
    if entry is not None:
        if entry.tag == "rt_info":  # the whole rt_info
            kept = [c for c in entry if c.tag != "irtool_weights"]
            return Expected(1, entry.sourceline) if kept else Expected(0)
        return Expected(1, entry.sourceline)
    if el_a.tag == "dim":
        return Expected(1, el_a.getparent().sourceline, el_a.getparent().sourceline)
    if el_a.tag == "data" and not el_a.attrib:
        return Expected(0)
    if el_a.tag in ("input", "output", "port_map", "then_port_map", "else_port_map",
                    "back_edges", "layers", "edges") and not _content(el_a):
        return Expected(0)
    return Expected(1, el_a.sourceline)


def expect_duplicate(el_a: etree._Element, copy_b: etree._Element) -> Expected:
    if el_a.tag == "dim":
        return Expected(1, el_a.getparent().sourceline, copy_b.getparent().sourceline)
    if el_a.tag in ("input", "output") and el_a.getparent().tag == "layer":
        ports = [p for p in copy_b if p.tag == "port"]
        return Expected(1, None, ports[0].sourceline) if ports else Expected(0)
    return Expected(1, None, copy_b.sourceline)


def expected_for(kind: str, picks: list[Picked], a_root, b_root, weights: bytes
                 ) -> Expected | None:
    elements = [p for p in picks if p.path is not None]
    values = [p.value for p in picks if p.path is None]
    if not elements:
        return None
    first = elements[0]
    el_a = a_root.getroottree().xpath(first.path)[0]
    if kind == "_drop_element":
        return expect_drop(el_a)
    if kind == "_duplicate_element":
        copy_b = b_root.getroottree().xpath(first.path)[0].getnext()
        return expect_duplicate(el_a, copy_b)
    if kind == "_dim":
        if el_a.tag == "dim":
            old, new = (first.text or "").strip(), values[0]
            try:
                same = int(old) == int(new)
            except ValueError:
                same = old == new
            port = el_a.getparent()
            return Expected(0) if same else Expected(1, port.sourceline, port.sourceline)
        return Expected(1, el_a.sourceline, el_a.sourceline)  # a dim added to a port
    if kind == "_element_type":
        key = "element_type" if el_a.tag == "data" else "precision"
        return expect_attribute(a_root, el_a, key, first.attrib.get(key), values[0], weights)
    if kind == "_drop_attribute":
        key = values[0]
        return expect_attribute(a_root, el_a, key, first.attrib.get(key), None, weights)
    # _attribute, _edge, _port_map, _back_edge: a key, then its new value
    key, new = values[0], values[1]
    return expect_attribute(a_root, el_a, key, first.attrib.get(key), new, weights)


def _write(folder: Path, name: str, xml: bytes, weights: bytes) -> Path:
    path = folder / f"{name}.xml"
    path.write_bytes(xml)
    path.with_suffix(".bin").write_bytes(weights)
    return path


def _check(found, expected: Expected, note: str, swap: bool = False) -> None:
    lines = "\n".join(d.format() for d in found)
    assert len(found) == expected.count, f"{note}: expected {expected.count}, got:\n{lines}"
    if expected.count == 1:
        d = found[0]
        a, b = (d.b, d.a) if swap else (d.a, d.b)
        if expected.a_line is not None:
            assert a is not None and a.line == expected.a_line, f"{note}: A line: {lines}"
        if expected.b_line is not None:
            assert b is not None and b.line == expected.b_line, f"{note}: B line: {lines}"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_tree_mutation_is_reported_once_where_it_was_made(
        kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    checked = 0
    for s, (name, xml, weights) in enumerate(SEEDS):
        for case in range(CASES_PER_SEED):
            recorder = Recorder()
            monkeypatch.setattr(fuzz_ir, "pick", recorder)
            root = etree.fromstring(xml)
            made = KINDS[kind](root, RandomChooser(_seed(kind, s, case)))
            monkeypatch.undo()
            if not made:
                continue
            mutant = etree.tostring(root, xml_declaration=True, encoding="utf-8")
            a = _write(tmp_path, f"a{s}_{case}", xml, weights)
            b = _write(tmp_path, f"b{s}_{case}", mutant, weights)
            a_root = etree.parse(str(a)).getroot()
            b_root = etree.parse(str(b)).getroot()
            expected = expected_for(kind, recorder.picks, a_root, b_root, weights)
            if expected is None:
                continue
            note = f"{name} {kind} case {case}: {[p.path or p.value for p in recorder.picks]}"
            _check(diff_files(a, b, rt_info=True), expected, note)
            _check(diff_files(b, a, rt_info=True), expected, note + " (reversed)", swap=True)
            checked += expected.count
    assert checked > 0  # some cases of every kind changed something


def _const_ranges(xml: bytes) -> list[tuple[int, int, int]]:
    """(offset, size, line of <data>) of every Const, bodies included."""
    root = etree.fromstring(xml)
    found = []
    for layer in root.iter("layer"):
        data = layer.find("data")
        if layer.get("type") == "Const" and data is not None:
            found.append((int(data.get("offset")), int(data.get("size")), data.sourceline))
    return found


def test_every_bin_mutation_is_reported_once(tmp_path: Path) -> None:
    seen = set()
    for s, (name, xml, weights) in enumerate(SEEDS):
        if not weights:
            continue
        for case in range(25):
            mutant = fuzz_ir._bin(weights, RandomChooser(_seed("bin", s, case)))
            a = _write(tmp_path, f"a{s}_{case}", xml, weights)
            b = _write(tmp_path, f"b{s}_{case}", xml, mutant)
            consts = _const_ranges(xml)
            if mutant == weights:
                expected = Expected(0)
            elif len(mutant) < len(weights):
                cut = [c for c in consts if c[0] + c[1] > len(mutant)]
                expected = Expected(1) if cut else Expected(0)
                seen.add("shorter")
            elif len(mutant) > len(weights):
                expected = Expected(1)
                seen.add("longer")
            else:
                at = next(i for i in range(len(weights)) if weights[i] != mutant[i])
                covering: dict[tuple[int, int], int] = {}
                for o, n, line in consts:
                    if o <= at < o + n:
                        covering[(o, n)] = min(line, covering.get((o, n), line))
                expected = (Expected(1, *[min(covering.values())] * 2) if len(covering) == 1
                            else Expected(len(covering)))
                seen.add("flipped")
            note = f"{name} .bin case {case}: {len(weights)} -> {len(mutant)} bytes"
            found = diff_files(a, b)
            _check(found, expected, note)
            if expected.count and len(mutant) != len(weights):
                assert found[0].kind == "weights" and found[0].b.file.endswith(".bin"), note
    assert seen == {"shorter", "longer", "flipped"}


def test_xml_cut_short_is_one_difference_where_the_parser_stops(tmp_path: Path) -> None:
    for s, (name, xml, weights) in enumerate(SEEDS):
        for case in range(5):
            mutant = xml[:RandomChooser(_seed("cut", s, case)).below(len(xml))]
            a = _write(tmp_path, f"a{s}_{case}", xml, weights)
            b = _write(tmp_path, f"b{s}_{case}", mutant, weights)
            found = diff_files(a, b)
            if mutant.strip() == xml.strip():
                assert found == []
                continue
            assert len(found) == 1 and found[0].kind == "file", name
            assert found[0].a is None and found[0].b.line is not None, name
            # libxml2 stops at the last line it got (or the line after it)
            assert found[0].b.line <= mutant.count(b"\n") + 2, found[0].format()
