"""The code-generation toolkit: Python source for a plan's steps, built and compiled.

``Code`` collects generated lines (each tagged with the step it runs, for error messages)
and the free names they use, and compiles them into a function registered with
``linecache``. ``emit_steps`` writes the lines running a sequence of steps: consecutive
inlined steps (``fastpath.inline_for``) share one guard (``_Chain``), and in that fast
branch an elementwise step may write into the buffer of a dead input (``Reuse``).
``straight`` makes a plan's ``execute`` from them, ``loops`` a loop body's iterations.
"""

from __future__ import annotations

import builtins
import itertools
import linecache
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ...ir.graph import Layer
from ...opset import Kernel
from ..declared import Verifier
from ..fastpath import Inline


class StepLike(Protocol):
    """What the generated code reads of a plan's ``Step`` (``runtime.plan``)."""

    @property
    def layer(self) -> Layer: ...

    @property
    def kernel(self) -> Kernel: ...

    @property
    def inputs(self) -> tuple[int, ...]: ...

    @property
    def outputs(self) -> tuple[int, ...]: ...

    @property
    def inlined(self) -> Inline | None: ...


class Code:
    """Generated source under construction: lines, the step each line runs (for error
    messages) and the free variables (kernels, constants, functions) it refers to.

    Built code is registered with ``linecache`` under a name of its own
    (``<plan 3/body #12>``), so tracebacks and debuggers show its lines, each with a
    comment naming the layer it runs; the entry goes when the function does."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, int | None]] = []
        self.free: dict[str, object] = {}

    def add(self, line: str, step: int | None = None) -> None:
        self.lines.append((line, step))

    def indented(self, depth: int) -> list[tuple[str, int | None]]:
        return [("    " * depth + line, step) for line, step in self.lines]

    def build(self, what: str, args: str, body: list,
              comment: Callable[[int], str]) -> Callable:
        """Compile ``def run(<args>): <body>`` (``body`` mixes plain lines and the
        ``(line, step)`` pairs of ``indented``) over the names in ``free``; ``what`` names
        the code in tracebacks, ``comment(step)`` the layer of a step's lines. Inside,
        the name ``step_at(err)`` gives the step whose line raised ``err`` (-1: none).

        The free names are the globals of ``run`` (a namespace of its own), not parameters
        of an enclosing function: binding N keyword arguments costs O(N^2) in CPython, which
        made plans of thousands of steps slow to build."""
        source, steps = [f"def run({args}):"], {}
        for item in body:
            line, step = item if isinstance(item, tuple) else (item, None)
            if step is None:
                source.append("    " + line)
                continue
            source.append(f"    {line}  # {comment(step)}")
            steps[len(source)] = step

        def step_at(err: BaseException) -> int:
            tb = err.__traceback__
            return steps.get(tb.tb_lineno, -1) if tb is not None else -1

        namespace: dict[str, object] = {**self.free, "step_at": step_at,
                                        "__builtins__": builtins}
        text = "\n".join(source)
        filename = f"<{what} #{next(_BUILT)}>"
        exec(compile(text, filename, "exec"), namespace)
        run = namespace["run"]
        run.source = text  # type: ignore[attr-defined]  # for tests and debugging
        # mtime None: linecache.checkcache keeps the entry (there is no file to check).
        linecache.cache[filename] = (len(text), None, [ln + "\n" for ln in source], filename)
        weakref.finalize(run, linecache.cache.pop, filename, None)
        return run  # type: ignore[return-value]


_BUILT = itertools.count(1)  # numbers the generated functions: each its own linecache entry


def emit_verify(code: Code, verify: Verifier, name: Callable[[int], str],
                indent: str = "") -> None:
    """Lines passing the values ``verify`` checks to it, in calls of at most 256."""
    if not verify.checks:
        return
    code.free["verify"] = verify
    slots = verify.slots
    for start in range(0, len(slots), 256):
        names = "".join(f"{name(s)}, " for s in slots[start:start + 256])
        code.add(f"{indent}verify(({names}), {start})")


def emit_steps(code: Code, steps: Sequence[tuple[int, StepLike]], name: Callable[[int], str],
               reuse: Reuse | None = None) -> None:
    """Add the lines running ``steps`` (``(index, step)`` pairs, in order) to ``code``.

    Consecutive inlined steps form a chain checked once: the guard of the first step
    and the facts each guarded call establishes about its result (an ndarray of a known
    dtype and a minimum rank) imply the guards of the next ones, so the chain's fast
    branch is plain numpy calls, and its other branch runs each step on its own
    (``emit_step``). A step whose guard the facts do not imply starts a new chain.
    With ``reuse``, a fast-branch call may write into a dead input's buffer (see ``Reuse``).
    """
    chain = _Chain(name, reuse)
    for index, step in steps:
        if step.inlined is not None and len(step.outputs) == 1 and chain.admit(index, step):
            continue
        chain.emit(code)
        chain = _Chain(name, reuse)
        if step.inlined is None or len(step.outputs) != 1 or not chain.admit(index, step):
            emit_step(code, index, step, name)
    chain.emit(code)


@dataclass(frozen=True)
class Reuse:
    """When an inlined step may write its result into an input's buffer (``out=``).

    Only in a chain's fast branch, and only into a value no one else can hold:

    * one made earlier in the same fast branch (each fast-branch call returns a new
      array, or the buffer of an input that is dead by then), or
    * one in ``fresh``, the output of a kernel that returns arrays of its own
      (``Op.fresh_outputs``), when all its readers are steps of this chain (whose
      fast-branch calls make new arrays, not views of it).

    So no graph input, constant, variable, view of those, or value of an earlier step
    can share it. On top of that the value must not be ``protected`` (the plan's
    outputs, and whatever the code around the steps reads: a loop's collected, carried
    and skipped values), and the step must be its last reader (``readers``: slot ->
    indices of the steps reading it, in order). The call then writes into it only when
    the buffer has the result's dtype and shape, which the generated code checks where
    the facts do not tell.
    """

    readers: Mapping[int, list[int]]
    protected: frozenset[int]
    constants: Mapping[int, np.ndarray]
    fresh: frozenset[int] = frozenset()

    def last_read(self, slot: int) -> int | None:
        found = self.readers.get(slot)
        return found[-1] if found else None


def reuse_for(steps: Sequence[StepLike], protected: Iterable[int],
              constants: Mapping[int, np.ndarray]) -> Reuse:
    """The ``Reuse`` facts of a plan's ``steps``, never writing into ``protected``."""
    readers: dict[int, list[int]] = {}
    fresh: set[int] = set()
    for k, step in enumerate(steps):
        for slot in step.inputs:
            at = readers.setdefault(slot, [])
            if not at or at[-1] != k:
                at.append(k)
        if len(step.outputs) == 1 and step.inlined is None and _makes_its_outputs(step.kernel):
            fresh.add(step.outputs[0])
    return Reuse(readers, frozenset(protected), constants, frozenset(fresh))


def _makes_its_outputs(kernel: Kernel) -> bool:
    """Is ``kernel`` the ``compute`` of an op whose class defining it declares
    ``fresh_outputs``?"""
    op, func = getattr(kernel, "__self__", None), getattr(kernel, "__func__", None)
    if op is None or func is None:
        return False
    for cls in type(op).__mro__:
        if "compute" in cls.__dict__:
            return cls.__dict__["compute"] is func and cls.__dict__.get("fresh_outputs", False)
    return False


class _Chain:
    """Consecutive inlined steps with one guard on the values they take from outside."""

    def __init__(self, name: Callable[[int], str], reuse: Reuse | None = None) -> None:
        self.name = name
        self.reuse = reuse
        self.steps: list[tuple[int, StepLike]] = []
        self.facts: dict[str, tuple[np.dtype, int]] = {}  # made inside: dtype, min rank
        self.dtypes: dict[str, np.dtype] = {}  # taken from outside: the dtype tested
        self.ranks: dict[tuple[str, ...], int] = {}  # outside values: least sum of ranks

    def _rank(self, arg: str) -> int:
        """The least rank ``arg`` is known to have inside the chain."""
        if arg in self.facts:
            return self.facts[arg][1]
        return self.ranks.get((arg,), 0)

    def admit(self, index: int, step: StepLike) -> bool:
        """Add ``step`` if its guard follows from the chain's guard and facts."""
        inline = step.inlined
        assert inline is not None
        args = [self.name(i) for i in step.inputs]
        dtypes = dict(self.dtypes)
        for k in inline.guarded:
            known = self.facts.get(args[k])
            if known is not None:
                if known[0] != inline.dtype:
                    return False
            elif dtypes.setdefault(args[k], inline.dtype) != inline.dtype:
                return False
        ranks = dict(self.ranks)
        if inline.ndim_inputs:
            names = [args[k] for k in inline.ndim_inputs]
            inside = sum(self._rank(n) for n in names if n in self.facts)
            outside = tuple(sorted({n for n in names if n not in self.facts}))
            need = inline.min_ndim - inside
            if need > sum(self._rank(n) for n in outside):
                if not outside:
                    return False  # only a test inside the chain could tell
                ranks[outside] = max(ranks.get(outside, 0), need)
        self.dtypes, self.ranks = dtypes, ranks
        if inline.matmul:
            rank = 1
        else:
            known = [self._rank(a) if k in inline.guarded else inline.const_ndims[k] or 0  # type: ignore[assignment]
                     for k, a in enumerate(args)]
            rank = max([*known, 1 if inline.ndim_inputs else 0])  # type: ignore[misc]
        self.facts[f"v{step.outputs[0]}"] = (inline.out_dtype, rank)
        self.steps.append((index, step))
        return True

    def emit(self, code: Code) -> None:
        if len(self.steps) < 2:
            for index, step in self.steps:
                emit_step(code, index, step, self.name)
            return
        code.free["ndarray"] = np.ndarray
        first = self.steps[0][0]
        tests = []
        for k, (arg, dtype) in enumerate(self.dtypes.items()):
            code.free[f"E{first}_{k}"] = dtype
            tests += [f"{arg}.__class__ is ndarray", f"{arg}.dtype is E{first}_{k}"]
        tests += [f"{' + '.join(f'{n}.ndim' for n in names)} >= {need}"
                  for names, need in self.ranks.items()]
        code.add(f"if {' and '.join(tests) or 'True'}:", first)
        for index, step in self.steps:
            inline = step.inlined
            assert inline is not None
            code.free[f"f{index}"] = inline.func
            code.add(f"    v{step.outputs[0]} = {self._call(code, index, step)}", index)
        code.add("else:", first)
        inner = Code()
        for index, step in self.steps:
            emit_step(inner, index, step, self.name)
        code.free.update(inner.free)
        for line, index in inner.lines:  # type: ignore[assignment]
            code.add("    " + line, index)


    def _call(self, code: Code, index: int, step: StepLike) -> str:
        """The fast-branch call of ``step``: into a dead input's buffer when ``Reuse``
        allows and, where the facts do not tell, the shapes show it holds the result."""
        inline = step.inlined
        assert inline is not None
        args = [self.name(i) for i in step.inputs]
        plain = f"f{index}({', '.join(args)})"
        reuse = self.reuse
        if reuse is None or not inline.writes_out:
            return plain
        for k, slot in enumerate(step.inputs):
            target = args[k]
            fact = self.facts.get(target)
            if fact is None and slot in reuse.fresh and target in self.dtypes \
                    and set(reuse.readers[slot]) <= {i for i, _ in self.steps}:
                fact = (self.dtypes[target], self._rank(target))
            if fact is None or fact[0] != inline.out_dtype or slot in reuse.protected \
                    or reuse.last_read(slot) != index:
                continue
            tests = []
            for j, other in enumerate(step.inputs):
                if other == slot:
                    continue
                const = reuse.constants.get(other)
                if const is not None:
                    # Broadcasting a constant of shape S into the target leaves its shape
                    # when the target has S's rank at least and S's non-1 dims at the end.
                    n = const.ndim
                    if n > fact[1]:
                        tests.append(f"{target}.ndim >= {n}")
                    tests += [f"{target}.shape[{d - n}] == {size}"
                              for d, size in enumerate(const.shape) if size != 1]
                else:
                    code.free["fits"] = fits  # a call: only when the shapes differ
                    o = args[j]
                    tests.append(f"({target}.shape == {o}.shape or fits({target}, {o}))")
            # The buffer as the argument after the inputs (ufuncs take ``out`` there):
            # a keyword costs more than the allocation it saves on small arrays. numpy
            # deprecates that for maximum and minimum, which keep the keyword.
            out = f"out={target}" if inline.func in _KEYWORD_OUT else target
            into = f"f{index}({', '.join(args)}, {out})"
            return f"{into} if {' and '.join(tests)} else {plain}" if tests else into
        return plain


_KEYWORD_OUT = (np.maximum, np.minimum)
"""Functions that take their output buffer only as ``out=``."""


def fits(target: np.ndarray, other: np.ndarray) -> bool:
    """Does broadcasting ``other`` against ``target`` give ``target``'s shape?"""
    n = other.ndim
    if n > target.ndim:
        return False
    tail = target.shape[target.ndim - n:]
    return tail == other.shape or all(b == 1 or a == b for a, b in zip(tail, other.shape))


def emit_step(code: Code, index: int, step: StepLike, name: Callable[[int], str],
              outputs: Sequence[str] | None = None) -> None:
    """Add the lines running ``step`` (number ``index``) to ``code``: a kernel call, or
    for an inlined step a guarded direct call with the kernel call as the other branch.
    ``outputs`` overrides the names the step's results are stored in."""
    outs = list(outputs) if outputs is not None else [f"v{slot}" for slot in step.outputs]
    args = [name(i) for i in step.inputs]
    code.free[f"k{index}"] = step.kernel
    call = f"k{index}([{', '.join(args)}])"
    inline = step.inlined
    if inline is not None and len(outs) == 1:
        code.free[f"f{index}"] = inline.func
        code.free[f"D{index}"] = inline.dtype
        code.free["ndarray"] = np.ndarray
        tests = []
        for k in inline.guarded:
            tests += [f"{args[k]}.__class__ is ndarray", f"{args[k]}.dtype is D{index}"]
        if inline.ndim_inputs:
            ndims = " + ".join(f"{args[k]}.ndim" for k in inline.ndim_inputs)
            tests.append(f"{ndims} >= {inline.min_ndim}")
        code.add(f"if {' and '.join(tests)}:", index)
        code.add(f"    {outs[0]} = f{index}({', '.join(args)})", index)
        code.add("else:", index)
        code.add(f"    {outs[0]} = {call}[0]", index)
    elif len(outs) == 1:
        code.add(f"{outs[0]} = {call}[0]", index)
    elif outs:
        code.add(f"{', '.join(outs)}, *_ = {call}", index)
    else:
        code.add(call, index)
