"""RNN/GRU/LSTMSequence with every step's input projection made by one matrix product
before the steps (``compute_projected``, chosen by ``irtool.runtime.fastpath`` when the
runtime optimises) against OpenVINO's CPU plugin, with optimisations on and off: every
direction, full-length and short sequences, a batch of several, GRU's reset modes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import pytest
from openvino import opset5, opset13
from support.opset_harness import CPU_CONFIG, mismatch

import irtool
from irtool.runtime import Executor

RNG = np.random.default_rng(27)
F32 = np.float32
SEQ, BATCH, INPUT, HIDDEN = 12, 3, 7, 16


def _rand(*shape: int) -> np.ndarray:
    return (RNG.standard_normal(shape) * 0.5).astype(F32)


def _sequence(kind: str, direction: str, lengths: list[int], linear_before_reset: bool
              ) -> tuple[list[ov.Node], list[ov.Node], list[np.ndarray]]:
    dirs = 2 if direction == "bidirectional" else 1
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[kind]
    x = opset13.parameter([BATCH, SEQ, INPUT], F32)
    h = opset13.parameter([BATCH, dirs, HIDDEN], F32)
    c = opset13.parameter([BATCH, dirs, HIDDEN], F32)
    lens = opset13.constant(np.array(lengths, np.int32))
    w = opset13.constant(_rand(dirs, gates * HIDDEN, INPUT))
    r = opset13.constant(_rand(dirs, gates * HIDDEN, HIDDEN))
    feeds = [_rand(BATCH, SEQ, INPUT), _rand(BATCH, dirs, HIDDEN)]
    if kind == "RNN":
        b = opset13.constant(_rand(dirs, HIDDEN))
        node = opset5.rnn_sequence(x, h, lens, w, r, b, HIDDEN, direction)
        return [node], [x, h], feeds
    if kind == "GRU":
        b = opset13.constant(_rand(dirs, (4 if linear_before_reset else 3) * HIDDEN))
        node = opset5.gru_sequence(x, h, lens, w, r, b, HIDDEN, direction,
                                   linear_before_reset=linear_before_reset)
        return [node], [x, h], feeds
    b = opset13.constant(_rand(dirs, 4 * HIDDEN))
    node = opset5.lstm_sequence(x, h, c, lens, w, r, b, HIDDEN, direction)
    return [node], [x, h, c], [*feeds, _rand(BATCH, dirs, HIDDEN)]


CASES = [(kind, direction, lengths, reset)
         for kind in ("RNN", "GRU", "LSTM")
         for direction in ("forward", "reverse", "bidirectional")
         for lengths in ([SEQ] * BATCH, [SEQ, 5, 9])
         for reset in ((False, True) if kind == "GRU" else (False,))]


@pytest.mark.parametrize("optimize", [True, False])
@pytest.mark.parametrize("kind,direction,lengths,reset", CASES)
def test_sequences_against_openvino(tmp_path: Path, kind: str, direction: str,
                                    lengths: list[int], reset: bool, optimize: bool) -> None:
    nodes, params, feeds = _sequence(kind, direction, lengths, reset)
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([o for n in nodes for o in n.outputs()], params), xml,
                  compress_to_fp16=False)
    compiled = ov.Core().compile_model(xml, "CPU", CPU_CONFIG)
    result = compiled(feeds)
    expected = [np.array(result[o]) for o in compiled.outputs]
    ex = Executor(irtool.load(xml), optimize=optimize)
    got = list(ex.run(feeds).values())
    assert len(got) == len(expected)
    for i, (a, e) in enumerate(zip(got, expected)):
        why = mismatch(a, e)
        assert why is None, f"output {i}: {why}"
    # The projected kernel is the optimisation: chosen with optimize only, and counted.
    (step,) = [s for s in ex.plan.steps if s.layer.type.endswith("Sequence")]
    assert (getattr(step.kernel, "__name__", "") == "compute_projected") == optimize
    assert (ex.optimizations.get("specialised kernels", 0) >= 1) == optimize


def test_the_projection_is_what_the_steps_read() -> None:
    """A projection of the wrong direction's weights must change the outputs (so the
    cases above test the projected form, not a projection nothing reads)."""
    from irtool.opset import make_op

    op = make_op("GRUSequence", "opset5", {"hidden_size": str(HIDDEN),
                                           "direction": "bidirectional"})
    x = _rand(BATCH, SEQ, INPUT)
    ins = [x, _rand(BATCH, 2, HIDDEN), np.full(BATCH, SEQ, np.int32),
           _rand(2, 3 * HIDDEN, INPUT), _rand(2, 3 * HIDDEN, HIDDEN), _rand(2, 3 * HIDDEN)]
    plain, projected = op.compute(ins), op.compute_projected(ins)
    for a, b in zip(plain, projected):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    swapped = [*ins[:3], ins[3][::-1].copy(), *ins[4:]]
    assert not np.allclose(op.compute_projected(swapped)[0], projected[0], atol=1e-3)
