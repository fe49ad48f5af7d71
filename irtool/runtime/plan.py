"""Compile a ``Graph`` once into a ``Plan``; run the plan many times.

Compilation does all the graph work: networkx topological order, one value
slot per produced tensor, constants materialised, ops instantiated, and the
steps turned into generated straight-line Python (``Plan.execute``): one line
per step, values in local variables, plain numpy calls where an op says it is
one (``Op.numpy_call``). Running a plan is a call of that function, nothing
else, which is what makes per-iteration execution of loop bodies cheap (loop
bodies go one step further, see ``loopgen``).
"""

from __future__ import annotations

import builtins
import itertools
import linecache
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..bulk import paused_gc
from ..errors import ExecutionError, IRToolError
from ..ir.graph import Graph, Layer, tensor_name
from ..opset import Kernel, make_op
from .declared import Verifier, mismatch, port_dims, port_dtype
from .decompression import exact_source, fold
from .fastpath import Inline, inline_for, specialise
from .fusion import pool_first


@dataclass
class Step:
    """One layer to execute: its kernel and where its inputs and outputs live."""

    layer: Layer
    kernel: Kernel
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    inline: Inline | None = None  # see fastpath.inline_for; used while ``kernel`` is unchanged

    @property
    def inlined(self) -> Inline | None:
        """The inline form the generated code uses, if any."""
        inline = self.inline
        return inline if inline is not None and inline.kernel is self.kernel else None


@dataclass
class Plan:
    """A compiled graph: slots, steps, and which slots are inputs and outputs.

    ``input_slots[i]`` receives the value of ``parameters[i]``; ``output_slots[j]``
    holds the value reaching ``results[j]``.
    """

    num_slots: int
    steps: list[Step]
    constants: dict[int, np.ndarray]
    parameters: list[Layer]
    results: list[Layer]
    input_slots: list[int]
    output_slots: list[int]
    input_names: list[str] = field(default_factory=list)
    output_names: list[str] = field(default_factory=list)
    scope: str = ""
    check_declared: bool = False  # see RunOptions
    optimize: bool = True  # see RunOptions: in-place writes in the generated code

    def __post_init__(self) -> None:
        self.refresh()

    def refresh(self) -> None:
        """Regenerate ``execute``; needed after changing ``steps``."""
        # The generated function replaces the method on the instance: loop bodies call
        # ``execute`` once per iteration, so even one wrapper call is worth saving.
        self.verify = Verifier([(s.layer, s.outputs) for s in self.steps]
                               if self.check_declared else [], self.scope, describe_layer)
        if len(self.steps) > GENERATED_STEPS_LIMIT:
            self.execute = _interpreted(self)  # type: ignore[method-assign]
        else:
            self.execute = _generate(self)  # type: ignore[method-assign]

    def execute(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Run the plan on one value per Parameter (in ``parameters`` order).

        A kernel failure becomes an ``ExecutionError`` naming the layer. (Replaced per
        instance by the generated code; this body is never reached.)
        """
        raise NotImplementedError  # pragma: no cover - see refresh()

    def _failure(self, index: int, inputs: Sequence[np.ndarray], err: Exception) -> IRToolError:
        """The error to raise when step ``index`` (-1: binding the inputs) failed."""
        if index < 0:
            return ExecutionError(f"the plan takes {len(self.input_slots)} inputs, got "
                                  f"{len(inputs)}", layer=self.scope or None)
        return ExecutionError(f"{type(err).__name__}: {err}",
                              layer=describe_layer(self.steps[index].layer, self.scope))


def _generate(plan: Plan) -> Callable[[Sequence[np.ndarray]], list[np.ndarray]]:
    """Straight-line Python for ``plan``: one line per step, values in local variables.

    This is the "no per-step cost" part of compile-once-run-many: no loop over
    steps, no slot list, no tuple unpacking; kernels and constants are closure
    variables, and inlined steps (``fastpath.inline_for``) are direct numpy calls.
    The code holds only generated identifiers and integers; names from the IR appear
    only in the comment naming each line's layer (escaped to stay on its line). A
    failure is traced to its step by the line it happened on, so running the plan
    does no bookkeeping for error messages.
    """
    code = Code()
    for slot, value in plan.constants.items():
        code.free[f"c{slot}"] = value
    if plan.input_slots:
        code.add(f"{', '.join(f'v{s}' for s in plan.input_slots)}, = inputs", -1)
    else:
        code.add("if len(inputs): raise ValueError", -1)
    emit_steps(code, list(enumerate(plan.steps)), lambda slot: value_name(plan, slot),
               reuse_for(plan.steps, plan.output_slots, plan.constants) if plan.optimize
               else None)
    emit_verify(code, plan.verify, lambda slot: value_name(plan, slot))
    outputs = ", ".join(value_name(plan, i) for i in plan.output_slots)
    code.free["IRToolError"] = IRToolError
    code.free["failure"] = plan._failure
    return code.build(f"plan {plan.scope or 'top'}", "inputs", [
        "try:",
        *code.indented(1),
        "except IRToolError:",
        "    raise",
        "except Exception as err:",
        "    raise failure(step_at(err), inputs, err) from err",
        f"return [{outputs}]",
    ], lambda index: step_comment(plan, index))


GENERATED_STEPS_LIMIT = 20_000
"""Plans of more steps run in a loop over their steps instead of generated code: Python
compiles a function of N lines in about 30 microseconds a line, which only many runs
would pay back (and its memory grows with N)."""


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


def _interpreted(plan: Plan) -> Callable[[Sequence[np.ndarray]], list[np.ndarray]]:
    """``execute`` for a very large plan: a loop over its steps, each value dropped after
    its last use; errors name the layer as the generated code's do."""
    last_use: dict[int, int] = {}
    for k, step in enumerate(plan.steps):
        for slot in step.inputs:
            last_use[slot] = k
    keep = set(plan.output_slots)
    drops: list[list[int]] = [[] for _ in plan.steps]
    for slot, k in last_use.items():
        if slot not in keep and slot not in plan.constants:
            drops[k].append(slot)
    program = [(step.kernel, step.inputs, step.outputs, drop)
               for step, drop in zip(plan.steps, drops)]
    checked = {slot: i for i, slot in enumerate(plan.verify.slots)}
    verify = plan.verify
    base: list = [None] * plan.num_slots
    for slot, value in plan.constants.items():
        base[slot] = value

    def execute(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        if len(inputs) != len(plan.input_slots):
            raise plan._failure(-1, inputs, ValueError())
        values = list(base)
        for slot, value in zip(plan.input_slots, inputs):
            values[slot] = value
        for k, (kernel, ins, outs, drop) in enumerate(program):
            try:
                results = kernel([values[i] for i in ins])
            except IRToolError:
                raise
            except Exception as err:
                raise plan._failure(k, inputs, err) from err
            for slot, value in zip(outs, results):
                values[slot] = value
                if slot in checked:
                    verify((value,), checked[slot])
            for slot in drop:
                values[slot] = None
        return [values[i] for i in plan.output_slots]

    return execute


def step_comment(plan: Plan, index: int) -> str:
    """What the comment on a generated line says: the layer of step ``index`` (-1: the
    plan's inputs), escaped so that no name from the IR can end the comment's line."""
    if index < 0:
        return f"the inputs of {plan.scope or 'the graph'}"
    text = describe_layer(plan.steps[index].layer, plan.scope)
    return text.encode("unicode_escape").decode("ascii")


def value_name(plan: Plan, slot: int) -> str:
    """The generated identifier holding ``slot``: ``c<slot>`` (constant) or ``v<slot>``."""
    return f"c{slot}" if slot in plan.constants else f"v{slot}"


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

    def build(self, what: str, args: str, body: list,  # type: ignore[type-arg]
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
        run.source = text  # for tests and debugging
        # mtime None: linecache.checkcache keeps the entry (there is no file to check).
        linecache.cache[filename] = (len(text), None, [ln + "\n" for ln in source], filename)
        weakref.finalize(run, linecache.cache.pop, filename, None)
        return run  # type: ignore[no-any-return]


_BUILT = itertools.count(1)  # numbers the generated functions: each its own linecache entry


def emit_steps(code: Code, steps: Sequence[tuple[int, Step]], name: Callable[[int], str],
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


def reuse_for(steps: Sequence[Step], protected: Iterable[int],
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
        self.steps: list[tuple[int, Step]] = []
        self.facts: dict[str, tuple[np.dtype, int]] = {}  # made inside: dtype, min rank
        self.dtypes: dict[str, np.dtype] = {}  # taken from outside: the dtype tested
        self.ranks: dict[tuple[str, ...], int] = {}  # outside values: least sum of ranks

    def _rank(self, arg: str) -> int:
        """The least rank ``arg`` is known to have inside the chain."""
        if arg in self.facts:
            return self.facts[arg][1]
        return self.ranks.get((arg,), 0)

    def admit(self, index: int, step: Step) -> bool:
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
            known = [self._rank(a) if k in inline.guarded else inline.const_ndims[k] or 0
                     for k, a in enumerate(args)]
            rank = max([*known, 1 if inline.ndim_inputs else 0])
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
        for line, index in inner.lines:
            code.add("    " + line, index)


    def _call(self, code: Code, index: int, step: Step) -> str:
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


def emit_step(code: Code, index: int, step: Step, name: Callable[[int], str],
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


def layer_path(layer: Layer, scope: str) -> str:
    """``<scope>/<id>``: where a layer sits, bodies included (``"3/body/7"``)."""
    return f"{scope}/{layer.id}" if scope else str(layer.id)


def describe_layer(layer: Layer, scope: str) -> str:
    """How errors name a layer: path, name and ``type-version``."""
    return f'{layer_path(layer, scope)} "{layer.name}" ({layer.type}-{layer.version})'


@dataclass(frozen=True)
class RunOptions:
    """Settings that reach every (nested) plan: ``max_iterations`` caps each loop;
    ``check_declared`` checks computed values against their ports (``declared``; the
    ``Executor`` turns it on, a bare ``compile_graph`` leaves it off); ``variables`` is
    the store the plan's ReadValue/Assign kernels share (``state.Variables``; without
    one, each such layer gets a store of its own, which makes every run stateless);
    ``vectorize`` runs loops whose iterations are independent as one batched computation
    (``irtool.passes.vectorize``) when their inputs at run time allow it.

    ``optimize=False`` turns off every rewrite that only makes a run faster, so that a
    user who doubts a result can rule them out: steps on constants are not computed at
    compile time (``_constant_step``), no step moves past a MaxPool (``fusion``), no
    kernel is specialised on its constant inputs nor called inline as a numpy call
    (``fastpath``), no step writes into an input's buffer (``Reuse``), loops are not
    batched (``vectorize`` off too) and their generated code keeps every body step
    (``loopgen``: no stacking of outputs, no counter Gathers, no pre-squeezed slices).
    What stays is semantics: the weight decompression chains are still computed in f32 at
    compile time, as OpenVINO's CPU plugin computes them (``decompression``), and loop
    bodies still run as generated Python. ``applied`` counts what each rewrite did while
    the plan (and its nested plans) compiled, by name."""

    max_iterations: int | None = None
    check_declared: bool = False
    variables: object = None  # the plan's ``state.Variables`` (ReadValue/Assign kernels)
    vectorize: bool = True
    optimize: bool = True
    applied: Counter[str] = field(default_factory=Counter, compare=False)


# Compilers for layers that are not plain kernels (Loop, TensorIterator, If; ReadValue and
# Assign, which share the plan's variables).
# Each takes the layer, its scope and the options and returns a kernel; registered by the
# control-flow module so this one stays free of loop semantics.
SubgraphCompiler = Callable[[Layer, str, RunOptions], Kernel]
CONTROL_FLOW: dict[str, SubgraphCompiler] = {}


def compile_graph(graph: Graph, scope: str = "", options: RunOptions | None = None) -> Plan:
    """Compile ``graph`` into a ``Plan``. Raises ``ExecutionError`` naming the layer
    for unknown ops, bad attributes, dangling inputs or a cycle. Time and memory are
    linear in the layers."""
    with paused_gc():
        return _compile(graph, scope, options or RunOptions())


def _compile(graph: Graph, scope: str, options: RunOptions) -> Plan:
    slot_of: dict[tuple[int, int], int] = {}
    steps: list[Step] = []
    constants: dict[int, np.ndarray] = {}
    # Exact f32 values of constants in weight decompression chains (see decompression), and
    # the slots that come out of such a chain.
    exact: dict[int, np.ndarray] = {}
    chained: set[int] = set()
    parameters = graph.parameters()
    results = graph.results()
    sources = graph.sources()
    read = set(sources.values())  # the (layer, port) outputs some input reads

    def new_slot(layer_id: int, port_id: int) -> int:
        slot = len(slot_of)
        slot_of[(layer_id, port_id)] = slot
        return slot

    def one_port(layer: Layer, ports: list) -> int:  # type: ignore[type-arg]
        if len(ports) != 1:
            raise ExecutionError(f"a {layer.type} needs exactly one port, not {len(ports)}",
                                 layer=describe_layer(layer, scope))
        return ports[0].id  # type: ignore[no-any-return]

    def input_slots(layer: Layer) -> tuple[int, ...]:
        slots = []
        for port in layer.inputs:
            src = sources.get((layer.id, port.id))
            if src is None or src not in slot_of:
                raise ExecutionError(f"input port {port.id} is not connected",
                                     layer=describe_layer(layer, scope))
            slots.append(slot_of[src])
        return tuple(slots)

    # Inline forms serve generated code only; a plan this large runs as a loop.
    generated = len(graph) <= GENERATED_STEPS_LIMIT
    try:
        order = graph.topological_order()
    except ValueError as err:
        raise ExecutionError(str(err), layer=scope or None) from None
    for layer_id in order:
        layer = graph.layer(layer_id)
        if layer.type == "Parameter":
            new_slot(layer.id, one_port(layer, layer.outputs))
            continue
        if layer.type == "Result":
            one_port(layer, layer.inputs)
            input_slots(layer)  # checks the connection
            continue
        if layer.type == "Const":
            try:
                value = layer.const_value()
            except (ValueError, KeyError) as err:
                raise ExecutionError(str(err), layer=describe_layer(layer, scope)) from None
            if value.__class__ is np.ndarray and not value.flags.aligned:
                # A view at an odd offset of a mapped .bin: numpy runs unaligned data
                # through slow buffered loops on every call, so align it once here.
                value = value.copy()
                value.flags.writeable = False
            slot = new_slot(layer.id, one_port(layer, layer.outputs))
            constants[slot] = value
            shadow = exact_source(layer, value)
            if shadow is not None:
                exact[slot] = shadow
            continue
        ins = input_slots(layer)
        outs = tuple(new_slot(layer.id, p.id) for p in layer.outputs)
        consts = [constants.get(slot) for slot in ins]
        if len(outs) == 1 and any(slot in exact for slot in ins):
            folded = _fold(layer, scope, consts, [exact.get(slot) for slot in ins],
                           [slot in chained for slot in ins])
            if folded is not None:
                constants[outs[0]], shadow = folded
                if shadow is not None:
                    exact[outs[0]] = shadow
                    chained.add(outs[0])
                continue
        if options.optimize and consts and len(outs) == 1 and \
                all(c is not None for c in consts):
            value = _constant_step(layer, consts)
            if value is not None:
                constants[outs[0]] = value
                options.applied["folded constant steps"] += 1
                continue
        unused = frozenset(i for i, p in enumerate(layer.outputs) if (layer.id, p.id) not in read)
        kernel, inline = _kernel(layer, scope, options, consts, generated, unused)
        steps.append(Step(layer, kernel, ins, outs, inline))

    input_slot_list = [slot_of[(p.id, p.outputs[0].id)] for p in parameters]
    output_slot_list = [input_slots(r)[0] for r in results]
    moved, fused = pool_first(steps, constants, output_slot_list) if options.optimize \
        else (set(), {})
    options.applied["fused pools"] += len(fused)
    for k, (slot, kernel) in fused.items():
        steps[k] = Step(steps[k].layer, kernel, (slot,), steps[k].outputs)
    steps = [step for k, step in enumerate(steps) if k not in moved]
    input_names = [tensor_name(p, p.outputs[0]) for p in parameters]
    output_names = []
    for r in results:
        src = sources.get((r.id, r.inputs[0].id))
        port = graph.layer(src[0]).port(src[1]) if src else None
        output_names.append(tensor_name(r, port))
    return Plan(len(slot_of), steps, constants, parameters, results, input_slot_list,
                output_slot_list, input_names, output_names, scope, options.check_declared,
                options.optimize)


FOLDED_BYTES = 1 << 20
"""Results up to this size (or up to the size of the step's inputs) of steps on constants
alone are computed once, when the plan is compiled (a bias Unsqueezed to [1, C, 1, 1], a
shape computed from constants), instead of on every run."""
def _constant_step(layer: Layer, consts: list[np.ndarray | None]) -> np.ndarray | None:
    """The value of ``layer`` on its constant inputs, computed now; None when it stays a
    step: a control-flow layer, an op whose value may change from call to call (``Op.pure``
    false: variables, random draws), a user's op, an op that fails (the step reports it at
    run time, naming the layer), a large result, or one unlike what its port declares (the
    run's check names the layer). The value is the op's own kernel's on the same inputs,
    under the same floating-point settings as a run: what the step would compute, integer
    wrap-around included."""
    if layer.type in CONTROL_FLOW:
        return None
    try:
        op = make_op(layer.type, layer.version, layer.attrs)
        if not op.pure or not type(op).__module__.startswith("irtool.opset."):
            return None  # a user's operation (--extension): it may mean to run each time
        with np.errstate(all="ignore"):
            (value,) = op.compute(list(consts))  # type: ignore[arg-type]
    except Exception:
        return None
    if value.__class__ is not np.ndarray:
        return None
    limit = max(FOLDED_BYTES, sum(c.nbytes for c in consts if isinstance(c, np.ndarray)))
    port = layer.outputs[0]
    if value.nbytes > limit or mismatch(value, port_dtype(port), port_dims(port)) is not None:
        return None
    value.flags.writeable = False  # a constant of the plan: no step may write into it
    return value


def _fold(layer: Layer, scope: str, consts: list[np.ndarray | None],
          exact: list[np.ndarray | None],
          chained: list[bool]) -> tuple[np.ndarray, np.ndarray | None] | None:
    """``decompression.fold`` for ``layer``; None (a normal step) when its op cannot be
    made or computing it fails: the step then reports that at run time, naming the layer."""
    try:
        op = make_op(layer.type, layer.version, layer.attrs)
        return fold(layer, op, consts, exact, chained)
    except (KeyError, ValueError, TypeError, IndexError, IRToolError):
        return None


def _kernel(layer: Layer, scope: str, options: RunOptions, consts: list[np.ndarray | None],
            inline: bool = True, unused: frozenset[int] = frozenset()
            ) -> tuple[Kernel, Inline | None]:
    compiler = CONTROL_FLOW.get(layer.type)
    if compiler is not None:
        return compiler(layer, scope, options), None
    try:
        op = make_op(layer.type, layer.version, layer.attrs)
    except KeyError:
        raise ExecutionError(f"operation {layer.type}-{layer.version} is not supported by the "
                             "irtool runtime", layer=describe_layer(layer, scope)) from None
    except ValueError as err:
        raise ExecutionError(str(err), layer=describe_layer(layer, scope)) from None
    if unused:
        op.unused_outputs = unused
    if not options.optimize:
        return op.compute, None
    kernel = specialise(layer.type, op, consts)
    if kernel != op.compute:
        options.applied["specialised kernels"] += 1
    inlined = inline_for(layer, op, consts, kernel) if inline else None
    if inlined is not None:
        options.applied["inlined numpy calls"] += 1
    return kernel, inlined
