"""A plan's ``execute`` as generated straight-line Python, or, for a very large plan, a
loop over its steps (``interpreted``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from ...core.errors import IRToolError
from ...ir.graph import describe_layer
from ..declared import Verifier
from .toolkit import Code, StepLike, emit_steps, emit_verify, reuse_for


class PlanLike(Protocol):
    """What code generation reads of a ``runtime.plan.Plan``."""

    num_slots: int
    constants: dict[int, np.ndarray]
    input_slots: list[int]
    output_slots: list[int]
    scope: str
    verify: Verifier
    optimize: bool  # False: no step writes into an input's buffer (``toolkit.Reuse``)

    @property
    def steps(self) -> Sequence[StepLike]: ...

    def _failure(self, index: int, inputs: Sequence[np.ndarray],
                 err: Exception) -> IRToolError: ...


def straight_line(plan: PlanLike) -> Callable[[Sequence[np.ndarray]], list[np.ndarray]]:
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


def interpreted(plan: PlanLike) -> Callable[[Sequence[np.ndarray]], list[np.ndarray]]:
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


def step_comment(plan: PlanLike, index: int) -> str:
    """What the comment on a generated line says: the layer of step ``index`` (-1: the
    plan's inputs), escaped so that no name from the IR can end the comment's line."""
    if index < 0:
        return f"the inputs of {plan.scope or 'the graph'}"
    text = describe_layer(plan.steps[index].layer, plan.scope)
    return text.encode("unicode_escape").decode("ascii")


def value_name(plan: PlanLike, slot: int) -> str:
    """The generated identifier holding ``slot``: ``c<slot>`` (constant) or ``v<slot>``."""
    return f"c{slot}" if slot in plan.constants else f"v{slot}"
