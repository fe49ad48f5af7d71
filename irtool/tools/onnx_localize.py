"""Where irtool parts from onnxruntime on an ONNX model: the first ONNX node whose output
disagrees while its inputs agree, inside Loop and Scan bodies (which iteration) and If
branches, with the IR layer that computes it.

onnxruntime (the reference) gives the values of ONNX tensors through a rewritten copy of
the model: a top-level tensor becomes an extra graph output, a body tensor an extra scan
output of its Loop or Scan (stacked over the iterations), or an extra output of its If
(the branch that does not run gives an empty constant of the same type and rank). irtool
gives the values of the IR the converter made (``runtime.trace``), mapped onto the ONNX
tensors by the names the converter keeps on the IR's ports (the ONNX tensor names).

The IR is converted without optimisations here (``optimize=False``), so that every ONNX
Loop stays a loop and values map one to one; when that IR agrees with onnxruntime while
the optimised one did not, the report says an optimising pass causes the difference.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..core.scopes import body_scope
from ..engines.isolate import Isolated
from ..engines.onnxruntime import OnnxRuntimeEngine
from ..frontends.onnx.protos import node_label
from ..ir.graph import Graph, Layer, Model
from .compare import Comparison, bad_elements, compare
from .localize import (
    DEFAULT_MEMORY_BUDGET,
    Finding,
    Hop,
    Localization,
    Progress,
    Recorder,
    run_traced,
    traced_against,
)

if TYPE_CHECKING:
    import onnx

CONTROL = {"Loop": "body", "Scan": "body"}
IR_BODY = {"body": "body", "then_branch": "then_body", "else_branch": "else_body"}
PROBE = "__irtool_probe"


@dataclass
class _Level:
    graph: onnx.GraphProto
    ir: Graph
    scope: str
    hop: Hop | None = None
    path: tuple[tuple[int, str, str, int | None], ...] = ()
    """How to reach ``graph``: (node index, graph attribute, op type, iteration) per level."""

    @property
    def iterates(self) -> bool:
        return bool(self.path) and self.path[-1][2] in CONTROL


def _names(graph: Graph) -> dict[str, tuple[int, int]]:
    """ONNX tensor name -> (IR layer, port) in ``graph``, from the names the ports keep."""
    out: dict[str, tuple[int, int]] = {}
    for layer in graph:
        if layer.type in ("Const", "Result"):
            continue
        for port in layer.outputs:
            for name in port.names:
                out.setdefault(name, (layer.id, port.id))
    return out


def _ir_layer(graph: Graph, node: onnx.NodeProto) -> Layer | None:
    """The IR control-flow layer the converter made of ``node``."""
    for layer in graph:
        if layer.type in ("Loop", "TensorIterator", "If") and (
                {n for p in layer.outputs for n in p.names} & set(node.output)
                or (node.name and layer.name == node.name)):
            return layer
    return None


def _graph_attr(node: onnx.NodeProto, name: str) -> onnx.GraphProto:
    return next(a.g for a in node.attribute if a.name == name)


def _expose(proto: onnx.ModelProto, path: Sequence[tuple[int, str, str, int | None]],
            tensors: Sequence[str], types: Mapping[str, tuple[np.dtype, int]]
            ) -> tuple[onnx.ModelProto, list[str]]:
    """A copy of ``proto`` whose extra graph outputs are ``tensors`` of the graph ``path``
    leads to; returns it and the names of those outputs, in order."""
    import onnx
    from onnx import helper

    model = onnx.ModelProto()
    model.CopyFrom(proto)
    graphs = [model.graph]
    nodes = []
    for index, attr, _, _ in path:
        node = graphs[-1].node[index]
        nodes.append(node)
        graphs.append(_graph_attr(node, attr))
    depth = len(path)
    names = []
    for k, tensor in enumerate(tensors):
        name = f"{PROBE}_{depth}_{k}"
        graphs[-1].node.append(helper.make_node("Identity", [tensor], [name]))
        names.append(name)
    for d in reversed(range(depth)):
        node, (_, attr, kind, iteration) = nodes[d], path[d]
        outer = [f"{PROBE}_{d}_{k}" for k in range(len(names))]
        body = graphs[d + 1]
        if kind == "If":
            other = _graph_attr(node, "else_branch" if attr == "then_branch" else "then_branch")
            for k, (name, tensor) in enumerate(zip(names, tensors)):
                dtype, rank = types[tensor] if d == depth - 1 else (np.dtype(np.float32), 0)
                empty = helper.make_tensor(f"{PROBE}_empty_{d}_{k}",
                                           helper.np_dtype_to_tensor_dtype(dtype),
                                           [0] * rank, [])
                other.node.append(helper.make_node("Constant", [], [f"{name}_other"],
                                                   value=empty))
                other.output.append(onnx.ValueInfoProto(name=f"{name}_other"))
                body.output.append(onnx.ValueInfoProto(name=name))
        else:
            for name in names:
                body.output.append(onnx.ValueInfoProto(name=name))
            if kind == "Scan":
                for a in node.attribute:
                    if a.name in ("scan_output_axes", "scan_output_directions"):
                        a.ints.extend([0] * len(names))
            if kind == "Loop" and d == 0 and iteration is not None:
                cut = f"{PROBE}_trip"
                graphs[0].initializer.append(helper.make_tensor(
                    cut, onnx.TensorProto.INT64, [], [iteration + 1]))
                node.input[0] = cut
        node.output.extend(outer)
        names = outer
    for name in names:
        model.graph.output.append(onnx.ValueInfoProto(name=name))
    return model, names


def _select(value: np.ndarray, path: Sequence[tuple[int, str, str, int | None]]
            ) -> np.ndarray:
    """An exposed output with the fixed iterations taken: one leading axis remains for a
    loop whose every iteration is wanted."""
    index: list[int | slice] = []
    for _, _, kind, iteration in path:
        if kind == "If":
            continue
        index.append(slice(None) if iteration is None else iteration)
    return np.asarray(value)[tuple(index)] if index else np.asarray(value)


class _Search:
    def __init__(self, proto: onnx.ModelProto, ir: Model, feed: Mapping[str, np.ndarray],
                 ir_feed: Mapping[str, np.ndarray], *, rtol: float | None,
                 atol: float | None, budget: int, timeout: float,
                 max_iterations: int | None, progress: Progress) -> None:
        self.proto, self.ir, self.feed, self.ir_feed = proto, ir, feed, ir_feed
        self.rtol, self.atol, self.budget = rtol, atol, budget
        self.timeout, self.max_iterations, self.say = timeout, max_iterations, progress
        self.report = Localization("onnxruntime", "irtool", memory_budget=budget,
                                   file=ir.path, model=ir)

    def irtool_values(self, scopes: set[str], prefix: tuple[int, ...]) -> Recorder:
        rec = Recorder(scopes, prefix, None, 1 << 62)
        started = time.perf_counter()
        run_traced(self.ir, [self.ir_feed], 0, rec, self.max_iterations)
        self.report.runs.append({"engine": "irtool", "what": "traced",
                                 "values": len(rec.values),
                                 "seconds": round(time.perf_counter() - started, 3)})
        return rec

    def ort_values(self, level: _Level, tensors: list[str],
                   types: Mapping[str, tuple[np.dtype, int]]) -> dict[str, np.ndarray]:
        model, names = _expose(self.proto, level.path, tensors, types)
        started = time.perf_counter()
        out = Isolated(OnnxRuntimeEngine(model), self.timeout,
                       label="onnxruntime").run(self.feed)
        self.report.runs.append({"engine": "onnxruntime", "what": "with values exposed",
                                 "values": len(tensors),
                                 "seconds": round(time.perf_counter() - started, 3)})
        return {t: _select(out[n], level.path) for t, n in zip(tensors, names) if n in out}

    def run(self, targets: Sequence[str]) -> Localization:
        started = time.perf_counter()
        try:
            self._search(targets)
        finally:
            self.report.seconds = time.perf_counter() - started
        return self.report

    def _search(self, targets: Sequence[str]) -> None:
        level = _Level(self.proto.graph, self.ir.graph, "")
        hops: list[Hop] = []
        prefix: tuple[int, ...] = ()
        wanted = set(targets)
        while True:
            # In a body every output matters: carried values feed the next iteration.
            nodes = _cone(level.graph, wanted if not level.path else
                          {o.name for o in level.graph.output})
            names = _names(level.ir)
            rec = self.irtool_values({level.scope}, prefix)
            inputs = [vi.name for vi in level.graph.input] if level.path else []
            order: list[tuple[int | None, str]] = [(None, n) for n in inputs]
            order += [(i, o) for i in nodes for o in level.graph.node[i].output if o]
            order = [(i, t) for i, t in order if t in names and names[t] in rec.values
                     and not (level.iterates and rec.shapes.get(names[t]) is None)]
            types = {t: (np.asarray(rec.values[names[t]][0][1]).dtype,
                         np.ndim(rec.values[names[t]][0][1])) for _, t in order}
            theirs = self.ort_values(level, [t for _, t in order], types)
            found = self._first(level, order, names, rec, theirs, len(prefix))
            if found is None:
                self.report.reason = ("every value on the way to the disagreeing outputs "
                                      + (f"inside {level.hop.describe()} " if level.hop
                                         else "") + "agrees")
                return
            node_index, tensor, iteration = found
            if level.iterates:
                assert level.hop is not None
                level.hop.iteration = iteration
                last = level.path[-1]
                level.path = (*level.path[:-1], (last[0], last[1], last[2], iteration))
                prefix = (*prefix, iteration)  # type: ignore[arg-type]
            rows = self._rows(level, order, names, rec, theirs, node_index, tensor, iteration)
            if node_index is None:  # a body input: the loop hands it over wrong
                self._finding(level, hops, None, rows, tensor)
                return
            node = level.graph.node[node_index]
            if node.op_type not in ("Loop", "Scan", "If"):
                self._finding(level, hops, node, rows, tensor)
                return
            inner = self._enter(level, node_index, node, prefix)
            if inner is None:
                self._finding(level, hops, node, rows, tensor)
                return
            hops.append(inner.hop)  # type: ignore[arg-type]
            bad = {r.output for r in rows if not r.ok}
            # An If's outputs are its branch's, position by position.
            wanted = {inner.graph.output[k].name for k, o in enumerate(node.output)
                      if o in bad and k < len(inner.graph.output)}
            level = inner

    def _enter(self, level: _Level, index: int, node: onnx.NodeProto,
               prefix: tuple[int, ...]) -> _Level | None:
        layer = _ir_layer(level.ir, node)
        if layer is None:
            self.report.notes.append(f"ONNX node {node.name or node.op_type} has no "
                                     "Loop/TensorIterator/If in the IR to look into")
            return None
        if node.op_type == "If":
            scopes = {body_scope(level.scope, layer.id, b) for b in ("then_body", "else_body")}
            rec = self.irtool_values(scopes, prefix)
            taken = [b for b in ("then_body", "else_body")
                     if body_scope(level.scope, layer.id, b) in rec.seen]
            if len(taken) != 1:
                return None
            body, attr = taken[0], "then_branch" if taken[0] == "then_body" else "else_branch"
        else:
            body, attr = "body", "body"
        hop = Hop(level.scope, layer.id, layer.name, layer.type, body, None, layer.line)
        return _Level(_graph_attr(node, attr), layer.bodies[body],
                      body_scope(level.scope, layer.id, body), hop,
                      (*level.path, (index, attr, node.op_type, None)))

    def _first(self, level: _Level, order: list[tuple[int | None, str]],
               names: Mapping[str, tuple[int, int]], rec: Recorder,
               theirs: Mapping[str, np.ndarray], depth: int
               ) -> tuple[int | None, str, int | None] | None:
        best: tuple[int, int] | None = None
        for position, (_, tensor) in enumerate(order):
            if tensor not in theirs:
                continue
            ours = rec.values[names[tensor]]
            if not level.iterates:
                at = None if compare("", ours[0][1], theirs[tensor], rtol=self.rtol,
                                     atol=self.atol).ok else 0
            else:
                ref = theirs[tensor]
                count = min(len(ours), int(np.shape(ref)[0]) if np.ndim(ref) else 0)
                at = None
                if count:
                    mask = bad_elements(np.stack([np.asarray(v) for _, v in ours[:count]]),
                                        np.asarray(ref)[:count], self.rtol, self.atol)
                    if mask is None:
                        at = ours[0][0][depth]
                    else:
                        rows = mask.reshape(count, -1).any(axis=1) if mask.size else \
                            np.zeros(count, bool)
                        at = ours[int(np.argmax(rows))][0][depth] if rows.any() else None
            if at is not None and (best is None or (at, position) < best):
                best = (at, position)
        if best is None:
            return None
        node_index, tensor = order[best[1]]
        return node_index, tensor, best[0] if level.iterates else None

    def _rows(self, level: _Level, order: list[tuple[int | None, str]],
              names: Mapping[str, tuple[int, int]], rec: Recorder,
              theirs: Mapping[str, np.ndarray], node_index: int | None, tensor: str,
              iteration: int | None) -> list[Comparison]:
        outs = [t for i, t in order if i == node_index] if node_index is not None else [tensor]
        rows = []
        depth = len(rec.prefix)
        for t in outs:
            ours = rec.values.get(names[t])
            ref = theirs.get(t)
            if ours is None or ref is None:
                rows.append(Comparison(t, "missing"))
                continue
            rows.append(traced_against(t, ours, ref, iterates=level.iterates, depth=depth,
                                       iteration=iteration, traced_is_reference=False,
                                       rtol=self.rtol, atol=self.atol))
        return rows

    def _finding(self, level: _Level, hops: list[Hop], node: onnx.NodeProto | None,
                 rows: list[Comparison], tensor: str) -> None:
        names = _names(level.ir)
        layer_id = names[tensor][0]
        layer = level.ir.layer(layer_id)
        finding = Finding(level.scope, layer.id, layer.name, layer.type, layer.version,
                          layer.line, list(hops), rows, inputs=len(layer.inputs))
        if node is not None:
            finding.onnx_node = node_label(node) + (f" ({node.op_type})" if node.name else "")
        else:
            finding.kind = "loop"
            finding.note = (f"the body input {tensor!r} disagrees at the start of the "
                            "iteration, though everything the body computed before agreed")
        self.report.finding = finding


def _cone(graph: onnx.GraphProto, wanted: set[str]) -> list[int]:
    """Indices of the nodes of ``graph`` on the way to the tensors ``wanted`` (outer names a
    body reads count as given), in the graph's order."""
    producer = {o: i for i, n in enumerate(graph.node) for o in n.output if o}
    keep: set[int] = set()
    todo = [producer[w] for w in wanted if w in producer]
    while todo:
        i = todo.pop()
        if i in keep:
            continue
        keep.add(i)
        node = graph.node[i]
        reads = set(node.input)
        for attr in node.attribute:
            if attr.HasField("g"):
                reads |= _free_names(attr.g)
        todo += [producer[r] for r in reads if r in producer]
    return sorted(keep)


def _free_names(graph: onnx.GraphProto) -> set[str]:
    """Names a graph reads from outside (captures), nested graphs included."""
    defined = {vi.name for vi in graph.input} | {t.name for t in graph.initializer}
    read: set[str] = set()
    for node in graph.node:
        read |= {i for i in node.input if i}
        for attr in node.attribute:
            if attr.HasField("g"):
                read |= _free_names(attr.g)
        defined |= set(node.output)
    return read - defined


def localize_onnx(proto: onnx.ModelProto, ir: Model, feed: Mapping[str, np.ndarray],
                  ir_feed: Mapping[str, np.ndarray], targets: Sequence[str], *,
                  rtol: float | None = None, atol: float | None = None,
                  memory_budget: int = DEFAULT_MEMORY_BUDGET, timeout: float = 300.0,
                  max_iterations: int | None = None, progress: Progress | None = None
                  ) -> Localization:
    """Where irtool's executor on ``ir`` (the unoptimised conversion of ``proto``, read from
    its file) parts from onnxruntime on ``proto``, whose outputs ``targets`` disagree; see
    the module docstring."""
    search = _Search(proto, ir, feed, ir_feed, rtol=rtol, atol=atol, budget=memory_budget,
                     timeout=timeout, max_iterations=max_iterations,
                     progress=progress or (lambda _m: None))
    return search.run(targets)


__all__ = ["localize_onnx"]
