"""Does the ``.bin`` belong to the ``.xml``? Rules on the weights file as a whole."""

from __future__ import annotations

from ..core.diagnostics import Diagnostic
from ..ir.graph import Model
from ..ir.serde.weights import record_mismatch
from .codes import severity


def const_extent(model: Model) -> int:
    """The end of the last byte any Const reads from the weights."""
    end = 0
    for _, layer in model.graph.walk():
        if layer.type == "Const" and layer.const is not None:
            end = max(end, layer.const.offset + layer.const.size)
    return end


def check_weights(model: Model, bin_size: int, file: str) -> list[Diagnostic]:
    """BIN_SIZE: OpenVINO, its converters and irtool write a .bin that ends with the last
    Const's bytes, so a longer one is another model's. BIN_MISMATCH: irtool's record of
    the weights (``irtool.ir.serde.weights``) says the bytes are not the ones saved."""
    found = []
    extent = const_extent(model)
    if bin_size > extent:
        found.append(Diagnostic(
            "BIN_SIZE", f"the .bin holds {bin_size} bytes but the Consts use only the first "
            f"{extent}: it does not belong to this .xml", file, model.graph.line,
            severity=severity("BIN_SIZE")))
    why = record_mismatch(model)
    if why is not None:
        found.append(Diagnostic("BIN_MISMATCH", why, file, model.graph.line,
                                severity=severity("BIN_MISMATCH")))
    return found
