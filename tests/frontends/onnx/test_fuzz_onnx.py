"""Property: whatever a mutated ONNX file holds, ``irtool convert`` either writes IR that
``irtool validate`` accepts or refuses it with one line, writing nothing; never an internal
error. Hypothesis draws the seed model and every decision of the mutations
(``tests/support/fuzz_onnx.py``), with a fixed seed and a small budget so the suite stays
fast and repeatable; ``python bench/fuzz.py --target onnx`` runs the same mutations by the
thousand (crashes and hangs included, in worker processes).
"""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from support.fuzz_onnx import mutate, seed_models
from support.fuzzing import DrawChooser, classify, pick

import irtool
from irtool.cli import main as cli_main


@seed(20261123)
@settings(max_examples=60, deadline=None, database=None, derandomize=False,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_convert_never_fails_uncleanly_on_a_mutated_model(data: st.DataObject) -> None:
    chooser = DrawChooser(data)
    name, model = pick(chooser, seed_models())
    case = mutate(model, chooser)
    with tempfile.TemporaryDirectory() as tmp:
        path, out = Path(tmp) / "case.onnx", Path(tmp) / "out"
        path.write_bytes(case)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = cli_main(["convert", str(path), "-o", str(out / "m.xml")])
        left = sorted(p.name for p in out.iterdir()) if out.is_dir() and rc else []
        outcome = classify("convert", rc, err.getvalue(), left)
        assert outcome in ("ran", "refused"), f"{name}: {outcome}: {err.getvalue()}"
        if outcome == "ran":
            problems = [d.format() for d in irtool.validate(out / "m.xml")
                        if d.severity == "error"]
            assert problems == [], f"{name}: convert wrote IR that validate rejects"
