"""The values of ONNX tensors kept outside the protobuf message, read lazily.

Two kinds of tensor say ``data_location=EXTERNAL``: those of a model saved with external
data (``onnx.save_model(..., save_as_external_data=True)``; models over protobuf's 2 GiB
are stored that way) and those ``skeleton.read_skeleton`` left in the ``.onnx`` file
itself. Both are ``(location, offset, length)`` relative to the model's folder, and both
become read-only arrays over one shared ``mmap`` of each file: nothing is read until the
values are, and the pages can be dropped again by the kernel. ``ExternalData.source``
says which file bytes an array is, so that ``save`` can copy them file to file.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto

# Element types whose numpy dtype (onnx's own table) is also their byte layout in
# ``raw_data``; the others (4-bit types, strings) are unpacked by onnx's numpy_helper.
# (getattr: the 4- and 2-bit types are newer than irtool's lowest onnx, 1.15.)
_PACKED = {TensorProto.STRING, TensorProto.UNDEFINED}
_PACKED |= {getattr(TensorProto, n) for n in ("INT4", "UINT4", "FLOAT4E2M1", "INT2", "UINT2")
            if hasattr(TensorProto, n)}


class ExternalData:
    """Resolves external tensors against one base folder, mapping each file once."""

    def __init__(self, base_dir: str | os.PathLike[str] | None) -> None:
        self.base_dir = None if base_dir is None else Path(base_dir)
        self._maps: dict[Path, mmap.mmap | bytes] = {}
        # id of an array handed out -> (its file, offset): what ``source`` answers.
        self._sources: dict[int, tuple[np.ndarray, str, int]] = {}

    def array(self, tensor: TensorProto, what: str,
              fail: Callable[[str], Exception]) -> np.ndarray:
        """The values of the external ``tensor`` (read-only; a view of the file where its
        bytes are its values). Errors name ``what`` and the file: ``fail(message)``."""
        info = {e.key: e.value for e in tensor.external_data}
        location = info.get("location")
        if not location:
            raise fail(f"{what} is external data without a location")
        if self.base_dir is None:
            raise fail(f"{what} is in external data file {location!r}: give the folder it is "
                       "in (base_dir) or convert by path")
        path = self._resolve(location, what, fail)
        try:
            offset = int(info.get("offset", "0"))
            length = int(info["length"]) if "length" in info else None
        except ValueError:
            raise fail(f"{what}: external data offset/length are not integers: "
                       f"{info.get('offset')!r}, {info.get('length')!r}") from None
        buf = self._map(path, what, fail)
        size = len(buf)
        if length is None:
            length = max(size - offset, 0)
        if offset < 0 or length < 0 or offset + length > size:
            raise fail(f"{what}: external data file {path} is truncated: the tensor needs bytes "
                       f"{offset}..{offset + length}, the file has {size}")
        if tensor.data_type in _PACKED:
            return self._unpacked(tensor, buf, offset, length, what, fail)
        dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type))
        dims = tuple(tensor.dims)
        count = 1
        for d in dims:
            count *= d
        if count * dtype.itemsize != length:
            raise fail(f"{what}: {length} bytes of external data in {path} do not hold "
                       f"{count} elements of {dtype} (dims {list(dims)})")
        if count == 0:
            return np.zeros(dims, dtype)
        array = np.frombuffer(buf, dtype=dtype.newbyteorder("<"), count=count,
                              offset=offset).reshape(dims)
        self._sources[id(array)] = (array, str(path), offset)
        return array

    def source(self, array: np.ndarray) -> tuple[str, int] | None:
        """The file and offset whose bytes ``array`` (as ``array`` returned it) is."""
        found = self._sources.get(id(array))
        return None if found is None or found[0] is not array else found[1:]

    def _resolve(self, location: str, what: str, fail: Callable[[str], Exception]) -> Path:
        assert self.base_dir is not None
        if os.path.isabs(location):
            raise fail(f"{what}: external data location {location!r} must be relative to "
                       "the model's folder")
        path = self.base_dir / location
        base = self.base_dir.resolve()
        if not path.resolve().is_relative_to(base):
            raise fail(f"{what}: external data location {location!r} is outside the model's "
                       f"folder {self.base_dir}")
        return path

    def _map(self, path: Path, what: str, fail: Callable[[str], Exception]
             ) -> mmap.mmap | bytes:
        buf = self._maps.get(path)
        if buf is None:
            try:
                with open(path, "rb") as f:
                    size = os.fstat(f.fileno()).st_size
                    buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
            except OSError as err:
                raise fail(f"{what}: cannot read external data file {path}: "
                           f"{err.strerror}") from None
            self._maps[path] = buf
        return buf

    @staticmethod
    def _unpacked(tensor: TensorProto, buf: mmap.mmap | bytes, offset: int, length: int,
                  what: str, fail: Callable[[str], Exception]) -> np.ndarray:
        """Types whose stored layout is not numpy's: through onnx's numpy_helper (a copy;
        such tensors are small or rare)."""
        inline = TensorProto()
        inline.CopyFrom(tensor)
        del inline.external_data[:]
        inline.ClearField("data_location")
        inline.raw_data = bytes(buf[offset:offset + length])
        try:
            return onnx.numpy_helper.to_array(inline)
        except Exception as err:  # ValueError, TypeError: numpy_helper's words
            text = (str(err).strip().splitlines() or [""])[0]
            raise fail(f"cannot read {what}: {type(err).__name__}: {text}") from None


__all__ = ["ExternalData"]
