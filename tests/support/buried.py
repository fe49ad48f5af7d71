"""Large IRs with one problem buried in them, and where it was buried: for ``irtool reduce``
(``tests/tools/test_reduce.py``, ``bench/reduce.py``).

Every model is a long chain of elementwise layers on ``x`` (f32[4, 16]): ``Negative``,
``Abs``, ``Add 0.01``, ``Multiply 0.999`` in turn (none of them shrinks a difference away),
with the problem planted at a known place, so that a test knows the layers a minimal
reproducer must keep from how the model was built, never from irtool:

* ``wrong_kernel_chain``: a ``Sin`` of ``opset16`` (OpenVINO reads it as its ``Sin``) whose
  irtool kernel ``WRONG_SIN`` (an extension, ``wrong_sin.py`` beside this module) adds 1
  where ``x > 0.5``: irtool and OpenVINO disagree there and only there.
* ``wrong_kernel_in_loops``: the same ``Sin`` inside the body of a Loop nested ``depth`` deep
  (each body a short chain of its own), the loops between two halves of the chain.
* ``wrong_kernel_in_if``: the same ``Sin`` in the branch of an If the run takes.
* ``wrong_kernel_in_tensor_iterator``: the same ``Sin`` in a TensorIterator's body, wrong in
  its last iteration only.
* ``zero_trip_crash``: the Loop of ``docs/openvino-quirks.md`` that OpenVINO's CPU plugin dies
  of (SIGFPE) compiling: a trip count Const 0 and a concatenated output.
* ``swapped_carry``: the Loop of ``docs/openvino-quirks.md`` whose carried values swap
  (``a' = b, b' = a``, each Result reading the other Parameter): OpenVINO's CPU plugin gives
  wrong values after the first iteration (where that quirk reproduces).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from irtool.ir import Model, Value
from support.ir_builders import Net, info, true_result, unsqueeze

WRONG_SIN = Path(__file__).with_name("wrong_sin.py")
SHAPE = (4, 16)
_CHAIN = ("Negative", "Abs", "Add", "Multiply")


@dataclass
class Buried:
    """A model, its inputs, and what a minimal reproducer keeps: the types of the computing
    layers of its top graph (in topological order) and the name of the planted layer."""

    model: Model
    feed: dict[str, np.ndarray]
    planted: str
    minimal_ops: list[str] = field(default_factory=list)
    before: int = 0
    """How many layers of the chain come before the planted part."""


def chain(net: Net, v: Value, n: int, start: int = 0) -> Value:
    """``n`` layers of the chain on ``v``; ``start``: where in the 4-cycle it begins."""
    for i in range(start, start + n):
        kind = _CHAIN[i % 4]
        if kind in ("Add", "Multiply"):
            c = net.const(np.float32(0.01 if kind == "Add" else 0.999))
            v = net.op(kind, "opset1", [v, c], {"auto_broadcast": "numpy"})
        else:
            v = net.op(kind, "opset1", [v])
    return v


def chain_numpy(x: np.ndarray, n: int, start: int = 0) -> np.ndarray:
    """What ``chain`` computes, by hand."""
    v = x
    for i in range(start, start + n):
        kind = _CHAIN[i % 4]
        v = (-v if kind == "Negative" else np.abs(v) if kind == "Abs"
             else v + np.float32(0.01) if kind == "Add" else v * np.float32(0.999))
    return v


def _feed() -> dict[str, np.ndarray]:
    # In [1, 3): positive after Abs, and above 0.5 where the wrong Sin goes wrong.
    return {"x": np.random.default_rng(0).uniform(1, 3, SHAPE).astype(np.float32)}


def _halves(layers: int) -> tuple[int, int]:
    """Layers before and after the planted part: ``before`` ends on ``Abs`` (positive
    values for the Sin)."""
    before = (layers // 2) // 4 * 4 + 2
    return before, layers - before


def wrong_kernel_chain(layers: int = 1000) -> Buried:
    net = Net()
    x = net.param("x", "f32", SHAPE)
    before, after = _halves(layers)
    v = net.op("Sin", "opset16", [chain(net, x, before)], name="planted")
    net.result(chain(net, v, after - 1, start=before + 1), "y")
    return Buried(net.model(), _feed(), "planted", ["Sin"], before)


def wrong_kernel_in_loops(layers: int = 1000, depth: int = 2, trips: int = 3,
                          body_layers: int = 8) -> Buried:
    """The wrong ``Sin`` in the innermost of ``depth`` nested Loops (``trips`` iterations
    each, a carried value that each body runs through ``body_layers`` layers of the chain,
    the Sin in the middle of the innermost)."""
    net = Net()
    x = net.param("x", "f32", SHAPE)
    before, after = _halves(layers)
    v = chain(net, x, before)
    v = _nested(net, v, depth, trips, body_layers)
    net.result(chain(net, v, after, start=before), "y")
    return Buried(net.model(), _feed(), "planted", ["Sin"])


def _nested(net: Net, outer: Value, depth: int, trips: int, body_layers: int) -> Value:
    body = Net()
    acc = body.param("acc", "f32", SHAPE)
    half = body_layers // 2 // 4 * 4 + 2
    v = chain(body, acc, half)
    if depth == 1:
        v = body.op("Sin", "opset16", [v], name="planted")
        v = chain(body, v, body_layers - half, start=half + 1)
    else:
        v = _nested(body, v, depth - 1, trips, body_layers)
        v = chain(body, v, body_layers - half, start=half)
    out = body.result(v)
    loop = net.loop(body)
    loop.trip_count(net.const(np.int64(trips)))
    loop.condition(net.const(np.bool_(True)))
    loop.carried(outer, acc, out)
    loop.execution_condition(true_result(body))
    loop.output(out, info("f32", SHAPE))
    _, (result,) = loop.build()
    return result


def wrong_kernel_in_if(layers: int = 1000) -> Buried:
    """The wrong ``Sin`` in the then-branch of an If whose condition is the input ``c``
    (fed true); the else-branch a ``Cos``."""
    net = Net()
    x = net.param("x", "f32", SHAPE)
    c = net.param("c", "boolean", ())
    before, after = _halves(layers)
    v = chain(net, x, before)
    then, other = Net(), Net()
    tx, ex = then.param("tx", "f32", SHAPE), other.param("ex", "f32", SHAPE)
    t_out = then.result(then.op("Sin", "opset16", [tx], name="planted"))
    e_out = other.result(other.op("Cos", "opset1", [ex]))
    branch = net.if_(c, then, other)
    branch.then_input(v, tx)
    branch.else_input(v, ex)
    branch.output(t_out, e_out, info("f32", SHAPE))
    _, (chosen,) = branch.build()
    net.result(chain(net, chosen, after - 1, start=before + 1), "y")
    return Buried(net.model(), {**_feed(), "c": np.array(True)}, "planted", ["Sin"])


def wrong_kernel_in_tensor_iterator(layers: int = 1000) -> Buried:
    """The wrong ``Sin`` in the body of a TensorIterator over the rows of the chain's value
    (sliced on axis 0, the rows joined again), only the last row above 0.5 there."""
    net = Net()
    x = net.param("x", "f32", SHAPE)
    before, after = _halves(layers)
    v = chain(net, x, before)
    # Rows 0..2 scaled into [0, 0.5): the wrong kernel shows in the last iteration only.
    scale = np.ones(SHAPE, np.float32)
    scale[:-1] = 0.1
    v = net.op("Multiply", "opset1", [v, net.const(scale)], {"auto_broadcast": "numpy"})
    body = Net()
    row = body.param("row", "f32", (1, SHAPE[1]))
    out = body.result(body.op("Sin", "opset16", [row], name="planted"))
    ti = net.tensor_iterator(body)
    ti.sliced(v, row, axis=0)
    ti.output(out, info("f32", SHAPE), axis=0)
    _, (rows,) = ti.build()
    net.result(chain(net, rows, after - 2, start=before + 1), "y")
    return Buried(net.model(), _feed(), "planted", ["Sin"])


def zero_trip_crash(layers: int = 1000) -> Buried:
    net = Net()
    x = net.param("x", "f32", SHAPE)
    before, after = _halves(layers)
    v = chain(net, x, before)
    body = Net()
    bx = body.param("bx", "f32", SHAPE)
    scan = body.result(unsqueeze(body, bx))
    loop = net.loop(body, name="planted")
    loop.trip_count(net.const(np.int64(0)))
    loop.condition(net.const(np.bool_(True)))
    loop.invariant(v, bx)
    loop.execution_condition(true_result(body))
    loop.output(scan, info("f32", (-1, *SHAPE)), axis=0)
    _, (stacked,) = loop.build()
    net.result(stacked, "scan")
    net.result(chain(net, v, after, start=before), "y")
    return Buried(net.model(), _feed(), "planted", ["Loop"])


def swapped_carry(layers: int = 1000, trips: int = 2) -> Buried:
    net = Net()
    x = net.param("x", "f32", SHAPE)
    before, after = _halves(layers)
    v = chain(net, x, before)
    w = net.op("Negative", "opset1", [v])
    body = Net()
    pa, pb = body.param("pa", "f32", SHAPE), body.param("pb", "f32", SHAPE)
    ra, rb = body.result(pb), body.result(pa)  # a' = b, b' = a
    loop = net.loop(body, name="planted")
    loop.trip_count(net.const(np.int64(trips)))
    loop.condition(net.const(np.bool_(True)))
    loop.carried(v, pa, ra)
    loop.carried(w, pb, rb)
    loop.execution_condition(true_result(body))
    loop.output(ra, info("f32", SHAPE))
    loop.output(rb, info("f32", SHAPE))
    _, (a, b) = loop.build()
    s = net.op("Add", "opset1", [a, b], {"auto_broadcast": "numpy"})
    net.result(chain(net, s, after - 2, start=before + 1), "y")
    return Buried(net.model(), _feed(), "planted", ["Loop"])
