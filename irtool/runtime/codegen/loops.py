"""Generated Python for the iterations of a Loop or TensorIterator.

A loop body is compiled into one generated function holding a ``for`` loop
whose body is the body plan's straight-line code (``toolkit.emit_step``): no call
of the body plan per iteration, no input or output lists, values in local
variables, back edges as plain assignments. On top of that, three compile-time
rewrites remove per-iteration work, each exact (the results are the same
objects' values, bit for bit, as running the body plan step by step):

* Stacking: a concatenated output whose body Result comes from
  ``Unsqueeze(v, axis)`` (used by nothing else) collects ``v`` and stacks the
  values once at the end (``np.stack`` along the same axis is the concatenation
  of the unsqueezed values); an ``Identity`` copy feeding only that Unsqueeze is
  skipped too, since stacking copies anyway. Whenever the stack cannot be
  shown equal at run time (axis out of range, shapes that differ), the
  Unsqueeze kernel runs on every collected value and the values are
  concatenated as before.
* Counter Gather: ``Gather(X, current_iteration, axis)`` of a loop-invariant X
  indexes X with the Python loop counter (``X[i]`` / ``X[..., i]``); without
  another use, the counter array is never built. The row is a view when only
  inlined numpy steps (which make new arrays) read it, else a copy as before.
* Sliced inputs: the parts are cut once per run (a list of views), not per
  iteration (see ``iteration.slice_parts``); a part only ``Squeeze``d in the body is
  cut squeezed.

With ``RunOptions.optimize`` off none of these is made (the parts are still cut once:
that is how slicing is computed), and no step writes into an input's buffer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...core.errors import ExecutionError, IRToolError
from ...core.scopes import layer_path
from ...ir.graph import Layer, describe_layer
from ...opset import lookup
from ...opset.shape import Identity, Squeeze, Unsqueeze
from ..declared import Verifier
from ..fastpath import gather_axis
from ..iteration import Iterate, Iteration, Stacking, annotate_iteration
from ..plan import Plan, RunOptions, Step
from .straight import step_comment, value_name
from .toolkit import Code, emit_steps, emit_verify, reuse_for

BLOCK = 4096
"""Iteration numbers per shared counter block."""

_FIRST_BLOCKS: dict[np.dtype, np.ndarray] = {}


def counter_block(start: int, dtype: np.dtype) -> np.ndarray:
    """Iteration numbers ``start .. start + BLOCK - 1``, read-only (the first block is
    shared by every loop of that dtype)."""
    if start == 0 and dtype in _FIRST_BLOCKS:
        return _FIRST_BLOCKS[dtype]
    block = np.arange(start, start + BLOCK, dtype=dtype)
    block.flags.writeable = False
    if start == 0:
        _FIRST_BLOCKS[dtype] = block
    return block


def _is(step_layer: Layer, cls: type) -> bool:
    found = lookup(step_layer.type, step_layer.version)
    return found is not None and issubclass(found, cls)


def generate(it: Iteration, layer: Layer, scope: str,
             check_condition: Callable[[Any], bool],
             options: RunOptions | None = None) -> Iterate:
    """Compile ``it`` (a Loop/TensorIterator's resolved port map) into an ``Iterate``.

    ``check_condition`` turns a body condition value that is not a plain 0-d boolean
    array into a bool, or raises the error for it. ``options.optimize`` off: none of the
    module docstring's rewrites; ``options.applied`` counts those made.
    """
    options = options or RunOptions()
    gen = _Generator(it, layer, scope, check_condition, options.optimize)
    options.applied["loop rewrites"] += len(gen.stacking) + len(gen.fused) + len(gen.squeeze)
    run, source = gen.build(squeeze=False)
    run_squeezed = gen.build(squeeze=True)[0] if gen.squeeze else None
    squeezed = {k: axis for k, (_, axis) in gen.squeeze.items()}
    return Iterate(run, gen.stacking, source, squeezed, run_squeezed)


class _Generator:
    """The compile-time analysis of one loop body, and the code built from it."""

    def __init__(self, it: Iteration, layer: Layer, scope: str,
                 check_condition: Callable[[Any], bool], optimize: bool = True) -> None:
        self.it, self.layer, self.scope = it, layer, scope
        self.check_condition = check_condition
        self.optimize = optimize
        body = self.body = it.body
        steps = self.steps = body.steps
        out_slots = self.out_slots = body.output_slots
        params = self.params = body.input_slots
        self.producer = {slot: k for k, s in enumerate(steps) for slot in s.outputs}
        consumers: dict[int, list[int]] = {}
        for k, s in enumerate(steps):
            for slot in set(s.inputs):
                consumers.setdefault(slot, []).append(k)
        self.consumers = consumers
        self.back_targets = {params[p] for p, _ in it.back}
        used = {r for _, r in it.last} | {r for _, r in it.back}
        if it.condition is not None:
            used.add(it.condition)
        self.skip: set[int] = set()
        self.stacking: dict[int, Stacking] = {}
        self.collect = [self.name(out_slots[c.result]) for c in it.concat]
        if optimize:
            for ci in range(len(it.concat)):
                self._find_stacking(ci, used)
        self.counter = params[it.current] if it.current is not None else None
        self.counting = self.counter is not None and not it.current_fed_back
        self.fused = self._find_counter_gathers() if optimize else {}
        self.need_counter = self.counting and (
            self.counter in out_slots or self.name(self.counter) in self.collect  # type: ignore[arg-type]
            or any(k not in self.fused and k not in self.skip
                   for k in consumers.get(self.counter, [])))  # type: ignore[arg-type]
        self.squeeze = self._find_squeezes() if optimize else {}

    def name(self, slot: int) -> str:
        return value_name(self.body, slot)

    def _find_stacking(self, ci: int, used: set[int]) -> None:
        spec = self.it.concat[ci]
        steps, slot = self.steps, self.out_slots[spec.result]
        u = self.producer.get(slot)
        if u is None or not _is(steps[u].layer, Unsqueeze) or self.consumers.get(slot) \
                or self.out_slots.count(slot) != 1 or spec.result in used \
                or [c.result for c in self.it.concat].count(spec.result) != 1:
            return
        axes = self.body.constants.get(steps[u].inputs[1]) if len(steps[u].inputs) == 2 \
            else None
        if axes is None or axes.size != 1 or axes.dtype.kind not in "iu":
            return
        source = steps[u].inputs[0]
        self.skip.add(u)
        ident = self.producer.get(source)
        if ident is not None and _is(steps[ident].layer, Identity) \
                and self.consumers.get(source) == [u] and source not in self.out_slots:
            self.skip.add(ident)  # its copy is redundant: stacking copies
            source = steps[ident].inputs[0]
        self.stacking[ci] = Stacking(u, int(axes.reshape(-1)[0]), axes)
        self.collect[ci] = self.name(source)

    def _find_counter_gathers(self) -> dict[int, tuple[int, int]]:
        """Gather steps of a loop-invariant value by the (scalar) iteration number:
        step -> (data slot, axis)."""
        it, fused = self.it, {}  # type: ignore[var-annotated]
        if not self.counting or it.current_shape != ():
            return fused
        invariant = set(self.body.constants) | {self.params[p] for p, _ in it.fixed}
        invariant -= self.back_targets
        for k, s in enumerate(self.steps):
            axis = gather_axis(s.kernel)
            if axis is not None and len(s.inputs) == 3 and s.inputs[1] == self.counter \
                    and s.inputs[0] in invariant and k not in self.skip:
                fused[k] = (s.inputs[0], axis)
        return fused

    def _find_squeezes(self) -> dict[int, tuple[int, int]]:
        """Sliced inputs (part size 1) whose Parameter only feeds ``Squeeze(part, [a])``:
        slice index -> (Squeeze step, a)."""
        found = {}
        for k, spec in enumerate(self.it.slices):
            slot = self.params[spec.param]
            users = self.consumers.get(slot, [])
            if spec.part_size != 1 or len(users) != 1 or slot in self.out_slots \
                    or slot in self.back_targets:
                continue
            q = users[0]
            step = self.steps[q]
            axes = self.body.constants.get(step.inputs[1]) if len(step.inputs) == 2 else None
            if not _is(step.layer, Squeeze) or step.inputs[0] != slot or axes is None \
                    or axes.size != 1 or axes.dtype.kind not in "iu" or q in self.skip:
                continue
            found[k] = (q, int(axes.reshape(-1)[0]))
        return found

    def build(self, squeeze: bool) -> tuple[Callable, str]:
        """The generated ``run``, and its source; ``squeeze``: the variant taking squeezed
        parts for ``self.squeeze``."""
        it, body, steps, name = self.it, self.body, self.steps, self.name
        params, out_slots, counter = self.params, self.out_slots, self.counter
        skip = set(self.skip)
        code = Code()
        for slot, value in body.constants.items():
            code.free[f"c{slot}"] = value
        code.free.update(ndarray=np.ndarray, BOOL=np.dtype(np.bool_), zeros=np.zeros,
                         counter_block=counter_block, check_condition=self.check_condition)
        pro: list[str] = []
        for p, o in it.fixed:
            pro.append(f"v{params[p]} = outer[{o}]")
        if counter is not None:
            code.free["CDTYPE"] = it.current_dtype
            if it.current_fed_back or self.need_counter:
                pro.append(f"v{counter} = zeros({it.current_shape!r}, CDTYPE)")
            if self.need_counter:
                pro += ["kC = 0", "bC = counter_block(0, CDTYPE)"]
        for k, spec in enumerate(it.slices):
            pro.append(f"p{k} = parts[{k}]")
            if squeeze and k in self.squeeze:
                q = self.squeeze[k][0]
                skip.add(q)
                code.add(f"v{steps[q].outputs[0]} = p{k}[i]")
            else:
                code.add(f"v{params[spec.param]} = p{k}[i]")
        for g, (data, axis) in self.fused.items():
            code.free[f"new_counter{g}"] = _counter_value(it.current_dtype)
            pro += [f"d{g} = {name(data)}",
                    f"if d{g}.__class__ is ndarray and -d{g}.ndim <= {axis} < d{g}.ndim:",
                    f"    n{g} = d{g}.shape[{axis}]",
                    f"    l{g} = (slice(None),) * ({axis} % d{g}.ndim)",
                    "else:",
                    f"    n{g} = 0"]
        for ci in range(len(it.concat)):
            pro += [f"a{ci} = []", f"app{ci} = a{ci}.append"]

        # In-place writes (plan.Reuse) never go into what the loop's own code reads or
        # makes: the body's Results (collected, carried, last values), the values around
        # skipped and counter-Gather steps (a collected value, a view of a sliced input).
        kept = set(out_slots)
        for k in skip | set(self.fused):
            kept.update(steps[k].inputs)
            kept.update(steps[k].outputs)
        reuse = reuse_for(steps, kept, body.constants) if self.optimize else None
        run: list[tuple[int, Step]] = []  # plain steps, emitted together (inline chains)
        for k, step in enumerate(steps):
            if k in skip:
                continue
            if k in self.fused:
                emit_steps(code, run, name, reuse)
                run = []
                self._emit_counter_gather(code, k, skip)
            else:
                run.append((k, step))
        emit_steps(code, run, name, reuse)
        if body.check_declared:
            # The first iteration's values against their ports (the types of a body's
            # values do not change between iterations).
            verify = Verifier([(steps[k].layer, steps[k].outputs) for k in range(len(steps))
                               if k not in skip], body.scope, describe_layer)
            if verify.checks:
                code.add("if i == 0:")
                emit_verify(code, verify, name, indent="    ")

        for ci in range(len(it.concat)):
            code.add(f"app{ci}({self.collect[ci]})")
        lasts = []
        for _, r in it.last:
            slot = out_slots[r]
            if slot in self.back_targets or (self.need_counter and slot == counter):
                code.add(f"L{r} = {name(slot)}")  # the back edges overwrite it below
                pro.append(f"L{r} = None")
                lasts.append(f"L{r}")
            else:
                lasts.append(name(slot))
                if slot not in body.constants:
                    pro.insert(0, f"{name(slot)} = None")  # read after zero iterations too
        if it.condition is not None:
            _emit_condition(code, body, out_slots[it.condition])
            code.add("if not cond: break")
        if it.back:
            code.add(f"{', '.join(f'v{params[p]}' for p, _ in it.back)} = "
                     f"{', '.join(name(out_slots[r]) for _, r in it.back)}")
        if self.need_counter:
            view = "bC[kC, ...]" if it.current_shape == () else "bC[kC:kC + 1]"
            code.add("kC += 1")
            code.add(f"if kC == {BLOCK}:")
            code.add("    bC = counter_block(i + 1, CDTYPE)")
            code.add("    kC = 0")
            code.add(f"v{counter} = {view}")

        where = layer_path(self.scope, self.layer.id)
        layer, scope = self.layer, self.scope

        def located(step: int, err: Exception, i: int) -> ExecutionError:
            if step >= 0:
                error = body._failure(step, (), err)
            else:
                error = ExecutionError(f"{type(err).__name__}: {err}",
                                       layer=describe_layer(layer, scope))
            annotate_iteration(error, f"iteration {i} of {where}")  # type: ignore[arg-type]
            return error  # type: ignore[return-value]

        def annotate(err: ExecutionError, i: int) -> None:
            annotate_iteration(err, f"iteration {i} of {where}")

        code.free.update(ExecutionError=ExecutionError, IRToolError=IRToolError,
                         located=located, annotate=annotate)
        # A body of Consts alone (its Results fed by them) leaves the loop with no statement.
        body_lines = code.indented(2) or ["        pass"]  # type: ignore[list-item]
        lines = [*pro, "i = -1", "try:", "    for i in range(lim):", *body_lines,
                 "except ExecutionError as err:",
                 "    annotate(err, i)",
                 "    raise",
                 "except IRToolError:",
                 "    raise",
                 "except Exception as err:",
                 "    raise located(step_at(err), err, i) from err",
                 f"return i + 1, cond, [{', '.join(lasts)}], "
                 f"[{', '.join(f'a{ci}' for ci in range(len(it.concat)))}]"]
        run = code.build(f"loop {where}", "outer, parts, lim, cond", lines,  # type: ignore[assignment]
                         lambda index: step_comment(body, index))
        return run, run.source  # type: ignore[attr-defined, return-value]

    def _emit_counter_gather(self, code: Code, k: int, skip: set[int]) -> None:
        """``X[..., i, ...]`` for Gather step ``k``; a view when only inlined numpy steps
        (new arrays out) read it, a copy (as the kernel makes) otherwise."""
        step = self.steps[k]
        _, axis = self.fused[k]
        out = f"v{step.outputs[0]}"
        safe = step.outputs[0] not in self.out_slots and all(
            self.steps[c].inlined is not None and c not in skip
            for c in self.consumers.get(step.outputs[0], []))
        index = f"d{k}[i]" if axis == 0 else f"d{k}[l{k} + (i,)]"
        code.free[f"k{k}"] = step.kernel
        code.add(f"if i < n{k}:", k)
        code.add(f"    {out} = {index}{'' if safe else '.copy()'}", k)
        code.add("else:", k)
        code.add(f"    {out} = k{k}([d{k}, new_counter{k}(i), {self.name(step.inputs[2])}])[0]",
                 k)


def _counter_value(dtype: np.dtype) -> Callable[[int], np.ndarray]:
    def make(i: int) -> np.ndarray:
        return np.array(i, dtype)

    return make


def _emit_condition(code: Code, body: Plan, slot: int) -> None:
    """``cond = <the body's condition as a bool>``: a Python bool for a constant."""
    const = body.constants.get(slot)
    if const is not None and const.__class__ is np.ndarray and const.dtype == np.bool_ \
            and const.size == 1 and const.ndim < 2:
        code.add(f"cond = {bool(const.reshape(()))}")
        return
    c = value_name(body, slot)
    code.add(f"if {c}.__class__ is ndarray and {c}.dtype is BOOL and {c}.ndim == 0:")
    code.add(f"    cond = {c}.item()")
    code.add("else:")
    code.add(f"    cond = check_condition({c})")
