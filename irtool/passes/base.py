"""The one interface of every rewrite: a ``Pass`` takes what it rewrites and returns a
``PassResult``; a ``Pipeline`` runs passes in order (in the spirit of onnx-ir's passes and
``PassManager``).

A pass rewrites an IR ``Model`` (the conversion's passes, ``pipelines.conversion``) or the
steps of a plan being compiled (``pipelines.COMPILE``, on the runtime's ``Program``): the
interface is generic in that target. ``in_place`` says whether the pass changes the
object it is given (and returns it) or returns a changed copy, leaving it as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class PassResult(Generic[T]):
    """What a pass returns: the rewritten object and how many rewrites it made (0: the
    object is unchanged)."""

    target: T
    changes: int

    @property
    def modified(self) -> bool:
        return self.changes > 0


class Pass(Generic[T]):
    """A rewrite of a ``T``: subclasses set ``in_place`` and define ``apply``."""

    in_place: ClassVar[bool] = True
    """True: ``apply`` changes its argument and returns it; False: a changed copy."""

    @property
    def name(self) -> str:
        return type(self).__name__

    def apply(self, target: T) -> PassResult[T]:
        raise NotImplementedError

    def __call__(self, target: T) -> PassResult[T]:
        return self.apply(target)


class Pipeline(Pass[T]):
    """Passes run in order, each on what the one before returned."""

    def __init__(self, passes: Sequence[Pass[T]]) -> None:
        self.passes = list(passes)
        self.in_place = all(p.in_place for p in self.passes)  # type: ignore[misc]

    def apply(self, target: T) -> PassResult[T]:
        changes = 0
        for step in self.passes:
            result = step(target)
            target, changes = result.target, changes + result.changes
        return PassResult(target, changes)
