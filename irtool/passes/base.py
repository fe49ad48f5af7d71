"""The one interface of every rewrite: a ``Pass`` takes what it rewrites and returns a
``PassResult``; a ``Pipeline`` runs passes in order (in the spirit of onnx-ir's passes and
``PassManager``).

A pass rewrites an IR ``Model`` (the conversion's passes, ``pipelines.conversion``) or the
steps of a plan being compiled (``pipelines.compiling``, on the runtime's ``Program``): the
interface is generic in that target. ``in_place`` says whether the pass changes the
object it is given (and returns it) or returns a changed copy, leaving it as it was.

Some passes only make the result faster or smaller (``Pass.optimisation`` names what
their changes count as); the others make the form a consumer needs (pruning dead layers,
copies OpenVINO computes right with). ``optimize=False`` (``convert``, ``run``,
``check``) leaves out exactly the first kind, and the counts of what they did reach the
reports through ``PassResult.applied``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar, Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class PassResult(Generic[T]):
    """What a pass returns: the rewritten object and how many rewrites it made (0: the
    object is unchanged)."""

    target: T
    changes: int
    applied: Mapping[str, int] = field(default_factory=dict)
    """The changes of the optimising passes that ran, by what they count as
    (``Pass.optimisation``; a pipeline's summed over its passes, those that changed
    nothing included)."""

    @property
    def modified(self) -> bool:
        return self.changes > 0


class Pass(Generic[T]):
    """A rewrite of a ``T``: subclasses set ``in_place`` and define ``apply``."""

    in_place: ClassVar[bool] = True
    """True: ``apply`` changes its argument and returns it; False: a changed copy."""

    optimisation: ClassVar[str | None] = None
    """What the changes of a pass that only makes things faster count as in the reports
    (``"fused pools"``); None for a pass that is not an optimisation and so also runs with
    optimisations off."""

    @property
    def name(self) -> str:
        return type(self).__name__

    def apply(self, target: T) -> PassResult[T]:
        raise NotImplementedError

    def __call__(self, target: T) -> PassResult[T]:
        result = self.apply(target)
        if self.optimisation is not None:
            result = replace(result, applied={self.optimisation: result.changes})
        return result


class Pipeline(Pass[T]):
    """Passes run in order, each on what the one before returned."""

    def __init__(self, passes: Sequence[Pass[T]]) -> None:
        self.passes = list(passes)
        self.in_place = all(p.in_place for p in self.passes)  # type: ignore[misc]

    def apply(self, target: T) -> PassResult[T]:
        changes = 0
        applied: Counter[str] = Counter()
        for step in self.passes:
            result = step(target)
            target, changes = result.target, changes + result.changes
            applied.update(result.applied)
        return PassResult(target, changes, dict(applied))
