"""The search: edits tried in greedy passes until none is kept, big cuts first.

A round drops model outputs, then cuts layers, then goes into control flow; rounds repeat
until one keeps nothing. Outputs and layers are cut by delta debugging (Zeller's ddmin)
over the model's Results and over the top graph's computing layers in topological order:
first each half alone, then each half left out, then quarters, ... so that a problem
buried in a chain of a thousand layers is found in a few dozen trials. Into control flow:
an If is replaced by the branch the run takes (then the other), a Loop's trip count is
lowered (1, else bisected), and a Loop or TensorIterator is replaced by its body for its
last iteration, then its first. When the structure is done, inputs and float constants
are made smaller (each dimension to 1, else halved) and simpler (zeros, else rounded to
one decimal).

Every candidate is written to the work folder, passes the gate (``validate`` finds no
error, but the code a ``validate:CODE`` condition is about) and is then put to the
condition; identical candidates are answered from a cache.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np

from ...core.diagnostics import Diagnostic, errors_only
from ...ir import Layer, write_model
from ...ir.graph import tensor_name
from ...validation import check_file, validate_model
from .conditions import Condition, Disagree, Trial, Verdict
from .edits import (
    ITERATING,
    Candidate,
    Holder,
    held_value,
    hoist_body,
    holders,
    inline_branch,
    keep_layers,
    keep_results,
    layer_counts,
    operations,
    redeclare,
    set_trip_count,
    set_value,
    zeros_fill,
)
from .values import record, trace

log = logging.getLogger("irtool")

T = TypeVar("T")

TRACE_BUDGET_BYTES = 1 << 30
"""The most a trace of one loop's body Parameters over its iterations may hold."""

Progress = Callable[[Candidate, "Reducer"], None]


class OutOfTime(Exception):
    """The time limit is reached: the search ends with what it has."""


class Reducer:
    """Shrinks a candidate while ``condition`` holds (see the module)."""

    def __init__(self, condition: Condition, workdir: Path, *,
                 max_iterations: int | None = None, progress: Progress | None = None,
                 time_limit: float | None = None) -> None:
        self.condition = condition
        self.workdir = workdir
        self.max_iterations = max_iterations
        self.progress = progress
        self.time_limit = time_limit
        self.deadline: float | None = None  # set when the search starts
        self.tried = 0
        self.kept = 0
        self.cached = 0
        self.out_of_time = False
        self.current: Candidate | None = None
        self.verdict: Verdict | None = None  # the current candidate's
        self._cache: dict[str, Verdict | None] = {}
        self._fill = zeros_fill

    # -- trying one candidate ------------------------------------------------------------------

    def test(self, cand: Candidate | None) -> Verdict | None:
        """The condition's verdict on ``cand``, None when the gate refuses it: validate's
        rules on the model in memory first (a candidate they refuse is never written), then
        validate on the files written (the schema, the rules, the weights)."""
        if cand is None:
            return None
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise OutOfTime
        if self._refused(cand, validate_model(cand.model)):
            return None
        xml = self.workdir / "candidate.xml"
        write_model(cand.model, xml)
        key = _digest(xml, cand.feed)
        if key in self._cache:
            self.cached += 1
            return self._cache[key]
        self.tried += 1
        model, diagnostics = check_file(xml)
        verdict: Verdict | None = None
        if model is not None and not self._refused(cand, diagnostics):
            verdict = self.condition.test(Trial(xml, model, cand.feed, diagnostics))
            log.debug("reduce: %s: %s", cand.what, verdict.detail)
        self._cache[key] = verdict
        return verdict

    def _refused(self, cand: Candidate, diagnostics: list[Diagnostic]) -> bool:
        errors = [d for d in errors_only(diagnostics)
                  if d.code not in self.condition.allowed_codes]
        if errors:
            log.debug("reduce: %s: refused by validate: %s", cand.what, errors[0].what())
        return bool(errors)

    def holds(self, cand: Candidate | None) -> bool:
        """Does ``cand`` show the condition? If so it becomes the current candidate."""
        verdict = self.test(cand)
        if verdict is None or not verdict.holds or cand is None:
            return False
        before = layer_counts(self.current.model) if self.current is not None else None
        self.current, self.verdict = cand, verdict
        self.kept += 1
        if before is not None:
            after = layer_counts(cand.model)
            log.info("reduce: %s: %d -> %d layers (%d -> %d with bodies)", cand.what,
                     before[0], after[0], before[1], after[1])
        if self.progress is not None:
            self.progress(cand, self)
        return True

    def values(self, cand: Candidate) -> None:
        """Record what irtool computes at each port of ``cand``, unless known (none when
        the condition does not need irtool's values, or irtool cannot run it)."""
        if cand.values is None:
            cand.values = (record(cand.model, cand.feed, max_iterations=self.max_iterations)
                           if self.condition.needs_values else None) or {}

    # -- the search ------------------------------------------------------------------------

    def run(self, start: Candidate) -> Candidate:
        """The smallest candidate found, from ``start`` (which must show the condition and
        be the current candidate). Stops early, keeping what it has, at the time limit."""
        self.current = start
        if self.time_limit is not None:
            self.deadline = time.monotonic() + self.time_limit
        try:
            while True:
                kept = self.kept
                self.drop_outputs()
                self.cut_layers()
                self.into_control_flow()
                if self.kept == kept:
                    break
            self.shrink_shapes()
            self.simplify_values()
        except OutOfTime:
            self.out_of_time = True
            log.warning("warning: reduce: the time limit is reached; the result is the "
                        "smallest candidate found so far")
        assert self.current is not None
        return self.current

    def drop_outputs(self) -> None:
        cur = self._current()
        results = [r.id for r in cur.model.graph.results()]
        if len(results) < 2:
            return
        if isinstance(self.condition, Disagree) and self.verdict is not None:
            by_name = dict(zip(cur.model.output_names(), results))
            wrong = [by_name[n] for n in self.verdict.disagreeing if n in by_name]
            if wrong and len(wrong) < len(results) and self.holds(keep_results(cur, wrong[:1])):
                return
        base = cur
        ddmin(results, lambda keep: self.holds(keep_results(base, keep)))

    def cut_layers(self) -> None:
        base = self._current()
        ops = operations(base.model)
        if len(ops) < 2:
            return
        self.values(base)
        ddmin(ops, lambda keep: self.holds(keep_layers(base, keep, self._fill)))

    def into_control_flow(self) -> None:
        done: set[tuple[int, str, str]] = set()
        while True:
            cur = self._current()
            graph = cur.model.graph
            todo = [lid for lid in operations(cur.model)
                    if graph.layer(lid).type in ("If", *ITERATING)
                    and _identity(graph.layer(lid)) not in done]
            if not todo:
                return
            layer = graph.layer(todo[0])
            done.add(_identity(layer))
            if layer.type == "If":
                self._inline_if(cur, layer.id)
            else:
                if layer.type == "Loop":
                    self._lower_trip_count(layer.id)
                self._hoist(layer.id)

    def _inline_if(self, cur: Candidate, lid: int) -> None:
        self.values(cur)
        branches = ["then", "else"]
        taken = _input_value(cur, lid, 0)
        if taken is not None and taken.size == 1 and not bool(taken.reshape(-1)[0]):
            branches.reverse()
        for branch in branches:
            if self.holds(inline_branch(cur, lid, branch)):
                return

    def _lower_trip_count(self, lid: int) -> None:
        cur = self._current()
        self.values(cur)
        trips = self._trip_count(cur, lid)
        if trips is None or trips <= 1:
            return

        def lowered(n: int) -> bool:
            cand = set_trip_count(self._current(), lid, n)
            return self.holds(redeclare(cand, self.max_iterations) if cand else None)

        if lowered(1):
            return
        lo, hi = 1, trips  # the condition does not hold at lo, holds at hi
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if lowered(mid):
                hi = mid
            else:
                lo = mid

    def _trip_count(self, cur: Candidate, lid: int) -> int | None:
        value = _input_value(cur, lid, 0)
        if value is None or value.size != 1:
            return None
        return int(value.reshape(-1)[0])

    def _hoist(self, lid: int) -> None:
        cur = self._current()
        layer = cur.model.graph.layer(lid)
        body = layer.bodies["body"]
        fed_back = {e.to_layer for e in layer.back_edges}
        needed = [e.internal_layer_id for e in layer.port_maps.get("port_map", [])
                  if e.kind == "input" and e.internal_layer_id in body
                  and e.purpose != "current_iteration"
                  and (e.axis is not None or e.internal_layer_id in fed_back)]
        iterations: int | None = None
        traced: dict[int, np.ndarray] = {}
        if needed:
            if not self._traceable(cur, lid, needed):
                return
            got = trace(cur.model, cur.feed, lid, needed, max_iterations=self.max_iterations)
            if got is None:
                return
            traced = got
            iterations = min(len(v) for v in traced.values())
        elif layer.type == "Loop":
            self.values(cur)
            iterations = self._trip_count(cur, lid)
        last = (iterations or 1) - 1
        for k in dict.fromkeys([max(last, 0), 0]):
            if self.holds(hoist_body(cur, lid, k, traced, self._fill)):
                return

    def _traceable(self, cur: Candidate, lid: int, params: Sequence[int]) -> bool:
        """Would a trace of ``params`` stay within ``TRACE_BUDGET_BYTES``?"""
        trips = self._trip_count(cur, lid) if cur.model.graph.layer(lid).type == "Loop" \
            else None
        body = cur.model.graph.layer(lid).bodies["body"]
        size = 0
        for pid in params:
            port = body.layer(pid).outputs[0]
            if port.dims is None or port.precision is None or any(d < 0 for d in port.dims):
                continue
            size += int(np.prod(port.dims, dtype=np.int64)) * max(port.precision.bitwidth // 8, 1)
        if trips is not None and trips > 0 and size * trips > TRACE_BUDGET_BYTES:
            log.info("reduce: not tracing %s %r: %d iterations of %d bytes", cur.model.graph
                     .layer(lid).type, cur.model.graph.layer(lid).name, trips, size)
            return False
        return True

    def shrink_shapes(self) -> None:
        """Each dimension of each input and float Const made 1, else halved, while the
        condition holds."""
        for holder in holders(self._current()):
            value = held_value(self._current(), holder)
            if value is None or value.size <= 1 or (holder[0] == "const"
                                                    and value.dtype.kind != "f"):
                continue
            for axis in range(value.ndim):
                while self._shrink(holder, axis):
                    pass

    def _shrink(self, holder: Holder, axis: int) -> bool:
        """One step down for dimension ``axis`` of ``holder``: to 1, else to half."""
        cur = self._current()
        value = held_value(cur, holder)
        size = value.shape[axis] if value is not None else 0
        for target in dict.fromkeys((1, (size + 1) // 2)):
            if value is None or target >= size:
                continue
            smaller = np.ascontiguousarray(np.take(value, range(target), axis=axis))
            cand = set_value(cur, holder, smaller,
                             f"{_holder_text(cur, holder)}: dim {axis} {size} -> {target}")
            if self.holds(redeclare(cand, self.max_iterations) if cand else None):
                return True
        return False

    def simplify_values(self) -> None:
        for holder in holders(self._current()):
            cur = self._current()
            value = held_value(cur, holder)
            if value is None or value.size == 0 or value.dtype.kind != "f":
                continue
            for label, simpler in (("zeros", np.zeros_like(value)),
                                   ("rounded", np.round(value, 1).astype(value.dtype))):
                if np.array_equal(simpler, value, equal_nan=True):
                    continue
                if self.holds(set_value(cur, holder, simpler,
                                        f"{_holder_text(cur, holder)}: {label}")):
                    break

    def _current(self) -> Candidate:
        assert self.current is not None
        return self.current


def _input_value(cand: Candidate, layer_id: int, index: int) -> np.ndarray | None:
    """The value input ``index`` of top-graph layer ``layer_id`` reads in ``cand``: a model
    input's, a Const's, or what irtool computed (when recorded)."""
    graph = cand.model.graph
    src = graph.source(layer_id, graph.layer(layer_id).inputs[index].id)
    if src is None:
        return None
    producer = graph.layer(src[0])
    if producer.type == "Parameter":
        return cand.feed.get(tensor_name(producer, producer.outputs[0]))
    if producer.type == "Const":
        return producer.const_value()
    return (cand.values or {}).get(src)


def _identity(layer: Layer) -> tuple[int, str, str]:
    """A control-flow layer as the passes know it across copies of the model (edits keep
    the ids of the layers they keep)."""
    return layer.id, layer.type, layer.name


def _holder_text(cand: Candidate, holder: Holder) -> str:
    kind, key = holder
    if kind == "input":
        return f"input {key!r}"
    return f"Const {cand.model.graph.layer(int(key)).name!r}"


def _digest(xml: Path, feed: dict[str, np.ndarray]) -> str:
    """What makes two candidates the same: their files and their inputs."""
    h = hashlib.sha256()
    for path in (xml, xml.with_suffix(".bin")):
        h.update(path.read_bytes())
    for name in sorted(feed):
        value = np.ascontiguousarray(feed[name])
        h.update(f"{name}:{value.dtype.str}:{value.shape}".encode())
        if value.dtype.kind not in "USO":
            h.update(value.view(np.uint8).reshape(-1).data)
        else:
            h.update(repr(value.tolist()).encode())
    return h.hexdigest()


def ddmin(items: list[T], holds: Callable[[list[T]], bool]) -> list[T]:
    """Zeller's delta debugging over ``items`` (contiguous chunks, in order): a smallest
    subset for which ``holds`` (which keeps what it accepts) is true, each element needed.
    ``items`` itself is taken to hold."""
    n = 2
    while len(items) >= 2:
        chunks = _split(items, n)
        for chunk in chunks:
            if holds(chunk):
                items, n = chunk, 2
                break
        else:
            for i in range(len(chunks) if n > 2 else 0):
                rest = [x for j, c in enumerate(chunks) if j != i for x in c]
                if holds(rest):
                    items, n = rest, max(n - 1, 2)
                    break
            else:
                if n >= len(items):
                    break
                n = min(2 * n, len(items))
    return items


def _split(items: list[T], n: int) -> list[list[T]]:
    size, extra = divmod(len(items), n)
    chunks, start = [], 0
    for k in range(n):
        end = start + size + (1 if k < extra else 0)
        chunks.append(items[start:end])
        start = end
    return [c for c in chunks if c]

