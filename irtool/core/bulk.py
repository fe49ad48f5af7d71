"""Building large object graphs (an IR of 10^6 layers, its diagnostics, its plan) fast.

CPython's cyclic garbage collector runs a full pass every time enough new container
objects have been made since the last one, and each pass walks every object alive: a
reader that makes millions of small objects pays for scanning all the earlier ones
again and again. ``paused_gc`` turns the collector off while such a structure is built
(the objects are kept anyway) and back on after, as it was.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic garbage collection inside the block (nesting is fine)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
