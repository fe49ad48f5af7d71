"""The record that binds an IR's ``.xml`` to the ``.bin`` saved with it.

``irtool.save`` writes it into the model's ``<rt_info>`` (OpenVINO reads it as plain
model rt_info and keeps it)::

    <irtool_weights>
        <consts_sha256 value="..."/>  <!-- every Const's element_type, shape, offset, size -->
        <data_crc32 value="..."/>     <!-- the bytes the Consts read, each range once -->
    </irtool_weights>

Reading, while the Consts the ``.xml`` declares still match ``consts_sha256`` (no other
tool rewrote them), their bytes must match ``data_crc32``: otherwise the ``.bin`` beside
the ``.xml`` is another model's. The data checksum is CRC-32 over the distinct byte ranges
the Consts read, in the order of their offsets, which is the ``.bin`` as ``save`` writes it
(each distinct payload once, one after the other): ``save`` computes it while it streams
the weights out, with no second pass over them, and a CRC tells any accidental mismatch
(another model's .bin, a truncated copy) at several times SHA-256's speed. Records written
before hold ``data_sha256`` (every Const's size and bytes, in document order) and are
still checked. The reader moves the record out of ``Model.rt_info`` into
``Model.weights_record``; every save writes a fresh one.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Iterator

from ..graph import ConstData, Graph, Model, RTNode

RECORD_TAG = "irtool_weights"
_CONSTS, _DATA, _DATA_SHA256 = "consts_sha256", "data_crc32", "data_sha256"


class WeightsDigest:
    """The record's two digests: Consts fed in document order (depth first through bodies)
    with ``add_const``, the .bin's bytes in the order written with ``add_data``."""

    def __init__(self) -> None:
        self.consts = hashlib.sha256()
        self.data = 0

    def add_const(self, element_type: str, shape: str, offset: int, size: int) -> None:
        self.consts.update(f"{element_type}|{shape}|{offset}|{size};".encode())

    def add_data(self, chunk: bytes | memoryview) -> None:
        self.data = zlib.crc32(chunk, self.data)

    def record(self) -> RTNode:
        return RTNode(RECORD_TAG, children=[
            RTNode(_CONSTS, {"value": self.consts.hexdigest()}),
            RTNode(_DATA, {"value": f"{self.data:08x}"})])


def _consts(graph: Graph) -> Iterator[tuple[str, str, int, int, ConstData]]:
    for _, layer in graph.walk():
        if layer.type == "Const" and layer.const is not None:
            yield (layer.attrs.get("element_type", ""), layer.attrs.get("shape", ""),
                   layer.const.offset, layer.const.size, layer.const)


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
    if not record or _CONSTS not in record or (_DATA not in record
                                               and _DATA_SHA256 not in record):
        return None
    digest = WeightsDigest()
    declared = list(_consts(model.graph))
    for et, shape, offset, size, _ in declared:
        digest.add_const(et, shape, offset, size)
    if digest.consts.hexdigest() != record[_CONSTS]:
        return None  # the Consts were rewritten since irtool saved them: the record is stale
    if _DATA in record:
        ranges = {(offset, size): const for *_, offset, size, const in declared}
        for key in sorted(ranges):
            digest.add_data(ranges[key].view())
        same = f"{digest.data:08x}" == record[_DATA]
    else:  # written by an earlier irtool
        old = hashlib.sha256()
        for *_, size, const in declared:
            old.update(size.to_bytes(8, "little"))
            old.update(const.view())
        same = old.hexdigest() == record[_DATA_SHA256]
    if not same:
        return ("the .bin does not hold the weights this .xml was saved with (its "
                f"{RECORD_TAG} record differs): is it another model's .bin?")
    return None
