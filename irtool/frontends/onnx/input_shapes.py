"""Input shapes fixed at conversion, as ``ovc --input "x[1,?],y[2,3]"`` fixes them.

``parse_input_option`` reads ovc's spelling; ``fix_input_shapes`` writes the dims into
the ONNX graph's input declarations before conversion, so that ONNX shape inference
and irtool's own carry them through the model (a ``?`` or ``-1`` keeps a dim dynamic).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import onnx

from ...core.errors import ConversionError

InputShapes = Mapping[str, Sequence[int | None]]

_ITEM = re.compile(r"\s*([^\[\],]+?)\s*\[([^\]]*)\]\s*(?:,|$)")


def parse_input_option(text: str) -> dict[str, tuple[int | None, ...]]:
    """``"x[1,?],y[2,3]"`` -> ``{"x": (1, None), "y": (2, 3)}``; ``?`` and ``-1`` are
    dynamic, ``[]`` is a scalar. Raises ``ValueError`` saying what is wrong."""
    shapes: dict[str, tuple[int | None, ...]] = {}
    pos = 0
    text = text.strip()
    while pos < len(text):
        match = _ITEM.match(text, pos)
        if match is None:
            raise ValueError(f"--input {text!r}: expected NAME[D0,D1,...] (ovc's syntax, "
                             f"e.g. x[1,?],y[2,3]) at {text[pos:]!r}")
        name, body = match.group(1), match.group(2)
        dims: list[int | None] = []
        for item in (d.strip() for d in body.split(",")) if body.strip() else ():
            if item in ("?", "-1"):
                dims.append(None)
            elif item.isdigit():
                dims.append(int(item))
            else:
                raise ValueError(f"--input {name}[{body}]: {item!r} is not a dimension "
                                 "(a number, or ? for a dynamic one; ranges are not supported)")
        if name in shapes:
            raise ValueError(f"--input: {name} is given twice")
        shapes[name] = tuple(dims)
        pos = match.end()
    if not shapes:
        raise ValueError("--input: no NAME[dims] given")
    return shapes


def fix_input_shapes(proto: onnx.ModelProto, shapes: InputShapes,
                     source: str | None = None) -> onnx.ModelProto:
    """A copy of ``proto`` whose graph inputs declare ``shapes``.

    A name that is no graph input, a rank other than the declared one, or a static
    dim other than the declared one is a ``ConversionError`` naming the input.
    """
    inputs = {vi.name: vi for vi in proto.graph.input}
    initialized = {t.name for t in proto.graph.initializer}
    takes = ", ".join(n for n in inputs if n not in initialized) or "no inputs"
    for name in shapes:
        if name not in inputs:
            raise ConversionError(f"--input {name}: no such input; the model takes {takes}",
                                  file=source)
    copy = onnx.ModelProto()
    copy.CopyFrom(proto)
    for vi in copy.graph.input:
        if vi.name not in shapes:
            continue
        dims = shapes[vi.name]
        if not vi.type.HasField("tensor_type"):
            raise ConversionError(f"--input {vi.name}: not a tensor input", file=source)
        tensor = vi.type.tensor_type
        if tensor.HasField("shape"):
            declared = tensor.shape.dim
            if len(declared) != len(dims):
                raise ConversionError(f"--input {vi.name}: {len(dims)} dims given, the model "
                                      f"declares rank {len(declared)}", file=source)
            for i, (d, want) in enumerate(zip(declared, dims)):
                if want is not None and d.HasField("dim_value") and d.dim_value != want:
                    raise ConversionError(f"--input {vi.name}: dim {i} is {d.dim_value} in "
                                          f"the model, not {want}", file=source)
        kept = [d for d in tensor.shape.dim] if tensor.HasField("shape") else []
        tensor.ClearField("shape")
        tensor.shape.SetInParent()  # a declared shape, even of rank 0
        for i, want in enumerate(dims):
            dim = tensor.shape.dim.add()
            if want is not None:
                dim.dim_value = want
            elif i < len(kept):  # "?" keeps what the model says of that dim
                dim.CopyFrom(kept[i])
    return copy
