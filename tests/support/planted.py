"""Divergences planted on purpose, for the tests and the benchmark of ``check --localize``.

``wrong_kernel(cls, when)`` makes irtool's kernel of one op class wrong on the inputs
``when`` picks (an iteration's, a step's), nothing else: OpenVINO, which runs its own
kernels, then disagrees there and only there. The models put one distinctive op (``Tan``,
``Log``) where the divergence is to be, and say where that is (``Planted``): the layer's
path and the iterations, known from how the model was built, never from irtool's output.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from irtool.ir import Model
from irtool.opset import Op
from support.ir_builders import Net, info, true_result

F32 = np.float32


@contextlib.contextmanager
def wrong_kernel(cls: type[Op], when: Callable[[list[np.ndarray]], bool],
                 how: Callable[[np.ndarray], np.ndarray] = lambda v: v + F32(1)
                 ) -> Iterator[None]:
    """Within the block, ``cls``'s kernel gives ``how(value)`` instead of its value for the
    inputs ``when`` picks (and its direct numpy call is off, so that every run goes through
    it)."""
    compute, numpy_call = cls.compute, cls.numpy_call

    def planted(self: Op, inputs: list[np.ndarray]) -> list[np.ndarray]:
        out = compute(self, inputs)
        return [how(np.asarray(v)) for v in out] if when(inputs) else out

    cls.compute = planted  # type: ignore[method-assign]
    cls.numpy_call = lambda self: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        cls.compute = compute  # type: ignore[method-assign]
        cls.numpy_call = numpy_call  # type: ignore[method-assign]


def input_is(value: float) -> Callable[[list[np.ndarray]], bool]:
    """``when`` for a kernel whose first input holds ``value`` (up to f32 rounding). Cheap
    on scalars: the benchmark calls it once per iteration of a loop of 10,000."""

    def when(inputs: list[np.ndarray]) -> bool:
        first = inputs[0]
        if np.ndim(first) == 0:
            return abs(float(first) - value) <= 1e-6
        return bool(np.any(np.abs(np.asarray(first, np.float64) - value) <= 1e-6))

    return when


@dataclass
class Planted:
    """Where a planted divergence is: the layer's path (``"4/body/9"``) and type, the
    control-flow layers around it (paths), and the iterations of the loops around it."""

    path: str
    type: str
    around: list[str] = field(default_factory=list)
    iterations: tuple[int, ...] = ()


def code(iterations: tuple[int, ...]) -> float:
    """The value the Tan of ``nested_loops`` reads at these iterations (outermost first):
    ``0.001 * sum(i_l * 10**l)``, different for every combination of the trip counts used."""
    return float(F32(sum(i * 10.0 ** level for level, i in enumerate(iterations))) * F32(0.001))


def nested_loops(depth: int, trips: tuple[int, ...] | None = None, width: int = 4
                 ) -> tuple[Model, Planted]:
    """``depth`` nested Loops; the innermost body computes ``acc + tan(0.001 * s)``, where
    ``s = sum(i_l * 10**l)`` over the iteration numbers of all the loops (each body adds its
    own to the ``s`` it is passed). Each loop carries ``acc`` (f32[width]) and hands it to
    the one inside; output ``y = relu(acc)``. A Tan planted wrong where it reads
    ``code(iterations)`` is wrong at those iterations only."""
    trips = trips or tuple(3 + level for level in range(depth))

    def body_at(level: int) -> tuple[Net, dict, list[str]]:
        """The body of loop ``level``, its ends, and the relative paths of the loops inside
        and of the Tan (``["7/body/5"...]``, the Tan's last)."""
        body = Net()
        i = body.param(f"i{level}", "i64", ())
        acc = body.param(f"acc{level}", "f32", (width,))
        s = body.param(f"s{level}", "f32", ())
        fi = body.op("Convert", "opset1", [i], {"destination_type": "f32"}, et="f32")
        scaled = body.op("Multiply", "opset1", [fi, body.const(F32(10.0 ** level))],
                         {"auto_broadcast": "numpy"})
        s_next = body.op("Add", "opset1", [s, scaled], {"auto_broadcast": "numpy"}, shape=(),
                         name=f"s_next{level}")
        if level == depth - 1:
            arg = body.op("Multiply", "opset1", [s_next, body.const(F32(0.001))],
                          {"auto_broadcast": "numpy"}, shape=(), name="arg")
            tan = body.op("Tan", "opset1", [arg], name="tan")
            paths = [str(tan.layer)]
            nxt = body.op("Add", "opset1", [acc, tan], {"auto_broadcast": "numpy"},
                          shape=(width,), name=f"next{level}")
        else:
            inner, parts, inside = body_at(level + 1)
            lp = body.loop(inner, name=f"loop{level + 1}")
            lp.trip_count(body.const(np.int64(trips[level + 1])))
            lp.condition(body.const(np.bool_(True)))
            lp.carried(acc, parts["acc"], parts["r"])
            lp.invariant(s_next, parts["s"])
            lp.current_iteration(parts["i"])
            lp.execution_condition(true_result(inner))
            lp.output(parts["r"], info("f32", (width,)))
            layer, outs = lp.build()
            paths = [str(layer.id)] + [f"{layer.id}/body/{p}" for p in inside]
            nxt = body.op("Multiply", "opset1", [outs[0], body.const(F32(0.5))],
                          {"auto_broadcast": "numpy"}, shape=(width,), name=f"half{level}")
        return body, {"i": i, "acc": acc, "s": s, "r": body.result(nxt)}, paths

    net = Net()
    x = net.param("x", "f32", (width,))
    body, parts, inside = body_at(0)
    lp = net.loop(body, name="loop0")
    lp.trip_count(net.const(np.int64(trips[0])))
    lp.condition(net.const(np.bool_(True)))
    lp.carried(x, parts["acc"], parts["r"])
    lp.invariant(net.const(F32(0)), parts["s"])
    lp.current_iteration(parts["i"])
    lp.execution_condition(true_result(body))
    lp.output(parts["r"], info("f32", (width,)), names=["acc"])
    layer, outs = lp.build()
    net.result(net.op("Relu", "opset1", [outs[0]], name="y"))
    paths = [str(layer.id)] + [f"{layer.id}/body/{p}" for p in inside]
    return net.model(), Planted(paths[-1], "Tan", paths[:-1])


def nested_expected(x: np.ndarray, depth: int, trips: tuple[int, ...] | None = None
                    ) -> np.ndarray:
    """``nested_loops``' output ``y``, by hand."""
    trips = trips or tuple(3 + level for level in range(depth))

    def run(level: int, acc: np.ndarray, s: float) -> np.ndarray:
        for i in range(trips[level]):
            s_next = F32(s) + F32(i) * F32(10.0 ** level)
            if level == depth - 1:
                acc = acc + np.tan(F32(s_next) * F32(0.001))
            else:
                acc = run(level + 1, acc, float(s_next)) * F32(0.5)
        return acc.astype(F32)

    return np.maximum(run(0, x.astype(F32), 0.0), F32(0))
