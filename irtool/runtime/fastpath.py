"""Compile-time specialisation of hot kernels.

When the plan compiler knows some inputs of a step are constants, it asks this
module for a faster kernel. A fast kernel never redefines an operation: it
either handles a case whose meaning is beyond doubt (a scalar, in-range Gather
index) or replays what the operation's own kernel did for the same input shape
(the output shape of a reshape-like op), and falls back to the operation's
kernel for everything else. Loop bodies call their kernels once per iteration,
so this is where the per-call parsing of constant axes would hurt most.

One kernel here computes the same products in another order, so its sums may round
differently: a recurrent sequence with every step's input projection made by one
matrix product (``_projected_sequence``). Like every specialised kernel it runs only
when the runtime optimises.

``inline_for`` goes one step further for ops that declare themselves one plain
numpy call (``Op.numpy_call``: elementwise ops with numpy broadcasting, unary
math, MatMul without transposes): it describes the step as that direct call,
which the generated plan code makes when a run-time guard (every non-constant
input is an ndarray of the expected dtype) holds, and calls the operation's
kernel otherwise. The guard is chosen so that the direct call computes exactly
what the kernel would: same function, same arguments, and the kernel's dtype
and 0-d fix-ups provably no-ops.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..ir.graph import Layer
from ..opset import Kernel, Op

Specialiser = Callable[[Op, Sequence["np.ndarray | None"]], "Kernel | None"]


def _gather(op: Op, consts: Sequence[np.ndarray | None]) -> Kernel | None:
    """Gather with a constant axis and no batch dims: a scalar in-range index is a plain
    ``data[..., i, ...]`` (copied, as ``np.take`` would)."""
    axis_value = consts[2] if len(consts) > 2 else None
    if axis_value is None or np.size(axis_value) != 1 or getattr(op, "batch_dims", 0) != 0:
        return None
    axis = int(np.ravel(axis_value)[0])
    general = op.compute

    def gather(inputs: list[np.ndarray]) -> list[np.ndarray]:
        data, idx = inputs[0], inputs[1]
        if idx.__class__ is np.ndarray and idx.ndim == 0 and idx.dtype.kind in "iu" \
                and data.__class__ is np.ndarray and -data.ndim <= axis < data.ndim:
            ax = axis + data.ndim if axis < 0 else axis
            i = int(idx)
            n = data.shape[ax]
            if -n <= i < n:
                return [data[(slice(None),) * ax + (i,)].copy()]
        return general(inputs)

    # Loop bodies recognise this kernel (and its axis) to index by the iteration number.
    gather.gather_axis = axis  # type: ignore[attr-defined]
    return gather


def gather_axis(kernel: Kernel) -> int | None:
    """The constant axis of a fast Gather kernel (None: not one)."""
    return getattr(kernel, "gather_axis", None)


def _reshape_like(op: Op, consts: Sequence[np.ndarray | None]) -> Kernel | None:
    """Unsqueeze / Squeeze / Reshape with constant second input: the output is input 0
    reshaped to a shape that depends only on input 0's shape. The op's own kernel
    computes it once per input shape; later calls reuse that shape."""
    if len(consts) < 2 or any(c is None for c in consts[1:]):
        return None
    general = op.compute
    shapes: dict[tuple[int, ...], tuple[int, ...]] = {}

    def reshape_like(inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = inputs[0]
        if data.__class__ is np.ndarray:
            shape = shapes.get(data.shape)
            if shape is not None:
                return [data.reshape(shape)]
            out = general(inputs)
            if len(out) == 1 and out[0].__class__ is np.ndarray and out[0].dtype == data.dtype \
                    and out[0].size == data.size and len(shapes) < 64:
                shapes[data.shape] = out[0].shape
            return out
        return general(inputs)

    return reshape_like


def _projected_sequence(op: Op, consts: Sequence[np.ndarray | None]) -> Kernel | None:
    """RNN/GRU/LSTMSequence with every step's input projection made by one matrix product
    before the steps (``compute_projected``; the products the same, their sums maybe in
    another order, hence an optimisation)."""
    return getattr(op, "compute_projected", None)


FAST_PATHS: dict[str, Specialiser] = {
    "RNNSequence": _projected_sequence,
    "GRUSequence": _projected_sequence,
    "LSTMSequence": _projected_sequence,
    "Gather": _gather,
    "Unsqueeze": _reshape_like,
    "Squeeze": _reshape_like,
    "Reshape": _reshape_like,
}


def specialise(layer_type: str, op: Op, consts: Sequence[np.ndarray | None]) -> Kernel:
    """The fastest kernel for ``op`` given which inputs are constants (None: not known)."""
    maker = FAST_PATHS.get(layer_type)
    fast = maker(op, consts) if maker is not None else None
    return fast if fast is not None else op.compute


# ---------------------------------------------------------------------------
# Inline steps


@dataclass(frozen=True)
class Inline:
    """A step the generated plan code runs as ``func(*inputs)`` when the guard holds.

    The guard: every input in ``guarded`` (the non-constant ones) is exactly an
    ``np.ndarray`` (no subclass) whose dtype is ``dtype``, and the ranks of the inputs
    in ``ndim_inputs`` add up to at least ``min_ndim`` (so that the result is an array,
    not a numpy scalar: for elementwise ops some input has a dim, for MatMul not both
    operands are vectors). Otherwise the step calls ``kernel``, the step's own kernel;
    a plan only inlines while the step still holds that kernel.

    When the guard holds, the result is an ndarray of ``out_dtype``; its rank is the
    largest input rank (elementwise) or at least 1 (``matmul``). ``const_ndims`` has
    the rank of each constant input (None for the others). Plans use these facts to
    check a chain of inlined steps once, at its start.
    """

    func: Callable[..., np.ndarray]
    dtype: np.dtype
    guarded: tuple[int, ...]
    kernel: Kernel
    out_dtype: np.dtype
    const_ndims: tuple[int | None, ...]
    matmul: bool = False
    ndim_inputs: tuple[int, ...] = ()
    min_ndim: int = 0
    writes_out: bool = False  # ``func(*inputs, buffer)`` computes into ``buffer``


_PLAIN_KINDS = "biuf"


def _declared_dtype(layer: Layer, consts: Sequence[np.ndarray | None]) -> np.dtype | None:
    """The one dtype every input is declared (or, for constants, known) to have."""
    found: set[np.dtype] = set()
    for k, port in enumerate(layer.inputs):
        const = consts[k] if k < len(consts) else None
        if const is not None:
            if const.__class__ is not np.ndarray:
                return None
            found.add(const.dtype)
        elif port.precision is not None and port.precision.dtype is not None:
            found.add(port.precision.dtype)
        else:
            return None
    if len(found) != 1:
        return None
    dtype = found.pop()
    # Canonical builtin dtypes only: the guard compares with ``is``.
    if dtype.kind not in _PLAIN_KINDS or np.dtype(dtype.str) is not dtype \
            or not dtype.isnative:
        return None
    return dtype


def _probe(func: Callable[..., np.ndarray], consts: Sequence[np.ndarray | None],
           dtype: np.dtype, want: np.dtype, matmul: bool) -> bool:
    """Does ``func`` on stand-ins for the non-constant inputs return a fresh ndarray of
    dtype ``want``? (The dtype of a numpy function's result depends on the input dtypes
    only, so one probe tells for every run.)"""
    trials = [[c if c is not None else np.zeros(1, dtype) for c in consts]]
    if matmul:  # square stand-ins that fit the constant operand's inner dimension, which
        # is either of its last two dims (a transpose attribute may swap them)
        a, b = consts
        const = b if b is not None else a
        sizes = sorted(set(const.shape[-2:])) if const is not None and const.ndim else [1]
        trials = [[a if a is not None else np.zeros((k, k), dtype),
                   b if b is not None else np.zeros((k, k), dtype)] for k in sizes]
    for args in trials:
        try:
            with np.errstate(all="ignore"):
                out = func(*args)
        except Exception:
            continue
        break
    else:
        return False
    return out.__class__ is np.ndarray and out.dtype == want \
        and not any(np.may_share_memory(out, a) for a in args)


def inline_for(layer: Layer, op: Op, consts: Sequence[np.ndarray | None],
               kernel: Kernel) -> Inline | None:
    """How to inline ``layer``'s step, or None when it keeps its kernel call.

    ``consts[k]`` is input ``k``'s constant value (None: computed at run time);
    ``kernel`` is the step's kernel, which stays the fallback.
    """
    consts = list(consts) + [None] * (len(layer.inputs) - len(consts))
    if len(consts) != len(layer.inputs) or len(layer.outputs) != 1:
        return None
    call = op.numpy_call()
    if call is None or call.arity != len(consts):
        return None
    func = call.func
    min_ndim = 3 if call.matmul else 1
    dtype = _declared_dtype(layer, consts)
    if dtype is None:
        return None
    half = dtype.kind == "f" and dtype.itemsize < 4
    if (half and not call.half_floats) or (call.floats_only and dtype.kind != "f"):
        return None
    want = np.dtype(np.bool_) if call.bool_result else dtype
    if not _probe(func, consts, dtype, want, call.matmul):
        return None
    guarded = tuple(k for k, c in enumerate(consts) if c is None)
    if not guarded:
        return None  # all constant: nothing to gain
    # A constant of enough dims already makes the result an array (and a matmul operand
    # of rank >= 2 rules out the scalar 1-D @ 1-D case); otherwise guard an input's rank.
    const_ndims = tuple(None if c is None else c.ndim for c in consts)
    matmul = call.matmul
    # Elementwise: the result is an array when the ranks add up to 1 or more. MatMul:
    # when they add up to 3 or more (not two vectors; a 0-d operand fails the same way
    # in the kernel), or when a constant operand is a matrix.
    need = min_ndim - sum(c.ndim for c in consts if c is not None)
    out = call.writes_out and not matmul
    if need <= 0 or (matmul and any(c is not None and c.ndim >= 2 for c in consts)):
        return Inline(func, dtype, guarded, kernel, want, const_ndims, matmul, writes_out=out)
    return Inline(func, dtype, guarded, kernel, want, const_ndims, matmul, guarded, need, out)
