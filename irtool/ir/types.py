"""OpenVINO element types: names, IR precision names, bit widths, numpy dtypes.

The table follows ``ov::element::Type``. Types numpy cannot hold natively
(bf16, the f8 and f4 families, 4-bit integers) map to ``ml_dtypes`` when it is
installed (a dependency of irtool); u1/u2/u3/u6/nf4 have no numpy dtype at all: a
Const of u1/u2/u3/u6 unpacks to one uint8 per element, nf4 to the float32 values of its
codes (``unpack``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

try:  # onnx requires ml_dtypes, so this is normally present
    import ml_dtypes
except ImportError:  # pragma: no cover - depends on the environment
    ml_dtypes = None  # type: ignore[assignment]


@dataclass(frozen=True)
class ElementType:
    """One element type: ``name`` as in ``<data element_type=...>``, ``precision``
    as in ``<port precision=...>``."""

    name: str
    precision: str
    bitwidth: int
    kind: str  # "float", "int", "uint", "bool", "string", "dynamic"
    dtype: np.dtype | None

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_integral(self) -> bool:
        return self.kind in ("int", "uint")

    @property
    def is_signed(self) -> bool:
        return self.kind in ("int", "float")

    def nbytes(self, count: int) -> int:
        """Bytes that ``count`` packed elements take in a .bin."""
        if self.kind == "string":
            raise ValueError("string tensors have no fixed size")
        if self.name in _GROUPED:  # whole groups of 3 bytes (see unpack)
            group = _GROUPED[self.name]
            return (count + group - 1) // group * 3
        return (count * self.bitwidth + 7) // 8

    def __str__(self) -> str:
        return self.name


# u3 and u6 come in groups of 3 bytes: 8 u3 or 4 u6 elements each (see unpack).
_GROUPED = {"u3": 8, "u6": 4}


def _ml(name: str) -> np.dtype | None:
    # An older ml_dtypes lacks the newest types (float8_e8m0fnu, float4_e2m1fn): no dtype then.
    found = getattr(ml_dtypes, name, None) if ml_dtypes is not None else None
    return np.dtype(found) if found is not None else None


_TABLE = [
    ElementType("dynamic", "DYNAMIC", 0, "dynamic", None),
    ElementType("boolean", "BOOL", 8, "bool", np.dtype(np.bool_)),
    ElementType("bf16", "BF16", 16, "float", _ml("bfloat16")),
    ElementType("f16", "FP16", 16, "float", np.dtype(np.float16)),
    ElementType("f32", "FP32", 32, "float", np.dtype(np.float32)),
    ElementType("f64", "FP64", 64, "float", np.dtype(np.float64)),
    ElementType("i4", "I4", 4, "int", _ml("int4")),
    ElementType("i8", "I8", 8, "int", np.dtype(np.int8)),
    ElementType("i16", "I16", 16, "int", np.dtype(np.int16)),
    ElementType("i32", "I32", 32, "int", np.dtype(np.int32)),
    ElementType("i64", "I64", 64, "int", np.dtype(np.int64)),
    ElementType("u1", "BIN", 1, "uint", None),  # OpenVINO writes u1 ports as BIN
    ElementType("u2", "U2", 2, "uint", None),
    ElementType("u3", "U3", 3, "uint", None),
    ElementType("u4", "U4", 4, "uint", _ml("uint4")),
    ElementType("u6", "U6", 6, "uint", None),
    ElementType("u8", "U8", 8, "uint", np.dtype(np.uint8)),
    ElementType("u16", "U16", 16, "uint", np.dtype(np.uint16)),
    ElementType("u32", "U32", 32, "uint", np.dtype(np.uint32)),
    ElementType("u64", "U64", 64, "uint", np.dtype(np.uint64)),
    ElementType("nf4", "NF4", 4, "float", None),
    ElementType("f8e4m3", "F8E4M3", 8, "float", _ml("float8_e4m3fn")),
    ElementType("f8e5m2", "F8E5M2", 8, "float", _ml("float8_e5m2")),
    ElementType("f4e2m1", "F4E2M1", 4, "float", _ml("float4_e2m1fn")),
    ElementType("f8e8m0", "F8E8M0", 8, "float", _ml("float8_e8m0fnu")),
    ElementType("string", "STRING", 8, "string", np.dtype(object)),
]

ELEMENT_TYPES: dict[str, ElementType] = {t.name: t for t in _TABLE}

# Spellings met in IR files besides the canonical ones (older writers, hand-written IR).
_ALIASES = {
    "undefined": "dynamic",
    "UNSPECIFIED": "dynamic",
    "bool": "boolean",
    "FP8E4M3": "f8e4m3",
    "FP8E5M2": "f8e5m2",
}
_BY_ANY_NAME: dict[str, ElementType] = {}
for _t in _TABLE:
    _BY_ANY_NAME[_t.name] = _t
    _BY_ANY_NAME[_t.precision] = _t
    _BY_ANY_NAME[_t.name.upper()] = _t
for _alias, _name in _ALIASES.items():
    _BY_ANY_NAME[_alias] = ELEMENT_TYPES[_name]


def element_type(name: str | ElementType) -> ElementType:
    """The element type called ``name`` (an element_type or a precision spelling).

    Raises ``KeyError`` with the offending spelling when it is unknown.
    """
    if isinstance(name, ElementType):
        return name
    try:
        return _BY_ANY_NAME[name]
    except KeyError:
        raise KeyError(name) from None


def from_numpy(dtype: np.dtype | type) -> ElementType:
    """The element type of a numpy dtype (``np.str_``/object map to string)."""
    dt = np.dtype(dtype)
    if dt.kind in ("U", "S", "O"):
        return ELEMENT_TYPES["string"]
    for t in _TABLE:
        if t.dtype is not None and t.dtype == dt and t.kind != "string":
            return t
    raise KeyError(f"no OpenVINO element type for numpy dtype {dt}")


def from_raw_bits(value: np.ndarray, et: ElementType) -> np.ndarray:
    """``value`` read as ``et`` when it holds raw bits of ``et``'s width: numpy's ``.npz``
    stores the ml_dtypes types (bf16, the f8 types, f4e2m1, i4, u4: one element in 2 or 1
    bytes) as ``|V2`` / ``|V1`` entries, which a model that declares that type takes as
    its own. Anything else comes back unchanged."""
    if (value.dtype.kind == "V" and value.dtype.names is None and et.dtype is not None
            and value.dtype.itemsize == et.dtype.itemsize
            and et.dtype.type.__module__ == "ml_dtypes"):
        return value.view(et.dtype)
    return value


# The 16 values of OpenVINO's nf4 codes (NormalFloat4 of QLoRA; ov::ConvertNF4's table).
NF4_VALUES = np.array([
    -1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
    -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
    0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224,
    0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0], dtype=np.float32)


def unpack(data: bytes, et: ElementType, count: int) -> np.ndarray:
    """Unpack ``count`` sub-byte elements (u1, u2, u4, i4, nf4, f4e2m1...), one per byte.

    OpenVINO packs u1 most significant bit first, u2 and the 4-bit types low bits first.
    Integers come out as uint8/int8; f4e2m1 as ml_dtypes' ``float4_e2m1fn`` (one byte
    each); nf4 as the float32 values its codes stand for (numpy has no nf4 type, and
    Convert, the one operation that reads nf4, gives those values).
    """
    raw = np.frombuffer(data, dtype=np.uint8)
    if et.bitwidth == 1:
        return np.unpackbits(raw)[:count]
    if et.bitwidth == 4:
        out = np.empty(raw.size * 2, dtype=np.uint8)
        out[0::2] = raw & 0x0F
        out[1::2] = raw >> 4
        out = out[:count]
        if et.name == "nf4":
            return NF4_VALUES[out]
        if et.name == "f4e2m1" and et.dtype is not None:
            return out.view(et.dtype)
        if et.kind == "int":
            return ((out.astype(np.int8) ^ 8) - 8).astype(np.int8)
        return out
    if et.bitwidth == 2:
        shifts = np.array([0, 2, 4, 6], dtype=np.uint8)
        return ((raw[:, None] >> shifts) & 3).reshape(-1)[:count]
    if et.name in _GROUPED:
        # Per group of 3 bytes, most significant bits first: u3 keeps each element's two
        # low bits in bytes 0-1 (4 a byte) and its high bit in byte 2 (8 a byte); u6 its
        # four low bits in bytes 0-1 (2 a byte) and its two high bits in byte 2 (4 a byte).
        groups = raw[:raw.size // 3 * 3].reshape(-1, 3)
        if et.name == "u3":
            low = (groups[:, :2, None] >> np.array([6, 4, 2, 0], np.uint8)) & 3
            high = (groups[:, 2:, None] >> np.array([7, 6, 5, 4, 3, 2, 1, 0], np.uint8)) & 1
            values = low.reshape(-1, 8) | (high.reshape(-1, 8) << 2)
        else:
            low = (groups[:, :2, None] >> np.array([4, 0], np.uint8)) & 15
            high = (groups[:, 2:, None] >> np.array([6, 4, 2, 0], np.uint8)) & 3
            values = low.reshape(-1, 4) | (high.reshape(-1, 4) << 4)
        return values.reshape(-1)[:count].astype(np.uint8)
    raise ValueError(f"cannot unpack element type {et.name}")
