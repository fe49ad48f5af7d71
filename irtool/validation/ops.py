"""Is a layer's ``(type, version)`` an operation anyone knows, with attributes it can read?

Two sources, asked in this order: irtool's own registry (``irtool.opset.lookup``), then
OpenVINO's opsets through its Python API (``NodeFactory("opsetN").create(type)`` makes an
empty node of that type when opset N has one). OpenVINO is imported only for an
operation irtool does not implement, so validating irtool's own IR never loads it.
"""

from __future__ import annotations

import functools

from ..ir.graph import Layer
from .report import Reporter

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


_CONTROL_FLOW = frozenset({("Loop", "opset5"), ("TensorIterator", "opset1"), ("If", "opset8")})
"""Operations the runtime's ``control_flow`` implements, outside the op registry: known
without asking OpenVINO (whose import would cost a conversion half a second)."""


_KNOWN = set(_CONTROL_FLOW)
"""Operations found known (asked for every layer of a model: 10^5 registry lookups);
none is ever forgotten (the registry only grows, by extensions), so a yes stays one."""


def is_known_op(op_type: str, version: str) -> bool:
    """Whether irtool's registry or OpenVINO's opsets define ``op_type`` in ``version``."""
    key = (op_type, version)
    if key in _KNOWN:
        return True
    lookup = _registry_lookup()
    try:
        known = lookup is not None and lookup(op_type, version) is not None
    except Exception:  # a registry bug must not hide the IR's problems
        known = False
    if known or openvino_knows(op_type, version):
        _KNOWN.add(key)
        return True
    return False


# Their attributes are the validator's own business (tensors, control_flow).
_NOT_OPS = frozenset({"Parameter", "Const", "Result", "Loop", "TensorIterator", "If"})


def attribute_problem(op_type: str, version: str, attrs: dict[str, str]) -> str | None:
    """What irtool's op for ``op_type``/``version`` cannot read in ``attrs`` (a word where a
    mode belongs, a number outside int64...), or None; ops irtool does not know: None."""
    if op_type in _NOT_OPS:
        return None
    return _attribute_problem(op_type, version, tuple(sorted(attrs.items())))


@functools.lru_cache(maxsize=4096)  # a large graph repeats a few attribute sets
def _attribute_problem(op_type: str, version: str, items: tuple[tuple[str, str], ...]
                       ) -> str | None:
    lookup = _registry_lookup()
    try:
        cls = lookup(op_type, version) if lookup is not None else None
    except Exception:
        return None
    if cls is None:
        return None
    try:
        cls(dict(items))
    except (ValueError, KeyError, OverflowError) as err:  # AttributeParseError is a ValueError
        return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    return None


def check_op(layer: Layer, scope: str, rep: Reporter) -> None:
    """UNKNOWN_OP and ATTR_VALUE of one layer."""
    if not layer.type:
        return  # the reader reported LAYER_ATTR
    if not is_known_op(layer.type, layer.version):
        rep.add("UNKNOWN_OP", f"operation {layer.type}-{layer.version or '?'} is known "
                "neither to irtool nor to OpenVINO's opsets", layer=layer, scope=scope)
    problem = attribute_problem(layer.type, layer.version, layer.attrs)
    if problem is not None:
        rep.add("ATTR_VALUE", problem, layer=layer, scope=scope)
