"""Semantic diff of two IR files: what differs in meaning, each difference once, where it is.

``diff_files(a, b)`` reads both files as ``diff_view`` views (everything they hold, with
lines, broken files included) and compares them graph by graph, bodies at any depth:

- **Layers are matched** and **references resolved** by ``diff_match``: ids, the order
  of layers, edges, ports' lists and entries do not count; a reference that still names
  what an element was called before its id changed counts once, on that element (``id 3
  -> 7: 2 references still name 3``), and references to a removed layer or port belong
  to its removal.
- **Compared**: layer type, version, name, attributes (``<data>``; a Const's
  ``offset``/``size`` are layout: its bytes are compared by digest), ports (element type,
  shape, tensor names), edges (a changed end is one line: ``input 1: from X -> from Y``),
  port maps, back edges, bodies, the model's name and IR version, elements irtool does not
  interpret, and ``<rt_info>`` when asked (``rt_info=True``; irtool's record of its .bin
  never counts). A missing container (``<layers>``, ``<edges>``, ``<input>``, a body, a
  port map) is one line, not one per element it held.
- **Weights**: a Const's bytes are hashed from the memory-mapped .bin (blake2b, a range
  once), never loaded whole. A .bin that ends before the data of Consts whose offsets did
  not change is one line about the .bin; so is a change in the bytes no Const reads.

With ``layout=True`` the canonical comparison of ``canonical.py`` also runs: the same
elements in the same order, and a byte-identical .bin (what a faithful round trip keeps).
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..ir.graph import split_names
from ..ir.serde.canonical import round_trip_difference
from ..ir.types import element_type
from .diff_match import GraphMatch
from .diff_view import (
    BODY_OF,
    GraphView,
    Info,
    IRView,
    LayerView,
    Section,
    canon_text,
    read_view,
)

PathLike = str | os.PathLike

_LAYOUT_ATTRS = {"Const": ("offset", "size")}  # where a Const's bytes lie: compared by digest


@dataclass(frozen=True)
class Place:
    """Where a difference is: a file and the line of the element (None for a .bin)."""

    file: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line is not None else self.file


@dataclass
class Difference:
    """One difference between two IRs.

    ``kind`` is one of ``file``, ``model``, ``layer``, ``attribute``, ``port``, ``edge``,
    ``port_map``, ``back_edge``, ``body``, ``weights``, ``rt_info``, ``layout``; ``what``
    names the thing that changed (``data.axis``, ``output 0 shape``...), ``before`` and
    ``after`` its values (None: absent). ``scope`` is the chain of enclosing layers
    (``Loop "loop" body``), ``layer`` the layer's ``Type "name"`` (None for the model).
    """

    kind: str
    what: str
    before: Any
    after: Any
    message: str
    a: Place | None = None
    b: Place | None = None
    scope: str = ""
    layer: str | None = None

    def format(self) -> str:
        """``a.xml:12 b.xml:14: Loop "l" body: Add "add": message``."""
        where = " ".join(str(p) for p in (self.a, self.b) if p is not None)
        label = ": ".join(x for x in (self.scope, self.layer) if x)
        return f"{where}: {label + ': ' if label else ''}{self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "what": self.what, "before": self.before,
                "after": self.after, "message": self.message, "scope": self.scope,
                "layer": self.layer,
                "a": None if self.a is None else {"file": self.a.file, "line": self.a.line},
                "b": None if self.b is None else {"file": self.b.file, "line": self.b.line}}


def diff_files(a: PathLike, b: PathLike, *, rt_info: bool = False,
               layout: bool = False) -> list[Difference]:
    """Every difference in meaning between the IR files ``a`` and ``b`` (their .bin beside
    them); empty when they mean the same. ``rt_info``: compare ``<rt_info>`` too;
    ``layout``: also require the same order and formatting-free XML and an identical
    .bin. A file that is not well-formed XML is one ``file`` difference; a path that
    cannot be opened raises ``OSError``."""
    for path in (a, b):
        with open(path, "rb"):
            pass
    va, vb = read_view(a), read_view(b)
    found = _Diff(va, vb, rt_info).run()
    if layout and not found and va.error is None:
        text = round_trip_difference(a, b)
        if text:
            found.append(Difference("layout", "layout", None, None, text,
                                    Place(str(a)), Place(str(b))))
    return found


# -- identities -------------------------------------------------------------------------------
# An element of either file is named in A's terms: ("L", i) is A's layer i or the B layer
# matched to it, ("B", j) a B layer with no match; a port is (direction, A position) or
# ("Bp", direction, B position); ("?", raw) is a reference to nothing.


def _norm_int(value: str | None) -> str | None:
    if value is None:
        return None
    text = value.strip()
    try:
        return str(int(text))
    except ValueError:
        return text


def _precision(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return element_type(value).name
    except KeyError:
        return value


def _label(layer: LayerView) -> str:
    return f'{layer.type or "?"} "{layer.name if layer.name is not None else ""}"'


def _shape(dims: list[str]) -> str:
    """``[2,?,3]``: dims as written, numbers normalised, -1 as ``?`` (as validate shows)."""
    shown = (_norm_int(d) or "" for d in dims)
    return "[" + ",".join("?" if d == "-1" else d for d in shown) + "]"


class _Diff:
    def __init__(self, a: IRView, b: IRView, rt_info: bool) -> None:
        self.a, self.b, self.rt_info = a, b, rt_info
        self.out: list[Difference] = []
        # Const payload pairs, checked once every graph is matched (.bin-level grouping).
        self.consts: list[tuple[LayerView, LayerView, str]] = []

    def add(self, kind: str, what: str, before: Any, after: Any, message: str, *,
            a_line: int | None = None, b_line: int | None = None, scope: str = "",
            layer: str | None = None, a_file: str | None = None,
            b_file: str | None = None) -> Difference:
        d = Difference(kind, what, before, after, message,
                       Place(a_file or self.a.file, a_line) if a_line is not None or a_file
                       else None,
                       Place(b_file or self.b.file, b_line) if b_line is not None or b_file
                       else None, scope, layer)
        self.out.append(d)
        return d

    def run(self) -> list[Difference]:
        a, b = self.a, self.b
        if a.error or b.error:
            for view, side in ((a, "a"), (b, "b")):
                if view.error:
                    err = view.error
                    line = err.line if err.line is not None else 1
                    self.add("file", "file", None, err.message, f"not readable: {err.message}",
                             a_line=line if side == "a" else None,
                             b_line=line if side == "b" else None)
            return self.out
        self.model()
        pair = _GraphPair(self, a.graph, b.graph, "")
        pair.compare()
        self.weights()
        self.out.sort(key=lambda d: ((d.a.line or 0) if d.a else 0,
                                     (d.b.line or 0) if d.b else 0))
        return self.out

    def model(self) -> None:
        a, b = self.a, self.b
        for key in dict.fromkeys([*a.net_attrs, *b.net_attrs]):
            before, after = a.net_attrs.get(key), b.net_attrs.get(key)
            if before != after:
                what = {"version": "IR version", "name": "model name"}.get(key, f"<net {key}>")
                self.add("model", f"net.{key}", before, after,
                         f"{what}: {_show(before)} -> {_show(after)}",
                         a_line=a.net_line, b_line=b.net_line)
        if self.rt_info:
            self.info("rt_info", a.rt_info, b.rt_info, a.net_line, b.net_line, "", None)
        self.info("element", a.others, b.others, a.net_line, b.net_line, "", None)

    def info(self, what: str, a: Info | None, b: Info | None, a_owner: int, b_owner: int,
             scope: str, layer: str | None) -> None:
        """One line for the differences of an rt_info (or of unknown elements) of one owner."""
        if a is None and b is None:
            return
        name = "rt_info" if what == "rt_info" else "elements irtool does not interpret"
        if a is None or b is None:
            present = a if a is not None else b
            assert present is not None
            if not present.children:
                return  # an empty <rt_info/> means what none does
            verb = "removed" if b is None else "added"
            self.add("rt_info", what, len(a.children) if a else None,
                     len(b.children) if b else None,
                     f"{name} {verb} ({len(present.children)} entries)",
                     a_line=a.line if a else None, b_line=b.line if b else None, scope=scope,
                     layer=layer)
            return
        only_a, only_b = _excess(a.children, b.children)
        if not only_a and not only_b:
            return
        if len(only_a) == 1 and len(only_b) == 1:
            msg = f"{name}: {canon_text(only_a[0][0])} -> {canon_text(only_b[0][0])}"
        else:
            parts = []
            if only_a:
                parts.append("removed " + ", ".join(canon_text(c) for c, _ in only_a))
            if only_b:
                parts.append("added " + ", ".join(canon_text(c) for c, _ in only_b))
            msg = f"{name}: " + "; ".join(parts)
        self.add("rt_info", what, [canon_text(c) for c, _ in only_a],
                 [canon_text(c) for c, _ in only_b], msg,
                 a_line=only_a[0][1] if only_a else a.line,
                 b_line=only_b[0][1] if only_b else b.line, scope=scope, layer=layer)

    # -- weights --------------------------------------------------------------------------

    def weights(self) -> None:
        wa, wb = self.a.weights, self.b.weights
        a_bin, b_bin = str(wa.path), str(wb.path)
        if (wa.data is None) != (wb.data is None):
            self.add("weights", ".bin", wa.size, wb.size,
                     f"weights file: {'none' if wb.data is None else f'{wb.size} bytes'} "
                     f"(was {'none' if wa.data is None else f'{wa.size} bytes'})",
                     a_file=a_bin, b_file=b_bin)
        cut: list[LayerView] = []  # B Consts whose bytes the .bin no longer holds
        changed: dict[tuple, list[tuple[LayerView, LayerView, str]]] = {}
        for la, lb, scope in sorted(self.consts, key=lambda c: c[0].line):
            pa, pb = la.payload, lb.payload
            assert pa is not None and pb is not None
            same_range = (pa.offset, pa.size) == (pb.offset, pb.size)
            if {pa.status, pb.status} <= {"ok", "beyond"} and pa.status != pb.status \
                    and same_range and wa.data is not None and wb.data is not None:
                cut.append(lb if pb.status == "beyond" else la)
                continue
            if "no-bin" in (pa.status, pb.status) and (wa.data is None) != (wb.data is None):
                continue  # said once above
            if pa.status == pb.status == "ok" and pa.digest == pb.digest:
                continue
            if pa.status == pb.status and pa.status != "ok":
                continue  # unreadable alike
            # Consts that read the same bytes on both sides changed together: one line.
            key = ((pa.offset, pa.size), (pb.offset, pb.size), pa.status, pb.status)
            changed.setdefault(key, []).append((la, lb, scope))
        for group in changed.values():
            la, lb, scope = group[0]
            pa, pb = la.payload, lb.payload
            assert pa is not None and pb is not None
            more = (f" (and {len(group) - 1} other Const(s) reading the same bytes)"
                    if len(group) > 1 else "")
            self.add("weights", "data", pa.describe(), pb.describe(),
                     f"weights: {pa.describe()} -> {pb.describe()}{more}",
                     a_line=la.data_line, b_line=lb.data_line, scope=scope, layer=_label(la))
        if cut:
            self.add("weights", ".bin", wa.size, wb.size,
                     f"weights file: {wb.size} bytes (was {wa.size}): it ends before the "
                     f"data of {len(cut)} Const(s), first {_label(cut[0])} at line "
                     f"{cut[0].line}", a_file=a_bin, b_file=b_bin)
        ra, rb = self.ranges(self.a), self.ranges(self.b)
        if ra is not None and ra == rb and wa.size is not None and wb.size is not None:
            # The same layout: the bytes past the last range are all that can differ.
            reach = max((offset + size for offset, size in ra), default=0)
            ta, tb = max(wa.size - reach, 0), max(wb.size - reach, 0)
            if ta != tb:
                self.add("weights", ".bin tail", ta, tb,
                         f"weights file: {tb} bytes past the last Const's data (was {ta})",
                         a_file=a_bin, b_file=b_bin)

    @staticmethod
    def ranges(view: IRView) -> set[tuple[int, int]] | None:
        """Every Const's ``(offset, size)`` (None when one does not parse)."""
        found = set()
        for layer in _walk(view.graph):
            p = layer.payload
            if p is not None:
                if p.offset is None or p.size is None:
                    return None
                found.add((p.offset, p.size))
        return found


def _excess(a: list[tuple[Any, Any]], b: list[tuple[Any, Any]]
            ) -> tuple[list[tuple[Any, Any]], list[tuple[Any, Any]]]:
    """The ``(key, item)`` pairs of ``a`` that ``b`` has no counterpart for, and the other
    way round: a multiset difference on keys. Where a key repeats, items at the same
    position of their lists are counterparts first (of two equal edges, the one that
    moved is the one reported)."""
    where_a: dict[Any, list[int]] = defaultdict(list)
    where_b: dict[Any, list[int]] = defaultdict(list)
    for i, (k, _) in enumerate(a):
        where_a[k].append(i)
    for j, (k, _) in enumerate(b):
        where_b[k].append(j)
    used_a: set[int] = set()
    used_b: set[int] = set()
    for k, ia in where_a.items():
        jb = where_b.get(k, [])
        same = sorted(set(ia) & set(jb))
        rest_a = [i for i in ia if i not in same]
        rest_b = [j for j in jb if j not in same]
        for i in same:
            used_a.add(i)
            used_b.add(i)
        for i, j in zip(rest_a, rest_b):
            used_a.add(i)
            used_b.add(j)
    return ([x for i, x in enumerate(a) if i not in used_a],
            [x for j, x in enumerate(b) if j not in used_b])


def _walk(graph) -> Iterable[LayerView]:
    for layer in graph.layers or ():
        yield layer
        for body in layer.bodies.values():
            yield from _walk(body)


def _show(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


class _GraphPair(GraphMatch):
    """Two matched graphs compared: every difference added to the ``_Diff``."""

    def __init__(self, diff: _Diff, ga: GraphView, gb: GraphView, scope: str) -> None:
        super().__init__(ga, gb)
        self.diff, self.scope = diff, scope

    def compare(self) -> None:
        d, ga, gb = self.diff, self.ga, self.gb
        A, B = self.A.layers, self.B.layers
        for tag, la_, lb_ in (("layers", ga.layers_line, gb.layers_line),
                              ("edges", ga.edges_line, gb.edges_line)):
            if (getattr(ga, tag) is None) != (getattr(gb, tag) is None):
                count = len(getattr(ga, tag) or getattr(gb, tag) or ())
                if not count:
                    continue  # an empty section means what none does
                verb = "removed" if getattr(gb, tag) is None else "added"
                d.add("body" if tag == "layers" else "edge", tag, None, None,
                      f"<{tag}> {verb} ({count} {tag[:-1]}s)",
                      a_line=la_ if verb == "removed" else None,
                      b_line=lb_ if verb == "added" else None, scope=self.scope)
        whole = ga.layers is not None and gb.layers is not None
        self.compare_edges()  # resolves references (stale counts) before layers report
        for i, la in enumerate(A):
            j = self.b_of_a.get(i)
            if j is not None:
                self.compare_layer(i, la, j, B[j])
            elif whole:
                d.add("layer", "layer", _label(la), None, "layer removed", a_line=la.line,
                      scope=self.scope, layer=_label(la))
        if whole:
            for j, lb in enumerate(B):
                if j in self.a_of_b:
                    continue
                note = ""
                twins = [k for k in self.B.by_id.get(lb.id, ()) if k != j]
                if twins:
                    note = f" (its id {lb.id} is also {_label(B[twins[0]])}'s)"
                d.add("layer", "layer", None, _label(lb), f"layer added{note}", b_line=lb.line,
                      scope=self.scope, layer=_label(lb))

    def end_text(self, side: str, raw_layer: str | None, raw_port: str | None) -> str:
        own = self.A if side == "a" else self.B
        cands = own.by_id.get(raw_layer)
        who = _label(own.layers[cands[0]]) if cands else f"layer {raw_layer} (none)"
        return f"{who} port {raw_port}"

    def compare_edges(self) -> None:
        ga, gb = self.ga, self.gb
        ea = self.resolve_edges("a", ga.edges)
        eb = self.resolve_edges("b", gb.edges)
        if ga.edges is None or gb.edges is None:
            return
        self.pair_up(ea, eb, "edge")

    def pair_up(self, ea: list, eb: list, kind: str, owner: str | None = None) -> None:
        """Report edges (or back edges) that differ: kept apart from those that belong to a
        removed or added layer or port; one line for an edge one end of which moved."""
        def live(items):
            return [(k, e) for k, e in items
                    if not (self.gone(k[0], k[1]) or self.gone(k[2], k[3]))]

        only_a, only_b = _excess(live(ea), live(eb))
        d = self.diff
        for half in (slice(2, 4), slice(0, 2)):  # the same destination first, then source
            for ka, e_a in list(only_a):
                match = next(((kb, e_b) for kb, e_b in only_b if kb[half] == ka[half]), None)
                if match is None:
                    continue
                only_a.remove((ka, e_a))
                only_b.remove(match)
                e_b = match[1]
                before = f"{self.end_text('a', e_a.from_layer, e_a.from_port)} -> " \
                         f"{self.end_text('a', e_a.to_layer, e_a.to_port)}"
                after = f"{self.end_text('b', e_b.from_layer, e_b.from_port)} -> " \
                        f"{self.end_text('b', e_b.to_layer, e_b.to_port)}"
                d.add(kind, kind, before, after, f"{kind}: {before} now {after}",
                      a_line=e_a.line, b_line=e_b.line, scope=self.scope,
                      layer=owner or self.end_layer(ka))
        for items, side, verb in ((only_a, "a", "removed"), (only_b, "b", "added")):
            for k, e in items:
                text = f"{self.end_text(side, e.from_layer, e.from_port)} -> " \
                       f"{self.end_text(side, e.to_layer, e.to_port)}"
                d.add(kind, kind, text if side == "a" else None, text if side == "b" else None,
                      f"{kind} {verb}: {text}", a_line=e.line if side == "a" else None,
                      b_line=e.line if side == "b" else None, scope=self.scope,
                      layer=owner or self.end_layer(k))

    def end_layer(self, key: tuple) -> str | None:
        for ident in (key[2], key[0]):
            where = self.layer_of("a", ident)
            if where is not None:
                side, k = where
                return _label((self.A if side == "a" else self.B).layers[k])
        return None

    def compare_layer(self, i: int, la: LayerView, j: int, lb: LayerView) -> None:
        d, scope, label = self.diff, self.scope, _label(la)

        def add(kind, what, before, after, message, a_line, b_line) -> None:
            d.add(kind, what, before, after, message, a_line=a_line, b_line=b_line,
                  scope=scope, layer=label)

        for key in ("name", "type", "version"):
            before, after = getattr(la, key), getattr(lb, key)
            if before != after:
                add("layer", key, before, after, f"{key} {_show(before)} -> {_show(after)}",
                    la.line, lb.line)
        if la.id != lb.id:
            stale = self.stale[("b", j)] + self.stale[("a", i)]
            twins = [k for k in self.B.by_id.get(lb.id, ()) if k != j]
            if stale or twins:
                notes = []
                if twins:
                    notes.append(f"the id of {_label(self.B.layers[twins[0]])} too")
                if stale:
                    notes.append(f"{stale} reference(s) still name {la.id}")
                add("layer", "id", la.id, lb.id,
                    f"id {_show(la.id)} -> {_show(lb.id)}: {'; '.join(notes)}", la.line, lb.line)
        for key in dict.fromkeys([*la.extra, *lb.extra]):
            before, after = la.extra.get(key), lb.extra.get(key)
            if before != after:
                add("layer", key, before, after, f"{key} {_show(before)} -> {_show(after)}",
                    la.line, lb.line)
        # Bodies are matched, and port maps and back edges resolved, before the ports and
        # body layers are compared: a reference that still names an old id counts there.
        bodies: dict[str, _GraphPair] = {}
        for tag in dict.fromkeys([*la.bodies, *lb.bodies]):
            ba, bb = la.bodies.get(tag), lb.bodies.get(tag)
            if ba is None or bb is None:
                present = ba if ba is not None else bb
                assert present is not None
                verb = "removed" if bb is None else "added"
                add("body", tag, None, None,
                    f"<{tag}> {verb} ({len(present.layers or ())} layers)",
                    present.line if ba is not None else None,
                    present.line if bb is not None else None)
                continue
            inner = f"{scope + ': ' if scope else ''}{label} {tag}"
            bodies[tag] = _GraphPair(d, ba, bb, inner)
        for tag in dict.fromkeys([*la.port_maps, *lb.port_maps]):
            self.compare_section(i, tag, la.port_maps.get(tag), lb.port_maps.get(tag), la,
                                 bodies.get(BODY_OF[tag]), add)
        if la.back_edges is not None or lb.back_edges is not None:
            self.compare_section(i, "back_edges", la.back_edges, lb.back_edges, la,
                                 bodies.get("body"), add)
        self.compare_data(la, lb, add)
        for direction in ("in", "out"):
            self.compare_ports(i, la, j, lb, direction, add)
        for pair in bodies.values():
            pair.compare()
        if d.rt_info:
            d.info("rt_info", la.rt_info, lb.rt_info, la.line, lb.line, scope, label)
        d.info("element", la.others, lb.others, la.line, lb.line, scope, label)

    def compare_data(self, la: LayerView, lb: LayerView, add) -> None:
        if len(la.data) != len(lb.data):
            if not la.data or not lb.data:
                present = la.data or lb.data
                if not present[0][0]:
                    return  # <data/> without attributes means what none does
                verb = "removed" if not lb.data else "added"
                add("attribute", "data", None, None,
                    f"<data> {verb} ({len(present[0][0])} attributes)",
                    la.data_line if la.data else None, lb.data_line if lb.data else None)
                return
            # The line of the first extra <data> on the side with more.
            add("attribute", "data", len(la.data), len(lb.data),
                f"<data> elements: {len(la.data)} -> {len(lb.data)}",
                la.data[len(lb.data)][1] if len(la.data) > len(lb.data) else la.data_line,
                lb.data[len(la.data)][1] if len(lb.data) > len(la.data) else lb.data_line)
        skip = _LAYOUT_ATTRS.get(la.type or "", ()) if la.type == lb.type else ()
        a_attrs, b_attrs = la.attrs, lb.attrs
        for key in dict.fromkeys([*a_attrs, *b_attrs]):
            if key in skip:
                continue
            before, after = a_attrs.get(key), b_attrs.get(key)
            if before != after:
                add("attribute", f"data.{key}", before, after,
                    f"{key} {_show(before)} -> {_show(after)}", la.data_line, lb.data_line)
        if la.type == lb.type == "Const" and la.payload is not None and lb.payload is not None:
            self.diff.consts.append((la, lb, self.scope))

    def compare_ports(self, i: int, la: LayerView, j: int, lb: LayerView, direction: str,
                      add) -> None:
        word = "input" if direction == "in" else "output"
        pa, pb = (la.inputs, lb.inputs) if direction == "in" else (la.outputs, lb.outputs)
        a_line = la.input_line if direction == "in" else la.output_line
        b_line = lb.input_line if direction == "in" else lb.output_line
        if (pa is None) != (pb is None) and (pa or pb):  # an empty list means what none does
            present = pa if pa is not None else pb
            verb = "removed" if pb is None else "added"
            add("port", f"<{word}>", len(pa or ()), len(pb or ()),
                f"<{word}> {verb} ({len(present or ())} ports)",
                a_line if pa is not None else None, b_line if pb is not None else None)
            return
        pa, pb = pa or [], pb or []
        pairs = self.ports.get((i, direction), [])
        # A pair has at least one end: (x, None) is a port gone, (None, y) one added.
        gone = [pa[x] for x, y in pairs if y is None and x is not None]
        new = [pb[y] for x, y in pairs if x is None and y is not None]
        if gone or new:
            parts = []
            if gone:
                parts.append("removed " + ", ".join(f"port {p.id}" for p in gone))
            if new:
                parts.append("added " + ", ".join(f"port {p.id}" for p in new))
            add("port", f"{word} ports", len(pa), len(pb),
                f"{word} ports {len(pa)} -> {len(pb)}: {'; '.join(parts)}",
                gone[0].line if gone else None, new[0].line if new else None)
        ids_b = Counter(p.id for p in [*(lb.inputs or ()), *(lb.outputs or ())])
        for x, y in pairs:
            if x is None or y is None:
                continue
            p, q = pa[x], pb[y]
            name = f"{word} {x}"
            if p.id != q.id:
                stale = self.stale[("b", j, direction, x)] + self.stale[("a", i, direction, x)]
                if stale or ids_b[q.id] > 1:
                    notes = []
                    if ids_b[q.id] > 1:
                        notes.append("another port of the layer has that id")
                    if stale:
                        notes.append(f"{stale} reference(s) still name {p.id}")
                    add("port", f"{name} id", p.id, q.id,
                        f"{name}: port id {_show(p.id)} -> {_show(q.id)}: {'; '.join(notes)}",
                        p.line, q.line)
            for key in dict.fromkeys([*p.attrs, *q.attrs]):
                before, after = p.attrs.get(key), q.attrs.get(key)
                if key == "precision":
                    same = _precision(before) == _precision(after)
                    what = "element type"
                elif key == "names":
                    same = set(split_names(before or "")) == set(split_names(after or ""))
                    what = "tensor names"
                else:
                    same, what = before == after, key
                if not same:
                    add("port", f"{name} {key}", before, after,
                        f"{name}: {what} {_show(before)} -> {_show(after)}", p.line, q.line)
            sa, sb = _shape(p.dims), _shape(q.dims)
            if sa != sb:
                add("port", f"{name} shape", sa, sb, f"{name}: shape {sa} -> {sb}",
                    p.line, q.line)
            if self.diff.rt_info:
                self.diff.info("rt_info", p.rt_info, q.rt_info, p.line, q.line, self.scope,
                               f"{_label(la)} {name}")

    def compare_section(self, i: int, tag: str, sa: Section | None, sb: Section | None,
                        la: LayerView, body: _GraphPair | None, add) -> None:
        if sa is None or sb is None:
            present = sa if sa is not None else sb
            assert present is not None
            if not present.items:
                return  # an empty port map means what none does
            verb = "removed" if sb is None else "added"
            add("port_map" if tag != "back_edges" else "back_edge", tag, None, None,
                f"<{tag}> {verb} ({len(present.items)} entries)",
                sa.line if sa else None, sb.line if sb else None)
            return
        if body is None:
            return  # the body is missing on one side: said there
        if tag == "back_edges":
            ea = body.resolve_edges("a", sa.items)
            eb = body.resolve_edges("b", sb.items)
            body.pair_up(ea, eb, "back edge", owner=_label(la))
            return
        ea = [(self.entry_key("a", i, body, e), e) for e in sa.items]
        eb = [(self.entry_key("b", i, body, e), e) for e in sb.items]
        ea = [(k, e) for k, e in ea if not self.entry_gone(i, body, k)]
        eb = [(k, e) for k, e in eb if not self.entry_gone(i, body, k)]
        only_a, only_b = _excess(ea, eb)
        for field_ in (2, 1):  # the same body layer first, then the same outer port
            for ka, e_a in list(only_a):
                match = next(((kb, e_b) for kb, e_b in only_b
                              if kb[0] == ka[0] and kb[field_] == ka[field_]), None)
                if match is None:
                    continue
                only_a.remove((ka, e_a))
                only_b.remove(match)
                e_b = match[1]
                changes = self.entry_changes(e_a, e_b, ka, match[0], body)
                add("port_map", tag, None, None,
                    f"{tag} {e_a.kind} for body {self.body_layer('a', body, e_a)}: "
                    f"{'; '.join(changes)}", e_a.line, e_b.line)
        for items, side, verb in ((only_a, "a", "removed"), (only_b, "b", "added")):
            for _, e in items:
                add("port_map", tag, None, None,
                    f"{tag} {e.kind} {verb}: external port {e.external_port_id}, body "
                    f"{self.body_layer(side, body, e)}",
                    e.line if side == "a" else None, e.line if side == "b" else None)

    @staticmethod
    def body_layer(side: str, body: _GraphPair, e) -> str:
        own = body.A if side == "a" else body.B
        cands = own.by_id.get(e.internal_layer_id)
        return _label(own.layers[cands[0]]) if cands else f"layer {e.internal_layer_id} (none)"

    def entry_key(self, side: str, i: int, body: _GraphPair, e) -> tuple:
        """A port map entry in A's terms; ``i`` is the layer's index in A."""
        ident = ("L", i)
        ext = self.port_ref(side, ident, e.external_port_id,
                            "in" if e.kind == "input" else "out")
        internal = body.layer_ref(side, e.internal_layer_id)
        attrs = tuple(sorted((key, _norm_int(v) if key != "purpose" else v)
                             for key, v in e.attrs.items()))
        return (e.kind, ext, internal, attrs)

    def entry_gone(self, i: int, body: _GraphPair, key: tuple) -> bool:
        internal, ext = key[2], key[1]
        return ((internal[0] != "?" and body.gone(internal))
                or (ext[0] != "?" and self.gone(("L", i), ext)))

    def entry_changes(self, ea, eb, ka: tuple, kb: tuple, body: _GraphPair) -> list[str]:
        changes = []
        if ka[1] != kb[1]:
            changes.append(f"external port {_show(ea.external_port_id)} -> "
                           f"{_show(eb.external_port_id)}")
        if ka[2] != kb[2]:
            changes.append(f"body layer {self.body_layer('a', body, ea)} -> "
                           f"{self.body_layer('b', body, eb)}")
        attrs_a, attrs_b = dict(ka[3]), dict(kb[3])
        for key in dict.fromkeys([*attrs_a, *attrs_b]):
            if attrs_a.get(key) != attrs_b.get(key):
                changes.append(f"{key} {_show(ea.attrs.get(key))} -> {_show(eb.attrs.get(key))}")
        return changes
