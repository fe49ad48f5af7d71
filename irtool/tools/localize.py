"""Where two engines part ways on one IR: the first layer whose output disagrees while every
value it reads agrees, inside loop bodies and If branches, down to the iteration.

irtool's executor (the reference) and OpenVINO's CPU runtime (the candidate) are each
asked for the intermediate values they can give, a few runs in all, never one per layer:

* irtool runs with a tracer (``runtime.trace``): every value of the watched body, every
  iteration, without the executor's rewrites so that each value is one layer's;
* OpenVINO runs a copy of the IR whose extra outputs are those values
  (``passes.expose``): extra Results at the top level, body values stacked over the
  iterations as extra concatenated outputs of their Loop or TensorIterator, branch values
  as extra If outputs.

The search goes level by level. At the top level it compares the values of every layer
on the way to a disagreeing output, in topological order; the first that disagrees has
inputs that agree (they come earlier). When that layer is a Loop or TensorIterator, the
next level is its body: the first iteration in which a value disagrees, and in it the
first layer; a loop around is then cut after that iteration (its trip count, in the copy
OpenVINO runs), so that deeper levels see only that iteration. An If's next level is the
branch the run takes. A body Parameter that disagrees while all the body computed in the
iteration before agreed is the loop's own doing (a carried value passed on wrong, a
slice cut wrong): the loop is named.

Memory stays bounded: each engine keeps at most half of ``memory_budget`` of values at
once. A level whose values do not fit is compared in segments of layers, in topological
order (in a loop body, later segments only over the iterations before the first parting
found so far); the report says so. Values whose shape changes from iteration to iteration
cannot be stacked and are left out inside loops (the report says which).
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..core.errors import IRToolError
from ..core.scopes import body_scope, layer_path
from ..engines.base import flatten_steps, split_steps
from ..engines.isolate import Isolated
from ..engines.openvino import OpenVINOSessionEngine
from ..ir import read_model, write_model
from ..ir.graph import Graph, Layer, Model, TensorInfo
from ..ir.types import from_numpy
from ..passes.expose import PROBE_PREFIX, ExposeValues, KeepPrefix, Level, Probe
from ..passes.fp16 import copy_model
from ..runtime.session import CompiledModel
from ..runtime.trace import Tracer, ValueKey
from .compare import Comparison, bad_elements, compare

DEFAULT_MEMORY_BUDGET = 256 << 20
"""Bytes of intermediate values a localisation holds at once (half per engine)."""

CONTROL_FLOW = ("Loop", "TensorIterator", "If")
Feed = Mapping[str, np.ndarray]
Key = tuple[int, int]  # (layer id, output port id) in the graph of one level
Progress = Callable[[str], None]


@dataclass
class Hop:
    """A Loop, TensorIterator or If on the way down to a finding: the layer (``scope``,
    ``layer``...), the ``body`` gone into and, for a loop, the ``iteration``."""

    scope: str
    layer: int
    name: str
    type: str
    body: str
    iteration: int | None = None
    line: int | None = None

    def describe(self) -> str:
        at = f" iteration {self.iteration}" if self.iteration is not None else ""
        what = "branch" if self.type == "If" else "body"
        which = f" {self.body.removesuffix('_body')}" if self.type == "If" else ""
        return (f'{self.type} "{self.name}" ({layer_path(self.scope, self.layer)}){at},'
                f"{which} {what}")


@dataclass
class Finding:
    """The layer where the engines part ways, where it is and how its outputs differ
    (``outputs``: the candidate's values against the reference's, one row per port)."""

    scope: str
    layer: int
    name: str
    type: str
    version: str
    line: int | None
    hops: list[Hop]
    outputs: list[Comparison]
    step: int | None = None
    onnx_node: str | None = None
    kind: str = "layer"
    """``layer``: its outputs disagree while its inputs agree; ``loop``: a loop passes a
    body Parameter a value that disagrees while everything it is made of agrees, or runs
    another number of iterations; ``branch``: an If takes another branch; ``failure``:
    OpenVINO fails from this layer on (``localize_failure``)."""
    note: str = ""
    inputs: int = 0  # how many inputs the layer reads (all agree)

    @property
    def path(self) -> str:
        return layer_path(self.scope, self.layer)

    @property
    def iterations(self) -> tuple[int, ...]:
        return tuple(h.iteration for h in self.hops if h.iteration is not None)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["path"] = self.path
        data["outputs"] = [c.to_dict() for c in self.outputs]
        return data


@dataclass
class Localization:
    """What ``localize`` found (``finding``) or why not (``reason``), and what it ran."""

    reference: str
    candidate: str
    finding: Finding | None = None
    reason: str | None = None
    file: str | None = None
    runs: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    memory_budget: int = DEFAULT_MEMORY_BUDGET
    segmented: bool = False
    seconds: float = 0.0
    model: Model | None = field(default=None, repr=False, compare=False)
    """The IR searched (for a drawing of the finding; not in ``to_dict``)."""

    def to_dict(self) -> dict[str, Any]:
        return {"reference": self.reference, "candidate": self.candidate,
                "finding": self.finding.to_dict() if self.finding else None,
                "reason": self.reason, "file": self.file, "runs": list(self.runs),
                "notes": list(self.notes), "memory_budget": self.memory_budget,
                "segmented": self.segmented, "seconds": round(self.seconds, 3)}

    def format(self) -> str:
        """The report in words, a few lines."""
        lines = []
        f = self.finding
        if f is None:
            lines.append(f"localize: no layer found where {self.candidate} parts from "
                         f"{self.reference}: {self.reason}")
        else:
            where = f"{self.file}:{f.line}" if self.file and f.line else (self.file or "")
            step = f" at step {f.step}" if f.step is not None else ""
            lines.append(f"localize: {self.candidate} parts from {self.reference}{step} at "
                         f'{f.type}-{f.version} "{f.name}" (layer {f.path})'
                         + (f", {where}" if where else ""))
            if f.onnx_node:
                lines.append(f"  from ONNX node {f.onnx_node}")
            for hop in f.hops:
                lines.append(f"  inside {hop.describe()}")
            if f.kind in ("loop", "branch", "failure", "hidden"):
                lines.append(f"  {f.note}")
            elif f.outputs:
                lines.append(f"  its {f.inputs} input(s) agree; its output(s):")
            for row in f.outputs:
                lines.append(f"    {describe_row(row, self.reference, self.candidate)}")
            if f.note and f.kind == "layer":
                lines.append(f"  note: {f.note}")
        runs = ", ".join(f"{r['engine']} {r['what']} ({r['values']} value"
                         f"{'' if r['values'] == 1 else 's'}, {r['seconds']:.2f} s)"
                         for r in self.runs)
        if runs:
            lines.append(f"  runs: {runs}")
        if self.segmented:
            lines.append(f"  compared in segments (memory budget {_size(self.memory_budget)})")
        for note in self.notes:
            lines.append(f"  note: {note}")
        return "\n".join(lines)


def describe_row(row: Comparison, reference: str, candidate: str) -> str:
    """One output's error statistics in words."""
    text = f"{row.output}: {row.describe()}"
    if row.verdict == "mismatch":
        if row.max_rel is not None and np.isfinite(row.max_rel):
            text += f", max rel err {row.max_rel:.3g}"
        if row.at_first is not None:
            where = f" at {list(row.first_mismatch)}" if row.first_mismatch else ""
            text += f"; first{where}: {candidate} {_shown(row.at_first[0])}, {reference} " \
                    f"{_shown(row.at_first[1])}"
        for side, at in ((candidate, row.first_nonfinite), (reference, row.ref_first_nonfinite)):
            if at is not None:
                text += f"; {side}: first NaN/inf at {list(at)}"
    return text


def _shown(value: Any) -> str:
    return f"{value:.7g}" if isinstance(value, float) else repr(value) \
        if isinstance(value, str) else str(value)


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.3g} {unit}"
    return f"{n} B"


def parse_size(text: str) -> int:
    """``"256M"``, ``"2G"``, ``"1048576"`` -> bytes (K, M, G: powers of 1024)."""
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(t[-1:], 1)
    number = t[:-1] if t[-1:] in "KMG" else t
    try:
        value = float(number) * scale
    except ValueError:
        raise IRToolError(f"--memory-budget {text!r}: expected a size such as 512M or 2G") \
            from None
    if value <= 0:
        raise IRToolError(f"--memory-budget {text!r}: must be more than 0")
    return int(value)


# -- the levels of the search ---------------------------------------------------------


@dataclass
class _Level:
    """One graph the search compares in: the top graph, or a body ``hop`` leads into."""

    graph: Graph
    scope: str
    hop: Hop | None = None  # None: the top graph
    cf: Layer | None = None  # the control-flow layer whose body this is

    @property
    def iterates(self) -> bool:
        return self.cf is not None and self.cf.type in ("Loop", "TensorIterator")


def _predecessors(graph: Graph, seeds: set[int]) -> set[int]:
    seen = set(seeds)
    todo = list(seeds)
    while todo:
        for pred in graph.nx.predecessors(todo.pop()):
            if pred not in seen:
                seen.add(pred)
                todo.append(pred)
    return seen


def _cone(level: _Level, targets: set[int]) -> list[int]:
    """The layers of ``level`` on the way to its target outputs (top level: the ports of
    the disagreeing Results' sources, as output port ids of the outer layer otherwise), in
    topological order, without Consts and Results (and the top level's Parameters)."""
    graph, cf = level.graph, level.cf
    if cf is None:
        seeds = set(targets)
    else:
        name = "port_map" if cf.type != "If" else \
            level.hop.body.replace("_body", "_port_map")  # type: ignore[union-attr]
        entries = cf.port_maps.get(name, [])
        seeds = {e.internal_layer_id for e in entries if e.kind == "output"
                 and (e.external_port_id in targets or e.purpose == "execution_condition")}
    cone = _predecessors(graph, seeds)
    if cf is not None and cf.type != "If":
        # A carried value reaches the outputs through the back edge: what feeds its Result
        # matters from the second iteration on.
        back = {b.to_layer: b.from_layer for b in cf.back_edges}
        while True:
            more = {back[p] for p in cone if p in back} - cone
            if not more:
                break
            cone |= _predecessors(graph, more)
    # An Assign's value is the one it reads (OpenVINO gives its node no output to expose).
    skip = {"Const", "Result", "Assign"} | ({"Parameter"} if cf is None else set())
    return [i for i in graph.topological_order()
            if i in cone and graph.layer(i).type not in skip]


# -- irtool's values ----------------------------------------------------------------------


class Store:
    """The values a ``Recorder`` keeps of one scope, by ``(layer, port)``: every iteration's
    (``(iterations, value)`` pairs), and the bytes, shape (None: it changes from iteration
    to iteration) and dtype of each."""

    def __init__(self, prefix: tuple[int, ...], wanted: set[Key] | None) -> None:
        self.prefix, self.wanted = prefix, wanted
        self.values: dict[Key, list[tuple[tuple[int, ...], Any]]] = {}
        self.sizes: dict[Key, int] = {}
        self.shapes: dict[Key, tuple[int, ...] | None] = {}
        self.types: dict[Key, Any] = {}
        self.full = False


class Recorder(Tracer):
    """Keeps the traced values of one level (``main``, and any other ``scopes`` watched: the
    bodies looked at ahead), at the iterations ``prefix`` of the loops around it (inside
    a loop, those before ``upto``): at most ``budget`` bytes of those ``wanted`` (None:
    all), and the size and shape of every one. ``values``, ``sizes``... are ``main``'s
    (``store(scope)`` another's)."""

    def __init__(self, scopes: set[str], prefix: tuple[int, ...], wanted: set[Key] | None,
                 budget: int, upto: int | None = None, main: str | None = None) -> None:
        super().__init__(scopes)
        self.main = main if main is not None else min(scopes)
        self.prefix, self.depth = prefix, len(prefix)
        self.budget, self.upto = budget, upto
        self.stores = {scope: Store(prefix, wanted if scope == self.main else None)
                       for scope in scopes}
        self.kept = 0
        self.full = False
        self.active = True
        self.seen: set[str] = set()

    def store(self, scope: str) -> Store:
        return self.stores[scope]

    @property
    def values(self) -> dict[Key, list[tuple[tuple[int, ...], Any]]]:
        return self.stores[self.main].values

    @property
    def sizes(self) -> dict[Key, int]:
        return self.stores[self.main].sizes

    @property
    def shapes(self) -> dict[Key, tuple[int, ...] | None]:
        return self.stores[self.main].shapes

    @property
    def types(self) -> dict[Key, Any]:
        return self.stores[self.main].types

    @property
    def wanted(self) -> set[Key] | None:
        return self.stores[self.main].wanted

    def on_value(self, key: ValueKey, its: tuple[int, ...], value: Any) -> None:
        if not self.active:
            return
        depth = self.depth
        if depth and its[:depth] != self.prefix:
            return
        upto = self.upto
        if upto is not None and len(its) > depth and its[depth] >= upto:
            return
        scope, layer, port = key
        if scope not in self.seen:
            self.seen.add(scope)
        store = self.stores[scope]
        k = (layer, port)
        if value.__class__ is np.ndarray:
            nbytes, shape = value.nbytes, value.shape
        else:
            nbytes, shape = int(getattr(value, "nbytes", 0)), tuple(np.shape(value))
        sizes = store.sizes
        if k in sizes:
            sizes[k] += nbytes
            if store.shapes[k] != shape:
                store.shapes[k] = None
        else:
            sizes[k] = nbytes
            store.shapes[k] = shape
            store.types[k] = np.asarray(value).dtype
        if self.full or (store.wanted is not None and k not in store.wanted):
            return
        if self.kept + nbytes > self.budget and self.kept:
            self.full = True
            for each in self.stores.values():
                each.full = True
            return
        self.kept += nbytes
        values = store.values.get(k)
        if values is None:
            store.values[k] = [(its, value)]
        else:
            values.append((its, value))


def run_traced(model: Model, steps: Sequence[Feed], step: int, recorder: Recorder,
                max_iterations: int | None) -> None:
    """Steps ``0..step`` in one traced session; the recorder listens at ``step`` only."""
    session = CompiledModel(model, max_iterations=max_iterations, check=False,
                            trace=recorder)
    for number, feed in enumerate(steps[:step + 1]):
        recorder.active = number == step
        session.run({n: feed[n] for n in session.input_names if n in feed})


# -- the search ---------------------------------------------------------------------------


@dataclass
class _Parting:
    """Where a level's first disagreement is, and the values compared to find it."""

    layer: int
    iteration: int | None
    position: int
    rec: Recorder | Store
    keys: list[Key]  # what OpenVINO exposed, in order
    ov: dict[int, np.ndarray]  # its values, by position in ``keys``
    kind: str = "value"
    """``value``: ``layer``'s output disagrees; ``count``: inside a loop every value agrees
    over the iterations both engines ran, and they ran ``counts`` (irtool's, OpenVINO's)
    iterations; ``branch``: OpenVINO takes the other branch of an If; ``hidden``: exposing
    ``layer``'s value makes OpenVINO compute like irtool."""
    counts: tuple[int, int] | None = None


class _Search:
    def __init__(self, model: Model, steps: Sequence[Feed], step: int, *,
                 config: Mapping[str, str] | None, rtol: float | None, atol: float | None,
                 budget: int, timeout: float, max_iterations: int | None, folder: Path,
                 candidate_outputs: Mapping[str, np.ndarray] | None,
                 progress: Progress) -> None:
        self.model, self.steps, self.step = model, steps, step
        self.config, self.rtol, self.atol = config, rtol, atol
        self.budget, self.timeout, self.max_iterations = budget, timeout, max_iterations
        self.folder, self.say = folder, progress
        self.candidate_outputs = candidate_outputs
        self.report = Localization("irtool", "openvino", memory_budget=budget,
                                   file=model.path, model=model)
        self.exposed_runs = 0
        self.hidden = False  # exposing values changed OpenVINO's disagreeing outputs
        self.also_values: list[dict[int, np.ndarray]] = []
        # The values of a body looked at ahead (both engines'), by its scope: (irtool's store,
        # the keys OpenVINO exposed, its values by position among those keys).
        self.preloaded: dict[str, tuple[Store, list[Key], dict[int, np.ndarray]]] = {}
        self.targets: Sequence[str] = ()

    # each engine once over a set of values -----------------------------------------------

    def irtool_values(self, scopes: set[str], prefix: tuple[int, ...], wanted: set[Key] | None,
                      upto: int | None = None, main: str | None = None) -> Recorder:
        # A set of values asked for was planned to fit (or is one value alone, which is
        # compared whatever its size): only a first run that keeps all it can is capped.
        budget = self.budget // 2 if wanted is None else 1 << 62
        recorder = Recorder(scopes, prefix, wanted, budget, upto, main)
        started = time.perf_counter()
        run_traced(self.model, self.steps, self.step, recorder, self.max_iterations)
        self.report.runs.append({"engine": "irtool", "what": "traced",
                                 "values": len(recorder.values),
                                 "seconds": round(time.perf_counter() - started, 3)})
        return recorder

    def openvino_values(self, levels: list[Level], probes: list[Probe],
                        also: Sequence[tuple[list[Level], list[Probe]]] = ()
                        ) -> tuple[dict[int, np.ndarray], ExposeValues, dict[str, np.ndarray]]:
        """OpenVINO's values of ``probes`` (by position) on the copy exposing them (and the
        groups ``also``: ``self.also_values``), and the copy's own outputs by Result name."""
        rewrite = ExposeValues(levels, probes, also, copy=False)
        exposed = rewrite(_fresh(self.model)).target
        self.exposed_runs += 1
        xml = self.folder / f"exposed{self.exposed_runs}.xml"
        write_model(exposed, xml)
        started = time.perf_counter()
        engine = Isolated(OpenVINOSessionEngine(xml, config=self.config, by_result=True),
                          self.timeout, label="OpenVINO")
        try:
            flat = engine.run(flatten_steps(self.steps[:self.step + 1]))
        finally:
            with contextlib.suppress(OSError):
                xml.unlink()
                xml.with_suffix(".bin").unlink()
        outputs = split_steps(flat)[self.step]
        self.report.runs.append({"engine": "openvino", "what": "with values exposed",
                                 "values": sum(len(p) for _, p in rewrite.groups),
                                 "seconds": round(time.perf_counter() - started, 3)})
        groups = [{k: rewrite.select(outputs[n], g) for k, n in enumerate(rewrite.names(g))
                   if n in outputs} for g in range(len(rewrite.groups))]
        self.also_values = groups[1:]
        return groups[0], rewrite, outputs

    # one level ----------------------------------------------------------------------------

    def first_parting(self, level: _Level, order: list[int], prefix: tuple[int, ...],
                      levels: list[Level]) -> _Parting | None:
        """The first value of the layers ``order`` (in topological order) that disagrees;
        inside a loop, the first iteration in which one does, and its first value."""
        graph, scopes, half = level.graph, {level.scope}, self.budget // 2
        keys = [(i, p.id) for i in order for p in graph.layer(i).outputs]
        position = {k: n for n, k in enumerate(keys)}
        ahead = self._ahead(level, order)
        preloaded = self.preloaded.pop(level.scope, None)
        self.preloaded.clear()
        if preloaded is not None and all(complete(preloaded[0], k) or k not in
                                         preloaded[0].sizes for k in keys):
            rec: Recorder | Store = preloaded[0]
        else:
            preloaded = None
            rec = self.irtool_values(scopes | {a[1] for a in ahead}, prefix, None,
                                     main=level.scope)
        ragged = [k for k in keys if level.iterates and k in rec.shapes
                  and rec.shapes[k] is None]
        if ragged:
            self.report.notes.append(
                f"{len(ragged)} value(s) inside {level.hop.describe()} change shape from "  # type: ignore[union-attr]
                "iteration to iteration and were not compared there: "
                + ", ".join(self.describe_key(graph, k) for k in ragged[:5]))
        pending = [k for k in keys if k in rec.sizes and k not in ragged]
        best: _Parting | None = None
        upto: int | None = None
        first = True
        while pending:
            usable = [k for k in pending if complete(rec, k)]
            if not usable:
                rec = self.irtool_values(scopes, prefix, set(fitting(pending, rec.sizes, half)),
                                         upto)
                usable = [k for k in pending if complete(rec, k)]
                if not usable:
                    break
            if len(usable) < len(pending):
                self.report.segmented = True
            if first and preloaded is not None:
                ov = {n: preloaded[2][preloaded[1].index(k)] for n, k in enumerate(usable)
                      if k in preloaded[1] and preloaded[1].index(k) in preloaded[2]}
            else:
                probes = [Probe(k[0], k[1], _info(rec, k)) for k in usable]
                lv = list(levels)
                if upto is not None:
                    lv[-1] = Level(lv[-1].layer, lv[-1].body, None, upto)
                # Looked at ahead: the bodies of the loops here, when all fits at once.
                also = self._ahead_groups(rec, ahead, levels) \
                    if first and isinstance(rec, Recorder) and not rec.full \
                    and len(usable) == len(pending) else []
                ov, _, outputs = self.openvino_values(lv, probes, [(g[0], g[1]) for g in also])
                self.hidden = self.hidden or self._hides(outputs, self.targets)
                for (_, _, scope, body_keys, store), values in zip(also, self.also_values):
                    self.preloaded[scope] = (store, body_keys,
                                             {n: v for n, v in values.items()})
            first = False
            if level.cf is not None and level.cf.type == "If" and ov and all(
                    np.size(v) == 0 for v in ov.values()) and any(
                    rec.sizes.get(k, 0) for k in usable):
                # Every value OpenVINO gives is the other branch's empty stand-in.
                return _Parting(-1, None, -1, rec, usable, ov, kind="branch")
            found, counts = self._compare_level(level, usable, rec, ov, position)
            if counts is not None and found is None and best is None:
                best = _Parting(-1, None, -1, rec, usable, ov, kind="count", counts=counts)
            if found is not None and (best is None or best.kind != "value"
                                      or found < (best.iteration or 0, best.position)):
                best = _Parting(keys[found[1]][0], found[0] if level.iterates else None,
                                found[1], rec, usable, ov)
            pending = [k for k in pending if k not in usable]
            if best is not None and best.kind == "value":
                if not level.iterates or not best.iteration:
                    break
                upto = best.iteration
        if best is None and level.iterates and not any(rec.values.get(k) for k in keys):
            best = _Parting(-1, None, -1, rec, [], {}, kind="count", counts=(0, 0))
        return best

    def _ahead(self, level: _Level, order: list[int]) -> list[tuple[Layer, str, list[Key]]]:
        """The Loops and TensorIterators of ``order``: each, its body's scope, and the values
        there the search would compare if it went in (every output matters). Only from a
        level that does not iterate itself: inside a loop, the body of a loop would be
        looked at over every outer iteration, where the search wants one."""
        found: list[tuple[Layer, str, list[Key]]] = []
        if level.iterates:
            return found
        for layer_id in order:
            layer = level.graph.layer(layer_id)
            if layer.type not in ("Loop", "TensorIterator") or "body" not in layer.bodies:
                continue
            scope = body_scope(level.scope, layer.id, "body")
            inner = _Level(layer.bodies["body"], scope, None, layer)
            keys = [(i, p.id) for i in _cone(inner, {p.id for p in layer.outputs})
                    for p in inner.graph.layer(i).outputs]
            found.append((layer, scope, keys))
        return found

    def _ahead_groups(self, rec: Recorder, ahead: list[tuple[Layer, str, list[Key]]],
                      levels: list[Level]) -> list[tuple[list[Level], list[Probe], str,
                                                         list[Key], Store]]:
        """The exposure groups for the bodies looked at ahead whose values irtool kept whole
        (and which keep their shape from iteration to iteration)."""
        groups = []
        for layer, scope, keys in ahead:
            if scope not in rec.stores:
                continue
            store = rec.store(scope)
            usable = [k for k in keys if complete(store, k) and store.shapes.get(k) is not None]
            if usable:
                groups.append(([*levels, Level(layer.id, "body")],
                               [Probe(k[0], k[1], _info(store, k)) for k in usable], scope,
                               usable, store))
        return groups

    def _compare_level(self, level: _Level, keys: list[Key], rec: Recorder | Store,
                       ov: dict[int, np.ndarray], position: dict[Key, int]
                       ) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
        """The earliest ``(iteration, position)`` at which a value of ``keys`` disagrees
        (iteration 0 outside loops), and inside a loop ``(irtool's, OpenVINO's)`` iteration
        counts when they differ (the values compared over the iterations both ran)."""
        best: tuple[int, int] | None = None
        counts: tuple[int, int] | None = None
        depth = len(rec.prefix)
        for n, key in enumerate(keys):
            if n not in ov:
                continue
            ours = rec.values[key]
            theirs = ov[n]
            if not level.iterates:
                bad = not compare("", theirs, ours[0][1], rtol=self.rtol, atol=self.atol).ok
                at = 0 if bad else None
            else:
                at = self._first_bad_iteration(theirs, ours, depth)
                ran = (len(ours), int(np.shape(theirs)[0]) if np.ndim(theirs) else 0)
                if ran[0] != ran[1]:
                    counts = ran
            if at is not None and (best is None or (at, position[key]) < best):
                best = (at, position[key])
        return best, counts

    def _first_bad_iteration(self, theirs: np.ndarray, ours: list[tuple[tuple[int, ...], Any]],
                             depth: int) -> int | None:
        """The first iteration both engines ran in which the value disagrees."""
        count = min(len(ours), int(np.shape(theirs)[0]) if np.ndim(theirs) else 0)
        if not count:
            return None
        stacked = np.stack([np.asarray(v) for _, v in ours[:count]])
        mask = bad_elements(np.asarray(theirs)[:count], stacked, self.rtol, self.atol)
        if mask is None:
            return ours[0][0][depth]
        rows = mask.reshape(count, -1).any(axis=1) if mask.size else np.zeros(count, bool)
        return ours[int(np.argmax(rows))][0][depth] if rows.any() else None

    def describe_key(self, graph: Graph, key: Key) -> str:
        layer = graph.layer(key[0])
        port = layer.port(key[1])
        return f'"{layer.name}" port {key[1]}' + (f" ({port.names[0]})" if port and port.names
                                                  else "")

    # the whole search ---------------------------------------------------------------------

    def run(self, targets: Sequence[str], variables: Sequence[str] = ()) -> Localization:
        started = time.perf_counter()
        try:
            self._search(targets, variables)
        finally:
            self.report.seconds = time.perf_counter() - started
        return self.report

    def _search(self, targets: Sequence[str], variables: Sequence[str]) -> None:
        model = self.model
        self.targets = targets
        names = dict(zip(model.output_names(), model.outputs))
        seeds = {names[t].id for t in targets if t in names}
        seeds |= {layer.id for layer in model.graph
                  if layer.type == "Assign" and layer.attrs.get("variable_id") in variables}
        level = _Level(model.graph, "")
        hops: list[Hop] = []
        levels: list[Level] = []
        prefix: tuple[int, ...] = ()
        wanted: set[int] = seeds
        while True:
            order = _cone(level, wanted)
            self.say(f"localizing: {len(order)} layer(s) in {level.scope or 'the main graph'}")
            found = self.first_parting(level, order, prefix, levels)
            if found is None and level.hop is None and self.hidden:
                found = self._expose_less(level, order, targets)
                if found is not None and found.kind == "hidden":
                    layer = level.graph.layer(found.layer)
                    finding = self._finding(level, hops, layer, [])
                    finding.kind = "hidden"
                    finding.note = (
                        "OpenVINO computes the model's outputs as irtool does when this "
                        "layer's value is an output too, and parts from irtool when only the "
                        "layers before it are: a rewrite of its graph from this layer on "
                        "(every value before it agrees)")
                    self.report.finding = finding
                    return
            if found is None:
                self._nothing(level, hops)
                return
            if found.kind != "value":
                self._control_finding(level, hops, found)
                return
            layer_id, iteration = found.layer, found.iteration
            if level.iterates:
                assert level.hop is not None
                level.hop.iteration = iteration
                levels[-1] = Level(levels[-1].layer, levels[-1].body, iteration)
                prefix = (*prefix, iteration)  # type: ignore[arg-type]
            layer = level.graph.layer(layer_id)
            rows = self._rows(level, layer, found)
            if layer.type == "Parameter":
                self._loop_finding(level, hops, layer, rows, iteration)
                return
            bad_ports = {p.id for p, row in zip(layer.outputs, rows) if not row.ok}
            if layer.type not in CONTROL_FLOW:
                self.report.finding = self._finding(level, hops, layer, rows)
                return
            inner = self._enter(level, layer, prefix)
            if inner is None:
                self.report.finding = self._finding(level, hops, layer, rows)
                return
            hops.append(inner.hop)  # type: ignore[arg-type]
            levels.append(Level(layer.id, inner.hop.body))  # type: ignore[union-attr]
            level, wanted = inner, bad_ports

    def _enter(self, level: _Level, layer: Layer, prefix: tuple[int, ...]) -> _Level | None:
        """The level inside ``layer``: its body, or the branch the run takes."""
        if layer.type == "If":
            scopes = {body_scope(level.scope, layer.id, b) for b in ("then_body", "else_body")}
            rec = self.irtool_values(scopes, prefix, set())
            taken = [b for b in ("then_body", "else_body")
                     if body_scope(level.scope, layer.id, b) in rec.seen]
            body = taken[0] if taken else None
            if body is None:
                # A branch whose layers are all constants reports nothing: the other one ran
                # if it has layers that compute.
                computing = [b for b in ("then_body", "else_body") if any(
                    x.type not in ("Const", "Result", "Parameter") for x in layer.bodies[b])]
                if len(computing) != 1:
                    return None
                body = "else_body" if computing[0] == "then_body" else "then_body"
        else:
            body = "body"
        hop = Hop(level.scope, layer.id, layer.name, layer.type, body, None, layer.line)
        return _Level(layer.bodies[body], body_scope(level.scope, layer.id, body), hop, layer)

    def _rows(self, level: _Level, layer: Layer, found: _Parting) -> list[Comparison]:
        """The found layer's outputs compared, at the iteration found."""
        rec, ov, iteration = found.rec, found.ov, found.iteration
        index = {k: n for n, k in enumerate(found.keys)}
        rows = []
        for port in layer.outputs:
            key = (layer.id, port.id)
            name = port.names[0] if port.names else f"port {port.id}"
            ours = rec.values.get(key)
            theirs = ov.get(index.get(key, -1))
            if ours is None or theirs is None:
                rows.append(Comparison(name, "missing"))
                continue
            rows.append(traced_against(name, ours, theirs, iterates=level.iterates,
                                       depth=len(rec.prefix), iteration=iteration,
                                       traced_is_reference=True, rtol=self.rtol,
                                       atol=self.atol))
        return rows

    def _finding(self, level: _Level, hops: list[Hop], layer: Layer,
                 rows: list[Comparison]) -> Finding:
        return Finding(level.scope, layer.id, layer.name, layer.type, layer.version,
                       layer.line, list(hops), rows, self._step(),
                       inputs=len(layer.inputs))

    def _step(self) -> int | None:
        return self.step if len(self.steps) > 1 else None

    def _loop_finding(self, level: _Level, hops: list[Hop], param: Layer,
                      rows: list[Comparison], iteration: int | None) -> None:
        """A body Parameter disagrees first: the loop passes it a wrong value."""
        cf, hop = level.cf, level.hop
        assert cf is not None and hop is not None
        role = _parameter_role(cf, param.id)
        before = f"at iteration {iteration}" if iteration else "at the first iteration"
        if role.startswith("carried") and iteration:
            why = (f"in iteration {iteration - 1} everything the body computed agreed, so "
                   f"the loop passes the value on wrong")
        else:
            why = "the loop's own inputs agree, so the loop hands it over wrong"
        finding = self._finding(_Level(level.graph, hop.scope), hops[:-1], cf, rows)
        finding.kind = "loop"
        finding.note = (f'body Parameter "{param.name}" ({role}) disagrees {before}; {why}')
        finding.hops.append(Hop(hop.scope, hop.layer, hop.name, hop.type, hop.body,
                                iteration, hop.line))
        self.report.finding = finding

    def _hides(self, outputs: Mapping[str, np.ndarray], targets: Sequence[str]) -> bool:
        """Did exposing values change what OpenVINO gives for the disagreeing ``targets``
        (``outputs``: the exposed copy's, by Result name: ``ExposeValues.output_names``)?"""
        if self.candidate_outputs is None:
            return False
        names = self.model.output_names()
        for k, name in enumerate(names):
            result = f"{PROBE_PREFIX}output_{k}"
            if name not in targets or result not in outputs or \
                    name not in self.candidate_outputs:
                continue
            if not compare(name, outputs[result], self.candidate_outputs[name],
                           rtol=self.rtol, atol=self.atol).ok:
                return True
        return False

    def _expose_less(self, level: _Level, order: list[int], targets: Sequence[str]
                     ) -> _Parting | None:
        """Exposing every value made OpenVINO compute like irtool: expose the values of the
        first ``k`` layers only, the largest ``k`` (by bisection) that leaves OpenVINO's
        outputs as they were. A value that disagrees there is a finding as usual; else the
        layer ``k + 1``, whose exposure changes OpenVINO, is named (kind ``hidden``)."""
        rec = self.irtool_values({level.scope}, (), None)
        if rec.full:
            return None
        keys_of = {i: [(i, p.id) for p in level.graph.layer(i).outputs] for i in order}
        position = {k: n for n, k in enumerate(k for i in order for k in keys_of[i])}
        runs: dict[int, tuple[list[Key], dict[int, np.ndarray]] | None] = {}

        def run(count: int) -> tuple[list[Key], dict[int, np.ndarray]] | None:
            """The values of the first ``count`` layers, None when exposing them changes
            OpenVINO's outputs."""
            if count not in runs:
                keys = [k for i in order[:count] for k in keys_of[i] if k in rec.values]
                ov, _, outputs = self.openvino_values(
                    [], [Probe(k[0], k[1], _info(rec, k)) for k in keys])
                runs[count] = None if self._hides(outputs, targets) else (keys, ov)
            return runs[count]

        lo, hi = _boundary(0, len(order), lambda mid: run(mid) is not None)
        got = run(lo) if lo else None
        if got is not None:
            found, _ = self._compare_level(level, got[0], rec, got[1], position)
            if found is not None:
                key = got[0][[position[k] for k in got[0]].index(found[1])]
                return _Parting(key[0], None, found[1], rec, got[0], got[1])
        return _Parting(order[hi - 1], None, -1, rec, [], {}, kind="hidden")

    def _control_finding(self, level: _Level, hops: list[Hop], found: _Parting) -> None:
        """The Loop or If around this level departs by itself: iterations or branch."""
        cf, hop = level.cf, level.hop
        assert cf is not None and hop is not None
        finding = self._finding(_Level(level.graph, hop.scope), hops[:-1], cf, [])
        finding.kind = "loop" if found.kind == "count" else "branch"
        if found.kind == "branch":
            other = "then" if hop.body == "else_body" else "else"
            finding.note = (f"irtool takes the {hop.body.removesuffix('_body')} branch and "
                            f"OpenVINO the {other} branch, though the condition they read "
                            "agrees")
        elif found.counts == (0, 0):
            finding.note = ("the loop runs no iteration; the outputs it gives for no "
                            "iteration disagree, though its inputs agree")
        else:
            ours, theirs = found.counts  # type: ignore[misc]
            finding.note = (f"irtool runs {ours} iteration(s), OpenVINO {theirs}; every "
                            "value inside agrees over the iterations both run, and the "
                            "loop's inputs (trip count, condition) agree")
        self.report.finding = finding

    def _nothing(self, level: _Level, hops: list[Hop]) -> None:
        if level.hop is None:
            self.report.reason = ("every value on the way to the disagreeing outputs agrees "
                                  "when OpenVINO exposes them: its graph transformations "
                                  "differ when intermediate values are outputs, which hides "
                                  "the difference")
            return
        self.report.reason = (f"the values inside {level.hop.describe()} agree, though its "
                              "outputs do not")
        cf = level.cf
        assert cf is not None
        self.report.finding = Finding(level.hop.scope, cf.id, cf.name, cf.type, cf.version,
                                      cf.line, hops[:-1], [], self._step(),
                                      kind="loop" if level.iterates else "layer",
                                      note="its body's values agree; the layer itself "
                                           "joins them into outputs that disagree")


def _parameter_role(layer: Layer, param: int) -> str:
    for entry in layer.port_maps.get("port_map", []):
        if entry.kind != "input" or entry.internal_layer_id != param:
            continue
        if entry.purpose == "current_iteration":
            return "the iteration number"
        if any(b.to_layer == param for b in layer.back_edges):
            return "carried"
        if entry.axis is not None:
            return f"sliced on axis {entry.axis}"
        return "invariant"
    return "input"


def _fresh(model: Model) -> Model:
    """A model of the same IR that may be changed: read again from its file (several times
    faster than a deep copy of a large model), or a copy of one made in memory."""
    if model.path is not None:
        with contextlib.suppress(IRToolError, OSError):
            return read_model(model.path)
    return copy_model(model)


def complete(rec: Recorder | Store, key: Key) -> bool:
    """Did ``rec`` keep every value of ``key``?"""
    return key in rec.values and rec.sizes.get(key, 0) == sum(
        int(getattr(v, "nbytes", 0)) for _, v in rec.values[key])


def fitting(keys: Sequence[Key], sizes: Mapping[Key, int], budget: int) -> list[Key]:
    """The first of ``keys`` whose sizes add up to at most ``budget`` (at least one)."""
    out: list[Key] = []
    total = 0
    for k in keys:
        size = sizes.get(k, 0)
        if out and total + size > budget:
            break
        out.append(k)
        total += size
    return out


def _info(rec: Recorder | Store, key: Key) -> TensorInfo | None:
    shape = rec.shapes.get(key)
    dtype = rec.types.get(key)
    if shape is None or dtype is None or dtype.kind in "OUS":
        return None
    try:
        return TensorInfo(from_numpy(dtype), shape)
    except (KeyError, ValueError):
        return None


def localize(model: Model, steps: Sequence[Feed], targets: Sequence[str], *,
             variables: Sequence[str] = (), step: int = 0,
             config: Mapping[str, str] | None = None, rtol: float | None = None,
             atol: float | None = None, memory_budget: int = DEFAULT_MEMORY_BUDGET,
             timeout: float = 300.0, max_iterations: int | None = None,
             folder: str | Path | None = None,
             candidate_outputs: Mapping[str, np.ndarray] | None = None,
             progress: Progress | None = None) -> Localization:
    """Where OpenVINO parts from irtool's executor on ``model`` (read from its file: the
    finding names its line), for the session ``steps`` (one feed per step; the search
    looks at step ``step``, the first that disagrees), whose outputs ``targets`` (tensor
    names) and ``variables`` (ids: the values their Assign layers write) disagree.
    ``config``: OpenVINO's CPU properties as in the check that found the
    disagreement (None: its exact modes). ``folder``: where the exposed copies are written
    (default: a temporary folder). See the module docstring for the search."""
    with _folder(folder) as where:
        search = _Search(model, steps, step, config=config, rtol=rtol, atol=atol,
                         budget=memory_budget, timeout=timeout, max_iterations=max_iterations,
                         folder=where, candidate_outputs=candidate_outputs,
                         progress=progress or (lambda _m: None))
        return search.run(targets, variables)


def localize_failure(model: Model, steps: Sequence[Feed], error: str, *,
                     config: Mapping[str, str] | None = None, timeout: float = 300.0,
                     folder: str | Path | None = None, progress: Progress | None = None
                     ) -> Localization:
    """OpenVINO fails on ``model`` (``error``: how; a crash, a refusal): the layer of the top
    graph from which on it fails, found by bisection over prefixes of the topological
    order (``passes.expose.KeepPrefix``): the model cut after layer ``k``, every value it
    computes that the rest reads an output. About log2(layers) runs of OpenVINO."""
    say = progress or (lambda _m: None)
    report = Localization("irtool", "openvino", file=model.path, model=model)
    started = time.perf_counter()
    order = [i for i in model.graph.topological_order()
             if model.graph.layer(i).type not in ("Parameter", "Const", "Result")]
    reasons: dict[int, str | None] = {len(order): error, 0: None}
    with _folder(folder) as where:

        def failure(k: int) -> str | None:
            if k not in reasons:
                cut = KeepPrefix(frozenset(order[:k]), copy=False)(_fresh(model)).target
                xml = where / f"prefix{k}.xml"
                write_model(cut, xml)
                begun = time.perf_counter()
                outcome = Isolated(OpenVINOSessionEngine(xml, config=config), timeout,
                                   label="OpenVINO").try_run(flatten_steps(steps))
                report.runs.append({"engine": "openvino", "what": f"first {k} layer(s)",
                                    "values": 0,
                                    "seconds": round(time.perf_counter() - begun, 3)})
                reasons[k] = outcome.error
            return reasons[k]

        say(f"localizing a failure: {len(order)} layer(s)")
        _, hi = _boundary(0, len(order), lambda mid: failure(mid) is None)
    report.seconds = time.perf_counter() - started
    if not order or (hi == len(order) and failure(hi) is None):
        report.reason = "no prefix of the model makes OpenVINO fail"
        return report
    layer = model.graph.layer(order[hi - 1])
    report.finding = Finding("", layer.id, layer.name, layer.type, layer.version, layer.line,
                             [], [], kind="failure", inputs=len(layer.inputs),
                             note=f"OpenVINO runs the model cut before this layer and fails "
                                  f"on it cut after: {reasons[hi]}")
    return report


@contextlib.contextmanager
def _folder(folder: str | Path | None) -> Iterator[Path]:
    if folder is not None:
        yield Path(folder)
        return
    with tempfile.TemporaryDirectory(prefix="irtool-localize-") as tmp:
        yield Path(tmp)


def traced_against(name: str, traced: list[tuple[tuple[int, ...], np.ndarray]],
                   other: np.ndarray, *, iterates: bool, depth: int, iteration: int | None,
                   traced_is_reference: bool, rtol: float | None,
                   atol: float | None) -> Comparison:
    """irtool's traced values of one port (``(iterations, value)`` pairs, as a ``Tracer``
    records them) against another engine's value of it: in a loop body (``iterates``), at
    ``iteration`` of the loop ``depth`` levels in (``other`` then stacked over that loop's
    iterations, as an exposed output concatenates them), else its only value. ``missing``
    when the other engine has no value for that iteration."""
    if iterates:
        pos = next((n for n, (its, _) in enumerate(traced) if its[depth] == iteration), None)
        if pos is None or np.ndim(other) == 0 or pos >= np.shape(other)[0]:
            return Comparison(name, "missing")
        mine, theirs = traced[pos][1], np.asarray(other)[pos]
    else:
        mine, theirs = traced[0][1], other
    if traced_is_reference:
        return compare(name, theirs, mine, rtol=rtol, atol=atol)
    return compare(name, mine, theirs, rtol=rtol, atol=atol)


def _boundary(lo: int, hi: int, holds: Callable[[int], bool]) -> tuple[int, int]:
    """Bisection of a predicate that holds up to some point and not after: ``(lo, hi)``
    with ``hi == lo + 1`` (or the range given, when narrower), ``holds`` asked only
    strictly between them and assumed at ``lo``, not at ``hi``."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if holds(mid):
            lo = mid
        else:
            hi = mid
    return lo, hi


__all__ = ["DEFAULT_MEMORY_BUDGET", "Finding", "Hop", "Localization", "describe_row",
           "localize", "localize_failure", "parse_size", "traced_against"]
