"""``validate_model(..., as_read=True)`` skips the port and Const-data rules for a model the
XML reader has just made, because the reader checked the same things while reading (and
reported what it found). That is only sound while the two agree: on hostile IRs (the IR
fuzzer's mutations of the IRs irtool writes) the rules skipped find nothing the reader
did not already report, so the findings with and without ``as_read`` are the same."""

from __future__ import annotations

from pathlib import Path

from support.fuzz_ir import irtool_seeds, mutate
from support.fuzzing import RandomChooser

from irtool.validation.checker import validate_model
from irtool.validation.reading import read


def test_the_rules_skipped_for_a_model_just_read_find_nothing_more(tmp_path: Path) -> None:
    seeds = [(xml, weights) for _, xml, weights in irtool_seeds()]
    compared = 0
    for k in range(400):
        chooser = RandomChooser(27_000 + k)
        xml, weights = mutate(*seeds[chooser.below(len(seeds))], chooser)
        path = tmp_path / f"case{k}.xml"
        path.write_bytes(xml)
        path.with_suffix(".bin").write_bytes(weights)
        found = read(path, None)
        if found.model is None:
            continue
        skipping = validate_model(found.model, file=str(path), earlier=found.problems,
                                  as_read=True)
        everything = validate_model(found.model, file=str(path), earlier=found.problems)
        assert [d.format() for d in skipping] == [d.format() for d in everything], path.name
        compared += 1
    assert compared >= 200
