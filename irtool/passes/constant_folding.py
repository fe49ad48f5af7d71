"""Constant folding: what constants alone determine, computed once with the ops' kernels.

One evaluator (``evaluate``) serves two users:

* the compile pipeline's passes: ``FoldDecompression`` folds weight decompression chains
  the way OpenVINO's CPU plugin computes them (``decompression``: semantics, so it runs
  with optimisations off too), and ``FoldConstants``, an optimisation, makes every other
  step of a plan whose inputs are all constants a constant of the plan, computed when the
  plan is compiled instead of on every run (a bias Unsqueezed to ``[1, C, 1, 1]``, a shape
  computed from constants), continuing a chain where such a step was all it waited for;
* ``constant_value``, for the ONNX frontend: the value of an IR tensor when constants and
  static shapes alone determine it (an If's condition, a Loop's trip count), without
  changing the graph.

Nothing is folded whose value may differ from run to run or that irtool cannot vouch
for: an op whose value may change from call to call (``Op.pure`` false: random draws,
variables), a user's operations (``--extension``: they may mean to run each time),
control flow (the runtime compiles it itself), an op whose kernel fails (the step reports
that at run time, naming the layer). A folded value is the op's own kernel's on the same
inputs, under the same floating-point settings as a run: what the step would compute,
integer wrap-around included.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core.errors import IRToolError
from ..ir.builder import Value
from ..ir.graph import Graph, Layer, mismatch, port_dims, port_dtype
from ..opset import make_op
from .base import Pass, PassResult
from .decompression import exact_source, fold
from .program import Program

FOLDED_BYTES = 1 << 20
"""Results up to this size (or up to the size of the step's inputs) of steps on constants
alone are folded; a larger one is computed on each run rather than held."""

FRONTEND_LIMIT = 64
"""The most layers ``constant_value`` evaluates for one value."""


def evaluate(layer: Layer, inputs: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """``layer``'s outputs on ``inputs`` by its kernel; None when it must not or cannot be
    computed ahead of a run (see the module docstring)."""
    try:
        op = make_op(layer.type, layer.version, layer.attrs)
        if not op.pure:
            return None  # a random draw or a variable: computed once, it would change
        if not type(op).__module__.startswith("irtool.opset."):
            return None  # a user's operation (--extension): it may mean to run each time
        with np.errstate(all="ignore"):  # kernels leave that to their caller
            return list(op.compute(list(inputs)))
    except Exception:  # no kernel, or it fails: not foldable, the IR keeps computing it
        return None


def fold_step(layer: Layer, consts: Sequence[np.ndarray]) -> np.ndarray | None:
    """The value of a one-output step on its constant inputs, or None when it stays a step:
    see ``evaluate``, plus a result that is large or unlike what its port declares (the
    run's check then names the layer)."""
    outs = evaluate(layer, consts)
    if outs is None or len(outs) != 1:
        return None
    value = outs[0]
    if value.__class__ is not np.ndarray:
        return None
    limit = max(FOLDED_BYTES, sum(c.nbytes for c in consts if isinstance(c, np.ndarray)))
    port = layer.outputs[0]
    if value.nbytes > limit or mismatch(value, port_dtype(port), port_dims(port)) is not None:
        return None
    value.flags.writeable = False  # a constant of the plan: no step may write into it
    return value


class FoldDecompression(Pass[Program]):
    """Weight decompression chains on constants become constants of the plan, with
    OpenVINO's f32 values (``decompression``), in step order. Not an optimisation: it is
    the semantics irtool chose, so it runs with optimisations off too."""

    def apply(self, program: Program) -> PassResult[Program]:
        return PassResult(program, _fold(program, steps_on_constants=False))


class FoldConstants(Pass[Program]):
    """Steps on constants alone become constants of the plan, in step order (so a chain
    of them folds whole); a decompression chain that waited for such a step goes on
    (``FoldDecompression`` runs first and folds the others)."""

    optimisation = "folded constant steps"

    def apply(self, program: Program) -> PassResult[Program]:
        return PassResult(program, _fold(program, steps_on_constants=True))


def _fold(program: Program, steps_on_constants: bool) -> int:
    """Fold the steps of ``program`` that continue a decompression chain and, with
    ``steps_on_constants``, those on constants alone; returns how many were folded."""
    constants = program.constants
    if program.shadows is None:
        program.shadows = {}
        for slot, const in program.const_layers.items():
            shadow = exact_source(const, constants[slot])
            if shadow is not None:
                program.shadows[slot] = shadow
    exact, chained = program.shadows, program.chained
    kept = []
    for step in program.steps:
        layer, ins, outs = step.layer, step.inputs, step.outputs
        consts = [constants.get(slot) for slot in ins]
        if len(outs) == 1 and any(slot in exact for slot in ins):
            folded = _fold_decompression(layer, consts, [exact.get(s) for s in ins],
                                         [s in chained for s in ins])
            if folded is not None:
                constants[outs[0]], shadow = folded
                if shadow is not None:
                    exact[outs[0]] = shadow
                    chained.add(outs[0])
                continue
        if steps_on_constants and consts and len(outs) == 1 \
                and layer.type not in program.compiled_elsewhere:
            known = [c for c in consts if c is not None]
            value = fold_step(layer, known) if len(known) == len(consts) else None
            if value is not None:
                constants[outs[0]] = value
                continue
        kept.append(step)
    count = len(program.steps) - len(kept)
    program.steps = kept
    return count


def _fold_decompression(layer: Layer, consts: list[np.ndarray | None],
                        exact: list[np.ndarray | None],
                        chained: list[bool]) -> tuple[np.ndarray, np.ndarray | None] | None:
    """``decompression.fold`` for ``layer``; None (a normal step) when its op cannot be
    made or computing it fails: the step then reports that at run time, naming the layer."""
    try:
        op = make_op(layer.type, layer.version, layer.attrs)
        return fold(layer, op, consts, exact, chained)
    except (KeyError, ValueError, TypeError, IndexError, IRToolError):
        return None


def _static_shape(layer: Layer) -> np.ndarray | None:
    """The output of a ShapeOf whose input has a static shape."""
    dims = layer.inputs[0].dims if layer.type == "ShapeOf" and layer.inputs else None
    if dims is None or any(d < 0 for d in dims):
        return None
    dtype = np.int32 if layer.attrs.get("output_type") == "i32" else np.int64
    return np.array(dims, dtype=dtype)


def constant_value(graph: Graph, value: Value) -> np.ndarray | None:
    """The value of ``value`` when constants (and static shapes) alone determine it.

    At most ``FRONTEND_LIMIT`` layers are evaluated; a Parameter, a control-flow layer
    or a layer ``evaluate`` refuses upstream gives None.
    """
    order: list[int] = []
    seen: set[int] = set()

    def visit(lid: int) -> bool:
        if lid in seen:
            return True
        seen.add(lid)
        layer = graph.layer(lid)
        if layer.type == "Parameter" or layer.bodies or len(seen) > FRONTEND_LIMIT:
            return False
        if layer.type != "Const" and _static_shape(layer) is None:
            for port in layer.inputs:
                src = graph.source(lid, port.id)
                if src is None or not visit(src[0]):
                    return False
        order.append(lid)
        return True

    if not visit(value.layer):
        return None
    values: dict[tuple[int, int], np.ndarray] = {}
    for lid in order:
        layer = graph.layer(lid)
        shape = _static_shape(layer)
        outs: list[np.ndarray] | None
        if layer.type == "Const":
            try:
                outs = [layer.const_value()]
            except Exception:  # unreadable data: the IR keeps computing it
                return None
        elif shape is not None:
            outs = [shape]
        else:
            args = []
            for port in layer.inputs:
                src = graph.source(lid, port.id)
                if src is None or src not in values:
                    return None
                args.append(values[src])
            outs = evaluate(layer, args)
        if outs is None:
            return None
        for port, out in zip(layer.outputs, outs):
            values[(lid, port.id)] = np.asarray(out)
    return values.get((value.layer, value.port))
