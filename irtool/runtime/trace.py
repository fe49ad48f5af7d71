"""Watching a run: the value of every layer output a plan computes, loop bodies iteration
by iteration, keyed by where the value is in the IR.

A ``Tracer`` given to the executor (``Executor(model, trace=tracer)``, or
``RunOptions.trace``) is called with each value as the run computes it: ``on_value(key,
iterations, value)``, the key being the layer's scope (``core.scopes``: ``""``,
``"3/body"``...), its id and the output port's id, ``iterations`` the iteration numbers of
the loops around it, outermost first (``()`` outside loops). A loop body's Parameters are
reported too, at the start of each iteration (the values the iteration reads: carried,
sliced, invariant, the iteration number), so that a wrong carried value shows where it
enters; so are the Parameters of any other graph run (an If's branch, the main graph). An
If's branch is reported under the scope of the branch taken (``"5/then_body"``).

Tracing is decided when a plan is compiled: a plan compiled without a tracer has not one
instruction more than before (the generated code is the same), and one compiled with a
tracer calls it only in the scopes it ``watches``. A traced plan is compiled without the
rewrites that make runs faster (``RunOptions.optimize`` off, which the ``Executor`` sees
to), so that each value is the output of one layer of the IR: with them, a step may be
folded, fused into another or skipped, and a value would map onto no layer.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from typing import Any

from ..ir.graph import Layer

ValueKey = tuple[str, int, int]
"""``(scope, layer id, output port id)``: where in the IR a traced value is."""


class Tracer:
    """Receives the values of a run (see the module docstring); subclass and override
    ``on_value``, or pass ``on_value``. ``scopes`` limits the bodies watched (None: all)."""

    def __init__(self, scopes: Container[str] | None = None,
                 on_value: Callable[[ValueKey, tuple[int, ...], Any], None] | None = None
                 ) -> None:
        self.scopes = scopes
        self.iterations: list[int] = []  # the enclosing loops' iteration numbers, now
        self._where: list[tuple[int, ...]] = [()]  # the same as a tuple, made once a change
        if on_value is not None:
            self.on_value = on_value  # type: ignore[assignment, method-assign]

    def watches(self, scope: str) -> bool:
        """Are the values of the graph at ``scope`` wanted? Asked once per plan compiled."""
        return self.scopes is None or scope in self.scopes

    def on_value(self, key: ValueKey, iterations: tuple[int, ...], value: Any) -> None:
        """One value of the run; the default drops it."""

    # -- what the generated code calls ------------------------------------------------

    def steps(self, scope: str, layers: Sequence[Layer]) -> Callable[[int, tuple], None]:
        """``record(k, values)``: step ``k`` (its layer ``layers[k]``) computed ``values``,
        one per output port."""
        on_value, where = self.on_value, self._where
        keys = [[(scope, layer.id, port.id) for port in layer.outputs] for layer in layers]

        def record(k: int, values: tuple) -> None:
            now = where[0]
            for key, value in zip(keys[k], values):
                on_value(key, now, value)

        return record

    def inputs(self, scope: str, parameters: Sequence[Layer]) -> Callable[[tuple], None]:
        """``record(values)``: the plan of ``scope`` was called with ``values`` for its
        ``parameters`` (an If's branch, the main graph)."""
        on_value, where = self.on_value, self._where
        keys = [(scope, layer.id, layer.outputs[0].id) for layer in parameters]

        def record(values: tuple) -> None:
            now = where[0]
            for key, value in zip(keys, values):
                on_value(key, now, value)

        return record

    def loop(self, scope: str, parameters: Sequence[Layer] | None
             ) -> tuple[Callable[[], None], Callable[[int, tuple], None], Callable[[], None]]:
        """``(enter, iteration, leave)`` for one loop whose body is at ``scope``:
        ``iteration(i, values)`` starts iteration ``i``, ``values`` being those of
        ``parameters`` (the body Parameters that hold a value; None: not watched)."""
        on_value, iterations, where = self.on_value, self.iterations, self._where

        def enter() -> None:
            iterations.append(-1)

        def leave() -> None:
            iterations.pop()
            where[0] = tuple(iterations)

        keys = [(scope, layer.id, layer.outputs[0].id) for layer in parameters or ()]

        def iteration(i: int, values: tuple) -> None:
            iterations[-1] = i
            now = where[0] = tuple(iterations)
            for key, value in zip(keys, values):
                on_value(key, now, value)

        return enter, iteration, leave
