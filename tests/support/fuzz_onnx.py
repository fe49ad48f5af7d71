"""ONNX mutations for fuzzing irtool: seed models and the ways a hostile file differs from them.

A mutation takes a model and a ``Chooser`` (every random decision goes through it), so
the same code serves ``bench/fuzz.py`` (a seeded ``random.Random``) and the hypothesis
test (decisions drawn from hypothesis, which can then shrink a failing case). Each
mutation changes one thing a real file could hold: an attribute value, an element type,
a dimension, a tensor's bytes, a name (control characters, invalid UTF-8), a node or
graph input/output removed, duplicated or retyped, a subgraph swapped, opset versions,
and raw bytes truncated or flipped.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from irtool.frontends.onnx.protos import subgraphs
from support.fuzzing import Chooser, pick

ROOT = Path(__file__).resolve().parents[2]

# Integers that break code written for the values real models hold.
INTERESTING_INTS = (0, 1, -1, 2, 3, -2, -7, 255, 2**31 - 1, 2**31, 2**62, -(2**63), 10**12,
                    300_000_000)
INTERESTING_FLOATS = (0.0, -0.0, 1e30, -1e30, float("nan"), float("inf"), 1e-30)
BAD_NAMES = ("", "x\x01y", "a\x00b", "tab\there", "new\nline", "a,b", "<&>", "\u202e", "x" * 300)
OP_TYPES = ("Identity", "Add", "Relu", "Split", "Concat", "Reshape", "Loop", "If", "Scan",
            "Gather", "Unsqueeze", "Squeeze", "Cast", "Slice", "Expand", "ConstantOfShape",
            "Range", "Tile", "NoSuchOp")


# -- seeds ----------------------------------------------------------------------------------


def _hand_made() -> list[tuple[str, onnx.ModelProto]]:
    """Small models with the constructs the mutations should reach: Split with num_outputs,
    a Loop with a scan output and a constant trip count, nested If, Scan."""
    vi = h.make_tensor_value_info
    split = h.make_model(h.make_graph(
        [h.make_node("Split", ["x"], ["a", "b"], axis=0, num_outputs=2, name="split"),
         h.make_node("Concat", ["b", "a"], ["y"], axis=0, name="concat")], "split",
        [vi("x", T.FLOAT, [4, 2])], [vi("y", T.FLOAT, [4, 2])]),
        opset_imports=[h.make_opsetid("", 18)])
    body = h.make_graph(
        [h.make_node("Identity", ["c_in"], ["c_out"]),
         h.make_node("Add", ["v_in", "one"], ["v_out"]),
         h.make_node("Mul", ["v_out", "v_out"], ["scan"])], "body",
        [vi("i", T.INT64, []), vi("c_in", T.BOOL, []), vi("v_in", T.FLOAT, [2])],
        [vi("c_out", T.BOOL, []), vi("v_out", T.FLOAT, [2]), vi("scan", T.FLOAT, [2])],
        [h.make_tensor("one", T.FLOAT, [], [1.0])])
    loop = h.make_model(h.make_graph(
        [h.make_node("Constant", [], ["M"], value=h.make_tensor("M", T.INT64, [], [3])),
         h.make_node("Loop", ["M", "", "v0"], ["v", "scans"], body=body, name="loop")], "loop",
        [vi("v0", T.FLOAT, [2])], [vi("v", T.FLOAT, [2]), vi("scans", T.FLOAT, [None, 2])]),
        opset_imports=[h.make_opsetid("", 17)])
    then = h.make_graph([h.make_node("Add", ["x", "x"], ["t"])], "then", [],
                        [vi("t", T.FLOAT, [2])])
    inner = h.make_graph([h.make_node("If", ["c"], ["r"], then_branch=then,
                                      else_branch=h.make_graph(
                                          [h.make_node("Neg", ["x"], ["e"])], "else", [],
                                          [vi("e", T.FLOAT, [2])]), name="inner")],
                         "outer_then", [], [vi("r", T.FLOAT, [2])])
    nested = h.make_model(h.make_graph(
        [h.make_node("If", ["c"], ["y"], then_branch=inner,
                     else_branch=h.make_graph([h.make_node("Relu", ["x"], ["o"])], "outer_else",
                                              [], [vi("o", T.FLOAT, [2])]), name="outer")],
        "nested_if", [vi("c", T.BOOL, []), vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])]),
        opset_imports=[h.make_opsetid("", 17)])
    scan_body = h.make_graph(
        [h.make_node("Add", ["s_in", "row"], ["s_out"]),
         h.make_node("Identity", ["s_out"], ["col"])], "scan_body",
        [vi("s_in", T.FLOAT, [2]), vi("row", T.FLOAT, [2])],
        [vi("s_out", T.FLOAT, [2]), vi("col", T.FLOAT, [2])])
    scan = h.make_model(h.make_graph(
        [h.make_node("Scan", ["s0", "xs"], ["s", "cols"], body=scan_body, num_scan_inputs=1,
                     name="scan")], "scan",
        [vi("s0", T.FLOAT, [2]), vi("xs", T.FLOAT, [3, 2])],
        [vi("s", T.FLOAT, [2]), vi("cols", T.FLOAT, [3, 2])]),
        opset_imports=[h.make_opsetid("", 17)])
    return [("hand_split", split), ("hand_loop", loop), ("hand_nested_if", nested),
            ("hand_scan", scan)]


@cache
def seed_models() -> tuple[tuple[str, bytes], ...]:
    """(name, serialized model) for every seed: the samples, the hand-made models, the ONNX
    node cases with control flow and a spread of ordinary ones, and the exporter fixtures."""
    seeds: list[tuple[str, onnx.ModelProto]] = []
    for path in sorted((ROOT / "samples").glob("*.onnx")):
        seeds.append((path.stem, onnx.load(str(path))))
    seeds += _hand_made()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from onnx.backend.test.case.node import collect_testcases

        cases = sorted(collect_testcases(), key=lambda c: c.name)
    flow = {"Loop", "Scan", "If"}
    for i, case in enumerate(cases):
        ops = {n.op_type for n in case.model.graph.node}
        if ops & flow or i % 15 == 0:  # every control-flow case, and one in 15 of the rest
            seeds.append((case.name, case.model))
    exporters = ROOT / "tests" / "fixtures" / "onnx_exporters"
    for path in sorted(exporters.glob("*.onnx")):
        if path.stat().st_size < 2_000_000:
            seeds.append((path.stem, onnx.load(str(path))))
    return tuple((name, model.SerializeToString()) for name, model in seeds)


# -- where mutations act --------------------------------------------------------------------


def all_graphs(graph: onnx.GraphProto) -> list[onnx.GraphProto]:
    """``graph`` and every graph nested in it."""
    found = [graph]
    for node in graph.node:
        for _, sub in subgraphs(node):
            found += all_graphs(sub)
    return found


def _nodes(model: onnx.ModelProto) -> list[onnx.NodeProto]:
    return [n for g in all_graphs(model.graph) for n in g.node]


def _value_infos(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    return [vi for g in all_graphs(model.graph)
            for vi in [*g.input, *g.output, *g.value_info]]


def _tensors(model: onnx.ModelProto) -> list[onnx.TensorProto]:
    found = [t for g in all_graphs(model.graph) for t in g.initializer]
    for node in _nodes(model):
        found += [a.t for a in node.attribute if a.type == onnx.AttributeProto.TENSOR]
    return found


def _names(model: onnx.ModelProto) -> list[str]:
    names = {vi.name for vi in _value_infos(model)}
    for node in _nodes(model):
        names.update(node.input)
        names.update(node.output)
    return sorted(names)


# -- the mutations --------------------------------------------------------------------------


def _int_attribute(model: onnx.ModelProto, c: Chooser) -> bool:
    attrs = [a for n in _nodes(model) for a in n.attribute
             if a.type in (onnx.AttributeProto.INT, onnx.AttributeProto.INTS)]
    if not attrs:
        return False
    attr = pick(c, attrs)
    value = pick(c, INTERESTING_INTS)
    if attr.type == onnx.AttributeProto.INT:
        attr.i = value
    elif attr.ints and c.below(2):
        attr.ints[c.below(len(attr.ints))] = value
    else:
        attr.ints.append(value)
    return True


def _float_attribute(model: onnx.ModelProto, c: Chooser) -> bool:
    attrs = [a for n in _nodes(model) for a in n.attribute if a.type == onnx.AttributeProto.FLOAT]
    if not attrs:
        return False
    pick(c, attrs).f = pick(c, INTERESTING_FLOATS)
    return True


def _drop_attribute(model: onnx.ModelProto, c: Chooser) -> bool:
    nodes = [n for n in _nodes(model) if n.attribute]
    if not nodes:
        return False
    node = pick(c, nodes)
    del node.attribute[c.below(len(node.attribute))]
    return True


def _add_attribute(model: onnx.ModelProto, c: Chooser) -> bool:
    nodes = _nodes(model)
    if not nodes:
        return False
    node = pick(c, nodes)
    name = pick(c, ("num_outputs", "axis", "axes", "keepdims", "num_scan_inputs", "split",
                    "to", "perm", "mode", "value"))
    kept = [a for a in node.attribute if a.name != name]
    del node.attribute[:]
    node.attribute.extend(kept)
    if name in ("axes", "split", "perm"):
        node.attribute.append(h.make_attribute(name, [pick(c, INTERESTING_INTS)
                                                      for _ in range(1 + c.below(3))]))
    elif name == "mode":
        node.attribute.append(h.make_attribute(name, pick(c, ("", "nearest", "\x01", "zz"))))
    elif name == "value":  # built by hand: onnx's helper refuses such tensors
        tensor = onnx.TensorProto(name="v", data_type=pick(c, (T.FLOAT, T.INT64, 99, 0)),
                                  dims=[pick(c, (0, 1, 2, 2**40))])
        tensor.float_data.extend([1.0] * c.below(3))
        node.attribute.append(h.make_attribute(name, tensor))
    else:
        node.attribute.append(h.make_attribute(name, pick(c, INTERESTING_INTS)))
    return True


def _elem_type(model: onnx.ModelProto, c: Chooser) -> bool:
    infos = [vi for vi in _value_infos(model) if vi.type.HasField("tensor_type")]
    if not infos:
        return False
    pick(c, infos).type.tensor_type.elem_type = pick(
        c, (0, T.FLOAT, T.INT64, T.INT32, T.INT16, T.BOOL, T.STRING, T.COMPLEX64, T.FLOAT16,
            T.BFLOAT16, T.UINT64, T.FLOAT8E4M3FN, T.INT4, 26, 99, -1))
    return True


def _dims(model: onnx.ModelProto, c: Chooser) -> bool:
    infos = [vi for vi in _value_infos(model) if vi.type.tensor_type.HasField("shape")]
    if not infos:
        return False
    shape = pick(c, infos).type.tensor_type.shape
    what = c.below(4)
    if what == 0 or not shape.dim:
        shape.dim.add().dim_value = pick(c, INTERESTING_INTS)
    elif what == 1:
        del shape.dim[c.below(len(shape.dim))]
    elif what == 2:
        shape.dim[c.below(len(shape.dim))].dim_param = pick(c, ("N", "", "\x01"))
    else:
        shape.dim[c.below(len(shape.dim))].dim_value = pick(c, INTERESTING_INTS)
    return True


def _tensor(model: onnx.ModelProto, c: Chooser) -> bool:
    """An initializer's or Constant's dims, type or values: trip counts, shapes, axes..."""
    tensors = _tensors(model)
    if not tensors:
        return False
    tensor = pick(c, tensors)
    what = c.below(5)
    if what == 0 and tensor.dims:
        tensor.dims[c.below(len(tensor.dims))] = pick(c, INTERESTING_INTS)
    elif what == 1:
        tensor.data_type = pick(c, (T.FLOAT, T.INT64, T.INT32, T.BOOL, T.STRING, 0, 99))
    elif what == 2 and tensor.raw_data:
        tensor.raw_data = tensor.raw_data[:c.below(len(tensor.raw_data))]
    else:
        try:
            array = numpy_helper.to_array(tensor).copy()
        except Exception:
            return False
        if array.size == 0 or array.dtype.kind not in "iufb":
            return False
        flat = array.reshape(-1)
        value = pick(c, INTERESTING_INTS if array.dtype.kind in "iub" else INTERESTING_FLOATS)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                flat[c.below(flat.size)] = value
            except OverflowError:
                flat[c.below(flat.size)] = -1
        tensor.CopyFrom(numpy_helper.from_array(array.reshape(array.shape), tensor.name))
    return True


def _rename(model: onnx.ModelProto, c: Chooser) -> bool:
    """Point a node input or output at another name, or give it a hostile one."""
    nodes = [n for n in _nodes(model) if n.input or n.output]
    if not nodes:
        return False
    node = pick(c, nodes)
    names = list(node.input) if node.input and (not node.output or c.below(2)) else None
    field = node.input if names is not None else node.output
    i = c.below(len(field))
    field[i] = pick(c, BAD_NAMES) if c.below(2) else pick(c, _names(model))
    return True


def _node(model: onnx.ModelProto, c: Chooser) -> bool:
    graphs = [g for g in all_graphs(model.graph) if g.node]
    if not graphs:
        return False
    graph = pick(c, graphs)
    i = c.below(len(graph.node))
    what = c.below(5)
    if what == 0:
        del graph.node[i]
    elif what == 1:
        graph.node.append(graph.node[i])
    elif what == 2:
        graph.node[i].op_type = pick(c, OP_TYPES)
    elif what == 3 and graph.node[i].input:
        del graph.node[i].input[c.below(len(graph.node[i].input))]
    elif graph.node[i].output:
        if c.below(2):
            del graph.node[i].output[c.below(len(graph.node[i].output))]
        else:
            graph.node[i].output.append(f"extra{c.below(3)}")
    return True


def _graph_io(model: onnx.ModelProto, c: Chooser) -> bool:
    graph = pick(c, all_graphs(model.graph))
    what = c.below(4)
    if what == 0 and graph.input:
        del graph.input[c.below(len(graph.input))]
    elif what == 1 and graph.output:
        del graph.output[c.below(len(graph.output))]
    elif what == 2 and graph.output:
        graph.output.append(graph.output[c.below(len(graph.output))])
    else:
        names = _names(model)
        if not names:
            return False
        graph.output.append(h.make_tensor_value_info(pick(c, names), T.FLOAT, None))
    return True


def _subgraph(model: onnx.ModelProto, c: Chooser) -> bool:
    """Swap a Loop/Scan body or If branch for another graph of the model, or empty it."""
    attrs = [a for n in _nodes(model) for a in n.attribute if a.type == onnx.AttributeProto.GRAPH]
    if not attrs:
        return False
    attr = pick(c, attrs)
    others = [a.g for a in attrs if a is not attr]
    if others and c.below(2):
        replacement = onnx.GraphProto()
        replacement.CopyFrom(pick(c, others))
        attr.g.CopyFrom(replacement)
    else:
        del attr.g.output[:]
    return True


def _opset(model: onnx.ModelProto, c: Chooser) -> bool:
    if c.below(3) == 0:
        model.ir_version = pick(c, (0, 1, 3, 7, 10, 99))
    elif model.opset_import:
        model.opset_import[c.below(len(model.opset_import))].version = pick(
            c, (1, 7, 9, 11, 13, 17, 18, 21, 25, 99, -1))
    return True


MUTATIONS: tuple[Callable[[onnx.ModelProto, Chooser], bool], ...] = (
    _int_attribute, _float_attribute, _drop_attribute, _add_attribute, _elem_type, _dims,
    _tensor, _rename, _node, _graph_io, _subgraph, _opset)


def _bytes_level(data: bytes, c: Chooser) -> bytes:
    """Damage to the file itself: truncated, bytes flipped, or a name made invalid UTF-8."""
    what = c.below(3)
    if what == 0:
        return data[:c.below(len(data) + 1)]
    if what == 1:
        out = bytearray(data)
        for _ in range(1 + c.below(4)):
            out[c.below(len(out))] ^= 1 << c.below(8)
        return bytes(out)
    model = onnx.load_from_string(data)
    names = [n for n in _names(model) if len(n) >= 2]
    if not names:
        return data
    name = pick(c, names).encode()
    return data.replace(name, name[:1] + b"\xff" + name[2:])


def mutate(seed: bytes, c: Chooser, max_mutations: int = 3) -> bytes:
    """``seed`` (a serialized model) with 1..``max_mutations`` mutations applied."""
    model = onnx.load_from_string(seed)
    for _ in range(1 + c.below(max_mutations)):
        if c.below(8) == 0:
            return _bytes_level(model.SerializeToString(), c)
        for _attempt in range(4):  # a mutation with nothing to act on: try another kind
            if pick(c, MUTATIONS)(model, c):
                break
    try:
        return model.SerializeToString()
    except Exception:  # e.g. a value protobuf cannot encode: keep the seed's damage simpler
        return seed[:len(seed) // 2]


def describe(data: bytes) -> str:
    """A short description of a case for reports: op types, or why it does not parse."""
    try:
        model = onnx.load_from_string(data)
    except Exception as err:
        return f"unparsable ({type(err).__name__})"
    ops = sorted({n.op_type for n in _nodes(model) if isinstance(n.op_type, str)})
    return ",".join(ops[:8])


__all__ = ["MUTATIONS", "describe", "mutate", "seed_models"]

