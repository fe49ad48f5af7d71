"""``irtool.core.bulk``: a batch that builds structures under ``paused_gc`` one after
another (``collect_if_due`` between them) does not pile up the cyclic garbage that
CPython's own rule for a full pass never counts (``paused_gc`` moves it to the oldest
generation)."""

from __future__ import annotations

import gc

from irtool.core.bulk import collect_if_due, paused_gc


def _cyclic_garbage(n: int) -> None:
    """``n`` objects in reference cycles, made under paused_gc and then dropped (as a model
    read, validated and let go)."""
    with paused_gc():
        nodes = [{"i": i} for i in range(n)]
        for a, b in zip(nodes, nodes[1:] + nodes[:1]):
            a["next"] = b  # a ring: only the cyclic collector frees it


def test_one_model_after_another_does_not_pile_up() -> None:
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(300):  # 600,000 objects made in all
        _cyclic_garbage(2000)
        collect_if_due()
    grown = len(gc.get_objects()) - before
    assert grown < 200_000, f"{grown} objects left of 600,000 made and dropped"



def test_a_callers_loop_does_not_pile_up_either() -> None:
    """A loop of the caller's own (``irtool.validate`` of one model after another) calls no
    ``collect_if_due``: entering ``paused_gc`` does."""
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(300):
        _cyclic_garbage(2000)
    grown = len(gc.get_objects()) - before
    assert grown < 200_000, f"{grown} objects left of 600,000 made and dropped"
