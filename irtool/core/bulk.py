"""Building large object graphs (an IR of 10^6 layers, its diagnostics, its plan) fast.

CPython's cyclic garbage collector runs a full pass every time enough new container
objects have been made since the last one, and each pass walks every object alive: a
reader that makes millions of small objects pays for scanning all the earlier ones
again and again. ``paused_gc`` turns the collector off while such a structure is built
(the objects are kept anyway) and back on after, as it was.

Turned back on, the collector would walk every object made in the block at its next
young-generation pass (about 1 s for the 2 million objects of 10^5 layers), and again in
the middle generation, only to find them alive. So they are moved straight into the
oldest generation (``gc.freeze`` then ``gc.unfreeze``: two list splices, no walk); they
stay collectable there, by the full passes that come far less often.
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
            gc.freeze()
            gc.unfreeze()  # into the oldest generation (see the module)
            gc.enable()
