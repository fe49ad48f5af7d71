"""String tensors: StringTensorUnpack-15 and StringTensorPack-15.

irtool holds a ``string`` tensor as a numpy object array of ``str``. Its bytes are UTF-8;
bytes that are not valid UTF-8 survive as surrogate escapes (Python's ``surrogateescape``),
so unpacking what was packed gives the same bytes back, as OpenVINO's byte strings do.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..ir.types import ELEMENT_TYPES
from .base import Op, TensorInfo, register

_I32, _U8, _STRING = ELEMENT_TYPES["i32"], ELEMENT_TYPES["u8"], ELEMENT_TYPES["string"]


def encode(text: object) -> bytes:
    """The bytes of one element of a string tensor."""
    if isinstance(text, bytes):
        return text
    return str(text).encode("utf-8", "surrogateescape")


def decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


@register("StringTensorUnpack", "opset15")
class StringTensorUnpack(Op):
    """A string tensor of shape S -> ``begins`` (i32, S), ``ends`` (i32, S) and ``symbols``
    (u8, 1-D): element i is ``symbols[begins[i]:ends[i]]``, the elements laid end to end."""

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        data = np.asarray(inputs[0])
        items = [encode(s) for s in data.ravel()]
        ends = np.cumsum([len(s) for s in items], dtype=np.int64)
        if ends.size and ends[-1] > np.iinfo(np.int32).max:
            raise ValueError("the strings hold more than 2^31-1 bytes, past i32 offsets")
        begins = np.concatenate([[0], ends[:-1]]) if items else np.zeros(0, np.int64)
        symbols = np.frombuffer(b"".join(items), dtype=np.uint8).copy()
        return [begins.astype(np.int32).reshape(data.shape),
                ends.astype(np.int32).reshape(data.shape), symbols]

    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        shape = inputs[0].shape
        count = None
        if values and values[0] is not None:
            count = sum(len(encode(s)) for s in np.asarray(values[0]).ravel())
        return [TensorInfo(_I32, shape), TensorInfo(_I32, shape),
                TensorInfo(_U8, (-1 if count is None else count,))]


@register("StringTensorPack", "opset15")
class StringTensorPack(Op):
    """``begins`` and ``ends`` (i32 or i64, shape S) and ``symbols`` (u8, 1-D) -> a string
    tensor of shape S whose element i is ``symbols[begins[i]:ends[i]]``. As in OpenVINO,
    ``begins`` and ``ends`` must each ascend, and every range lie within ``symbols``."""

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        begins, ends, symbols = (np.asarray(v) for v in inputs)
        if begins.shape != ends.shape:
            raise ValueError(f"begins {list(begins.shape)} and ends {list(ends.shape)} differ "
                             "in shape")
        if symbols.ndim != 1:
            raise ValueError(f"symbols must be 1-D, not of shape {list(symbols.shape)}")
        raw = np.ascontiguousarray(symbols, dtype=np.uint8).tobytes()
        b, e = begins.ravel().astype(np.int64), ends.ravel().astype(np.int64)
        for name, indices in (("begins", b), ("ends", e)):  # as OpenVINO checks them
            if (np.diff(indices) < 0).any():
                raise ValueError(f"{name} are not in ascending order")
        bad = (b < 0) | (e < b) | (e > len(raw))
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"element {i}: [{b[i]}, {e[i]}) is not a range within the "
                             f"{len(raw)} symbols")
        out = np.empty(b.size, dtype=object)
        for i, (start, stop) in enumerate(zip(b.tolist(), e.tolist())):
            out[i] = decode(raw[start:stop])
        return [out.reshape(begins.shape)]

    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        return [TensorInfo(_STRING, inputs[0].shape)]
