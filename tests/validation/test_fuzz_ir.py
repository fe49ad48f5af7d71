"""Property: whatever a mutated IR holds, ``irtool validate`` lists its problems (exit 0 or
1, never an internal error), and ``irtool run`` on irtool's runtime either runs it or refuses
it with one line, writing nothing; an IR that validate rejects is always refused by run
(the one gate). Hypothesis draws the seed IR and every decision of the mutations
(``tests/support/fuzz_ir.py``) with a fixed seed and a small budget, so the suite stays fast
and repeatable; ``python bench/fuzz.py --target ir`` runs the same mutations by the
thousand, OpenVINO included (in worker processes, crashes and hangs counted).
"""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from support.fuzz_ir import ONNX_CONTROL_FLOW, feed_for, irtool_seeds, mutate, read_seeds
from support.fuzzing import DrawChooser, classify, pick

from irtool.cli import main as cli_main

SEEDS: list = []


@pytest.fixture(scope="module", autouse=True)
def seeds(ov_control_flow_irs: dict[str, Path]) -> None:
    """OpenVINO's IR of the ONNX control-flow cases (the session's) and irtool's own."""
    SEEDS[:] = [*read_seeds([(f"ov_{n}", ov_control_flow_irs[n]) for n in ONNX_CONTROL_FLOW]),
                *irtool_seeds()]


def _cli(*args: str | Path) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = cli_main([str(a) for a in args])
    return rc, err.getvalue()


@seed(20261124)
@settings(max_examples=50, deadline=None, database=None, derandomize=False,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_validate_and_run_never_fail_uncleanly_on_a_mutated_ir(data: st.DataObject) -> None:
    chooser = DrawChooser(data)
    name, xml_bytes, bin_bytes = pick(chooser, SEEDS)
    xml_data, bin_data = mutate(xml_bytes, bin_bytes, chooser)
    with tempfile.TemporaryDirectory() as tmp:
        xml, out = Path(tmp) / "case.xml", Path(tmp) / "out"
        xml.write_bytes(xml_data)
        xml.with_suffix(".bin").write_bytes(bin_data)
        rc, err = _cli("validate", xml)
        verdict = classify("validate", rc, err)
        assert verdict in ("ran", "refused"), f"{name}: validate: {verdict}: {err}"
        feed = feed_for(xml, seed=1) if verdict == "ran" else None
        feed = feed if feed is not None else {}
        np.savez(Path(tmp) / "in.npz", **feed)
        rc, err = _cli("run", xml, Path(tmp) / "in.npz", "-o", out / "o.npz",
                       "--max-iterations", "10000")
        left = sorted(p.name for p in out.iterdir()) if out.is_dir() and rc else []
        outcome = classify("run", rc, err, left)
        assert outcome in ("ran", "refused"), f"{name}: run: {outcome}: {err}"
        if verdict == "refused":
            assert outcome == "refused", f"{name}: run took an IR that validate rejects"
