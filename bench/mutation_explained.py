"""Surviving mutants of bench/mutation.py that are equivalent: no input can tell them from
the original. Keyed by mutmut's mutant name; ``line`` is a piece of the mutated line, so a
note whose mutant changed (the code moved on) no longer applies and shows as unexplained."""

from __future__ import annotations

from typing import NamedTuple


class Note(NamedTuple):
    line: str  # a piece of the mutant's changed line
    why: str  # why no test can kill it


EXPLAINED: dict[str, Note] = {}
