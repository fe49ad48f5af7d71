"""Helpers shared by the test suites (imported as ``support``; conftest puts tests/ on
sys.path): IR builders, ONNX model helpers, OpenVINO-written corpora, the opset harness.

``tests/fixtures/`` is for data files only; code lives here."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
REPO = TESTS.parent
SHARED = REPO.parent / "shared"
SAMPLES = REPO / "samples"
