"""IR mutations for fuzzing irtool: seed IR files and the ways a hostile one differs from them.

A seed is an IR as OpenVINO writes it (``ov.save_model`` of the ONNX control-flow node
cases: a Loop with a scan output, a TensorIterator, an If) or as irtool writes it (the
hand-made ONNX seeds of ``fuzz_onnx`` converted). A mutation changes one thing a real
file could hold: an attribute's value (numbers from ``INTERESTING``, words, nothing), an
attribute or element removed or duplicated, an element type or precision, a dimension,
an edge re-targeted, a port-map entry's ``axis``/``start``/``end``/``stride``/
``part_size``/ids, a back edge, and the ``.bin`` truncated, emptied, grown or flipped,
or the XML text cut short. Every decision goes through a ``Chooser``, so
``bench/fuzz.py`` (seeded ``random``) and the hypothesis test (which can shrink) share it.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from functools import cache
from pathlib import Path

import numpy as np
from lxml import etree

from support.fuzzing import Chooser, pick

INTERESTING = ("0", "1", "-1", "2", "3", "-2", "-7", "5", "255", "1000000", str(2**31),
               str(2**62), str(-(2**63)), "99999999999999999999", "1.5", "nan", "", "x",
               "numpy", "none", "true", "f32", "?", "1,2", "-1,-1")
ELEMENT_TYPES = ("f32", "f16", "bf16", "f64", "i64", "i32", "i8", "u8", "u1", "boolean",
                 "string", "dynamic", "x", "")
PRECISIONS = ("FP32", "FP16", "BF16", "FP64", "I64", "I32", "I8", "U8", "BOOL", "x", "")
SLICING = ("axis", "start", "end", "stride", "part_size", "external_port_id",
           "internal_layer_id", "purpose")
ONNX_CONTROL_FLOW = ("test_loop11", "test_scan9_sum", "test_if")


# -- seeds ----------------------------------------------------------------------------------


def _openvino_written(folder: Path) -> list[tuple[str, Path]]:
    import onnx
    import openvino as ov
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = {c.name: c for c in collect_testcases() if c.name in ONNX_CONTROL_FLOW}
    found = []
    for name in ONNX_CONTROL_FLOW:
        xml = folder / name / "model.xml"
        xml.parent.mkdir()
        onnx.save(cases[name].model, xml.with_suffix(".onnx"))
        model = ov.Core().read_model(str(xml.with_suffix(".onnx")))
        ov.save_model(model, str(xml), compress_to_fp16=False)
        found.append((f"ov_{name}", xml))
    return found


def _irtool_written(folder: Path) -> list[tuple[str, Path]]:
    import onnx

    import irtool
    from support.fuzz_onnx import _hand_made

    found = []
    for name, model in _hand_made():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ir = irtool.convert(onnx.load_from_string(model.SerializeToString()))
        xml = irtool.save(ir, folder / name / "model.xml")
        found.append((f"irtool_{name}", xml))
    return found


Seed = tuple[str, bytes, bytes]  # name, .xml bytes, .bin bytes


def read_seeds(files: list[tuple[str, Path]]) -> tuple[Seed, ...]:
    return tuple((name, xml.read_bytes(), xml.with_suffix(".bin").read_bytes())
                 for name, xml in files)


@cache
def irtool_seeds() -> tuple[Seed, ...]:
    """The seeds irtool writes; made once in a temporary folder, gone when this returns."""
    with tempfile.TemporaryDirectory(prefix="irtool-fuzz-seeds-") as tmp:
        return read_seeds(_irtool_written(Path(tmp)))


@cache
def seed_irs() -> tuple[Seed, ...]:
    """Every seed: OpenVINO's (collecting the ONNX node cases takes a while) and irtool's;
    read from ``$IRTOOL_FUZZ_IR_SEEDS`` when a parent wrote them there (``write_seeds``)."""
    folder = os.environ.get("IRTOOL_FUZZ_IR_SEEDS")
    if folder and Path(folder).is_dir():
        return read_seeds([(xml.stem, xml) for xml in sorted(Path(folder).glob("*.xml"))])
    with tempfile.TemporaryDirectory(prefix="irtool-fuzz-seeds-") as tmp:
        return read_seeds(_openvino_written(Path(tmp))) + irtool_seeds()


def write_seeds(folder: Path) -> None:
    """Every seed as ``folder/NAME.xml`` + ``.bin``, for workers to read."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, xml, weights in seed_irs():
        (folder / f"{name}.xml").write_bytes(xml)
        (folder / f"{name}.bin").write_bytes(weights)


# -- mutations of the XML tree --------------------------------------------------------------


def _elements(root: etree._Element, tag: str | None = None) -> list[etree._Element]:
    return [el for el in root.iter(tag) if isinstance(el.tag, str)]


def _attribute(root: etree._Element, c: Chooser) -> bool:
    """Any attribute of any element: a number, a word, or nothing."""
    candidates = [el for el in _elements(root) if el.attrib]
    if not candidates:
        return False
    el = pick(c, candidates)
    key = pick(c, sorted(el.attrib))
    el.set(key, pick(c, INTERESTING))
    return True


def _drop_attribute(root: etree._Element, c: Chooser) -> bool:
    candidates = [el for el in _elements(root) if el.attrib]
    if not candidates:
        return False
    el = pick(c, candidates)
    del el.attrib[pick(c, sorted(el.attrib))]
    return True


def _drop_element(root: etree._Element, c: Chooser) -> bool:
    """A port, dim, edge, layer, port-map entry, back edge, data, body...: gone."""
    candidates = [el for el in _elements(root) if el.getparent() is not None]
    el = pick(c, candidates)
    el.getparent().remove(el)
    return True


def _duplicate_element(root: etree._Element, c: Chooser) -> bool:
    from copy import deepcopy

    tags = ("port", "dim", "edge", "layer", "input", "output", "data")
    candidates = [el for el in _elements(root) if el.tag in tags and el.getparent() is not None]
    if not candidates:
        return False
    el = pick(c, candidates)
    el.addnext(deepcopy(el))
    return True


def _element_type(root: etree._Element, c: Chooser) -> bool:
    if c.below(2):
        candidates = [el for el in _elements(root, "data") if "element_type" in el.attrib]
        if candidates:
            pick(c, candidates).set("element_type", pick(c, ELEMENT_TYPES))
            return True
    candidates = [el for el in _elements(root, "port") if "precision" in el.attrib]
    if not candidates:
        return False
    pick(c, candidates).set("precision", pick(c, PRECISIONS))
    return True


def _dim(root: etree._Element, c: Chooser) -> bool:
    dims = _elements(root, "dim")
    if dims and c.below(3):
        pick(c, dims).text = pick(c, ("0", "1", "2", "3", "5", "-1", "-7", str(2**62), "x", ""))
        return True
    ports = _elements(root, "port")
    if not ports:
        return False
    port = pick(c, ports)
    etree.SubElement(port, "dim").text = pick(c, ("1", "2", "-1"))
    return True


def _edge(root: etree._Element, c: Chooser) -> bool:
    """Re-target an edge's end to another layer or port (into an output port, a cycle...)."""
    edges = _elements(root, "edge")
    edges = [e for e in edges if "from-port" in e.attrib]
    if not edges:
        return False
    edge = pick(c, edges)
    ids = [el.get("id") for el in edge.getparent().getparent().iterfind("layers/layer")]
    key = pick(c, ("from-layer", "from-port", "to-layer", "to-port"))
    if key.endswith("layer") and ids and c.below(2):
        edge.set(key, pick(c, ids))
    else:
        edge.set(key, pick(c, ("0", "1", "2", "3", "4", "5", "-1", "99")))
    return True


def _port_map(root: etree._Element, c: Chooser) -> bool:
    entries = [el for el in _elements(root)
               if el.getparent() is not None and el.getparent().tag.endswith("port_map")]
    if not entries:
        return False
    entry = pick(c, entries)
    key = pick(c, SLICING)
    if key == "purpose":
        entry.set(key, pick(c, ("current_iteration", "execution_condition", "condition", "")))
    else:
        entry.set(key, pick(c, ("0", "1", "-1", "2", "-2", "3", "5", "1000000", "-7")))
    return True


def _back_edge(root: etree._Element, c: Chooser) -> bool:
    edges = [e for e in _elements(root, "edge") if e.getparent().tag == "back_edges"]
    if not edges:
        return False
    edge = pick(c, edges)
    edge.set(pick(c, ("from-layer", "to-layer")), pick(c, ("0", "1", "2", "5", "8", "99")))
    return True


TREE_MUTATIONS = (_attribute, _attribute, _drop_attribute, _drop_element, _duplicate_element,
                  _element_type, _element_type, _dim, _dim, _edge, _edge, _port_map, _port_map,
                  _port_map, _back_edge)


# -- mutations of the bytes -----------------------------------------------------------------


def _bin(data: bytes, c: Chooser) -> bytes:
    how = c.below(5)
    if how == 0:
        return b""
    if how == 1:
        return data[:c.below(len(data) + 1)] if data else data
    if how == 2:
        return data + bytes(c.below(64) + 1)
    if how == 3 and data:
        at = c.below(len(data))
        return data[:at] + bytes([data[at] ^ (1 << c.below(8))]) + data[at + 1:]
    return data + data  # twice as long: another model's weights?


def mutate(xml: bytes, weights: bytes, c: Chooser, max_mutations: int = 3
           ) -> tuple[bytes, bytes]:
    """A hostile (.xml, .bin) pair made from a seed's."""
    if c.below(12) == 0:
        return _bin_or_text(xml, weights, c)
    root = etree.fromstring(xml)
    for _ in range(1 + c.below(max_mutations)):
        pick(c, TREE_MUTATIONS)(root, c)
    text = etree.tostring(root, xml_declaration=True, encoding="utf-8")
    if c.below(6) == 0:
        weights = _bin(weights, c)
    return text, weights


def _bin_or_text(xml: bytes, weights: bytes, c: Chooser) -> tuple[bytes, bytes]:
    if c.below(2):
        return xml, _bin(weights, c)
    return xml[:c.below(len(xml))], weights  # the XML cut short


# -- inputs for an IR ---------------------------------------------------------------------


def feed_for(xml: Path, seed: int = 0, default_dim: int = 2) -> dict[str, np.ndarray] | None:
    """Random inputs of the declared shapes for the IR's Parameters (dynamic dims
    ``default_dim``; integers 0..3, so that trip counts stay small, conditions true), keyed
    by the tensor names ``irtool run`` reads; None when the IR does not load."""
    import irtool

    try:
        model = irtool.load(xml, strict=False)
    except irtool.IRToolError:
        return None
    rng = np.random.default_rng(seed)
    feed = {}
    for layer, name in zip(model.inputs, model.input_names()):
        port = layer.outputs[0] if layer.outputs else None
        et, shape = (port.precision, port.dims) if port is not None else (None, None)
        if et is None or et.dtype is None or shape is None:
            return None
        dims = tuple(default_dim if d < 0 else d for d in shape)
        if int(np.prod(dims, dtype=np.int64)) > 1 << 20:
            return None
        if et.kind == "bool":
            value = np.ones(dims, np.bool_)
        elif et.kind in ("int", "uint"):
            value = rng.integers(0, 4, dims).astype(et.dtype)
        else:
            value = rng.standard_normal(dims).astype(et.dtype)
        feed[name] = value
    return feed
