"""Elementwise steps moved past the MaxPool they feed, at compile time (``FusePools``).

A CNN's ``Convolution -> Add(bias) -> ReLU -> MaxPool`` spends as long on the bias and
the ReLU, each a pass over the full-size feature map, as on the pooling itself. Both
commute with taking a maximum: ``max(x) + b == max(x + b)`` for a ``b`` constant over each
window (rounding is monotonic, so this holds in floating point too, exactly), and
``max(relu(x)) == relu(max(x))``. Run after the pool, they touch a quarter of the data
(2x2 windows). The plan does so only where every one of these rules holds, each proven
from the graph for every input value (otherwise the steps stay where they are):

* the MaxPool (1, 8 or 14) has no padding and floor rounding, so every window lies
  inside the input, and its indices output (MaxPool-8/14) is read by no one (a ReLU
  would change which element of a window of equal zeros is the maximum);
* each moved step's result is read only by the next step of the chain (no other reader
  and no graph output sees the full-size value);
* ReLU-1 on floats;
* Add-1 (numpy broadcast) of a constant and one computed input, on floats, where the
  constant is finite (``-inf + inf`` would be NaN before the pool and not after), 1
  along every spatial axis (the same value over a window; every spatial axis is checked)
  and broadcasts to no more than the computed input's shape: each of its dims that is
  not 1 meets a dim of the computed input that is declared static and equal, so the Add's
  output has the computed input's shape. (A bias of 3 channels added to 1 channel makes
  3 channels; moved after the pool it would make 3 channels of values but leave the
  indices, and the pool's declared shapes, at 1.)

The fused step keeps the MaxPool's layer and outputs: it is checked against what the
MaxPool declares, and an error in it names the MaxPool. The moved layers' kernels run
unchanged, on the pooled values (``PendingStep.then``; the compiler makes the step's
kernel with ``pooled_then``). (The declared dims the shape rule reads are checked at run
time against the values, by the step that makes them, when the executor checks
declarations, as it does by default.)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..ir.graph import Layer
from ..opset import Kernel, make_op
from .base import Pass, PassResult
from .program import Moved, PendingStep, Program

_POOLS = {("MaxPool", "opset1"), ("MaxPool", "opset8"), ("MaxPool", "opset14")}


class FusePools(Pass[Program]):
    """Chains of commuting elementwise steps before a MaxPool, moved after the pooling
    into the MaxPool's step (see the module docstring); a change is one MaxPool fused."""

    optimisation = "fused pools"

    def apply(self, program: Program) -> PassResult[Program]:
        steps, constants = program.steps, program.constants
        producer = {slot: k for k, step in enumerate(steps) for slot in step.outputs}
        readers = Counter(slot for step in steps for slot in step.inputs)
        readers.update(program.outputs)
        moved: set[int] = set()
        fused = 0
        for step in steps:
            spatial = _plain_max_pool(step, readers)
            if spatial is None:
                continue
            chain: list[tuple[int, Moved]] = []  # nearest the pool first
            slot = step.inputs[0]
            while readers[slot] == 1 and slot in producer and producer[slot] not in moved:
                index = producer[slot]
                found = _commuting(steps[index], constants, spatial)
                if found is None:
                    break
                slot, op = found
                chain.append((index, op))
            if chain:
                moved.update(index for index, _ in chain)
                step.inputs = (slot,)
                step.then = [op for _, op in reversed(chain)]
                fused += 1
        program.steps = [step for k, step in enumerate(steps) if k not in moved]
        return PassResult(program, fused)


def pooled_then(pool: Kernel, ops: Sequence[tuple[Kernel, list[np.ndarray | None]]]) -> Kernel:
    """A kernel running ``pool``, then each of ``ops`` (a kernel and its arguments, None for
    the value so far) on its first output."""
    def pooled_then(inputs: list[np.ndarray]) -> list[np.ndarray]:
        outs = pool(inputs)
        value = outs[0]
        for kernel, args in ops:
            value = kernel([value if a is None else a for a in args])[0]
        return [value, *outs[1:]]

    return pooled_then


def _plain_max_pool(step: PendingStep, readers: Counter[int]) -> int | None:
    """The spatial rank of a MaxPool step every window of which lies inside its input
    and whose indices nobody reads, else None."""
    layer = step.layer
    if (layer.type, layer.version) not in _POOLS or len(step.inputs) != 1:
        return None
    if any(readers[slot] for slot in step.outputs[1:]):
        return None
    try:
        op: Any = make_op(layer.type, layer.version, layer.attrs)  # a MaxPool: its attributes
    except (KeyError, ValueError):
        return None  # the step's own kernel reports it
    if op.auto_pad not in ("explicit", "valid", "notset") or op.rounding != "floor" \
            or any(op.pads_begin) or any(op.pads_end) or not op.kernel:
        return None
    return len(op.kernel)


def _floats(layer: Layer) -> bool:
    et = layer.outputs[0].precision if len(layer.outputs) == 1 else None
    return et is not None and getattr(et, "kind", "") == "float"


def _commuting(step: PendingStep, constants: dict[int, np.ndarray],
               spatial: int) -> tuple[int, Moved] | None:
    """(the slot of the computed input, the step's layer and arguments) when ``step``
    commutes with a max over windows of ``spatial`` axes, else None."""
    layer = step.layer
    if not _floats(layer) or len(step.outputs) != 1:
        return None
    if (layer.type, layer.version) == ("ReLU", "opset1") and len(step.inputs) == 1:
        return step.inputs[0], (layer, [None])
    if (layer.type, layer.version) != ("Add", "opset1") or len(step.inputs) != 2 \
            or layer.attrs.get("auto_broadcast", "numpy").lower() != "numpy":
        return None
    computed = [i for i, slot in enumerate(step.inputs) if slot not in constants]
    if len(computed) != 1:
        return None
    bias = constants[step.inputs[1 - computed[0]]]
    if not isinstance(bias, np.ndarray) or bias.dtype.kind != "f" \
            or bias.ndim > spatial + 2 or not np.isfinite(bias).all():
        return None
    if any(d != 1 for d in bias.shape[max(bias.ndim - spatial, 0):]):
        return None  # varies within a window
    if not _keeps_shape(layer.inputs[computed[0]].dims, bias.shape):
        return None  # the Add would broadcast its computed input to more rows or channels
    args: list[np.ndarray | None] = [None, None]
    args[1 - computed[0]] = bias
    return step.inputs[computed[0]], (layer, args)


def _keeps_shape(dims: tuple[int, ...] | None, bias: tuple[int, ...]) -> bool:
    """Does adding a constant of shape ``bias`` to a value declared ``dims`` (numpy
    broadcasting) give ``dims`` again: every bias dim other than 1 meets a static dim of
    the same size?"""
    if dims is None or len(bias) > len(dims):
        return False
    tail = dims[len(dims) - len(bias):]
    return all(b == 1 or d == b for b, d in zip(bias, tail))

