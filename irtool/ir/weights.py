"""The record that binds an IR's ``.xml`` to the ``.bin`` saved with it.

``irtool.save`` writes it into the model's ``<rt_info>`` (OpenVINO reads it as plain
model rt_info and keeps it)::

    <irtool_weights>
        <consts_sha256 value="..."/>  <!-- every Const's element_type, shape, offset, size -->
        <data_sha256 value="..."/>    <!-- the bytes those Consts read from the .bin -->
    </irtool_weights>

Reading, while the Consts the ``.xml`` declares still match ``consts_sha256`` (no other
tool rewrote them), their bytes must match ``data_sha256``: otherwise the ``.bin`` beside
the ``.xml`` is another model's. The reader moves the record out of ``Model.rt_info``
into ``Model.weights_record``; every save writes a fresh one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

from .graph import Graph, Model, RTNode

RECORD_TAG = "irtool_weights"
_CONSTS, _DATA = "consts_sha256", "data_sha256"


class WeightsDigest:
    """Both digests over Consts fed in document order (depth first through bodies)."""

    def __init__(self) -> None:
        self.consts = hashlib.sha256()
        self.data = hashlib.sha256()

    def add(self, element_type: str, shape: str, offset: int, size: int,
            payload: bytes | memoryview) -> None:
        self.consts.update(f"{element_type}|{shape}|{offset}|{size};".encode())
        self.data.update(size.to_bytes(8, "little"))
        self.data.update(payload)

    def record(self) -> RTNode:
        return RTNode(RECORD_TAG, children=[
            RTNode(_CONSTS, {"value": self.consts.hexdigest()}),
            RTNode(_DATA, {"value": self.data.hexdigest()})])


def _consts(graph: Graph) -> Iterator[tuple[str, str, int, int, bytes]]:
    for _, layer in graph.walk():
        if layer.type == "Const" and layer.const is not None:
            yield (layer.attrs.get("element_type", ""), layer.attrs.get("shape", ""),
                   layer.const.offset, layer.const.size, layer.const.tobytes())


def split_record(info: list[RTNode] | None) -> tuple[list[RTNode] | None, dict[str, str] | None]:
    """``info`` without the weights record, and the record's values (None: none found)."""
    if not info:
        return info, None
    record = next((n for n in info if n.tag == RECORD_TAG), None)
    if record is None:
        return info, None
    values = {c.tag: c.attrs.get("value", "") for c in record.children}
    return [n for n in info if n is not record], values


def record_mismatch(model: Model) -> str | None:
    """Why the weights do not belong to ``model``'s XML, or None (they do, or there is no
    record that still applies)."""
    record = model.weights_record
    if not record or _CONSTS not in record or _DATA not in record:
        return None
    digest = WeightsDigest()
    declared = list(_consts(model.graph))
    for et, shape, offset, size, _ in declared:
        digest.consts.update(f"{et}|{shape}|{offset}|{size};".encode())
    if digest.consts.hexdigest() != record[_CONSTS]:
        return None  # the Consts were rewritten since irtool saved them: the record is stale
    for *_, size, payload in declared:
        digest.data.update(size.to_bytes(8, "little"))
        digest.data.update(payload)
    if digest.data.hexdigest() != record[_DATA]:
        return ("the .bin does not hold the weights this .xml was saved with (its "
                f"{RECORD_TAG} record differs): is it another model's .bin?")
    return None
