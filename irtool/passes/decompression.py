"""Weight decompression subgraphs, folded once at compile time and computed as OpenVINO does.

Compressed weights (NNCF, ``compress_to_fp16``, optimum) come as a subgraph on constants::

    Const(u4|i4|u8|i8|nf4|f4e2m1|f8*) -> Convert(f16) -> [Subtract(Convert(zero point))]
        -> Multiply(scale: f16, or Convert(Const f8e8m0)) -> [Reshape] -> Convert(f32)

Read op by op, the spec rounds every f16 intermediate to f16. OpenVINO's CPU plugin does
not: it fuses the subgraph into the consuming layer and computes ``(w - zp) * scale`` in
f32 on the converted values (each exact in f32), then uses that f32 weight. irtool
follows the CPU plugin: each layer of such a chain is folded into a constant at compile
time (the same value every run), and a ``Convert`` to f32 at the end of the chain gets
the f32 result of the whole chain instead of the f16-rounded one.

The rules (anything else runs as a normal step):

* a chain starts at a ``Convert`` to f16 or bf16 of a constant whose every value f32
  holds exactly (``exact_source``: floats and integers of 16 bits or fewer); its value is
  the converted one (rounded to f16 as the spec says), its shadow that value in f32;
* ``Subtract``/``Multiply`` continue it only when every input has an exact f32 shadow,
  and ``Reshape``/``Unsqueeze``/``Squeeze``/``Transpose`` when their data input does
  (they move values, never change them); each step keeps the spec's value for readers
  outside the chain and computes the shadow in f32;
* only a ``Convert`` to f32 whose input comes out of a chain takes the shadow; every
  other reader sees the spec's f16 values.

Beyond these rules irtool computes what the spec says, every f16 step rounded, where the
CPU plugin still computes in f32: a source of 32 bits or a boolean one, a chain ending in
a Convert to an integer type, an ``Add`` after the scale, a scale folded from other f16
constants (docs/openvino-quirks.md). Those are not the form compressed weights take, and
the spec is the reference irtool judges engines by.

This is the semantics irtool chose (OpenVINO's CPU plugin's numbers), not a speed-up, so
``RunOptions.optimize=False`` leaves it on: the compile pipeline folds it with
``constant_folding.FoldDecompression``, which is not an optimisation.
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import Layer
from ..opset import Op

# Layers a decompression chain passes through (besides Convert).
_CHAIN = {("Subtract", "opset1"), ("Multiply", "opset1"), ("Reshape", "opset1"),
          ("Unsqueeze", "opset1"), ("Squeeze", "opset1"), ("Transpose", "opset1")}
_F32 = np.dtype(np.float32)


def exact_source(layer: Layer, value: np.ndarray) -> np.ndarray | None:
    """The exact f32 value of a Const that can start or feed a chain (f16, bf16 and
    narrower types, which f32 holds exactly), or None."""
    et = layer.element_type
    if et is None or et.kind not in ("float", "int", "uint") or et.bitwidth > 16:
        return None
    try:
        return np.asarray(value).astype(_F32)
    except (TypeError, ValueError):
        return None


def fold(layer: Layer, op: Op, consts: list[np.ndarray | None],
         exact: list[np.ndarray | None],
         chained: list[bool]) -> tuple[np.ndarray, np.ndarray | None] | None:
    """``(value, exact f32 value or None)`` of ``layer`` when it is part of a decompression
    chain on constants, else None (it then runs as a normal step). ``consts``: its constant
    inputs; ``exact``: their exact f32 values; ``chained``: which inputs come out of a
    chain already (one begins with a Convert of a Const to f16 or bf16)."""
    known = [c for c in consts if c is not None]
    if len(known) != len(consts) or len(consts) != len(layer.inputs) or not consts:
        return None
    if layer.type == "Convert" and layer.version == "opset1":
        source = exact[0]
        if source is None:
            return None
        target = op.destination  # type: ignore[attr-defined]
        if target.name == "f32" and chained[0]:
            return source, None  # the chain's end: its f32 value, as OpenVINO computes it
        if target.name in ("f16", "bf16"):
            # The converted values (nf4's table, say, rounded to f16) begin the chain;
            # what follows is computed on them in f32.
            value = op.compute([known[0]])[0]
            return value, value.astype(_F32)
        return None
    if (layer.type, layer.version) not in _CHAIN or not any(chained):
        return None
    if layer.type in ("Subtract", "Multiply"):
        if exact[0] is None or exact[1] is None:
            return None
    elif exact[0] is None or not chained[0]:
        return None
    inputs = [e if e is not None else c for e, c in zip(exact, known)]
    with np.errstate(all="ignore"):
        value = op.compute(known)[0]
        shadow = op.compute(inputs)[0]
    return value, shadow.astype(_F32, copy=False)
