"""Facts about a Loop that passes prove before rewriting it: constant inputs, a trip count
that is provably ``X.shape[k]`` of a given ``X``, a condition that is constantly true.

A fact is accepted only through these rules, each of which holds for every value the
tensors can take at run time (not just typical ones); anything else is "not proven" and
the pass leaves the loop alone.

* **A constant** is a ``Const`` layer with a static shape and element type, read as numpy.
  A constant trip count ``t`` equals ``X.shape[k]`` only when ``X``'s port declares that
  dim static and equal to ``t`` (a declared dim is checked at run time).
* **A length** ``X.shape[k]`` is ``Gather(ShapeOf(X), k, axis 0)`` (``batch_dims`` 0, a
  one-element constant index) or ``Slice(ShapeOf(X), s, s + 1, step 1, axes [0])`` (one
  element, ``s`` and ``s + 1`` naming the same element once normalised by the rank;
  ``Slice(shape, -1, 0)`` is empty, not the last dim). Negative indices need a known rank.
  ``ShapeOf`` must give i64 (ShapeOf-1, or ShapeOf-3 with ``output_type="i64"``), or an
  i32 dim that is declared static: an i32 ``ShapeOf`` of a dim of 2**31 or more wraps.
* **Value-preserving steps** between the length and the trip count:

  - ``Squeeze``, ``Unsqueeze``, ``Reshape`` of the one-element tensor the ``Gather`` or
    ``Slice`` above gives (any reshape of one element keeps its value);
  - ``Convert`` from a type every value of which the target type holds exactly
    (``exact_convert``): a widening integer cast (i32 -> i64, u8 -> i16...), an integer
    to a float whose significand holds every value of it (i16 -> f32, i32 -> f64), a
    float to a wider float. Never a narrowing integer cast (it wraps: 260 as u8 is 4),
    never to or from boolean (any non-zero is 1), never a float to an integer (it
    truncates), never an integer to a float that rounds it (2049 as f16 is 2048).
* **An offset** ``base + c`` (``offset_from``): a one-element signed integer computed from
  ``base`` by value-preserving steps and ``Add``/``Subtract`` of one-element integer
  constants, where the caller bounds ``base`` and checks that ``|base| + sum(|c|)`` fits
  the narrowest type on the way (``Offset.exact_for``: no step wraps). Unsigned steps are
  refused (they wrap below zero).
* **An unclamped trip count**: ``Maximum(M, 0)`` with ``0`` a one-element constant (the
  ONNX converter's guard: a negative ONNX M is no iteration) is ``M`` where ``M`` is a
  length, because a length is never negative. Any other lower bound is not:
  ``Maximum(len, 2)`` is 2 for a length of 1.
* **A constant true condition**: a one-element boolean ``Const`` that is true.
* **A pure body** (``impure_layer``): computing a layer fewer times than the graph says
  (once for all iterations) gives the same values only when every call with the same
  inputs gives the same outputs. That holds for an operation irtool knows whose class
  says ``Op.pure`` (not a random draw, not a ReadValue/Assign), and for a Loop,
  TensorIterator or If whose bodies, at any depth, hold only such layers. An operation
  irtool does not know, or a user's (``--extension``), is not proven pure.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..ir.graph import Graph, Layer
from ..ir.types import ElementType, element_type
from ..opset import make_op

# Ops that pass a one-element tensor through unchanged in value (see the module docstring:
# the chain they sit in holds one element by construction).
_RESHAPES = ("Squeeze", "Unsqueeze", "Reshape")
_I64 = element_type("i64")
_SIGNIFICAND = {"f16": 11, "bf16": 8, "f32": 24, "f64": 53}
"""Bits of significand (with the implicit one) of the floats an integer converts into
exactly when its magnitude fits."""


def iterations(graph: Graph, type: str) -> Iterator[tuple[Graph, Layer]]:
    """Every ``type`` layer with a body (Loop, TensorIterator) in ``graph`` and the bodies
    in it, inner ones first, with the graph that holds it."""
    for layer in graph.layers:
        for body in layer.bodies.values():
            yield from iterations(body, type)
        if layer.type == type and "body" in layer.bodies:
            yield graph, layer


def const_of(graph: Graph, src: tuple[int, int] | None) -> np.ndarray | None:
    """The value at ``src`` when a ``Const`` produces it, else None."""
    if src is None:
        return None
    layer = graph.layer(src[0])
    if layer.type != "Const" or layer.const is None:
        return None
    try:
        return layer.const_value()
    except ValueError:
        return None


def input_source(graph: Graph, layer: Layer, index: int) -> tuple[int, int] | None:
    """``(layer, port)`` feeding input ``index`` of ``layer``, or None."""
    return graph.source(layer.id, layer.inputs[index].id) if index < len(layer.inputs) else None


def scalar_int(value: np.ndarray | None) -> int | None:
    """The one integer ``value`` holds, else None."""
    if value is None or value.size != 1 or value.dtype.kind not in "iu":
        return None
    return int(value.reshape(-1)[0])


def all_true(value: np.ndarray | None) -> bool:
    """Is ``value`` a one-element boolean True?"""
    return value is not None and value.dtype == np.bool_ and value.size == 1 and bool(value.all())


_PLAIN = ("Parameter", "Result", "Const")


def impure_layer(graph: Graph) -> Layer | None:
    """The first layer of ``graph``, or of a body nested in it at any depth, that is not
    proven pure (see the module docstring), else None."""
    for _, layer in graph.walk():
        if layer.type in _PLAIN or layer.bodies:
            continue  # a control-flow layer is as pure as its bodies, which walk() visits
        try:
            op = make_op(layer.type, layer.version, layer.attrs)
        except (KeyError, ValueError):
            return layer
        if not op.pure or not type(op).__module__.startswith("irtool.opset."):
            return layer
    return None


def _value_bits(et: ElementType) -> int:
    """Bits of magnitude an integer type's values need (i8: 7 and the sign, u8: 8)."""
    return et.bitwidth - 1 if et.kind == "int" else et.bitwidth


def exact_convert(source: ElementType | None, target: ElementType | None) -> bool:
    """Does a ``Convert`` from ``source`` to ``target`` keep every value of ``source``
    exactly (see the module docstring)? Unknown types are not proven."""
    if source is None or target is None:
        return False
    if source == target:
        return True
    if source.kind in ("int", "uint") and target.kind in ("int", "uint"):
        if source.kind == "int" and target.kind == "uint":
            return False  # negatives wrap
        return _value_bits(target) >= _value_bits(source)
    if source.kind in ("int", "uint") and target.kind == "float":
        bits = _SIGNIFICAND.get(target.name)
        return bits is not None and _value_bits(source) <= bits
    if source.kind == "float" and target.kind == "float":
        order = ("f16", "f32", "f64")
        if source.name == "bf16":
            return target.name in ("f32", "f64")
        return source.name in order and target.name in order and \
            order.index(target.name) >= order.index(source.name)
    return False  # to or from boolean, float to integer, anything unknown


def _source_type(graph: Graph, layer: Layer) -> ElementType | None:
    """The element type of what feeds input 0 of ``layer``, when its producer's port and
    ``layer``'s own input port agree on it."""
    src = input_source(graph, layer, 0)
    port = graph.layer(src[0]).port(src[1]) if src is not None else None
    produced = port.precision if port is not None else None
    declared = layer.inputs[0].precision if layer.inputs else None
    if produced is None or (declared is not None and declared != produced):
        return None
    return produced


def _exact(graph: Graph, convert: Layer) -> bool:
    """Does the ``Convert`` layer keep every value of its input (``exact_convert``)?"""
    try:
        target = element_type(convert.attrs.get("destination_type", ""))
    except KeyError:
        return False
    return exact_convert(_source_type(graph, convert), target)


def _through_same_value(graph: Graph, src: tuple[int, int] | None) -> tuple[int, int] | None:
    """``src`` followed back through value-preserving steps (module docstring)."""
    while src is not None:
        layer = graph.layer(src[0])
        if layer.type not in _RESHAPES and not (layer.type == "Convert" and
                                                _exact(graph, layer)):
            return src
        src = input_source(graph, layer, 0)
    return src


def _int_constant(graph: Graph, src: tuple[int, int] | None) -> int | None:
    """The one integer a ``Const`` gives at ``src``, seen through value-preserving steps."""
    return scalar_int(const_of(graph, _through_same_value(graph, src)))


@dataclass(frozen=True)
class Offset:
    """A one-element integer value proven to be ``base + offset`` (``offset_from``)."""

    base: tuple[int, int]
    offset: int
    magnitude: int
    """The sum of the absolute values of the constants added on the way."""
    limit: int
    """One past the largest magnitude the narrowest integer type on the way holds."""

    def exact_for(self, low: int, high: int) -> bool:
        """Is every step exact (no wrap-around) for a ``base`` between ``low`` and
        ``high``? Every partial sum is within ``|base| + magnitude``."""
        return max(abs(low), abs(high)) + self.magnitude < self.limit


def offset_from(graph: Graph, src: tuple[int, int] | None) -> Offset | None:
    """The value at ``src`` as ``base + offset`` when it is one integer computed from
    ``base`` by value-preserving steps (module docstring) and ``Add``/``Subtract`` of
    one-element integer constants; None when it is not (or a port's type is unknown)."""
    offset = magnitude = 0
    limit: int | None = None
    while src is not None:
        layer = graph.layer(src[0])
        port = layer.port(src[1])
        if port is None or port.precision is None or port.precision.kind != "int":
            return None  # unsigned steps wrap below zero
        bound = 2 ** _value_bits(port.precision)
        limit = bound if limit is None else min(limit, bound)
        if layer.type in _RESHAPES or (layer.type == "Convert" and _exact(graph, layer)):
            src = input_source(graph, layer, 0)
            continue
        if layer.type not in ("Add", "Subtract") or len(layer.inputs) != 2:
            break
        left, right = input_source(graph, layer, 0), input_source(graph, layer, 1)
        constant = _int_constant(graph, right)
        if constant is not None:
            offset += constant if layer.type == "Add" else -constant
            src = left
        elif layer.type == "Add" and (constant := _int_constant(graph, left)) is not None:
            offset += constant
            src = right
        else:
            break
        magnitude += abs(constant)
    if src is None or limit is None:
        return None
    return Offset(src, offset, magnitude, limit)


def _slice_index(graph: Graph, pick: Layer, rank: int | None) -> int | None:
    """The one element ``Slice(shape, start, stop, 1, [0])`` takes, or None."""
    start = scalar_int(const_of(graph, input_source(graph, pick, 1)))
    stop = scalar_int(const_of(graph, input_source(graph, pick, 2)))
    step = scalar_int(const_of(graph, input_source(graph, pick, 3)))
    axes = const_of(graph, input_source(graph, pick, 4)) if len(pick.inputs) > 4 else None
    if step != 1 or start is None or stop is None or \
            (axes is not None and scalar_int(axes) not in (0, -1)):
        return None
    if start >= 0 and stop == start + 1:
        return start
    if rank is None:
        return None
    # Negative bounds count from the end (clamped as Slice does): one element only when
    # the normalised bounds are one apart inside the shape.
    begin = start + rank if start < 0 else start
    end = min(stop + rank if stop < 0 else stop, rank)
    return begin if 0 <= begin < rank and end == begin + 1 else None


def shape_index(graph: Graph, src: tuple[int, int] | None
                 ) -> tuple[tuple[int, int], int] | None:
    """``(X source, k)`` when ``src`` computes ``X.shape[k]`` from ``ShapeOf(X)``."""
    src = _through_same_value(graph, src)
    if src is None:
        return None
    pick = graph.layer(src[0])
    shape_src = input_source(graph, pick, 0)
    if shape_src is None or graph.layer(shape_src[0]).type != "ShapeOf":
        return None
    shape_of = graph.layer(shape_src[0])
    dims = shape_of.outputs[0].dims if shape_of.outputs else None
    rank = dims[0] if dims and len(dims) == 1 and dims[0] >= 0 else None
    if pick.type == "Gather" and pick.attrs.get("batch_dims", "0") == "0":
        index = scalar_int(const_of(graph, input_source(graph, pick, 1)))
        axis = scalar_int(const_of(graph, input_source(graph, pick, 2)))
        if axis != 0 and axis != -1:
            return None
    elif pick.type == "Slice":
        index = _slice_index(graph, pick, rank)
    else:
        return None
    data = input_source(graph, shape_of, 0)
    if index is None or data is None:
        return None
    if index < 0:
        if rank is None:
            return None
        index += rank
    if rank is not None and not 0 <= index < rank:
        return None
    if not _dim_fits(graph, shape_of, data, index):
        return None
    return data, index


def _dim_fits(graph: Graph, shape_of: Layer, data: tuple[int, int], index: int) -> bool:
    """Does ``shape_of``'s output type hold ``data``'s dim ``index`` whatever it is: i64,
    or a narrower integer type over a dim declared static and inside its range?"""
    et = shape_of.outputs[0].precision if shape_of.outputs else None
    if et == _I64:
        return True
    if et is None or et.kind not in ("int", "uint"):
        return False
    port = graph.layer(data[0]).port(data[1])
    dims = port.dims if port is not None else None
    if dims is None or index >= len(dims) or dims[index] < 0:
        return False
    return bool(dims[index] < 2 ** _value_bits(et))


def trip_matches(graph: Graph, loop: Layer, x_src: tuple[int, int], axis: int) -> bool:
    """Does the Loop's trip count equal ``X.shape[axis]`` for the X at ``x_src``?"""
    trip_src = input_source(graph, loop, 0)
    trip = scalar_int(const_of(graph, trip_src))
    if trip is not None:
        port = graph.layer(x_src[0]).port(x_src[1])
        dims = port.dims if port is not None else None
        return dims is not None and axis < len(dims) and dims[axis] >= 0 and dims[axis] == trip
    return shape_index(graph, unclamped(graph, trip_src)) == (x_src, axis)


def unclamped(graph: Graph, src: tuple[int, int] | None) -> tuple[int, int] | None:
    """The source of ``M`` when ``src`` computes ``Maximum(M, 0)`` (the ONNX converter's
    trip count: a negative ONNX M is no iteration), else ``src``. A length is never
    negative, so a trip count that is a length stays one; no other bound is looked
    through."""
    if src is not None and graph.layer(src[0]).type == "Maximum":
        clamp = graph.layer(src[0])
        if scalar_int(const_of(graph, input_source(graph, clamp, 1))) == 0:
            return input_source(graph, clamp, 0)
    return src
