"""Every pipeline of rewrites, declared in one place: what runs, in which order, when.

* ``conversion``: what ``irtool.convert`` runs on the IR its translators made.
* ``saving``: what ``irtool.save`` runs on (a copy of) the model it writes.
* ``compiling``: what the runtime's compiler runs on the steps of every plan it compiles
  (``runtime.compiler``; see ``program`` for why these work on steps, not on the IR).

``optimize=False`` leaves out every pass that only makes the result faster
(``Pass.optimisation``), so that a user who doubts a result can rule them out; what stays
is what the result needs: pruning, the forms OpenVINO computes right, the weight
decompression semantics.

Rewrites that are code-generation choices rather than rewrites of a graph (how a loop
body's generated Python collects, indexes and slices: ``runtime.codegen.loops``) are not
passes and are not listed here.
"""

from __future__ import annotations

from ..ir.graph import Model
from .base import Pass, Pipeline
from .constant_folding import FoldConstants, FoldDecompression
from .fp16 import CompressToFP16
from .identity import CopyBackEdges, DropIdentities
from .pool_fusion import FusePools
from .program import Program
from .prune import Prune
from .slice_inputs import SliceLoopInputs
from .unread_slices import LoopsOverUnreadSlices
from .vectorize import VectorizeLoops


def conversion(*, vectorize: bool = True, slice_inputs: bool = False,
               optimize: bool = True) -> Pipeline[Model]:
    """Dead layers and unread loop outputs pruned (OpenVINO computes some of the latter
    wrong); TensorIterators whose bodies read no sliced input made Loops (OpenVINO runs
    those once); independent loops vectorised (then what they left pruned);
    Identity layers dropped (OpenVINO runs each as a node, per iteration in a body); copies
    on back edges whose Result reads a body Parameter (OpenVINO computes those wrong
    without); the sliced-input rewrite only when asked (OpenVINO runs the body Gather
    faster). ``optimize=False``: pruning, the Loops and
    the copies only (asking for ``slice_inputs`` too is the caller's contradiction)."""
    passes: list[Pass[Model]] = [Prune(), LoopsOverUnreadSlices()]
    if vectorize and optimize:
        passes += [VectorizeLoops(), Prune()]
    if optimize:
        passes.append(DropIdentities())
    passes.append(CopyBackEdges())
    if slice_inputs and optimize:
        passes += [SliceLoopInputs(), Prune()]
    return Pipeline(passes)


def saving(*, compress_to_fp16: bool = False) -> Pipeline[Model]:
    """f32 constants stored as f16 when asked (on a copy: the caller's model is kept)."""
    return Pipeline([CompressToFP16()] if compress_to_fp16 else [])


def compiling(*, optimize: bool = True) -> Pipeline[Program]:
    """Weight decompression chains folded as OpenVINO computes them; then, optimising,
    every other step on constants folded (so that a bias is a constant when pool fusion
    looks at it) and ReLUs and biases moved past MaxPools."""
    if not optimize:
        return Pipeline([FoldDecompression()])
    return Pipeline([FoldDecompression(), FoldConstants(), FusePools()])
