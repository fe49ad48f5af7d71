"""Inputs given by name against the names a model takes: one message for every backend.

``irtool run`` (irtool's executor or OpenVINO) and ``irtool check`` say the same thing
when the names of an ``.npz`` and the model's inputs differ: which are missing, which
are not the model's, the model name each unknown one is probably a typo of, and, for
``arr_0``-style keys, that ``np.savez`` was given the arrays positionally.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence

_POSITIONAL = re.compile(r"^arr_\d+$")


def input_mismatch(taken: Sequence[str], given: Iterable[str], *,
                   all_required: bool = True) -> str | None:
    """What is wrong with the names ``given`` for a model taking ``taken``, or None.

    Missing names come first (unless ``all_required`` is false: ``check`` makes up the
    inputs it is not given), then unknown ones with the taken name each most likely
    means; positional ``np.savez`` keys (``arr_0``) get a hint on how to name them.
    """
    given = [str(k) for k in given]
    missing = [n for n in taken if n not in given]
    unknown = [k for k in given if k not in taken]
    if not unknown and (not missing or not all_required):
        return None
    parts = []
    if missing and all_required:
        parts.append(f"missing input(s) {', '.join(missing)}")
    if unknown:
        guesses = []
        for key in unknown:
            close = difflib.get_close_matches(key, missing or list(taken), n=1, cutoff=0.6)
            guesses.append(f"{key} (did you mean {close[0]}?)" if close else key)
        parts.append(f"unknown input(s) {', '.join(guesses)}")
    message = "; ".join(parts) + f"; the model takes {', '.join(taken) or 'no inputs'}"
    if any(_POSITIONAL.match(k) for k in unknown):
        named = ", ".join(f"{n!r}: ..." for n in (missing or taken)[:3])
        message += ("; arr_0, arr_1... are the keys np.savez gives arrays passed without a "
                    f"name: save them by name, np.savez(path, **{{{named}}})")
    return message
