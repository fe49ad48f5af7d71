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

Objects moved so are not counted by CPython's rule for a full pass (one when a quarter
more objects than the last full pass left have reached the oldest generation), so
that pass never came: a batch validating one model after another (each read under
``paused_gc``, cyclic through networkx's views, garbage once validated) grew by 90 MB
every 1,000 models of the OpenVINO-written corpus, with no full pass. ``paused_gc``
counts them itself, and ``collect_if_due`` makes the full pass by the same rule where
what was made is likely garbage: on entering an outermost ``paused_gc`` (a caller's loop
reading one model after another: the last one is garbage by then) and in the batch,
between models. (Not on leaving the block: there its objects are alive, and a full pass
would walk them all for nothing.)
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic garbage collection inside the block (nesting is fine)."""
    was_enabled = gc.isenabled()
    if was_enabled:
        collect_if_due()  # what earlier blocks made and moved may be garbage by now
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            made = gc.get_count()[0]  # objects made in the block, net
            if made > SMALL_BLOCK:
                _moved[0] += made
                gc.freeze()
                gc.unfreeze()  # into the oldest generation (see the module)
            gc.enable()


SMALL_BLOCK = 50_000
"""Objects a block may make and leave young: the collector's next young passes walk them
(milliseconds at most), and what is garbage by then (a small model validated in a batch,
cyclic through networkx's views and the IR's back references) is freed there, not left
for a full pass over every object alive (0.1 s with irtool's and its libraries' own
objects, which took 15% of validating the 1,372 small IRs of the OpenVINO-written corpus)."""


_moved = [0, 0]
"""Objects moved into the oldest generation by ``paused_gc`` since the last full pass
``collect_if_due`` made, and how many objects that pass left."""


def collect_if_due() -> None:
    """A full collection if CPython's rule calls for one, counting the objects
    ``paused_gc`` moved (see the module): once they are a quarter more than the last
    pass left (and at least 10^5: what a first pass needs). Call it where they are
    likely garbage."""
    if _moved[0] <= max(_moved[1] // 4, 100_000):
        return
    gc.collect()
    _moved[0], _moved[1] = 0, _tracked()


def _tracked() -> int:
    """How many objects the collector tracks, after a full pass (all are in the oldest
    generation then): counted by moving them aside and back, no walk."""
    gc.freeze()
    count = gc.get_freeze_count()
    gc.unfreeze()
    return count
