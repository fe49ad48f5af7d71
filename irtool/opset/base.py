"""The operation registry: one small class per OpenVINO operation version.

An ``Op`` is built from a layer's ``<data>`` attributes (strings, as in the IR),
parses them into typed fields once, and then offers

* ``infer(inputs, values)``: output element types and shapes from input ones
  (``values`` holds the constant inputs that are known, else ``None``), and
* ``compute(inputs)``: the numpy kernel, a list of arrays in, a list out, and
* ``numpy_call()``: for an op that is one plain numpy call, that call, so the
  runtime may make it directly instead of calling ``compute`` (None otherwise).

Ops are registered under ``(type, "opsetN")``, where N is the opset that
introduced that version of the operation, exactly as OpenVINO writes the
``version`` attribute; the registry (``irtool.core.registry``, the convention of both
op trees) keys them by N. ``lookup`` also accepts a later opset (``opset8`` for
``Add`` still means ``Add-1``), as OpenVINO's reader does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import numpy as np

from ..core.registry import Registry
from ..ir.graph import Shape, TensorInfo, parse_shape
from ..ir.types import ElementType, element_type


@dataclass(frozen=True)
class NumpyCall:
    """An op computed by one numpy call: for inputs that are plain ndarrays of one common
    dtype, ``func(*inputs)`` returns exactly what ``compute`` returns (same values, same
    dtype), except where the fields below say; there, and for any other inputs, the
    caller must use ``compute``.

    ``bool_result``: the result is boolean, else of the inputs' dtype. ``floats_only``:
    only for float dtypes (``compute`` converts other inputs first). ``half_floats``:
    False when ``compute`` widens 16-bit floats first. ``matmul``: ``func`` is
    ``np.matmul``, whose result is an array only when not both operands are vectors.
    ``writes_out``: ``func(*inputs, buffer)`` computes the same values into ``buffer``
    (an array of the result's shape and dtype, possibly one of the inputs) and returns
    it, as a ufunc does with its ``out`` argument.
    """

    func: Callable[..., np.ndarray]
    arity: int
    bool_result: bool = False
    floats_only: bool = False
    half_floats: bool = True
    matmul: bool = False
    writes_out: bool = False


Kernel = Callable[[list[np.ndarray]], list[np.ndarray]]
"""A compute function: input arrays in, output arrays out (``Op.compute`` and the
runtime's specialised kernels)."""


Attrs = Mapping[str, str]
"""A layer's ``<data>`` attributes, as the IR writes them: text by name."""


class AttributeParseError(ValueError):
    """An attribute that is missing or malformed (wrapped with the layer by callers)."""


def _int64(op_type: str, name: str, raw: str, value: int) -> int:
    """``value`` when it fits OpenVINO's int64 attributes (its reader refuses the rest)."""
    if not -(2**63) <= value < 2**63:
        raise AttributeParseError(f"{op_type}: attribute {name}={raw!r} is outside the int64 "
                                  "range")
    return value


class Op:
    """Base class of every operation. Subclasses set ``type``/``version`` via ``register``."""

    type: ClassVar[str] = ""
    version: ClassVar[str] = ""
    batching: ClassVar[str | None] = None
    """How the op takes one more leading (batch) axis on its inputs, for the pass that
    vectorises independent loops (``irtool.passes.vectorize`` holds the rule of each
    kind): ``"elementwise"`` (numpy broadcasting), ``"matmul"``, ``"softmax"`` (``axis``),
    ``"reduce"`` (axes input), ``"reshape"``, ``"transpose"``, ``"squeeze"``,
    ``"unsqueeze"``, ``"gather"``, ``"concat"``; None: it cannot."""
    fresh_outputs: ClassVar[bool] = False
    """``compute`` returns arrays of its own only: never an input, a view of one, or
    anything it keeps, so the runtime may write into them once they are dead (see
    ``runtime.plan.Reuse``). Holds only for the class that defines ``compute`` (the
    runtime checks there), so a subclass with a ``compute`` of its own must set it again."""
    pure: ClassVar[bool] = True
    """The same inputs give the same outputs on every call. False for random draws
    (RandomUniform, Multinomial) and variables (ReadValue, Assign): no pass may compute
    such an op fewer or more times than the graph says (fold it into a constant, hoist it
    out of a loop), since that changes what it gives."""
    unused_outputs: frozenset[int] = frozenset()
    """Output indices nothing reads (the runtime sets them when it compiles a plan); a kernel
    may skip their work and return an uninitialised array of the right shape and type."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        self.attrs: Attrs = attrs or {}

    # -- attribute parsing (IR attributes are strings) ------------------------
    def _raw(self, name: str, default: object) -> str | None:
        value = self.attrs.get(name)
        if value is None:
            if default is _REQUIRED:
                raise AttributeParseError(f"{self.type}: attribute {name!r} is required")
            return None
        return value

    def attr_str(self, name: str, default: Any = None) -> str:
        raw = self._raw(name, default)
        return default if raw is None else raw

    def attr_int(self, name: str, default: Any = None) -> int:
        raw = self._raw(name, default)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            raise AttributeParseError(
                f"{self.type}: attribute {name}={raw!r} is not an integer"
            ) from None
        return _int64(self.type, name, raw, value)

    def attr_float(self, name: str, default: Any = None) -> float:
        raw = self._raw(name, default)
        if raw is None:
            return default
        try:
            return float(raw)
        except ValueError:
            raise AttributeParseError(
                f"{self.type}: attribute {name}={raw!r} is not a number"
            ) from None

    def attr_bool(self, name: str, default: Any = None) -> bool:
        raw = self._raw(name, default)
        if raw is None:
            return default
        low = raw.strip().lower()
        if low in ("true", "1"):
            return True
        if low in ("false", "0"):
            return False
        raise AttributeParseError(f"{self.type}: attribute {name}={raw!r} is not a boolean")

    def attr_ints(self, name: str, default: Any = None) -> list[int]:
        raw = self._raw(name, default)
        if raw is None:
            return default
        try:
            values = [int(x) for x in raw.split(",") if x.strip()]
        except ValueError:
            raise AttributeParseError(
                f"{self.type}: attribute {name}={raw!r} is not a list of ints"
            ) from None
        return [_int64(self.type, name, raw, v) for v in values]

    def attr_floats(self, name: str, default: Any = None) -> list[float]:
        raw = self._raw(name, default)
        if raw is None:
            return default
        try:
            return [float(x) for x in raw.split(",") if x.strip()]
        except ValueError:
            raise AttributeParseError(
                f"{self.type}: attribute {name}={raw!r} is not a list of numbers"
            ) from None

    def attr_type(self, name: str, default: Any = None) -> ElementType:
        raw = self._raw(name, default)
        if raw is None:
            raw = default
        try:
            return element_type(raw)
        except KeyError:
            raise AttributeParseError(
                f"{self.type}: attribute {name}={raw!r} is not an element type"
            ) from None

    def attr_shape(self, name: str, default: Any = None) -> Shape | None:
        raw = self._raw(name, default)
        return parse_shape(default if raw is None else raw)

    # -- semantics -----------------------------------------------------------
    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        """Output types and shapes.

        The default runs the kernel on stand-in data when every input shape is
        static: the known constant values, zeros elsewhere. Ops whose output
        shape depends on input values that may be unknown, or that must handle
        dynamic shapes, override this.
        """
        if not all(i.is_static for i in inputs):
            raise NotImplementedError(f"{self.type}-{self.version}: no inference for dynamic "
                                      "shapes")
        # (every shape is static: checked above)
        args = [v if v is not None else np.zeros(i.shape or (), _stand_in_dtype(i.element_type))
                for i, v in zip(inputs, values)]
        return [TensorInfo.of(np.asarray(out)) for out in self.compute(args)]

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        raise NotImplementedError(f"{self.type}-{self.version} has no kernel")

    def numpy_call(self) -> NumpyCall | None:
        """The one numpy call ``compute`` amounts to, if it is one (see ``NumpyCall``);
        the runtime then calls it directly. None: always call ``compute``."""
        return None


def _stand_in_dtype(et: ElementType) -> np.dtype:
    if et.dtype is None:
        return np.dtype(np.uint8)
    return et.dtype


_REQUIRED = object()
REQUIRED = _REQUIRED
"""Pass as ``default`` to make an attribute mandatory."""

_REGISTRY: Registry[type[Op]] = Registry("")
OpT = TypeVar("OpT", bound=type[Op])


def _key(version: str) -> int | str:
    """The registry's key of an IR version: N for ``"opsetN"``, else the text itself."""
    if version.startswith("opset") and version[5:].isdigit():
        return int(version[5:])
    return version


def _text(key: int | str) -> str:
    return f"opset{key}" if isinstance(key, int) else key


def register(op_type: str, *versions: str) -> Callable[[OpT], OpT]:
    """Class decorator: register an ``Op`` subclass for ``op_type`` in each opset named."""

    def deco(cls: OpT) -> OpT:
        for version in versions:
            try:
                _REGISTRY.add(op_type, _key(version), cls)
            except ValueError:
                raise ValueError(f"{op_type}-{version} is registered twice") from None
        if "type" not in cls.__dict__:
            cls.type = op_type
            cls.version = versions[0]
        return cls

    return deco


def lookup(op_type: str, version: str) -> type[Op] | None:
    """The class for ``op_type`` in ``version`` (``"opsetN"``), or None."""
    return _REGISTRY.find(op_type, _key(version))


def registered() -> list[tuple[str, str]]:
    """Every registered ``(type, version)`` pair, sorted."""
    return sorted((op_type, _text(key)) for op_type, key, _ in _REGISTRY)


def make_op(op_type: str, version: str, attrs: Mapping[str, str] | None = None) -> Op:
    """Instantiate the op for a layer; ``KeyError`` when no class is registered."""
    cls = lookup(op_type, version)
    if cls is None:
        raise KeyError(f"{op_type}-{version}")
    return cls(attrs)


def broadcast_shapes(*shapes: Shape | None) -> Shape | None:
    """NumPy broadcasting on possibly dynamic shapes (-1 dims, None rank)."""
    known = [s for s in shapes if s is not None]
    if len(known) != len(shapes):
        return None
    rank = max((len(s) for s in known), default=0)
    out = []
    for axis in range(rank):
        dims = [s[axis - rank + len(s)] for s in known if axis - rank + len(s) >= 0]
        static = {d for d in dims if d >= 0 and d != 1}
        if len(static) > 1:
            raise ValueError(f"shapes {shapes} do not broadcast")
        if static:
            out.append(static.pop())
        elif any(d < 0 for d in dims):
            out.append(-1)
        else:
            out.append(1)
    return tuple(out)
