"""``irtool.core.bulk``: a batch that builds structures under ``paused_gc`` one after
another (``collect_if_due`` between them) does not pile up the cyclic garbage that
CPython's own rule for a full pass never counts (``paused_gc`` moves it to the oldest
generation)."""

from __future__ import annotations

import gc

import pytest

from irtool.core.bulk import SMALL_BLOCK, collect_if_due, paused_gc

SIZES = [pytest.param(2000, 300, id="small-blocks-left-young"),
         pytest.param(SMALL_BLOCK + 10_000, 12, id="large-blocks-moved-to-the-oldest")]
"""(objects per block, blocks): 600,000 and 720,000 objects made and dropped in all."""


def _cyclic_garbage(n: int) -> None:
    """``n`` objects in reference cycles, made under paused_gc and then dropped (as a model
    read, validated and let go)."""
    with paused_gc():
        nodes = [{"i": i} for i in range(n)]
        for a, b in zip(nodes, nodes[1:] + nodes[:1]):
            a["next"] = b  # a ring: only the cyclic collector frees it


@pytest.mark.parametrize(("size", "blocks"), SIZES)
def test_one_model_after_another_does_not_pile_up(size: int, blocks: int) -> None:
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(blocks):
        _cyclic_garbage(size)
        collect_if_due()
    grown = len(gc.get_objects()) - before
    assert grown < 250_000, f"{grown} objects left of {size * blocks} made and dropped"



@pytest.mark.parametrize(("size", "blocks"), SIZES)
def test_a_callers_loop_does_not_pile_up_either(size: int, blocks: int) -> None:
    """A loop of the caller's own (``irtool.validate`` of one model after another) calls no
    ``collect_if_due``: entering ``paused_gc`` does."""
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(blocks):
        _cyclic_garbage(size)
    grown = len(gc.get_objects()) - before
    assert grown < 250_000, f"{grown} objects left of {size * blocks} made and dropped"


def test_a_large_block_leaves_its_objects_out_of_the_young_generations() -> None:
    """What a large block made is moved to the oldest generation, so that the young passes
    after it do not walk it (a model of 10^5 layers: about 1 s); a small block's is left
    young, where its garbage is freed cheaply."""
    gc.collect()  # the young generations' counts start from nothing
    with paused_gc():
        large = [[i] for i in range(SMALL_BLOCK + 10_000)]  # lists: always tracked
    with paused_gc():
        small = [[i] for i in range(SMALL_BLOCK // 10)]
    young = {id(o) for generation in (0, 1) for o in gc.get_objects(generation=generation)}
    assert id(large[-1]) not in young
    assert id(small[-1]) in young
