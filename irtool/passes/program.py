"""What the compile-time passes rewrite: the steps of a plan being compiled.

``runtime.compiler`` lowers a graph to a ``Program``: one ``PendingStep`` per layer that
runs (Parameters, Results and Consts are slots, not steps), the constants by slot, the
slots the plan returns. The compile pipeline (``pipelines.COMPILE``) rewrites it; then the
compiler makes each remaining step's kernel and builds the ``Plan``. These rewrites work
on steps, not on the IR, because what they make has no IR form that keeps the runtime's
behaviour: a folded weight keeps the exact f32 value OpenVINO computes (``decompression``),
a fused pool step still reports errors and declared types as the MaxPool it is
(``pool_fusion``), and the user's model is never copied or changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..ir.graph import Layer

Moved = tuple[Layer, list["np.ndarray | None"]]
"""A layer moved after a step, and its arguments: a constant, or None for the value so far."""


@dataclass
class PendingStep:
    """A layer that runs, before its kernel is made: where its inputs and outputs live,
    and the layers a rewrite moved after it (``then``, applied in order to its first
    output)."""

    layer: Layer
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    then: list[Moved] = field(default_factory=list)


@dataclass
class Program:
    """The steps of a plan being compiled (in order), its ``constants`` by slot, the
    ``outputs`` it returns (no rewrite may drop or change them), the Const layer each
    constant slot came from (``const_layers``), and the layer types the runtime compiles
    itself (``compiled_elsewhere``: control flow and variables, never folded)."""

    steps: list[PendingStep]
    constants: dict[int, np.ndarray]
    outputs: list[int]
    const_layers: dict[int, Layer] = field(default_factory=dict)
    compiled_elsewhere: frozenset[str] = frozenset()
    shadows: dict[int, np.ndarray] | None = None
    """The exact f32 values of the slots in weight decompression chains
    (``passes.decompression``), kept from one folding pass to the next (None: no pass has
    worked them out yet)."""
    chained: set[int] = field(default_factory=set)
    """The slots that come out of such a chain (a ``Convert`` to f32 of one takes its
    shadow)."""
