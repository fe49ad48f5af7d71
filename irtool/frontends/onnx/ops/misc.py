"""Optional-typed ONNX operators on plain tensors: OptionalHasElement, OptionalGetElement.

An absent optional input is an empty input name; a present one is an ordinary tensor
here (optional values themselves are not tensors and cannot cross the IR).
"""

from __future__ import annotations

import numpy as np

from ..context import NodeContext, Value, onnx_op


@onnx_op("OptionalHasElement", 15, 18, 28)
def optional_has_element(ctx: NodeContext) -> list[Value | None]:
    return [ctx.const(np.asarray(ctx.input(0) is not None))]


@onnx_op("OptionalGetElement", 15, 18, 28)
def optional_get_element(ctx: NodeContext) -> list[Value | None]:
    value = ctx.input(0)
    if value is None:
        raise ctx.error("the optional input is empty")
    return [ctx.op("Identity", "opset16", [value], refine=ctx.onnx_types(0))[0]]
