"""Is a layer's ``(type, version)`` an operation anyone knows?

Two sources: irtool's own registry (``irtool.opset.lookup``) and OpenVINO's
opset tables. The tables are read from the C++ headers the ``openvino`` wheel
ships (``include/openvino/opsets/opsetN_tbl.hpp``), which list every operation
of opset N; that costs a few milliseconds and never imports OpenVINO itself.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from pathlib import Path

# IR spells a few OpenVINO class names differently (see OpenVINO's serializer).
_IR_SPELLING = {"Constant": "Const", "Relu": "ReLU", "PRelu": "PReLU", "Softmax": "SoftMax"}
_TABLE_FILE = re.compile(r"^opset(\d+)_tbl\.hpp$")
_ENTRY = re.compile(r"^\s*_OPENVINO_OP_REG\(\s*(\w+)\s*,", re.MULTILINE)


def _openvino_include() -> Path | None:
    spec = importlib.util.find_spec("openvino")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        path = Path(location) / "include" / "openvino" / "opsets"
        if path.is_dir():
            return path
    return None


@functools.cache
def openvino_ops() -> frozenset[tuple[str, str]]:
    """``(type, "opsetN")`` for every operation in every opset of the installed OpenVINO."""
    folder = _openvino_include()
    if folder is None:
        return frozenset()
    pairs: set[tuple[str, str]] = set()
    for path in folder.iterdir():
        match = _TABLE_FILE.match(path.name)
        if not match:
            continue
        version = f"opset{match.group(1)}"
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for name in _ENTRY.findall(text):
            pairs.add((name, version))
            if name in _IR_SPELLING:
                pairs.add((_IR_SPELLING[name], version))
    return frozenset(pairs)


@functools.cache
def _registry_lookup():  # type: ignore[no-untyped-def]
    # The registry package imports every op module; one broken module must not
    # take the validator down with it, so a failed import just means "unknown".
    try:
        from ..opset import lookup
    except Exception:  # any import failure means: no registry
        return None
    return lookup


def is_known_op(op_type: str, version: str) -> bool:
    """Whether irtool's registry or OpenVINO's opsets define ``op_type`` in ``version``."""
    if (op_type, version) in openvino_ops():
        return True
    lookup = _registry_lookup()
    if lookup is None:
        return False
    try:
        return lookup(op_type, version) is not None
    except Exception:  # a registry bug must not hide the IR's problems
        return False
