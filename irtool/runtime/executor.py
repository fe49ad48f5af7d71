"""``Executor``: run a whole IR model by tensor names."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from typing import Any

import numpy as np

from ..core.errors import ExecutionError, IRToolError
from ..core.feeds import input_mismatch
from ..ir.graph import Model, Shape
from ..ir.types import ElementType, from_raw_bits
from ..validation import require_valid
from .cache import PLANS
from .compiler import compile_graph
from .plan import Plan, RunOptions
from .threads import BlasLimit, blas_thread_limit
from .variables import Variables

_STATELESS = nullcontext()  # the variable binding of a plan without ReadValue or Assign


class Executor:
    """Compiles ``model`` once; ``run`` may then be called many times. Each ``run`` is
    stateless: every variable (ReadValue/Assign) starts at its initial value and what the
    run assigns is dropped (``irtool.runtime.session.CompiledModel`` keeps it).

    The model must pass the validator's rules (``IRValidationError`` otherwise, naming
    the first error as ``validate`` does). ``check=False`` skips that: for a caller that
    has just validated the model (``irtool.load`` does), or that wants to see what the
    runtime itself makes of IR the validator refuses. Subclass and override
    ``run_plan`` to observe or change execution.

    ``cached=True`` takes the check and the plan from the plan cache (``cache.PLANS``):
    executors of one unchanged model then share one plan, checked and compiled once.
    ``vectorize=False`` runs every loop as a loop; ``optimize=False`` turns off every
    rewrite that only makes runs faster, loop batching included (see ``RunOptions``).
    ``optimizations`` says what the rewrites did.

    A run computes IEEE results silently (log(-1) is NaN, x / 0 is inf): numpy's
    floating-point warnings are off while it runs.
    """

    def __init__(self, model: Model, *, max_iterations: int | None = None,
                 check: bool = True, cached: bool = False, vectorize: bool = True,
                 optimize: bool = True) -> None:
        self.model = model
        vectorize = vectorize and optimize
        try:
            if cached:
                self.plan, self.options = PLANS.compiled(
                    model, (max_iterations, vectorize, optimize),
                    (lambda: require_valid(model)) if check else None,  # type: ignore[arg-type]
                    lambda: _compile(model, max_iterations, vectorize, optimize))
            else:
                if check:
                    require_valid(model)
                self.plan, self.options = _compile(model, max_iterations, vectorize, optimize)
        except IRToolError as err:
            self._locate(err)
            raise
        # What each input must be, read from the Parameters once, not on every run.
        self._input_types = [(p.element_type, p.shape) for p in self.plan.parameters]
        self._blas = BlasLimit(blas_thread_limit())  # IRTOOL_BLAS_THREADS as it is now

    @property
    def variables(self) -> Variables:
        """The plan's variable store (see ``state``)."""
        return self.options.variables

    @property
    def optimizations(self) -> dict[str, int]:
        """What the plan's rewrites did when it compiled, nested plans included, by name
        (``"fused pools"``, ``"folded constant steps"``, ``"batched loops"``...); only
        those that did something."""
        return {k: v for k, v in sorted(self.options.applied.items()) if v}

    @property
    def input_names(self) -> list[str]:
        return list(self.plan.input_names)

    @property
    def output_names(self) -> list[str]:
        return list(self.plan.output_names)

    def _ordered_inputs(self, inputs: Mapping[str, Any] | Sequence[Any]) -> list[np.ndarray]:
        names = self.plan.input_names
        if isinstance(inputs, Mapping):
            # As many names as the model takes, each one of them: nothing else to say.
            exact = len(inputs) == len(names) and all(n in inputs for n in names)
            mismatch = None if exact else input_mismatch(names, inputs)
            if mismatch:
                raise ExecutionError(mismatch, file=self.model.path)
            values = [inputs[n] for n in names]
        else:
            values = list(inputs)
            if len(values) != len(names):
                raise ExecutionError(f"{len(values)} inputs given, the model takes {len(names)}",
                                     file=self.model.path)
        return [self._check_input(et, shape, np.asarray(v), n)
                for (et, shape), v, n in zip(self._input_types, values, names)]

    def _check_input(self, et: ElementType | None, shape: Shape | None, value: np.ndarray,
                     name: str) -> np.ndarray:
        if et is not None and et.dtype is not None and value.dtype != et.dtype:
            value = from_raw_bits(value, et)  # bf16/f8 as npz stores them: |V2, |V1
        if et is not None and et.dtype is not None and value.dtype != et.dtype:
            if et.kind == "string" and value.dtype.kind in ("U", "S", "O"):
                value = value.astype(object)
            else:
                raise ExecutionError(f"input {name!r} has dtype {value.dtype}, the model wants "
                                     f"{et.name} ({et.dtype})", file=self.model.path)
        if shape is not None:
            ok = len(shape) == value.ndim and all(d < 0 or d == v
                                                 for d, v in zip(shape, value.shape))
            if not ok:
                raise ExecutionError(f"input {name!r} has shape {list(value.shape)}, the model "
                                     f"wants {list(shape)} (-1: any)", file=self.model.path)
        return value

    def run_plan(self, plan: Plan, values: list[np.ndarray]) -> list[np.ndarray]:
        return plan.execute(values)

    def run(self, inputs: Mapping[str, Any] | Sequence[Any]) -> dict[str, np.ndarray]:
        """Outputs by tensor name for ``inputs`` given by name or by position."""
        return self._run(inputs, None)

    def _run(self, inputs: Mapping[str, Any] | Sequence[Any],
             state: dict[str, np.ndarray] | None,
             draws: dict[str, int] | None = None) -> dict[str, np.ndarray]:
        """``run`` with the variables' values in ``state`` and the random generators'
        positions in ``draws`` (both updated when the run succeeds; None: stateless)."""
        try:
            values = self._ordered_inputs(inputs)
            # Floating-point errors give inf/NaN as in OpenVINO; warnings are off once per
            # run here, not per kernel call.
            binding = self.variables.run(state, draws) if self.variables.used else _STATELESS
            with binding, self._blas, np.errstate(all="ignore"):
                outs = self.run_plan(self.plan, values)
        except IRToolError as err:
            self._locate(err)
            raise
        return dict(zip(self.plan.output_names, outs))

    def _locate(self, err: IRToolError) -> None:
        """Make ``err`` name the model file when it names no file yet."""
        if err.file is None and self.model.path:
            err.file = self.model.path
            err.args = (err.format(),)


def _compile(model: Model, max_iterations: int | None, vectorize: bool = True,
             optimize: bool = True) -> tuple[Plan, RunOptions]:
    options = RunOptions(max_iterations=max_iterations, check_declared=True,
                         variables=Variables(), vectorize=vectorize, optimize=optimize)
    plan = compile_graph(model.graph, "", options)
    if model.version < 11:  # unnamed v10 outputs are named after their layer (see Model)
        plan.output_names = model.output_names()
    return plan, options
