"""A compiled graph: the ``Plan`` (its steps, value slots, constants, inputs and outputs)
and the settings every nested plan shares.

``runtime.compiler`` makes plans; running one is a call of ``Plan.execute``, generated
Python (``codegen.straight``): no loop over steps, values in local variables, plain
numpy calls where an op says it is one (``Op.numpy_call``). That is what makes
per-iteration execution of loop bodies cheap (loop bodies go one step further, see
``codegen.loops``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..core.errors import ExecutionError, IRToolError
from ..ir.graph import Layer, describe_layer
from ..opset import Kernel
from .codegen import straight
from .declared import Verifier
from .fastpath import Inline


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
        if len(self.steps) > straight.GENERATED_STEPS_LIMIT:
            self.execute = straight.interpreted(self)  # type: ignore[assignment, method-assign]
        else:
            self.execute = straight.straight_line(self)  # type: ignore[assignment, method-assign]

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


@dataclass(frozen=True)
class RunOptions:
    """Settings that reach every (nested) plan: ``max_iterations`` caps each loop;
    ``check_declared`` checks computed values against their ports (``declared``; the
    ``Executor`` turns it on, a bare ``compile_graph`` leaves it off); ``variables`` is
    the store the plan's ReadValue/Assign kernels share (``variables.Variables``; without
    one, each such layer gets a store of its own, which makes every run stateless);
    ``vectorize`` runs loops whose iterations are independent as one batched computation
    (``irtool.passes.vectorize``) when their inputs at run time allow it.

    ``optimize=False`` turns off every rewrite that only makes a run faster, so that a
    user who doubts a result can rule them out: the compile pipeline is
    ``pipelines.compile_pipeline(optimize=False)`` (no constant folding, no step moved
    past a MaxPool), no kernel is specialised on its constant inputs nor called inline as
    a numpy call (``fastpath``), no step writes into an input's buffer
    (``codegen.toolkit.Reuse``), loops are not batched (``vectorize`` off too) and their
    generated code keeps every body step (``codegen.loops``: no stacking of outputs, no
    counter Gathers, no pre-squeezed slices). What stays is semantics: the weight
    decompression chains are still computed in f32 at compile time, as OpenVINO's CPU
    plugin computes them (``passes.decompression``), and loop bodies still run as
    generated Python. ``applied`` counts what each rewrite did while the plan (and its
    nested plans) compiled, by name."""

    max_iterations: int | None = None
    check_declared: bool = False
    variables: object = None  # the plan's ``variables.Variables`` (ReadValue/Assign kernels)
    vectorize: bool = True
    optimize: bool = True
    applied: Counter[str] = field(default_factory=Counter, compare=False)


# Compilers for layers that are not plain kernels (Loop, TensorIterator, If; ReadValue and
# Assign, which share the plan's variables).
# Each takes the layer, its scope and the options and returns a kernel; registered by the
# control-flow module so this one stays free of loop semantics.
SubgraphCompiler = Callable[[Layer, str, RunOptions], Kernel]
CONTROL_FLOW: dict[str, SubgraphCompiler] = {}
