"""Random valid ONNX models with Loop, Scan and If, and the inputs to run them on.

Every decision goes through a ``support.fuzzing.Chooser`` (``below(n)``), so one generator
serves the hypothesis strategy ``cases()`` (decisions drawn from hypothesis, which shrinks
a failing case) and ``bench/differential.py`` (a seeded ``random.Random``; a failing case is
shrunk by replaying a smaller choice sequence, ``shrink``). Choice 0 is always the simpler
option (no more ops, the first dtype, no nesting), so both shrink towards small models.

What a model holds (issue 21's list):

* bodies of random elementwise (unary, binary with broadcasting, comparisons, Where,
  logic), shape (Reshape, Squeeze, Unsqueeze, Transpose, Concat, Slice, Flatten, Expand,
  Tile, Shape, Size), reduction (Reduce*, ArgMax/ArgMin, Softmax, CumSum), indexing
  (Gather with constant indices, Gather and Slice by a loop's iteration number) and
  MatMul ops, and casts between float and integer types;
* Loop: trip counts constant (0 too), computed (``Shape``/``Size`` of a value, then casts
  of every kind, narrowing ones included: uint8, int8, int16, float16, bool), given at run
  time (0 and negative too), absent, or INT64_MAX; conditions absent, constant, given at
  run time, computed; body conditions passed through, constant, stopping early on the
  iteration number or on a carried counter, or on a computed value; carried values
  (swapped ``a' = b, b' = a``, passed through, computed), the incoming condition used as a
  value, scan outputs;
* Scan (opset 9+: input and output axes, negative ones from opset 11, directions; Scan-8
  at opset 8 with its batch axis and ``sequence_lens``) with states and scan outputs;
* If with constant, run-time and computed conditions (a shape-[1] one too), branches of
  different shapes where the condition is known and the same in every iteration;
* values captured from any enclosing scope, and bodies nested in bodies;
* random ops (RandomUniform/Normal and their Like forms, seeded or not; Dropout in
  training mode): their values differ between engines by design, so an output that depends
  on one is compared by dtype and shape only; one that stacks a fresh draw per iteration
  must also not repeat one row (``Case.checks``).

Models are checked with ``onnx.checker`` (full check) before they are returned; the values
the generator relies on (trip counts, indices in range) are known when it builds the model,
since it also makes the inputs.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from types import SimpleNamespace

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from support.fuzzing import Chooser, DrawChooser

OPSETS = (17, 13, 11, 21, 16, 19, 8, 9, 10, 12, 14, 15, 18, 20, 22)
"""The model opsets drawn, simplest (the most common today) first: they give Loop 1, 11, 13,
16, 19, 21; Scan 8, 9, 11, 16, 19, 21; If 1, 11, 13, 16, 19, 21."""

F32, F16, F64 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.float64)
I64, I32 = np.dtype(np.int64), np.dtype(np.int32)
I8, U8, I16, U16 = np.dtype(np.int8), np.dtype(np.uint8), np.dtype(np.int16), np.dtype(np.uint16)
BOOL = np.dtype(np.bool_)
FLOATS = (F32, F64, F16)
INTS = (I64, I32)
INT64_MAX = np.iinfo(np.int64).max

CONSTRUCTS = {
    "narrowing-trip-cast": "a computed Loop trip count cast through a type that cannot hold "
                           "it (uint8, int8, int16, float16, bool)",
    "swap": "Loop carried values that swap each iteration (a' = b, b' = a)",
    "random": "random ops (RandomUniform/Normal(Like), Dropout in training mode)",
    "nested-random": "a random op inside a Loop/If that is itself inside a Loop body",
    "seeded-random": "random ops with a seed (a fresh draw each call, as the engines make)",
    "draws": "a scan output stacking a fresh random draw per iteration, which must not "
             "repeat one row",
    "float16": "float16 values (Cast to float16 and ops on them)",
    "narrowing-cast": "casts of data values to integer types that cannot hold them",
}
"""Constructs a caller may leave out (``exclude``), each with what it is. The generator
tags every case with those it used (``Case.tags``), and a few more for triage."""


@dataclass(eq=False)  # compared by identity
class Val:
    """A value the generator has made: its name, dtype and concrete shape (the same in every
    run and iteration), what it knows of it, and whether it depends on a random draw."""

    name: str
    dtype: np.dtype
    shape: tuple[int, ...]  # -1: a dim only the run knows (a Loop stopped by a value)
    known: np.ndarray | None = None  # the value, where the generator knows it
    bound: int | None = None  # an int scalar known to lie in [0, bound): an iteration number
    random: bool = False  # depends on a random draw: compare dtype and shape (rank) only
    draws: bool = False  # a fresh continuous random draw each time it is computed
    varies: bool = False  # changes from iteration to iteration of an enclosing loop
    alias: bool = False  # an iteration number or a scan slice: never a body output itself
    const: bool = False  # a Constant or an initializer
    lowp: bool = False  # computed through float16: compared with float16's tolerance

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def sized(self) -> bool:
        """Is every dim known here? (Only those values are used by further ops.)"""
        return all(d >= 0 for d in self.shape)


@dataclass
class Scope:
    """A graph being built: the main graph or a body, its nodes and the values it made."""

    parent: Scope | None
    kind: str  # main, loop, scan, then, else
    depth: int = 0  # control-flow nesting
    values: list[Val] = field(default_factory=list)
    nodes: list[onnx.NodeProto] = field(default_factory=list)
    initializers: list[onnx.TensorProto] = field(default_factory=list)
    in_loop: bool = False  # inside a Loop or Scan body (at any depth)
    walk: tuple[Val, int] | None = None  # a value the enclosing Loop's trip count is a dim of
    node_inputs: list[Val] = field(default_factory=list)  # what the Loop/Scan is given

    def given(self) -> set[int]:
        """The values given to the Loops and Scans around this scope (ids)."""
        out: set[int] = set()
        scope: Scope | None = self
        while scope is not None:
            out.update(id(v) for v in scope.node_inputs)
            scope = scope.parent
        return out

    def visible(self) -> list[Val]:
        """Own values first, then those of the enclosing scopes (captures)."""
        return [v for v, _ in self.captures()]

    def captures(self) -> list[tuple[Val, bool]]:
        """``visible()``, each with whether using it here captures it into a Scan body."""
        out: list[tuple[Val, bool]] = []
        scope: Scope | None = self
        scan = False
        while scope is not None:
            out += [(v, scan) for v in scope.values]
            scan = scan or scope.kind == "scan"
            scope = scope.parent
        return out


@dataclass
class Case:
    """A generated model, its inputs, and how each output is compared.

    ``checks``: output name -> ``values`` (within the dtype's tolerance), ``loose`` (within
    float16's: the output is computed through float16), ``shape`` (dtype and shape only: the
    output depends on a random draw) or ``draws`` (``shape``, and the rows along axis 0 must
    not all be one row where onnxruntime's are not). ``summary``
    describes the control flow in one line; ``tags`` names the constructs used.
    """

    model: onnx.ModelProto
    feed: dict[str, np.ndarray]
    checks: dict[str, str]
    summary: str
    tags: frozenset[str]

    @property
    def opset(self) -> int:
        return next(o.version for o in self.model.opset_import if o.domain in ("", "ai.onnx"))

    def __repr__(self) -> str:  # what hypothesis prints of a falsifying case
        return f"Case({self.summary!r}, tags={sorted(self.tags)})"

    def text(self) -> str:
        """The model in ONNX's text form, and the inputs' types."""
        feed = ", ".join(f"{k}: {v.dtype}{list(v.shape)}" for k, v in self.feed.items())
        return f"{onnx.printer.to_text(self.model)}\ninputs: {feed}"


class GeneratorBug(Exception):
    """The generator made a model ``onnx.checker`` rejects: a bug here, not in irtool."""

    def __init__(self, message: str, model: onnx.ModelProto) -> None:
        super().__init__(message)
        self.model = model


def generate(chooser: Chooser, exclude: frozenset[str] = frozenset()) -> Case:
    """One case, every decision from ``chooser``; constructs in ``exclude`` are not used."""
    unknown = set(exclude) - set(CONSTRUCTS)
    if unknown:
        raise ValueError(f"unknown constructs {sorted(unknown)}; known: {sorted(CONSTRUCTS)}")
    return _Generator(chooser, frozenset(exclude)).case()


def cases(exclude: frozenset[str] = frozenset()):  # -> SearchStrategy[Case]
    """The hypothesis strategy: cases whose decisions hypothesis draws (and shrinks)."""
    from hypothesis import strategies as st

    @st.composite
    def strategy(draw: Callable) -> Case:
        return generate(DrawChooser(SimpleNamespace(draw=draw)), exclude)

    return strategy()


# -- the generator ----------------------------------------------------------------------------

_ONNX = {F32: T.FLOAT, F16: T.FLOAT16, F64: T.DOUBLE, I64: T.INT64, I32: T.INT32, I8: T.INT8,
         U8: T.UINT8, I16: T.INT16, U16: T.UINT16, BOOL: T.BOOL}
MAX_DEPTH = 3  # control-flow nesting below the main graph
_DIMS = (2, 3, 1, 4, 5)


def _broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...] | None:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None


class _Generator:
    def __init__(self, chooser: Chooser, exclude: frozenset[str]) -> None:
        self.chooser = chooser
        self.exclude = exclude
        self.ids = itertools.count()
        self.inputs: list[onnx.ValueInfoProto] = []
        self.feed: dict[str, np.ndarray] = {}
        self.tags: set[str] = set()
        self.rng = np.random.default_rng(0)
        self.opset = 17
        self.randomness = False
        self.main = Scope(None, "main")

    # -- decisions --------------------------------------------------------------------------

    def below(self, n: int) -> int:
        return self.chooser.below(n) if n > 1 else 0

    def yes(self, num: int, den: int) -> bool:
        """True with probability num/den; shrinks to False."""
        return self.below(den) >= den - num

    def pick(self, items: Sequence):  # type: ignore[no-untyped-def]
        return items[self.below(len(items))]

    def count(self, low: int, high: int) -> int:
        return low + self.below(high - low + 1)

    def allowed(self, construct: str) -> bool:
        return construct not in self.exclude

    def name(self, prefix: str = "v") -> str:
        return f"{prefix}{next(self.ids)}"

    # -- the model --------------------------------------------------------------------------

    def case(self) -> Case:
        self.opset = self.pick(OPSETS)
        self.rng = np.random.default_rng(self.below(1 << 16))
        # Random ops in one model of five: irtool converts Dropout only (the others are
        # refused), and a refusal leaves nothing else in the model checked.
        self.randomness = self.allowed("random") and self.yes(1, 5)
        main = self.main
        for _ in range(self.count(1, 3)):
            self.new_input(main, self.pick((F32, F32, I64)) if self.inputs else F32)
        self.ops(main, self.count(0, 3))
        made: list[list[Val]] = []
        summaries = []
        for _ in range(self.count(1, 2)):
            outs, text = self.control_flow(main)
            made.append(outs)
            summaries.append(text)
            self.ops(main, self.below(3))
        outputs = self.outputs(made)
        graph = h.make_graph(main.nodes, "differential", self.inputs,
                             [self.output_info(v, top=True) for v in outputs],
                             initializer=main.initializers)
        model = h.make_model(graph, opset_imports=[h.make_opsetid("", self.opset)],
                             producer_name="irtool-differential")
        model.ir_version = 10
        try:
            onnx.checker.check_model(model, full_check=True)
        except Exception as err:
            raise GeneratorBug(f"{type(err).__name__}: {err}", model) from None
        checks = {v.name: ("rank" if v.random and not v.sized else "draws" if v.draws else
                           "shape" if v.random else "loose" if v.lowp else "values")
                  for v in outputs}
        return Case(model, dict(self.feed), checks,
                    f"opset {self.opset}: " + "; ".join(summaries), frozenset(self.tags))

    def outputs(self, made: list[list[Val]]) -> list[Val]:
        """Graph outputs: some outputs of each control-flow node (at least one), maybe
        another value."""
        chosen: list[Val] = []
        for group in made:
            if not group:
                continue
            first = group[self.below(len(group))]
            chosen.append(first)
            chosen += [v for v in group if v is not first and self.yes(2, 3)]
        if not chosen:
            chosen.append(self.main.values[-1])
        if self.yes(1, 3):
            chosen.append(self.pick(self.main.values[::-1]))
        seen: set[str] = set()
        out = []
        for v in chosen:
            if v.name not in seen:
                seen.add(v.name)
                out.append(v)
        return out

    def value_info(self, v: Val, shaped: bool = True) -> onnx.ValueInfoProto:
        return h.make_tensor_value_info(v.name, _ONNX[v.dtype], self.declared(v.shape)
                                        if shaped else None)

    def output_info(self, v: Val, top: bool = False) -> onnx.ValueInfoProto:
        """A graph output's declaration: the main graph's need a shape (dims may be open)."""
        if not top and self.yes(1, 4):
            return h.make_tensor_value_info(v.name, _ONNX[v.dtype], None)
        return self.value_info(v)

    def declared(self, shape: tuple[int, ...]) -> list[int | str | None]:
        """``shape`` as declared: each dim static, named or unknown."""
        mode = self.below(4)
        if mode < 2:
            return [d if d >= 0 else None for d in shape]
        return [d if d >= 0 and self.yes(1, 2) else (None if mode == 2 else self.name("d"))
                for d in shape]

    # -- values -----------------------------------------------------------------------------

    def add(self, scope: Scope, v: Val) -> Val:
        scope.values.append(v)
        return v

    def emit(self, scope: Scope, op: str, inputs: Sequence[str], n_out: int = 1,
             **attrs: object) -> list[str]:
        outs = [self.name() for _ in range(n_out)]
        node_name = self.name("n") if self.yes(3, 4) else ""
        scope.nodes.append(h.make_node(op, list(inputs), outs, name=node_name, **attrs))
        return outs

    def emit1(self, scope: Scope, op: str, inputs: Sequence[Val | str], dtype: np.dtype,
              shape: tuple[int, ...], known: np.ndarray | None = None,
              **attrs: object) -> Val:
        """One node with one output, the result's Val (random / varies from its inputs)."""
        vals = [x for x in inputs if isinstance(x, Val)]
        names = [x.name if isinstance(x, Val) else x for x in inputs]
        (out,) = self.emit(scope, op, names, **attrs)
        if op == "Cast" and dtype.kind in "iu" and any(x.dtype.kind == "f" for x in vals):
            self.tags.add("float-to-int")
        return self.add(scope, Val(out, dtype, tuple(shape), known,
                                   random=any(x.random for x in vals),
                                   varies=any(x.varies for x in vals),
                                   lowp=dtype == F16 or any(x.lowp for x in vals)))

    def data(self, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        """Random values: floats in [-1, 1) (sometimes a few values with ties), ints in
        [-3, 5], booleans."""
        if dtype == BOOL:
            return self.rng.integers(0, 2, size=shape).astype(bool)
        if dtype.kind in "iu":
            low = 0 if dtype.kind == "u" else -3
            return self.rng.integers(low, 6, size=shape).astype(dtype)
        if self.yes(1, 6):  # ties: exercises Max/ArgMax/Relu tie-breaking
            return self.rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], size=shape).astype(dtype)
        return self.rng.uniform(-1, 1, size=shape).astype(dtype)

    def random_shape(self, rank: int | None = None) -> tuple[int, ...]:
        rank = self.pick((1, 2, 3, 0)) if rank is None else rank
        return tuple(self.pick(_DIMS) for _ in range(rank))

    def new_input(self, scope: Scope, dtype: np.dtype, shape: tuple[int, ...] | None = None,
                  value: np.ndarray | None = None, prefix: str = "x") -> Val:
        """A graph input (of the main graph, whatever ``scope`` asks for it)."""
        shape = self.random_shape() if shape is None else shape
        value = self.data(dtype, shape) if value is None else value
        v = Val(self.name(prefix), dtype, tuple(shape), value if dtype.kind in "iub" else None)
        self.inputs.append(self.value_info(v))
        self.feed[v.name] = np.asarray(value, dtype=dtype)
        return self.add(self.main, v)

    def const(self, scope: Scope, value: np.ndarray) -> Val:
        """A constant: a Constant node, or an initializer of the main graph."""
        value = np.asarray(value)
        # Initializers: the main graph's often; a body's rarely, since OpenVINO's ONNX
        # frontend counts them as body inputs and refuses the model (docs/differential.md).
        # Constant-1 (opset 8) holds floats only: other constants are initializers there,
        # the main graph's (captured) unless the body has its own.
        if (self.opset < 9 and value.dtype.kind != "f") or self.yes(1, 3):
            if scope is not self.main and self.yes(1, 100):
                self.tags.add("body-initializer")
            elif scope is not self.main:
                scope = self.main
            v = Val(self.name("w"), value.dtype, value.shape, value, const=True)
            scope.initializers.append(numpy_helper.from_array(value, v.name))
            return self.add(scope, v)
        (out,) = self.emit(scope, "Constant", [], value=numpy_helper.from_array(value))
        return self.add(scope, Val(out, value.dtype, value.shape, value, const=True))

    def forget(self, scope: Scope, v: Val) -> None:
        """No further op is to use ``v`` (it stays where it is used already)."""
        while scope is not None:
            if any(v is u for u in scope.values):
                scope.values = [u for u in scope.values if u is not v]
                return
            scope = scope.parent  # type: ignore[assignment]

    def choose(self, scope: Scope, pred: Callable[[Val], bool]) -> Val | None:
        """A visible value satisfying ``pred``: usually one of this scope's, the latest ones
        more often; sometimes one captured from an enclosing scope."""
        empty = self.yes(1, 8)  # values with no element only now and then
        own = [v for v in scope.values if v.sized and (empty or v.size) and pred(v)]
        # A body capturing a value its Loop/Scan also takes as an input breaks OpenVINO's
        # ONNX frontend (docs/differential.md), which then cannot arbitrate: now and then.
        # The same for a Scan body capturing anything but a constant.
        given = set() if self.yes(1, 6) else scope.given()
        into_scan = self.yes(1, 5)
        outer = [v for v, scan in scope.captures()[len(scope.values):]
                 if v.sized and (empty or v.size) and id(v) not in given
                 and (into_scan or not scan or v.const) and pred(v)]
        if own and (not outer or not self.yes(1, 3)):
            return own[len(own) - 1 - self.below(min(len(own), 4))] if self.yes(3, 4) \
                else self.pick(own)
        if outer:
            return self.pick(outer)
        return None

    def numeric(self, scope: Scope, kinds: str = "fiu") -> Val | None:
        return self.choose(scope, lambda v: v.dtype.kind in kinds and v.dtype != BOOL)

    # -- ops --------------------------------------------------------------------------------

    def ops(self, scope: Scope, n: int, menu: Sequence | None = None) -> None:
        """``n`` random ops (from ``menu``, by default all of ``OPS``) added to ``scope``."""
        for _ in range(n):
            for _attempt in range(4):
                make = self.pick(menu or self.OPS)
                if make(self, scope) is not None:
                    break

    def op_unary(self, scope: Scope) -> Val | None:
        x = self.numeric(scope)
        if x is None:
            return None
        if x.dtype.kind in "iu":
            op = self.pick(("Abs", "Neg"))
            return self.emit1(scope, op, [x], x.dtype, x.shape)
        ops = ["Tanh", "Relu", "Neg", "Abs", "Sigmoid", "Sin", "Cos", "Exp", "Sqrt"]
        if x.dtype != F64:  # onnxruntime has these for float and float16 only
            ops += ["LeakyRelu", "Elu", "Softplus", "Erf", "HardSigmoid"]
        op = self.pick(ops)
        if op == "Exp":  # bounded: exp(tanh(x))
            x = self.emit1(scope, "Tanh", [x], x.dtype, x.shape)
        if op == "Sqrt":
            x = self.emit1(scope, "Abs", [x], x.dtype, x.shape)
        if op == "Erf" and self.opset < 9:
            op = "Tanh"
        attrs = {"alpha": 0.3} if op in ("LeakyRelu", "Elu") and self.yes(1, 2) else {}
        return self.emit1(scope, op, [x], x.dtype, x.shape, **attrs)

    def partner(self, scope: Scope, x: Val) -> Val:
        """A value of ``x``'s dtype that broadcasts with it: a visible one or a constant."""
        found = self.choose(scope, lambda v: v.dtype == x.dtype and v is not x
                            and _broadcast(v.shape, x.shape) is not None
                            and len(_broadcast(v.shape, x.shape) or ()) <= 4
                            and (_broadcast(v.shape, x.shape) == x.shape or self.yes(1, 2)))
        if found is not None and self.yes(2, 3):
            return found
        if self.yes(1, 4):
            return x
        cut = self.below(len(x.shape) + 1)
        shape = tuple(d if self.yes(2, 3) else 1 for d in x.shape[cut:])
        return self.const(scope, self.data(x.dtype, shape))

    def op_binary(self, scope: Scope) -> Val | None:
        x = self.numeric(scope)
        if x is None:
            return None
        y = self.partner(scope, x)
        shape = _broadcast(x.shape, y.shape)
        assert shape is not None
        ints = x.dtype.kind in "iu"
        ops = ["Add", "Sub", "Mul"]
        if not ints or self.opset >= 12:
            ops += ["Max", "Min"]
        op = self.pick([*ops, "Div"])
        if op == "Div":
            if ints:  # an integer divisor that is never 0 (truncating division)
                y = self.const(scope, np.array(self.pick((2, 3, -2)), x.dtype))
            else:  # |y| + 1 >= 1: no division by (almost) zero
                absy = self.emit1(scope, "Abs", [y], y.dtype, y.shape)
                one = self.const(scope, np.array(1, x.dtype))
                y = self.emit1(scope, "Add", [absy, one], y.dtype, y.shape)
            shape = _broadcast(x.shape, y.shape)
            assert shape is not None
        elif op == "Mul" and ints:  # wrap-around lies elsewhere: keep integers small
            y = self.const(scope, np.array(self.pick((2, -1, 3)), x.dtype))
            shape = x.shape
        known = None
        if ints and x.known is not None and y.known is not None and op in ("Add", "Sub"):
            known = (x.known + y.known) if op == "Add" else (x.known - y.known)
        pair = [x, y] if self.yes(2, 3) or op == "Div" else [y, x]
        return self.emit1(scope, op, pair, x.dtype, shape, known)

    def op_compare(self, scope: Scope) -> Val | None:
        kinds = "f" if self.opset < 9 else "fiu"
        x = self.numeric(scope, kinds)
        if x is None:
            return None
        y = self.partner(scope, x)
        shape = _broadcast(x.shape, y.shape)
        assert shape is not None
        ops = ["Greater", "Less"] + (["Equal"] if x.dtype.kind in "iu" or self.opset >= 11
                                     else [])
        return self.emit1(scope, self.pick(ops), [x, y], BOOL, shape)

    def op_logic(self, scope: Scope) -> Val | None:
        """Not / And / Or / Xor on booleans, or Where choosing between two values."""
        c = self.choose(scope, lambda v: v.dtype == BOOL)
        if c is None:
            return None
        if self.yes(1, 2) and self.opset >= 9:
            x = self.numeric(scope)
            if x is None:
                return None
            y = self.partner(scope, x)
            shape = _broadcast(c.shape, x.shape, y.shape)
            if shape is None:
                return None
            return self.emit1(scope, "Where", [c, x, y], x.dtype, shape)
        if self.yes(1, 3):
            return self.emit1(scope, "Not", [c], BOOL, c.shape)
        d = self.partner(scope, c)
        shape = _broadcast(c.shape, d.shape)
        assert shape is not None
        return self.emit1(scope, self.pick(("And", "Or", "Xor")), [c, d], BOOL, shape)

    def op_cast(self, scope: Scope) -> Val | None:
        x = self.choose(scope, lambda v: True)
        if x is None:
            return None
        targets = [F32, I64, F64, I32, BOOL]
        if self.allowed("float16"):
            targets.append(F16)
        if self.allowed("narrowing-cast"):
            targets += [U8, I8]
        to = self.pick(targets)
        if to in (U8, I8) and x.dtype.kind == "f":
            self.tags.add("narrowing-cast")
        if to == F16 or x.dtype == F16:
            self.tags.add("float16")
        if x.dtype.kind == "f" and to.kind in "iu" and self.yes(1, 2):
            # Spread values in [-1, 1) over several integers before truncating.
            scale = self.const(scope, np.array(4, x.dtype))
            x = self.emit1(scope, "Mul", [x, scale], x.dtype, x.shape)
        known = None
        if x.known is not None and x.dtype.kind in "iub" and to.kind in "iub":
            known = x.known.astype(to)
        out = self.emit1(scope, "Cast", [x], to, x.shape, known, to=_ONNX[to])
        if to in (U8, I8):  # back to a type every op takes; the narrow value is not reused
            scope.values.remove(out)
            out = self.emit1(scope, "Cast", [out], I32, out.shape,
                             None if known is None else known.astype(I32), to=T.INT32)
        return out

    def op_reshape(self, scope: Scope) -> Val | None:
        x = self.choose(scope, lambda v: v.size > 0)
        if x is None:
            return None
        factors = [p for p in _prime_factors(x.size)]
        rank = self.count(0 if x.size == 1 else 1, 3)
        shape = [1] * rank
        for p in factors:
            if rank == 0:
                break
            shape[self.below(rank)] *= p
        target = list(shape)
        if target and self.yes(1, 3):
            target[self.below(len(target))] = -1
        elif target and self.yes(1, 4):
            k = self.below(len(target))
            if k < len(x.shape) and x.shape[k] == target[k]:
                target[k] = 0  # copy that dim of the input (allowzero=0)
        spec = self.const(scope, np.array(target, np.int64))
        known = None if x.known is None else x.known.reshape(shape)
        return self.emit1(scope, "Reshape", [x, spec], x.dtype, tuple(shape), known)

    def axes_node(self, scope: Scope, op: str, x: Val, axes: list[int],
                  shape: tuple[int, ...], known: np.ndarray | None) -> Val:
        """Squeeze/Unsqueeze with its axes as an attribute (opset < 13) or an input."""
        if self.opset >= 13:
            ax = self.const(scope, np.array(axes, np.int64))
            return self.emit1(scope, op, [x, ax], x.dtype, shape, known)
        return self.emit1(scope, op, [x], x.dtype, shape, known, axes=axes)

    def op_squeeze(self, scope: Scope) -> Val | None:
        x = self.choose(scope, lambda v: 1 in v.shape)
        if x is None:
            return self.op_unsqueeze(scope)
        ones = [i for i, d in enumerate(x.shape) if d == 1]
        axes = [i for i in ones if self.yes(1, 2)] or ones[:1]
        if self.opset >= 11 and self.yes(1, 3):
            axes = [a - len(x.shape) for a in axes]
        shape = tuple(d for i, d in enumerate(x.shape) if i not in
                      {a % len(x.shape) for a in axes})
        known = None if x.known is None else x.known.reshape(shape)
        if self.yes(1, 5):  # no axes: every dim of 1 goes
            shape = tuple(d for d in x.shape if d != 1)
            known = None if x.known is None else x.known.reshape(shape)
            return self.emit1(scope, "Squeeze", [x], x.dtype, shape, known)
        return self.axes_node(scope, "Squeeze", x, axes, shape, known)

    def op_unsqueeze(self, scope: Scope) -> Val | None:
        x = self.choose(scope, lambda v: len(v.shape) < 4)
        if x is None:
            return None
        rank = len(x.shape) + 1
        axis = self.below(rank)
        shape = (*x.shape[:axis], 1, *x.shape[axis:])
        if self.opset >= 11 and self.yes(1, 3):
            axis -= rank
        known = None if x.known is None else x.known.reshape(shape)
        return self.axes_node(scope, "Unsqueeze", x, [axis], shape, known)

    def op_transpose(self, scope: Scope) -> Val | None:
        x = self.choose(scope, lambda v: len(v.shape) >= 2)
        if x is None:
            return None
        if self.yes(1, 4):
            perm = list(range(len(x.shape)))[::-1]
            return self.emit1(scope, "Transpose", [x], x.dtype, tuple(x.shape[p] for p in perm))
        perm = list(self.rng.permutation(len(x.shape)))
        perm = [int(p) for p in perm]
        return self.emit1(scope, "Transpose", [x], x.dtype, tuple(x.shape[p] for p in perm),
                          perm=perm)

    def op_concat(self, scope: Scope) -> Val | None:
        x = self.choose(scope, lambda v: len(v.shape) >= 1)
        if x is None:
            return None
        axis = self.below(len(x.shape))
        parts = [x]
        for _ in range(self.count(1, 2)):
            other = self.choose(scope, lambda v: v.dtype == x.dtype and len(v.shape) == len(
                x.shape) and all(a == b for i, (a, b) in enumerate(zip(v.shape, x.shape))
                                 if i != axis))
            if other is None or self.yes(1, 3):
                piece = list(x.shape)
                piece[axis] = self.pick((1, 2))
                other = self.const(scope, self.data(x.dtype, tuple(piece)))
            parts.append(other)
        shape = list(x.shape)
        shape[axis] = sum(p.shape[axis] for p in parts)
        known = None
        if all(p.known is not None for p in parts):
            known = np.concatenate([p.known for p in parts], axis=axis)  # type: ignore[misc]
        if self.opset >= 11 and self.yes(1, 3):
            axis -= len(x.shape)
        return self.emit1(scope, "Concat", parts, x.dtype, tuple(shape), known, axis=axis)

    def op_slice(self, scope: Scope) -> Val | None:
        x = self.choose(scope, lambda v: len(v.shape) >= 1)
        if x is None:
            return None
        axes = sorted({self.below(len(x.shape)) for _ in range(self.count(1, 2))})
        starts, ends, steps = [], [], []
        shape = list(x.shape)
        for a in axes:
            d = x.shape[a]
            step = self.pick((1, 2, -1, -2)) if self.opset >= 10 else 1
            start = self.pick((0, 1, -1, d, -d - 1, 2, d + 3))
            end = self.pick((d, -1, 1, 0, -d - 1, 2 ** 62, -(2 ** 62), d + 3))
            if not len(_slice_rows(d, start, end, step)) and not self.yes(1, 8):
                end = d if step > 0 else -d - 1  # empty results only now and then
            starts.append(start)
            ends.append(end)
            steps.append(step)
            shape[a] = len(_slice_rows(d, start, end, step))
        known = None
        if x.known is not None:
            known = x.known
            for a, s, e, st in zip(axes, starts, ends, steps):
                known = np.take(known, _slice_rows(x.shape[a], s, e, st), axis=a)
        if self.opset < 10:
            return self.emit1(scope, "Slice", [x], x.dtype, tuple(shape), known,
                              starts=starts, ends=ends, axes=axes)
        neg = self.yes(1, 3)
        ins: list[Val | str] = [x, self.const(scope, np.array(starts, np.int64)),
                                self.const(scope, np.array(ends, np.int64))]
        if self.yes(3, 4) or steps != [1] * len(axes) or axes != list(range(len(axes))):
            ins.append(self.const(scope, np.array(
                [a - len(x.shape) if neg else a for a in axes], np.int64)))
            if self.yes(1, 2) or steps != [1] * len(axes):
                ins.append(self.const(scope, np.array(steps, np.int64)))
        return self.emit1(scope, "Slice", ins, x.dtype, tuple(shape), known)

    def op_flatten(self, scope: Scope) -> Val | None:
        x = self.choose(scope, lambda v: len(v.shape) >= 1 and (self.opset >= 9
                                                                 or v.dtype.kind == "f"))
        if x is None:
            return None
        axis = self.below(len(x.shape) + 1)
        shape = (int(np.prod(x.shape[:axis], dtype=np.int64)),
                 int(np.prod(x.shape[axis:], dtype=np.int64)))
        if self.opset >= 11 and axis < len(x.shape) and self.yes(1, 3):
            axis -= len(x.shape)
        return self.emit1(scope, "Flatten", [x], x.dtype, shape, axis=axis)

    def op_expand(self, scope: Scope) -> Val | None:
        x = self.choose(scope, lambda v: len(v.shape) <= 3)
        if x is None:
            return None
        target = [d if d != 1 or self.yes(1, 2) else self.pick((2, 3)) for d in x.shape]
        if self.yes(1, 2):
            target.insert(0, self.pick((2, 1, 3)))
        spec = self.const(scope, np.array(target, np.int64))
        shape = _broadcast(x.shape, tuple(target))
        assert shape is not None
        return self.emit1(scope, "Expand", [x, spec], x.dtype, shape)

    def op_tile(self, scope: Scope) -> Val | None:
        x = self.choose(scope, lambda v: 1 <= len(v.shape) <= 3)
        if x is None:
            return None
        reps = [self.pick((1, 2)) for _ in x.shape]
        spec = self.const(scope, np.array(reps, np.int64))
        return self.emit1(scope, "Tile", [x, spec], x.dtype,
                          tuple(d * r for d, r in zip(x.shape, reps)))

    def op_shape(self, scope: Scope) -> Val | None:
        x = self.choose(scope, lambda v: True)
        if x is None:
            return None
        if self.yes(1, 3):
            return self.emit1(scope, "Size", [x], I64, (), np.array(x.size, np.int64))
        full = np.array(x.shape, np.int64)
        if self.opset >= 15 and len(x.shape) >= 1 and self.yes(1, 3):
            start = self.below(len(x.shape))
            part = full[start:]
            return self.emit1(scope, "Shape", [x], I64, part.shape, part, start=start)
        return self.emit1(scope, "Shape", [x], I64, full.shape, full)

    def reduce_node(self, scope: Scope, op: str, x: Val, axes: list[int] | None,
                    keepdims: bool) -> Val:
        """A Reduce* with its axes as an attribute or an input, as the opset wants."""
        reduced = set(range(len(x.shape))) if axes is None else {a % len(x.shape)
                                                                   for a in axes}
        shape = tuple(1 if i in reduced else d for i, d in enumerate(x.shape)) if keepdims \
            else tuple(d for i, d in enumerate(x.shape) if i not in reduced)
        as_input = self.opset >= 18 or (op == "ReduceSum" and self.opset >= 13)
        attrs: dict[str, object] = {"keepdims": int(keepdims)}
        ins: list[Val | str] = [x]
        if axes is not None and as_input:
            ins.append(self.const(scope, np.array(axes, np.int64)))
        elif axes is not None:
            attrs["axes"] = axes
        known = None
        if x.known is not None and op == "ReduceSum":
            known = np.sum(x.known, axis=tuple(sorted(reduced)), keepdims=keepdims
                           ).astype(x.dtype)
        return self.emit1(scope, op, ins, x.dtype, shape, known, **attrs)

    def op_reduce(self, scope: Scope) -> Val | None:
        x = self.choose(scope, lambda v: v.dtype != BOOL and v.size > 0 and
                        v.dtype.kind in ("fiu" if self.opset >= 11 else "f"))
        if x is None:
            return None
        ops = ["ReduceSum", "ReduceMax", "ReduceMin"]
        if x.dtype.kind == "f":
            ops += ["ReduceMean", "ReduceL2", "ReduceSumSquare"]
        op = self.pick(ops)
        axes = None
        if x.shape and self.yes(3, 4):
            axes = sorted({self.below(len(x.shape)) for _ in range(self.count(1, 2))})
            if self.opset >= 11 and self.yes(1, 3):
                axes = [a - len(x.shape) for a in axes]
        return self.reduce_node(scope, op, x, axes, self.yes(1, 2))

    def op_argmax(self, scope: Scope) -> Val | None:
        x = self.choose(scope, lambda v: v.dtype.kind == "f" and len(v.shape) >= 1
                        and v.size > 0)
        if x is None:
            return None
        axis = self.below(len(x.shape))
        keep = self.yes(1, 2)
        shape = tuple(1 if i == axis else d for i, d in enumerate(x.shape)) if keep else \
            tuple(d for i, d in enumerate(x.shape) if i != axis)
        attrs: dict[str, object] = {"axis": axis, "keepdims": int(keep)}
        if self.opset >= 12 and self.yes(1, 3):
            attrs["select_last_index"] = 1
        return self.emit1(scope, self.pick(("ArgMax", "ArgMin")), [x], I64, shape, **attrs)

    def op_softmax(self, scope: Scope) -> Val | None:
        x = self.choose(scope, lambda v: v.dtype.kind == "f" and len(v.shape) >= 1)
        if x is None:
            return None
        attrs = {}
        # Without the attribute the axis is 1 before opset 13, -1 from 13 on.
        if self.yes(2, 3) or (self.opset < 13 and len(x.shape) < 2):
            attrs["axis"] = self.below(len(x.shape)) - (len(x.shape) if self.opset >= 11
                                                        and self.yes(1, 2) else 0)
        op = self.pick(("Softmax", "LogSoftmax"))
        return self.emit1(scope, op, [x], x.dtype, x.shape, **attrs)

    def op_cumsum(self, scope: Scope) -> Val | None:
        if self.opset < 11:
            return None
        x = self.choose(scope, lambda v: v.dtype in (F32, F64, I64, I32) and len(v.shape) >= 1)
        if x is None:
            return None
        axis = self.const(scope, np.array(self.below(len(x.shape)), np.int64))
        attrs = {k: 1 for k in ("exclusive", "reverse") if self.yes(1, 3)}
        return self.emit1(scope, "CumSum", [x, axis], x.dtype, x.shape, **attrs)

    def op_gather(self, scope: Scope) -> Val | None:
        x = self.choose(scope, lambda v: len(v.shape) >= 1 and min(v.shape) > 0)
        if x is None:
            return None
        axis = self.below(len(x.shape))
        d = x.shape[axis]
        ishape = self.pick(((), (2,), (1,), (2, 2)))
        indices = self.rng.integers(-d, d, size=ishape).astype(self.pick((np.int64, np.int32)))
        idx = self.const(scope, indices)
        shape = (*x.shape[:axis], *ishape, *x.shape[axis + 1:])
        known = None if x.known is None else np.take(x.known, indices, axis=axis)
        if self.opset >= 11 and self.yes(1, 3):
            axis -= len(x.shape)
        return self.emit1(scope, "Gather", [x, idx], x.dtype, shape, known, axis=axis)

    def op_matmul(self, scope: Scope) -> Val | None:
        x = self.choose(scope, lambda v: v.dtype in (F32, F64) and len(v.shape) >= 1
                        and v.size > 0)
        if x is None:
            return None
        k = x.shape[-1]
        n = self.pick((2, 3, 1, 4))
        w = self.choose(scope, lambda v: v.dtype == x.dtype and len(v.shape) == 2
                        and v.shape[0] == k)
        if w is None or self.yes(1, 3):
            w = self.const(scope, self.data(x.dtype, (k, n) if self.yes(4, 5) else (k,)))
        if len(w.shape) == 1:
            shape = x.shape[:-1]
        else:
            shape = (*x.shape[:-1], w.shape[1])
        return self.emit1(scope, "MatMul", [x, w], x.dtype, shape)

    def op_random(self, scope: Scope) -> Val | None:
        """A random draw; its value differs between engines, so it is compared by shape."""
        if not self.randomness or (scope.depth >= 2 and scope.in_loop
                                   and not self.allowed("nested-random")):
            return None
        if self.opset >= 22:  # onnxruntime 1.32 has no kernels for the opset-22 versions
            return None
        kind = self.pick(("Dropout", "Dropout", "Dropout", "RandomUniform", "RandomNormal",
                          "RandomUniformLike", "RandomNormalLike"))
        attrs: dict[str, object] = {}
        if self.yes(1, 2) and self.allowed("seeded-random"):  # Dropout's an int, others' float
            seed = self.below(100)
            attrs["seed"] = seed if kind == "Dropout" else float(seed)
        if kind == "Dropout" and self.opset < 12:
            return None
        self.tags.add("random")
        if "seed" in attrs:
            self.tags.add("seeded-random")
        if scope.in_loop and scope.depth >= 2:
            self.tags.add("nested-random")
        if kind == "Dropout":
            x = self.choose(scope, lambda v: v.dtype in (F32, F64) and v.size > 0)
            if x is None:
                return None
            ratio = self.const(scope, np.array(self.pick((0.5, 0.25)), x.dtype))
            train = self.const(scope, np.array(True))
            outs = self.emit(scope, "Dropout", [x.name, ratio.name, train.name],
                             n_out=2, **attrs)
            self.add(scope, Val(outs[1], BOOL, x.shape, random=True, varies=x.varies))
            # A fresh mask per run: with 16 elements or more, two runs that drop the same
            # ones are a coincidence (2**-16) irtool cannot be blamed for.
            return self.add(scope, Val(outs[0], x.dtype, x.shape, random=True,
                                       draws=x.size >= 16 and bool(np.all(x.shape)),
                                       varies=x.varies))
        dtype = self.pick((F32, F64))
        if kind.endswith("Like"):
            x = self.choose(scope, lambda v: v.dtype in (F32, F64) and v.size > 0)
            if x is None:
                return None
            shape, ins = x.shape, [x.name]
            dtype = x.dtype
        else:
            shape, ins = self.random_shape(self.pick((1, 2))), []
            attrs["shape"] = list(shape)
            attrs["dtype"] = _ONNX[dtype]
        if kind.startswith("RandomUniform") and self.yes(1, 2):
            attrs["low"], attrs["high"] = -2.0, 3.0
        (out,) = self.emit(scope, kind, ins, **attrs)
        return self.add(scope, Val(out, dtype, shape, random=True, draws=True,
                                   varies=scope.in_loop))

    def op_constant(self, scope: Scope) -> Val | None:
        dtype = self.pick((F32, I64, F64, BOOL))
        return self.const(scope, self.data(dtype, self.random_shape()))

    def op_control_flow(self, scope: Scope) -> Val | None:
        if scope.depth >= MAX_DEPTH or not self.yes(1, 2 + 2 * scope.depth):
            return None
        outs, _ = self.control_flow(scope)
        return outs[0] if outs else None

    ELEMENTWISE: tuple[Callable[[_Generator, Scope], Val | None], ...] = (
        op_unary, op_binary, op_matmul, op_compare, op_reduce)
    OPS: tuple[Callable[[_Generator, Scope], Val | None], ...] = (
        op_unary, op_binary, op_binary, op_reduce, op_matmul, op_reshape, op_gather,
        op_slice, op_unsqueeze, op_squeeze, op_transpose, op_concat, op_cast, op_compare,
        op_logic, op_shape, op_expand, op_tile, op_flatten, op_argmax, op_softmax, op_cumsum,
        op_constant, op_random, op_control_flow)

    # -- a value of a given type and shape --------------------------------------------------

    def like(self, scope: Scope, dtype: np.dtype, shape: tuple[int, ...],
             avoid: Sequence[Val] = ()) -> Val:
        """A value of ``dtype`` and ``shape`` in ``scope``: one that exists, or a reduction
        of another to a scalar, cast and broadcast to the shape (none of ``avoid``)."""
        def allowed(v: Val) -> bool:
            return not any(v is a for a in avoid)

        found = self.choose(scope, lambda v: v.dtype == dtype and v.shape == shape
                            and allowed(v))
        if found is not None and self.yes(2, 3):
            return found
        source = self.choose(scope, lambda v: v.dtype.kind in "fiu" and v.dtype != BOOL
                             and v.size > 0 and allowed(v))
        if source is None:
            return self.const(scope, self.data(dtype, shape))
        total = self.reduce_node(scope, "ReduceSum" if source.dtype.kind in "iu" or
                                 self.yes(1, 2) else "ReduceMean", source, None, False)
        if dtype == BOOL:
            if self.opset < 9 and total.dtype.kind != "f":  # Greater-7 takes floats only
                total = self.emit1(scope, "Cast", [total], F32, (), to=T.FLOAT)
            zero = self.const(scope, np.zeros((), total.dtype))
            total = self.emit1(scope, "Greater", [total, zero], BOOL, ())
        elif total.dtype != dtype:
            total = self.emit1(scope, "Cast", [total], dtype, (), to=_ONNX[dtype])
        base = self.choose(scope, lambda v: v.dtype == dtype and v.shape == shape
                           and allowed(v) and dtype != BOOL)
        if base is not None and self.yes(1, 2):
            op = "Add" if dtype.kind in "fiu" else "Or"
            return self.emit1(scope, op, [base, total], dtype, shape)
        spec = self.const(scope, np.array(shape, np.int64))
        return self.emit1(scope, "Expand", [total, spec], dtype, shape)

    # -- control flow -----------------------------------------------------------------------

    def control_flow(self, scope: Scope) -> tuple[list[Val], str]:
        kind = self.pick(("Loop", "If", "Scan"))
        if kind == "Loop":
            return self.loop(scope)
        if kind == "Scan":
            return self.scan8(scope) if self.opset == 8 else self.scan(scope)
        return self.if_(scope)

    def body_scope(self, scope: Scope, kind: str) -> Scope:
        return Scope(scope, kind, scope.depth + 1,
                     in_loop=scope.in_loop or kind in ("loop", "scan"))

    def body_ops(self, body: Scope) -> None:
        self.ops(body, self.count(0, 5))
        if body.depth < MAX_DEPTH and self.yes(1, 2 + body.depth):
            self.control_flow(body)
            self.ops(body, self.below(2))

    def loop_output(self, body: Scope, dtype: np.dtype, shape: tuple[int, ...],
                    own: Val, others: list[Val]) -> tuple[Val, str]:
        """The body output feeding carried value ``own`` next: computed, another carried
        value of its type (a swap), ``own`` passed through, or a value from outside."""
        mode = self.below(5)
        if mode == 1 and self.allowed("swap"):
            partners = [o for o in others if o is not own and o.dtype == dtype
                        and o.shape == shape]
            if partners:
                self.tags.add("swap")
                partner = self.pick(partners)
                if self.yes(1, 4):  # the other body input itself as the output
                    self.tags.add("direct-passthrough")
                    return partner, "swap"
                return self.emit1(body, "Identity", [partner], dtype, shape), "swap"
        if mode == 2:
            # A body input that is itself a body output breaks OpenVINO's ONNX frontend
            # (docs/differential.md), which then cannot arbitrate: now and then.
            if self.yes(1, 6):
                self.tags.add("direct-passthrough")
                return own, "same"
            return self.emit1(body, "Identity", [own], dtype, shape), "same"
        if mode == 3:
            outer = self.choose(body, lambda v: v.dtype == dtype and v.shape == shape
                                and v not in body.values)
            if outer is not None:
                return self.emit1(body, "Identity", [outer], dtype, shape), "outer"
        # Another carried value as it is makes a swap: only where swaps are allowed.
        value = self.like(body, dtype, shape, [own] if self.allowed("swap") else others)
        if any(value is o for o in others):
            self.tags.add("swap")
            return value, "swap"
        return value, "computed"

    def carried_initials(self, scope: Scope, n: int, taken: Sequence[Val] = ()) -> list[Val]:
        out: list[Val] = []
        for _ in range(n):
            again = self.yes(1, 8)  # the same value twice, now and then (see scan)
            v = self.choose(scope, lambda v, again=again: v.size <= 64 and (again or not any(
                v is u for u in [*out, *taken]))) if self.yes(2, 3) else None
            if v is None or (v.dtype == F16 and not self.allowed("float16")):
                v = self.const(scope, self.data(self.pick((F32, I64, F64)),
                                                self.random_shape()))
            out.append(v)
        if len(out) >= 2 and self.allowed("swap") and self.yes(1, 2):
            # A partner of the same type and shape, so that a swap is possible.
            first = out[0]
            out[1] = self.const(scope, self.data(first.dtype, first.shape))
        return out

    def trip_count(self, scope: Scope) -> tuple[str, int | None, bool, str]:
        """The Loop's M: its name ("" for none), its value (None: no limit), whether the
        generator knows that value, and a description."""
        mode = self.pick(("const", "computed", "input", "computed", "none", "max"))
        if mode == "const":
            t = self.pick((3, 1, 2, 0, 4, 5, -1))
            v = self.const(scope, np.array(t, np.int64).reshape(self.pick(((), (1,)))))
            self.tags.add("zero-trip" if t == 0 else "const-trip")
            return v.name, t, True, f"M={t}"
        if mode == "input":
            t = self.pick((3, 0, 2, -1, 1, 5, -3))
            v = self.new_input(scope, I64, self.pick(((), (1,))), prefix="M")
            self.feed[v.name] = np.full(v.shape, t, np.int64)
            v.known = self.feed[v.name]
            self.tags.add("runtime-trip" if t > 0 else "runtime-trip-nonpositive")
            return v.name, t, True, f"M=input({t})"
        if mode == "computed":
            v, text = self.computed_trip(scope)
            if v.known is None:
                return v.name, None, False, text
            return v.name, int(v.known.reshape(-1)[0]), True, text
        if mode == "max":
            v = self.const(scope, np.array(INT64_MAX, np.int64))
            # Not for arithmetic: OpenVINO's CPU plugin computes int64 in int32.
            self.forget(scope, v)
            return v.name, None, True, "M=INT64_MAX"
        return "", None, True, "M=none"

    def computed_trip(self, scope: Scope) -> tuple[Val, str]:
        """M computed from a dim of a value (sometimes a long one), then cast through other
        types and back to int64."""
        if self.yes(1, 3):
            length = self.pick((260, 300, 256, 129, 2049, 65537))
            x = self.new_input(self.main, F32, (length, self.pick((2, 1))), prefix="long")
            self.tags.add("long-input")
        else:
            x = self.choose(scope, lambda v: len(v.shape) >= 1 and max(v.shape) <= 6)
            if x is None:
                x = self.new_input(self.main, F32, self.random_shape(self.pick((1, 2))))
        axis = self.below(len(x.shape)) if x.shape else 0
        how = self.pick(("gather", "slice", "size"))
        if how == "size" or not x.shape:
            v = self.emit1(scope, "Size", [x], I64, (), np.array(x.size, np.int64))
            text = f"Size({x.name})"
        else:
            shape = self.emit1(scope, "Shape", [x], I64, (len(x.shape),),
                               np.array(x.shape, np.int64))
            if how == "gather":
                idx = self.const(scope, np.array(axis, np.int64))
                v = self.emit1(scope, "Gather", [shape, idx], I64, (),
                               np.array(x.shape[axis], np.int64), axis=0)
            else:
                v = self.slice_node(scope, shape, axis)
            text = f"{x.name}.shape[{axis}]"
            scope.walk = (x, axis)
        chain = []
        for _ in range(self.below(3)):
            options = [I32, F32, F64, I64]
            if self.allowed("narrowing-trip-cast"):
                options += [U8, I8, F16, BOOL, I16, U16]
            to = self.pick(options)
            cast = None if v.known is None else _cast_known(v.known, to)
            if cast is None or not np.array_equal(cast.astype(np.float64),
                                                  v.known.astype(np.float64)):  # type: ignore[union-attr]
                if not self.allowed("narrowing-trip-cast"):
                    continue
                self.tags.add("narrowing-trip-cast")
            v = self.emit1(scope, "Cast", [v], to, v.shape, cast, to=_ONNX[to])
            scope.values.remove(v)  # a narrow type not every op takes: only M uses it
            chain.append(np.dtype(to).name)
        if v.dtype != I64:
            known = None if v.known is None else _cast_known(v.known, I64)
            v = self.emit1(scope, "Cast", [v], I64, v.shape, known, to=T.INT64)
            chain.append("int64")
        if chain:
            self.tags.add("trip-cast")
            text += " as " + ">".join(chain)
        return v, f"M={text}"

    def slice_node(self, scope: Scope, x: Val, axis: int) -> Val:
        """``x[axis:axis+1]`` along axis 0 (shape [1])."""
        known = None if x.known is None else x.known[axis:axis + 1]
        if self.opset < 10:
            return self.emit1(scope, "Slice", [x], x.dtype, (1,), known, starts=[axis],
                              ends=[axis + 1], axes=[0])
        s = self.const(scope, np.array([axis], np.int64))
        e = self.const(scope, np.array([axis + 1], np.int64))
        return self.emit1(scope, "Slice", [x, s, e], x.dtype, (1,), known)

    def condition(self, scope: Scope, what: str) -> tuple[Val, bool | None, str]:
        """A boolean of one element: its Val, its value when known and the same in every
        iteration (None otherwise), and a description."""
        shape = self.pick(((), (1,)))
        mode = self.pick(("const", "input", "computed", "iteration", "incoming"))
        if mode == "const":
            value = self.yes(2, 3)
            return self.const(scope, np.full(shape, value)), value, f"{what}={value}"
        if mode == "input":
            value = self.yes(2, 3)
            v = self.new_input(scope, BOOL, shape, np.full(shape, value), prefix="c")
            return v, value, f"{what}=input({value})"
        if mode == "iteration":
            it = self.choose(scope, lambda v: v.bound is not None)
            if it is not None:
                k = self.pick((1, 0, 2))
                return self.less(scope, it, k, self.pick(("Less", "Greater"))), None, \
                    f"{what}=iteration"
        if mode == "incoming":
            c = self.choose(scope, lambda v: v.dtype == BOOL and v.size == 1)
            if c is not None:
                return self.emit1(scope, "Not", [c], BOOL, c.shape), None, f"{what}=Not(bool)"
        x = self.choose(scope, lambda v: v.dtype in (F32, F64) and v.size > 0)
        if x is None:
            return self.const(scope, np.full(shape, True)), True, f"{what}=True"
        total = self.reduce_node(scope, "ReduceSum", x, None, False) if x.shape else x
        zero = self.const(scope, np.zeros(shape, x.dtype))
        return (self.emit1(scope, self.pick(("Greater", "Less")), [total, zero], BOOL, shape),
                None, f"{what}=computed")

    def produced(self, body: Scope, values: list[Val], scanned: int = 0,
                 inputs: Sequence[Val] = (), scan: bool = False) -> list[Val]:
        """``values`` as outputs of ``body``: one made elsewhere (a capture, a graph input), or
        listed twice, goes through an Identity (``onnx.checker`` wants body outputs made in
        the body). So does a body input among the last ``scanned`` values (scan outputs),
        and in a Scan's body (``scan``) any body input."""
        out: list[Val] = []
        first_scan = len(values) - scanned
        for k, v in enumerate(values):
            # onnxruntime gets a body output wrong when it is the iteration number, or in a
            # Scan any body input, itself, and fails on a scan output that is a body input
            # (docs/differential.md): those go through an Identity too.
            given = any(v is u for u in inputs)
            if v.alias or not any(v is u for u in body.values) or any(v is u for u in out) \
                    or (given and (scan or k >= first_scan)):
                v = self.emit1(body, "Identity", [v], v.dtype, v.shape)
            out.append(v)
        return out

    def loop(self, scope: Scope) -> tuple[list[Val], str]:
        m_name, trip, trip_known, m_text = self.trip_count(scope)
        walk, scope.walk = scope.walk, None
        # A map over the rows of the value M is a dim of (what the vectoriser and
        # slice_inputs rewrite): no condition, nothing carried, a body that goes on.
        mapping = walk is not None and self.yes(1, 2)
        cond_mode = "none" if mapping else self.pick(("none", "const", "input", "computed"))
        cond_name, first, c_text, cond_shape = "", True, "cond=none", ()
        if cond_mode != "none":
            c, first, c_text = self.condition(scope, "cond") if cond_mode == "computed" else \
                self.cond_known(scope, cond_mode)
            cond_name, cond_shape = c.name, c.shape
        # Loop-1 (opsets 8-10) needs at least one carried value.
        initial = self.carried_initials(scope, (0 if self.opset >= 11 else 1) if mapping
                                        else self.count(0 if self.opset >= 11 else 1, 3))
        # onnxruntime runs at most M iterations (none for M <= 0), while the condition holds.
        # Without a positive M the body must stop by itself (OpenVINO takes a negative M as
        # "no limit"), and an M the generator cannot tell needs a stop too.
        stop = self.pick(("pass", "true") if mapping else
                         ("pass", "true", "early", "counter", "value", "and"))
        if (trip is None or trip < 0 or not trip_known) and stop not in ("early", "counter"):
            stop = "early"
        k_stop = self.pick((2, 0, 1, 3, 4))
        if first is False or (trip_known and trip is not None and trip <= 0):
            limit: int | None = 0
        elif stop in ("early", "counter"):
            limit = k_stop + 1 if trip is None else min(trip, k_stop + 1)
        else:
            limit = trip
        # The exact number of iterations, where the generator knows it.
        count = limit if (trip_known or limit == 0) and stop not in ("value", "and") and \
            first is not None else None
        if limit == 0:
            self.tags.add("no-iteration")
        body = self.body_scope(scope, "loop")
        body.node_inputs = list(initial) + [v for v in scope.visible()
                                            if v.name in (m_name, cond_name)]
        bound = max(limit or 0, 1) if trip_known and limit is not None else None
        it = self.add(body, Val(self.name("i"), I64, (), bound=bound, varies=True, alias=True))
        # ONNX's inference gives the body's condition the shape of the Loop's.
        cond_in = self.add(body, Val(self.name("cond"), BOOL, cond_shape, varies=True))
        carried = [self.add(body, Val(self.name("s"), v.dtype, v.shape, varies=True,
                                      random=v.random)) for v in initial]
        counter = None
        if stop == "counter":
            counter = self.add(body, Val(self.name("k"), I64, (), varies=True))
            start = self.const(scope, np.array(0, np.int64))
        if walk is not None and bound is not None and walk[0].shape[walk[1]] >= bound and \
                (mapping or self.yes(2, 3)):
            self.walk_row(body, it, walk)
        if not mapping and self.yes(1, 3):  # the incoming condition as a value
            self.tags.add("cond-as-value")
            x = self.numeric(body)
            if x is not None and self.opset >= 9 and self.yes(1, 2):
                y = self.partner(body, x)
                self.emit1(body, "Where", [cond_in, x, y], x.dtype,
                           _broadcast(cond_in.shape, x.shape, y.shape) or x.shape)
            else:
                self.emit1(body, "Cast", [cond_in], F32, cond_in.shape, to=T.FLOAT)
        mapped = None
        if mapping:  # elementwise work on the row, as a map's body does
            self.ops(body, self.count(1, 3), self.ELEMENTWISE)
            mapped = body.values[-1]
        else:
            self.body_ops(body)
        cond_out = self.stop_condition(body, stop, it, cond_in, counter, k_stop)
        if cond_out.shape != cond_shape:  # the shape the Loop's condition has
            cond_out = self.emit1(body, "Reshape", [cond_out, self.const(body, np.array(
                cond_shape, np.int64))], BOOL, cond_shape)
        outs_carried, modes = [], []
        for own, init in zip(carried, initial):
            out, mode = self.loop_output(body, init.dtype, init.shape, own, carried)
            outs_carried.append(out)
            modes.append(mode)
        n_scan = self.count(0 if initial else 1, 2)
        # No empty scan output: onnxruntime dies of SIGFPE on some (docs/differential.md).
        scans = [self.choose(body, lambda v: 0 < v.size <= 64) or it for _ in range(n_scan)]
        if mapped is not None and mapped.size:  # what the map computes from the row
            scans = [mapped, *scans[1:]]
            n_scan = len(scans)
        if counter is not None:
            initial.append(start)
            carried.append(counter)
            outs_carried.append(self.counter_next)
        body_outs = self.produced(body, [cond_out, *outs_carried, *scans], len(scans),
                                  [it, cond_in, *carried])
        # onnxruntime refuses a body whose iteration number or condition has no shape.
        inputs = [self.value_info(it), self.value_info(cond_in)]
        inputs += [self.value_info(v, self.yes(2, 3)) for v in carried]
        outputs = [self.output_info(v) for v in body_outs]
        graph = h.make_graph(body.nodes, self.name("loop_body"), inputs, outputs,
                             initializer=body.initializers)
        names = [self.name() for _ in range(len(outs_carried) + n_scan)]
        scope.nodes.append(h.make_node("Loop", [m_name, cond_name] + [v.name for v in initial],
                                       names, name=self.name("loop"), body=graph))
        random = self.body_is_random(body)
        results: list[Val] = []
        for name, init, out in zip(names, initial, outs_carried):
            results.append(Val(name, init.dtype, init.shape, random=random or init.random,
                               varies=scope.in_loop, draws=out.draws))
        for name, v in zip(names[len(outs_carried):], scans):
            rows = -1 if count is None else count
            results.append(Val(name, v.dtype, (rows, *v.shape), random=random or v.random,
                               varies=scope.in_loop, draws=v.draws and rows >= 2))
        if counter is not None:
            results.pop(len(outs_carried) - 1)
        for r in results:
            self.add(scope, r)
        text = (f"Loop[{m_text}, {c_text}, stop={stop}, carried={','.join(modes) or '-'}, "
                f"scans={n_scan}" + self.nested_text(body) + "]")
        return results, text

    def stop_condition(self, body: Scope, stop: str, it: Val, cond_in: Val,
                       counter: Val | None, k_stop: int) -> Val:
        """The body's condition output: the incoming one passed on, true, a stop after
        iteration ``k_stop`` (on the iteration number or on a carried counter, whose next
        value is ``self.counter_next``), or a computed one."""
        if stop == "pass":
            return cond_in if self.yes(1, 6) else self.emit1(body, "Identity", [cond_in], BOOL,
                                                              cond_in.shape)
        if stop == "true":
            return self.const(body, np.array(True))
        if stop == "early":
            return self.less(body, it, k_stop)
        if stop == "counter":
            assert counter is not None
            one = self.const(body, np.array(1, np.int64))
            self.counter_next = self.emit1(body, "Add", [counter, one], I64, ())
            return self.less(body, self.counter_next, k_stop + 1)
        other, _, _ = self.condition(body, "stop")
        if stop == "and":
            other = self.emit1(body, "And", [cond_in, other], BOOL,
                               _broadcast(cond_in.shape, other.shape) or ())
        return other

    def less(self, scope: Scope, x: Val, k: int, op: str = "Less") -> Val:
        """``x < k`` (or ``>``) for an int64 scalar ``x``; Less-7 and Greater-7 (opset 8)
        compare floats only."""
        if self.opset < 9:
            x = self.emit1(scope, "Cast", [x], F32, x.shape, to=T.FLOAT)
        bound = self.const(scope, np.array(k, x.dtype))
        return self.emit1(scope, op, [x, bound], BOOL, x.shape)

    def cond_known(self, scope: Scope, mode: str) -> tuple[Val, bool, str]:
        shape = self.pick(((), (1,)))
        value = self.yes(3, 4)
        if mode == "const":
            return self.const(scope, np.full(shape, value)), value, f"cond={value}"
        v = self.new_input(scope, BOOL, shape, np.full(shape, value), prefix="c")
        return v, value, f"cond=input({value})"

    def walk_row(self, body: Scope, it: Val, walk: tuple[Val, int]) -> None:
        """Row ``i`` of the value the trip count is a dim of: Gather(X, i), or a Slice by
        the iteration number (the pattern the vectoriser and slice_inputs rewrite)."""
        x, axis = walk
        self.tags.add("walk")
        if self.opset >= 10 and self.yes(1, 3):
            start = self.axes_node(body, "Unsqueeze", it, [0], (1,), None)
            one = self.const(body, np.array([1], np.int64))
            end = self.emit1(body, "Add", [start, one], I64, (1,))
            axes = self.const(body, np.array([axis], np.int64))
            shape = tuple(1 if i == axis else d for i, d in enumerate(x.shape))
            self.emit1(body, "Slice", [x, start, end, axes], x.dtype, shape)
            return
        shape = tuple(d for i, d in enumerate(x.shape) if i != axis)
        self.emit1(body, "Gather", [x, it], x.dtype, shape, axis=axis)

    def body_is_random(self, body: Scope) -> bool:
        return any(v.random for v in body.values)

    def nested_text(self, body: Scope) -> str:
        inner = [n for n in body.nodes if n.op_type in ("Loop", "Scan", "If")]
        return f", nested={'+'.join(n.op_type for n in inner)}" if inner else ""

    def scan(self, scope: Scope) -> tuple[list[Val], str]:
        length = self.pick((3, 2, 1, 4, 5))
        n_in = self.count(1, 2)
        scanned: list[tuple[Val, int]] = []
        for _ in range(n_in):
            # The same value given twice breaks OpenVINO's ONNX frontend (docs/
            # differential.md), which then cannot arbitrate: now and then.
            again = self.yes(1, 8)
            x = self.choose(scope, lambda v, again=again: length in v.shape and v.size <= 64
                            and (again or not any(v is u for u, _ in scanned)))
            if x is None or self.yes(1, 4):
                shape = list(self.random_shape(self.pick((1, 2))))
                shape.insert(self.below(len(shape) + 1), length)
                dtype = self.pick((F32, I64, F64))
                x = self.new_input(scope, dtype, tuple(shape)) if self.yes(1, 2) else \
                    self.const(scope, self.data(dtype, tuple(shape)))
            axes = [i for i, d in enumerate(x.shape) if d == length]
            scanned.append((x, self.pick(axes)))
        states = self.carried_initials(scope, self.count(0, 2), [x for x, _ in scanned])
        body = self.body_scope(scope, "scan")
        body.node_inputs = states + [x for x, _ in scanned]
        state_in = [self.add(body, Val(self.name("s"), v.dtype, v.shape, varies=True,
                                       random=v.random)) for v in states]
        slices = [self.add(body, Val(self.name("row"), x.dtype,
                                     tuple(d for i, d in enumerate(x.shape) if i != axis),
                                     random=x.random, varies=True, alias=True))
                  for x, axis in scanned]
        self.body_ops(body)
        outs_state = [self.loop_output(body, v.dtype, v.shape, own, state_in)[0]
                      for v, own in zip(states, state_in)]
        n_out = self.count(0 if states else 1, 2)
        scans = [self.choose(body, lambda v: 0 < v.size <= 64) or slices[0]
                 for _ in range(n_out)]
        attrs: dict[str, object] = {"num_scan_inputs": n_in}
        in_axes = [axis for _, axis in scanned]
        if any(in_axes) or self.yes(1, 3):
            attrs["scan_input_axes"] = [a - len(x.shape) if self.opset >= 11 and self.yes(1, 3)
                                        else a for (x, _), a in zip(scanned, in_axes)]
        if self.yes(1, 2):
            attrs["scan_input_directions"] = [self.below(2) for _ in scanned]
        out_axes = [self.below(len(v.shape) + 1) for v in scans]
        if scans and (any(out_axes) or self.yes(1, 3)):
            attrs["scan_output_axes"] = [a - len(v.shape) - 1 if self.opset >= 11
                                         and self.yes(1, 3) else a
                                         for v, a in zip(scans, out_axes)]
        if scans and self.yes(1, 2):
            attrs["scan_output_directions"] = [self.below(2) for _ in scans]
        # A state passed straight to a body output needs a shape for onnxruntime.
        inputs = [self.value_info(v) for v in state_in]
        inputs += [self.value_info(v, self.yes(2, 3)) for v in slices]
        # onnxruntime refuses a Scan body output without a shape.
        outputs = [self.value_info(v) for v in self.produced(
            body, outs_state + scans, len(scans), state_in + slices, scan=True)]
        graph = h.make_graph(body.nodes, self.name("scan_body"), inputs, outputs,
                             initializer=body.initializers)
        names = [self.name() for _ in range(len(states) + n_out)]
        scope.nodes.append(h.make_node("Scan", [v.name for v in states] +
                                       [x.name for x, _ in scanned], names,
                                       name=self.name("scan"), body=graph, **attrs))
        random = self.body_is_random(body)
        results = [self.add(scope, Val(n, v.dtype, v.shape, random=random or v.random,
                                       varies=scope.in_loop))
                   for n, v in zip(names, states)]
        for n, v, axis in zip(names[len(states):], scans, out_axes):
            shape = (*v.shape[:axis], length, *v.shape[axis:])
            results.append(self.add(scope, Val(n, v.dtype, shape, random=random or v.random,
                                               varies=scope.in_loop,
                                               draws=v.draws and axis == 0 and length >= 2)))
        text = (f"Scan[{length} steps, {n_in} in (axes {in_axes}), {len(states)} states, "
                f"{n_out} out (axes {out_axes})" + self.nested_text(body) + "]")
        return results, text

    def scan8(self, scope: Scope) -> tuple[list[Val], str]:
        """Scan-8: inputs and outputs with a leading batch axis; sequence_lens."""
        batch = self.pick((2, 1, 3))
        length = self.pick((3, 2, 1, 4))
        n_in = self.count(1, 2)
        scanned = []
        for _ in range(n_in):
            shape = (batch, length, *self.random_shape(self.pick((0, 1))))
            dtype = self.pick((F32, F64))
            scanned.append(self.new_input(scope, dtype, shape) if self.yes(1, 2)
                           else self.const(scope, self.data(dtype, shape)))
        states = [self.const(scope, self.data(self.pick((F32, I64)),
                                              (batch, *self.random_shape(self.pick((0, 1))))))
                  for _ in range(self.count(0, 2))]
        body = self.body_scope(scope, "scan")
        body.node_inputs = states + scanned
        state_in = [self.add(body, Val(self.name("s"), v.dtype, v.shape[1:], varies=True))
                    for v in states]
        slices = [self.add(body, Val(self.name("row"), x.dtype, x.shape[2:], varies=True,
                                     alias=True)) for x in scanned]
        self.body_ops(body)
        outs_state = [self.loop_output(body, v.dtype, v.shape[1:], own, state_in)[0]
                      for v, own in zip(states, state_in)]
        n_out = self.count(0 if states else 1, 2)
        scans = [self.choose(body, lambda v: 0 < v.size <= 64 and v in body.values)
                 or slices[0] for _ in range(n_out)]
        lens = ""
        if self.yes(1, 2):
            full = self.yes(4, 5)
            if not full:
                self.tags.add("scan8-short-sequence")  # irtool refuses it (documented)
            lens = self.const(scope, np.full((batch,), length if full else max(length - 1, 0),
                                             np.int64)).name
        attrs: dict[str, object] = {"num_scan_inputs": n_in}
        if self.yes(1, 2):
            attrs["directions"] = [self.below(2) for _ in scanned]
        # A state passed straight to a body output needs a shape for onnxruntime.
        inputs = [self.value_info(v) for v in state_in]
        inputs += [self.value_info(v, self.yes(2, 3)) for v in slices]
        # onnxruntime refuses a Scan body output without a shape.
        outputs = [self.value_info(v) for v in self.produced(
            body, outs_state + scans, len(scans), state_in + slices, scan=True)]
        graph = h.make_graph(body.nodes, self.name("scan_body"), inputs, outputs,
                             initializer=body.initializers)
        names = [self.name() for _ in range(len(states) + n_out)]
        scope.nodes.append(h.make_node("Scan", [lens] + [v.name for v in states + scanned],
                                       names, name=self.name("scan"), body=graph, **attrs))
        random = self.body_is_random(body)
        results = [self.add(scope, Val(n, v.dtype, v.shape, random=random,
                                       varies=scope.in_loop))
                   for n, v in zip(names, states)]
        results += [self.add(scope, Val(n, v.dtype, (batch, length, *v.shape),
                                        random=random or v.random, varies=scope.in_loop))
                    for n, v in zip(names[len(states):], scans)]
        text = (f"Scan-8[batch {batch}, {length} steps, {n_in} in, {len(states)} states, "
                f"{n_out} out" + self.nested_text(body) + "]")
        return results, text

    def flattened(self, scope: Scope, v: Val) -> Val:
        """A ragged If's output as the rest of the model sees it: reshaped to one dim. ONNX's
        inference keeps either branch's rank for the output itself, which may contradict
        what the run gives, and then a declaration or an op's inference downstream (seeds
        114 and 122 of the long run); a Reshape to [-1] has rank 1 whatever it infers. (No
        choice made here: the Val's shape is all that changes.)"""
        minus_one, out = self.name("v"), self.name()
        scope.nodes.append(h.make_node("Constant", [], [minus_one],
                                       value=numpy_helper.from_array(np.array([-1], np.int64))))
        scope.nodes.append(h.make_node("Reshape", [v.name, minus_one], [out]))
        return replace(v, name=out, shape=(v.size,) if v.sized else (-1,))

    def if_(self, scope: Scope) -> tuple[list[Val], str]:
        cond, known, c_text = self.condition(scope, "cond")
        # Branches of different shapes (If-11 on) need a condition the generator knows.
        invariant = known is not None and not cond.varies and self.opset >= 11
        then, other = self.body_scope(scope, "then"), self.body_scope(scope, "else")
        self.body_ops(then)
        n_out = self.count(1, 3)
        then_outs = [self.choose(then, lambda v: v.size <= 256) or self.like(then, F32, (2,))
                     for _ in range(n_out)]
        self.body_ops(other)
        else_outs = []
        ragged = False
        for v in then_outs:
            if invariant and self.yes(1, 4):
                w = self.choose(other, lambda u, v=v: u.dtype == v.dtype and u.shape != v.shape)
                if w is not None:
                    ragged = True
                    else_outs.append(w)
                    continue
            else_outs.append(self.like(other, v.dtype, v.shape))
        if ragged:
            self.tags.add("ragged-if")
        then_outs = self.produced(then, then_outs)
        else_outs = self.produced(other, else_outs)
        # ONNX's inference refuses branch outputs declared of different ranks: a ragged output
        # is declared without a shape.
        def info(v: Val, w: Val) -> onnx.ValueInfoProto:
            return self.output_info(v) if v.shape == w.shape else \
                h.make_tensor_value_info(v.name, _ONNX[v.dtype], None)

        then_graph = h.make_graph(then.nodes, self.name("then"), [],
                                  [info(t, e) for t, e in zip(then_outs, else_outs)],
                                  initializer=then.initializers)
        else_graph = h.make_graph(other.nodes, self.name("else"), [],
                                  [info(e, t) for t, e in zip(then_outs, else_outs)],
                                  initializer=other.initializers)
        names = [self.name() for _ in range(n_out)]
        scope.nodes.append(h.make_node("If", [cond.name], names, name=self.name("if"),
                                       then_branch=then_graph, else_branch=else_graph))
        random = self.body_is_random(then) or self.body_is_random(other)
        results = []
        for name, t, e in zip(names, then_outs, else_outs):
            taken = t if known is not False else e
            result = Val(name, t.dtype, taken.shape, random=random or t.random or e.random,
                         varies=scope.in_loop or cond.varies, draws=t.draws and e.draws)
            results.append(self.add(scope, result if t.shape == e.shape else
                                    self.flattened(scope, result)))
        text = f"If[{c_text}, {n_out} out" + ("" if not ragged else ", ragged")
        text += self.nested_text(then) + self.nested_text(other) + "]"
        return results, text


def _slice_rows(dim: int, start: int, end: int, step: int) -> np.ndarray:
    """The indices ONNX's Slice takes along an axis of ``dim`` (its clamping, which is not
    Python's for a negative step: a start before the axis is clamped to its first row)."""
    start += dim if start < 0 else 0
    end += dim if end < 0 else 0
    if step > 0:
        start, end = min(max(start, 0), dim), min(max(end, 0), dim)
    else:
        start, end = min(max(start, 0), dim - 1), min(max(end, -1), dim - 1)
    return np.arange(start, end, step, dtype=np.int64)


def _prime_factors(n: int) -> list[int]:
    out, p = [], 2
    while n > 1 and p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    if n > 1:
        out.append(n)
    return out


def _cast_known(value: np.ndarray, to: np.dtype) -> np.ndarray | None:
    """``value`` cast as onnxruntime casts it, where that is well defined: integers wrap,
    float16 rounds, anything nonzero is true; None for a float out of the target's range
    (C++ leaves that undefined)."""
    to = np.dtype(to)
    if value.dtype.kind == "f" and to.kind in "iu":
        info = np.iinfo(to)
        wide = value.astype(np.float64)
        if not np.all((wide >= info.min) & (wide <= info.max)):
            return None
        return np.trunc(wide).astype(to)
    with np.errstate(over="ignore"):
        return value.astype(to)
