"""Which layer of one IR is which of another, and references resolved in the first one's
terms: the matching half of ``irtool diff`` (``diff.py`` compares what it pairs).

Layers are matched by name (several of one name by id, then type, then order), then by
structure (same type and version, fed by or feeding the same matched layers and ports:
a renamed layer, a graph without names), Parameters and Results by order, then same id and
type, then same type in order. A port is its position in its ``<input>``/``<output>``.
Every element is named in A's terms: ``("L", i)`` is A's layer i or the B layer matched to
it, ``("B", j)`` a B layer with no match; a port is ``(direction, A position)`` or
``("Bp", direction, B position)``; ``("?", raw)`` a reference to nothing. A reference that
names what an element was called before its id changed (or a removed element) resolves to
that element and is counted in ``stale``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from .diff_view import GraphView, LayerView, PortView


def align_ports(a_ports: list[PortView], b_ports: list[PortView]
                ) -> list[tuple[int | None, int | None]]:
    """Pairs of positions: by position when the counts agree (a port's position is what
    it means; its id only names it), else on ids in order, each A port with the first
    B port of its id after the last pair (a port removed, or repeated: the repeat, which
    no reference reaches, is the added one)."""
    if len(a_ports) == len(b_ports):
        return [(i, i) for i in range(len(a_ports))]
    pairs: list[tuple[int | None, int | None]] = []
    j = 0
    for i, p in enumerate(a_ports):
        k = next((k for k in range(j, len(b_ports)) if b_ports[k].id == p.id), None)
        if k is None:
            pairs.append((i, None))
            continue
        pairs += [(None, x) for x in range(j, k)]
        pairs.append((i, k))
        j = k + 1
    pairs += [(None, x) for x in range(j, len(b_ports))]
    return pairs


@dataclass
class Side:
    """One file's graph: layers by id, and its edges resolved on its own terms for matching."""

    layers: list[LayerView]
    by_id: dict[str | None, list[int]] = field(default_factory=dict)
    sources: dict[int, list[tuple[int, int, int]]] = field(default_factory=dict)
    sinks: dict[int, list[tuple[int, int, int]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for i, layer in enumerate(self.layers):
            self.by_id.setdefault(layer.id, []).append(i)

    def port(self, layer: LayerView, raw: str | None, prefer: str | None
             ) -> tuple[str, int] | None:
        """``(direction, position)`` of the port ``raw`` of ``layer``."""
        found = self.ports_named(layer, raw, prefer)
        return found[0] if found else None

    @staticmethod
    def ports_named(layer: LayerView, raw: str | None, prefer: str | None
                    ) -> list[tuple[str, int]]:
        """Every ``(direction, position)`` of a port of ``layer`` whose id is ``raw``,
        those of direction ``prefer`` first."""
        order = ("out", "in") if prefer == "out" else ("in", "out")
        return [(direction, i) for direction in order
                for i, p in enumerate((layer.outputs if direction == "out" else layer.inputs)
                                      or ()) if p.id == raw]

    def index_edges(self, edges) -> None:
        for e in edges or ():
            src, dst = self.by_id.get(e.from_layer), self.by_id.get(e.to_layer)
            if not src or not dst:
                continue
            sp = self.port(self.layers[src[0]], e.from_port, "out")
            dp = self.port(self.layers[dst[0]], e.to_port, "in")
            if sp is None or dp is None:
                continue
            self.sources.setdefault(dst[0], []).append((dp[1], src[0], sp[1]))
            self.sinks.setdefault(src[0], []).append((sp[1], dst[0], dp[1]))


class GraphMatch:
    """Two graphs (the main graph or a body of two matched layers): which layer of B is
    which of A, ports paired, and any reference of either file in A's terms."""

    def __init__(self, ga: GraphView, gb: GraphView) -> None:
        self.ga, self.gb = ga, gb
        self.A = Side(ga.layers or [])
        self.B = Side(gb.layers or [])
        self.A.index_edges(ga.edges)
        self.B.index_edges(gb.edges)
        self.a_of_b: dict[int, int] = {}
        self.b_of_a: dict[int, int] = {}
        self.ports: dict[tuple[int, str], list[tuple[int | None, int | None]]] = {}
        self.stale: Counter = Counter()  # (side, index[, direction, position]) -> references
        self.match()

    # -- matching -------------------------------------------------------------------------

    def pair(self, i: int, j: int) -> None:
        self.b_of_a[i], self.a_of_b[j] = j, i

    def match(self) -> None:
        A, B = self.A.layers, self.B.layers
        names_a: dict[str, list[int]] = defaultdict(list)
        names_b: dict[str, list[int]] = defaultdict(list)
        for i, la in enumerate(A):
            if la.name:
                names_a[la.name].append(i)
        for j, lb in enumerate(B):
            if lb.name:
                names_b[lb.name].append(j)
        for name, ia in names_a.items():
            jb = names_b.get(name)
            if jb:
                self.pair_group(ia, jb)
        self.by_structure()
        for kind in ("Parameter", "Result"):
            self.pair_group([i for i, la in enumerate(A) if la.type == kind],
                            [j for j, lb in enumerate(B) if lb.type == kind], only_order=True)
        self.by_structure()
        self.pair_group(list(range(len(A))), list(range(len(B))), only_id=True)
        by_type_a: dict[str | None, list[int]] = defaultdict(list)
        by_type_b: dict[str | None, list[int]] = defaultdict(list)
        for i, la in enumerate(A):
            if i not in self.b_of_a:
                by_type_a[la.type].append(i)
        for j, lb in enumerate(B):
            if j not in self.a_of_b:
                by_type_b[lb.type].append(j)
        for layer_type, ia in by_type_a.items():
            self.pair_group(ia, by_type_b.get(layer_type, []), only_order=True)
        for i, j in self.b_of_a.items():
            la, lb = A[i], B[j]
            for direction, pa, pb in (("in", la.inputs, lb.inputs),
                                      ("out", la.outputs, lb.outputs)):
                self.ports[(i, direction)] = align_ports(pa or [], pb or [])

    def pair_group(self, ia: list[int], jb: list[int], *, only_order: bool = False,
                   only_id: bool = False) -> None:
        """Pair unmatched layers of ``ia`` with ``jb``: same type and id first, then same
        id, then same type, then in order (``only_order``: order alone; ``only_id``: same
        id and type alone)."""
        A, B = self.A.layers, self.B.layers
        ia = [i for i in ia if i not in self.b_of_a]
        jb = [j for j in jb if j not in self.a_of_b]
        if not ia or not jb:
            return
        if only_order:
            for i, j in zip(ia, jb):
                self.pair(i, j)
            return
        keys = [lambda x: (x.type, x.id)] if only_id else [
            lambda x: (x.type, x.id), lambda x: x.id, lambda x: x.type, lambda x: None]
        for key in keys:
            free: dict[Any, list[int]] = defaultdict(list)
            for j in jb:
                if j not in self.a_of_b:
                    free[key(B[j])].append(j)
            for i in ia:
                if i in self.b_of_a:
                    continue
                candidates = free.get(key(A[i]))
                if candidates:
                    self.pair(i, candidates.pop(0))

    def signatures(self, side: Side, matched: dict[int, int] | None) -> dict[Any, list[int]]:
        """Unmatched layers of ``side`` by what they connect to, in A's terms."""
        def ident(k: int) -> Any:
            if matched is None:
                return k if k in self.b_of_a else ("?", side.layers[k].type)
            return matched[k] if k in matched else ("?", side.layers[k].type)

        mine = self.b_of_a if matched is None else self.a_of_b
        found: dict[Any, list[int]] = defaultdict(list)
        for k, layer in enumerate(side.layers):
            if k in mine:
                continue
            ins = tuple(sorted((p, repr(ident(s)), sp) for p, s, sp in side.sources.get(k, ())))
            outs = tuple(sorted((p, repr(ident(d)), dp) for p, d, dp in side.sinks.get(k, ())))
            if not ins and not outs:
                continue
            found[(layer.type, layer.version, ins, outs)].append(k)
        return found

    def by_structure(self) -> None:
        """Match unmatched layers whose type and neighbours (matched or not) agree, until
        nothing more matches: a renamed layer, or a graph without names."""
        for _ in range(64):
            sa = self.signatures(self.A, None)
            sb = self.signatures(self.B, self.a_of_b)
            new = [(ia[0], sb[sig][0]) for sig, ia in sa.items()
                   if len(ia) == 1 and len(sb.get(sig, ())) == 1]
            for i, j in new:
                self.pair(i, j)
            if not new:
                return

    # -- resolving references -----------------------------------------------------------

    def layer_ref(self, side: str, raw: str | None) -> tuple:
        """A layer id as ``side`` ("a" or "b") writes it, in A's terms."""
        own, other = (self.A, self.B) if side == "a" else (self.B, self.A)
        own_match, other_match = ((self.b_of_a, self.a_of_b) if side == "a"
                                  else (self.a_of_b, self.b_of_a))
        cands = own.by_id.get(raw)
        if cands:
            # Several layers of one id: the one whose counterpart has that id too.
            k = next((c for c in cands if c in own_match
                      and other.layers[own_match[c]].id == raw), cands[0])
            return self.ident(side, k)
        cands = other.by_id.get(raw)
        if cands:  # stale: names what the counterpart was called
            k = cands[0]
            if k in other_match:
                self.stale[(side, other_match[k])] += 1
                return self.ident(side, other_match[k])
            return self.ident("b" if side == "a" else "a", k)
        return ("?", raw)

    def ident(self, side: str, k: int) -> tuple:
        if side == "a":
            return ("L", k)
        return ("L", self.a_of_b[k]) if k in self.a_of_b else ("B", k)

    def layer_of(self, side: str, ident: tuple) -> tuple[str, int] | None:
        """(side, index) of the layer ``ident`` is on ``side``, or on the other when it has
        no counterpart there."""
        if ident[0] == "L":
            i = ident[1]
            if side == "a" or i not in self.b_of_a:
                return ("a", i)
            return ("b", self.b_of_a[i])
        if ident[0] == "B":
            return ("b", ident[1])
        return None

    def port_ref(self, side: str, ident: tuple, raw: str | None, prefer: str | None) -> tuple:
        where = self.layer_of(side, ident)
        if where is None:
            return ("?", raw)
        found_side, k = where
        sides = {"a": self.A, "b": self.B}
        layer = sides[found_side].layers[k]
        other_side = "b" if found_side == "a" else "a"
        other_k = (self.b_of_a if found_side == "a" else self.a_of_b).get(k)
        found_all = Side.ports_named(layer, raw, prefer)
        if len(found_all) > 1 and other_k is not None:
            # Several ports of one id: the one whose counterpart has that id too.
            other = sides[other_side].layers[other_k]
            for direction, pos in found_all:
                mapped = self.port_ident(found_side, k, direction, pos)
                if mapped[0] in ("in", "out"):
                    counterpart = self.port_view(other_side, other, k if found_side == "a"
                                                 else other_k, mapped)
                    if counterpart is not None and counterpart.id == raw:
                        return mapped
        if found_all:
            return self.port_ident(found_side, k, *found_all[0])
        # stale: the counterpart layer's port of that id
        if other_k is None:
            return ("?", raw)
        found = sides[other_side].port(sides[other_side].layers[other_k], raw, prefer)
        if found is None:
            return ("?", raw)
        mapped = self.port_ident(other_side, other_k, *found)
        self.stale[(found_side, k, *mapped)] += 1
        return mapped

    def port_ident(self, side: str, k: int, direction: str, pos: int) -> tuple:
        if side == "a":
            return (direction, pos)
        i = self.a_of_b.get(k)
        if i is None:
            return ("Bp", direction, pos)
        for pa, pb in self.ports.get((i, direction), ()):
            if pb == pos:
                return (direction, pa) if pa is not None else ("Bp", direction, pos)
        return ("Bp", direction, pos)

    def port_view(self, side: str, layer: LayerView, i: int, ident: tuple
                  ) -> PortView | None:
        """The port of ``layer`` (on ``side``; ``i`` the A index of its pair) that the port
        identity ``(direction, A position)`` names."""
        direction, pos = ident
        ports = (layer.inputs if direction == "in" else layer.outputs) or []
        if side == "a":
            return ports[pos] if pos < len(ports) else None
        for pa, pb in self.ports.get((i, direction), ()):
            if pa == pos and pb is not None:
                return ports[pb]
        return None

    def gone(self, layer: tuple, port: tuple | None = None) -> bool:
        """Whether a resolved end belongs to a removed or added layer or port (its line
        says it)."""
        if layer[0] == "B" or (layer[0] == "L" and layer[1] not in self.b_of_a):
            return True
        if port is None:
            return False
        if port[0] == "Bp":
            return True
        if port[0] in ("in", "out"):
            pairs = self.ports.get((layer[1], port[0]), ())
            return not any(pa == port[1] and pb is not None for pa, pb in pairs)
        return False

    # -- comparing ------------------------------------------------------------------------

    def resolve_edges(self, side: str, edges) -> list[tuple[tuple, Any]]:
        out = []
        for e in edges or ():
            src = self.layer_ref(side, e.from_layer)
            dst = self.layer_ref(side, e.to_layer)
            sp = self.port_ref(side, src, e.from_port, "out")
            dp = self.port_ref(side, dst, e.to_port, "in")
            out.append(((src, sp, dst, dp, tuple(sorted(e.extra.items()))), e))
        return out
