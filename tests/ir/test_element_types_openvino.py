"""irtool's element-type table (irtool/ir/types.py, kept free of an OpenVINO import so that
reading IR never loads it) says what OpenVINO's Python API says of every ``ov.Type``."""

from __future__ import annotations

import numpy as np
import pytest

from irtool.ir.types import ELEMENT_TYPES

ov = pytest.importorskip("openvino")

OV_TYPES = {name: getattr(ov.Type, name) for name in dir(ov.Type)
            if isinstance(getattr(ov.Type, name), ov.Type)}


def test_same_names() -> None:
    assert set(OV_TYPES) == set(ELEMENT_TYPES)
    for name, t in OV_TYPES.items():
        assert t.get_type_name() == name


@pytest.mark.parametrize("name", sorted(set(OV_TYPES) - {"dynamic", "string"}))
def test_bitwidth_kind_and_dtype(name: str) -> None:
    ours, theirs = ELEMENT_TYPES[name], OV_TYPES[name]
    assert ours.bitwidth == theirs.bitwidth
    if name != "nf4":  # OpenVINO calls NF4 (4-bit NormalFloat codes) not real
        assert ours.is_float == theirs.is_real()
    if name not in ("boolean", "nf4"):  # OpenVINO calls boolean signed, NF4 unsigned codes
        assert ours.is_signed == theirs.is_signed()
    native = np.dtype(theirs.to_dtype())
    if ours.dtype is None:  # u1, u2, u3, u6, nf4: numpy has no such type; bytes stay opaque
        assert not hasattr(np, name)
        return
    if ours.dtype != native:
        # OpenVINO's Python API carries these bits in another numpy type of the same size
        # (bf16 as float16, f8 as uint8, 4-bit packed in uint8/int8); irtool's is ml_dtypes'.
        assert ours.dtype.type.__module__.startswith("ml_dtypes"), ours.dtype
        assert ours.dtype.itemsize == native.itemsize
