"""What fuzzing irtool needs whatever it mutates: where decisions come from, and what became
of a command run on a hostile input.

``bench/fuzz.py`` (long runs, counts per target) and the hypothesis tests (a small fixed
budget in CI) share these, so both judge an outcome by the same rules: irtool's command-line
contract (exit 0; or exit 1 with one line on stderr naming the problem and no output file).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol, TypeVar

X = TypeVar("X")

OUTCOMES = ("refused", "ran", "internal", "crash", "hang", "partial")
"""refused: exit 1, one line naming the problem, nothing written; ran: exit 0; internal:
exit 3, a traceback, or a refusal of more than one line; crash: the process died of a
signal; hang: no result within the time limit; partial: a failed command left output."""

BAD = ("internal", "crash", "hang", "partial")


class Chooser(Protocol):
    """Where a mutation's decisions come from."""

    def below(self, n: int) -> int:
        """An integer in ``0..n-1`` (``n >= 1``)."""


class RandomChooser:
    """Decisions from a seeded ``random.Random`` (the fuzz script)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def below(self, n: int) -> int:
        return self.rng.randrange(n)


class DrawChooser:
    """Decisions drawn from hypothesis (``st.data()``), so that it can shrink a case."""

    def __init__(self, data: object) -> None:
        self.data = data

    def below(self, n: int) -> int:
        from hypothesis import strategies as st

        return self.data.draw(st.integers(0, n - 1))  # type: ignore[attr-defined]


def pick(chooser: Chooser, items: Sequence[X]) -> X:
    return items[chooser.below(len(items))]


def classify(command: str, rc: int, stderr: str, leftovers: Sequence[str] = ()) -> str:
    """The outcome of ``irtool COMMAND`` that exited ``rc`` after printing ``stderr``, with
    ``leftovers`` the files a failed run left where its output was to go."""
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    if rc == 0:
        return "ran"
    if rc != 1 or "Traceback" in stderr or "internal error" in stderr:
        return "internal"
    # check prints progress lines ("irtool check: converting to IR...") before its verdict.
    reasons = [ln for ln in lines if not (ln.startswith("irtool check: ") and ln.endswith("..."))]
    if len(reasons) != 1 or not reasons[0].startswith(f"irtool {command}: "):
        return "internal"
    return "partial" if leftovers else "refused"
