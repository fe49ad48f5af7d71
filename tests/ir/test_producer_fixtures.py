"""IRs made by Intel deployment flows (tests/fixtures/ir_producers, see its export.py):
validate-clean, a faithful round trip, and irtool's outputs equal to OpenVINO's, step by
step for stateful decoders. Expected values come from OpenVINO at test time (its recorded
outputs only for IRs whose extension ops need openvino-tokenizers, when that is missing).

What irtool does not handle yet is listed in ``KNOWN_GAPS`` (``"<check>/<IR name>"`` ->
irtool's message), each an ``xfail(strict=True)``: a fix makes the test pass, which fails
the suite until its entry is removed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fixtures.ir_producers.producer_irs import (
    ProducerIR,
    irtool_steps,
    load_manifest,
    openvino_steps,
    read_feed,
    steps_difference,
)
from support.quirks import QuirkRecorder

import irtool
from irtool.ir import round_trip_difference

IRS = load_manifest()
BY_NAME = {ir.name: ir for ir in IRS}

# OpenVINO's CPU plugin runs FakeQuantize with int8 kernels (on CPUs that have them): close
# to the spec's formula, which irtool follows, not equal to it. Recorded, not required
# (tests/support/quirks.py): name -> (the quirk, the difference its kernels make).
INT8_KERNELS = {"cnn_int8_fq": ("fake-quantize-int8-kernels", 2e-3)}

KNOWN_GAPS: dict[str, str] = {
    # openvino-tokenizers' extension ops have no kernel (the string ops before them run).
    "runtime/tokenizer": 'tokenizer.xml: layer 17 "SpecialTokensSplit_906418" '
                         "(SpecialTokensSplit-extension): operation SpecialTokensSplit-extension "
                         "is not supported by the irtool runtime",
    "runtime/detokenizer": 'detokenizer.xml: layer 6 "VocabDecoder_906485" '
                           "(VocabDecoder-extension): operation VocabDecoder-extension is not "
                           "supported by the irtool runtime",
}


def _cases(check: str, irs: list[ProducerIR] = IRS) -> list:
    return [pytest.param(ir, id=ir.name, marks=pytest.mark.xfail(
        strict=True, reason=KNOWN_GAPS[f"{check}/{ir.name}"]))
            if f"{check}/{ir.name}" in KNOWN_GAPS else pytest.param(ir, id=ir.name)
            for ir in irs]


def test_known_gaps_name_fixtures_that_exist() -> None:
    checks = {"round_trip", "runtime", "cli_raw_inputs"}
    stale = [key for key in KNOWN_GAPS
             if key.split("/")[0] not in checks or key.split("/", 1)[1] not in BY_NAME]
    assert stale == []


def test_manifest_lists_complete_small_fixtures() -> None:
    assert len(IRS) >= 20
    for ir in IRS:
        assert ir.xml.is_file() and ir.xml.with_suffix(".bin").is_file(), ir.name
        assert ir.xml.with_suffix(".bin").stat().st_size < 400_000, ir.name
        feeds = ir.feed_files()
        assert all(path.is_file() for path in feeds), ir.name
        if ir.stateful and "beam_idx" in {i["name"] for i in ir.entry["inputs"]}:
            # prefill, then single-token steps, with beam_idx in each
            assert len(feeds) >= 5, ir.name
            steps = ir.steps()
            assert steps[0]["input_ids"].shape[1] > 1, ir.name
            assert all(step["input_ids"].shape[1] == 1 for step in steps[1:]), ir.name
            assert all("beam_idx" in step for step in steps), ir.name
        elif not ir.stateful:
            assert [p.name for p in feeds] == [f"{ir.name}.inputs.npz"]


@pytest.mark.parametrize("ir", _cases("validate"))
def test_validate_is_clean(ir: ProducerIR) -> None:
    """No error; a warning only for an op of an OpenVINO extension (openvino-tokenizers)."""
    problems = irtool.validate(ir.xml)
    errors = [str(p) for p in problems if p.severity == "error"]
    assert errors == []
    extension_layers = _extension_layer_ids(ir.xml)
    unexplained = [str(p) for p in problems
                   if p.severity != "error" and not (p.code == "UNKNOWN_OP"
                                                     and p.layer_id in extension_layers)]
    assert unexplained == []


def _extension_layer_ids(xml: Path) -> set[int]:
    model = irtool.load(xml)
    return {layer.id for layer in model.graph.layers if layer.version == "extension"}


@pytest.mark.parametrize("ir", _cases("round_trip"))
def test_round_trip_is_faithful_and_valid(ir: ProducerIR, tmp_path: Path) -> None:
    """load + save: canonically equal XML, byte-identical .bin, and validate-clean."""
    copy = tmp_path / ir.xml.name
    irtool.save(irtool.load(ir.xml), copy)
    assert round_trip_difference(ir.xml, copy) is None
    assert [str(p) for p in irtool.validate(copy) if p.severity == "error"] == []


@pytest.mark.parametrize("ir", _cases("runtime"))
def test_irtool_matches_openvino_step_by_step(ir: ProducerIR,
                                             openvino_quirk: QuirkRecorder) -> None:
    expected = openvino_steps(ir)
    ours = irtool_steps(ir)
    difference = steps_difference(ours, expected, atol=1e-4)
    if ir.name in INT8_KERNELS and difference is not None:
        quirk, atol = INT8_KERNELS[ir.name]
        openvino_quirk(quirk, behaves=False, answer=difference,
                       reproduced=steps_difference(ours, expected, atol=atol) is None)
        return
    assert difference is None


RAW_INPUT_IRS = [ir for ir in IRS if ir.entry["raw_inputs"]]


@pytest.mark.parametrize("ir", _cases("cli_raw_inputs", RAW_INPUT_IRS))
def test_cli_reads_raw_bit_inputs_as_declared(ir: ProducerIR, tmp_path: Path) -> None:
    """``irtool run`` on the npz as stored (bf16/f8 as raw ``|V2``/``|V1`` bits), and its
    outputs loaded back as the model's types, equal OpenVINO's."""
    out = tmp_path / "out.npz"
    done = subprocess.run([sys.executable, "-m", "irtool", "run", str(ir.xml),
                           str(ir.feed_files()[0]), "-o", str(out)],
                          capture_output=True, text=True, env={**os.environ, "IRTOOL_DEBUG": ""})
    assert done.returncode == 0, done.stderr.strip()
    with np.load(out) as data:  # outputs in the model's order; some have no tensor name
        names = list(data.files)
    declared = {name: o["element_type"] for name, o in zip(names, ir.entry["outputs"])}
    outputs = read_feed(out, {n: t for n, t in declared.items() if t in ("bf16", "f8e4m3")})
    assert steps_difference([outputs], openvino_steps(ir)) is None


def test_raw_inputs_are_stored_as_raw_bits() -> None:
    """The fixture format the CLI must read: |V2 for bf16, |V1 for f8, as declared."""
    assert RAW_INPUT_IRS
    for ir in RAW_INPUT_IRS:
        with np.load(ir.feed_files()[0]) as data:
            for name, type_name in ir.entry["raw_inputs"].items():
                width = 2 if type_name == "bf16" else 1
                assert data[name].dtype == np.dtype(f"V{width}"), (ir.name, name)
