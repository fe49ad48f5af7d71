"""Is a layer's ``(type, version)`` an operation anyone knows?

Two sources, asked in this order: irtool's own registry (``irtool.opset.lookup``), then
OpenVINO's opsets through its Python API (``NodeFactory("opsetN").create(type)`` makes an
empty node of that type when opset N has one). OpenVINO is imported only for an
operation irtool does not implement, so validating irtool's own IR never loads it.
"""

from __future__ import annotations

import functools

# IR spells a few OpenVINO class names differently (see OpenVINO's serializer).
_CLASS_NAME = {"Const": "Constant", "ReLU": "Relu", "PReLU": "PRelu", "SoftMax": "Softmax"}


@functools.cache
def _node_factory(version: str):  # type: ignore[no-untyped-def]
    """OpenVINO's node factory for ``version`` ("opsetN"), or None (no OpenVINO, no such
    opset in the installed one)."""
    try:
        from openvino._pyopenvino import NodeFactory
    except Exception:  # no OpenVINO (or a broken one): it knows nothing
        return None
    try:
        return NodeFactory(version)
    except Exception:  # "Unsupported opset version requested."
        return None


@functools.cache
def openvino_knows(op_type: str, version: str) -> bool:
    """Whether the installed OpenVINO's opset ``version`` ("opset8") has ``op_type``."""
    factory = _node_factory(version)
    if factory is None:
        return False
    try:
        factory.create(_CLASS_NAME.get(op_type, op_type))
    except Exception:  # "Couldn't create operation": not in this opset
        return False
    return True


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
    lookup = _registry_lookup()
    if lookup is not None:
        try:
            if lookup(op_type, version) is not None:
                return True
        except Exception:  # a registry bug must not hide the IR's problems
            pass
    return openvino_knows(op_type, version)
