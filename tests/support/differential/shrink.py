"""A failing case made small: the choice sequence that generated it, replayed shorter and
smaller while the failure stays.

The generator takes every decision from ``Chooser.below(n)``, and 0 is always the simpler
option, so a shorter sequence (missing decisions read as 0) or one with smaller numbers
makes a smaller model of the same kind. ``shrink`` deletes runs of decisions and lowers
single ones (the passes hypothesis itself uses on its choice sequences), keeping each
change after which ``still_fails`` holds, within a budget of tries.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from support.fuzzing import RandomChooser


class RecordingChooser:
    """Decisions from a seeded ``random.Random``, each one recorded in ``choices``."""

    def __init__(self, seed: int) -> None:
        self.inner = RandomChooser(seed)
        self.choices: list[int] = []

    def below(self, n: int) -> int:
        value = self.inner.below(n)
        self.choices.append(value)
        return value


class ReplayChooser:
    """Decisions read from ``choices`` (clipped to the range asked for); 0 after the end."""

    def __init__(self, choices: Sequence[int]) -> None:
        self.choices = list(choices)
        self.used = 0

    def below(self, n: int) -> int:
        k = self.used
        self.used += 1
        return min(self.choices[k], n - 1) if k < len(self.choices) else 0


def shrink(choices: Sequence[int], still_fails: Callable[[list[int]], bool],
           budget: int = 150) -> tuple[list[int], int]:
    """The smallest variant of ``choices`` found for which ``still_fails`` holds, and the
    number of tries spent (at most ``budget``)."""
    best = list(choices)
    tries = 0

    def attempt(candidate: list[int]) -> bool:
        nonlocal best, tries
        if tries >= budget or candidate == best:
            return False
        tries += 1
        if still_fails(candidate):
            best = candidate
            return True
        return False

    improved = True
    while improved and tries < budget:
        improved = False
        # The shortest prefix that still fails (binary search; the rest reads as 0).
        low, high = 0, len(best)
        while low < high and tries < budget:
            mid = (low + high) // 2
            if attempt(best[:mid]):
                high = len(best)
                improved = True
            else:
                low = mid + 1
        for size in (8, 4, 2, 1):
            k = 0
            while k < len(best) and tries < budget:
                if attempt(best[:k] + best[k + size:]):
                    improved = True
                else:
                    k += size
        for k in range(len(best)):
            if tries >= budget:
                break
            if best[k] == 0:
                continue
            for lower in (0, best[k] // 2, best[k] - 1):
                if lower < best[k] and attempt([*best[:k], lower, *best[k + 1:]]):
                    improved = True
                    break
    return best, tries
