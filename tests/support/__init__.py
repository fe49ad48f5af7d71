"""Helpers shared by the test suites (imported as ``support``; conftest puts tests/ on
sys.path): IR builders, ONNX model helpers, OpenVINO-written corpora, the opset harness.

``tests/fixtures/`` is for data files and the scripts that make them; test code lives here."""

from __future__ import annotations

import subprocess
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
REPO = TESTS.parent
SAMPLES = REPO / "samples"


def _shared() -> Path:
    """``../shared`` beside the checkout; for a git worktree, beside the main checkout."""
    beside = REPO.parent / "shared"
    if beside.is_dir():
        return beside
    try:
        common = subprocess.run(["git", "rev-parse", "--path-format=absolute",
                                 "--git-common-dir"], cwd=REPO, capture_output=True,
                                text=True, timeout=30).stdout.strip()
    except OSError:  # no git: the checkout is all there is
        return beside
    main = Path(common).parent.parent / "shared" if common else beside
    return main if main.is_dir() else beside


SHARED = _shared()

# The OpenVINO-written IR corpus (irtool.tools.corpus) with onnx 1.23.2 and openvino
# 2026.4.1: OpenVINO converts 1372 of the 1884 ONNX node cases, 9 of them with a Loop,
# TensorIterator or If. Corpus tests assert at least these sizes, so an empty or partial
# corpus fails rather than passing over nothing.
CORPUS_CASES = 1372
CORPUS_CONTROL_FLOW_CASES = 9
