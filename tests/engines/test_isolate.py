"""Engines in a worker process (``irtool.engines.isolate``): a crash or a hang of the
engine is its run's reason, and the next run gets a fresh worker."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import irtool

CRASHING_ENGINE = '''
import os, signal
from irtool.engines.base import Engine

class Crash(Engine):
    name = "crashy"

    def _run(self, inputs):
        os.kill(os.getpid(), signal.SIGSEGV)
'''


def test_isolated_engine_survives_a_crash_and_a_hang(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from irtool.engines import isolate
    from irtool.engines.openvino import OpenVINOEngine

    (tmp_path / "crashy_engine.py").write_text(CRASHING_ENGINE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    isolate._stop_child()  # the next child starts with the PYTHONPATH above
    from crashy_engine import Crash  # type: ignore[import-not-found]

    outcome = isolate.Isolated(Crash()).try_run({})
    assert outcome.error == "crashy crashed (SIGSEGV)"
    # A loop without trip count whose condition stays true never ends on OpenVINO.
    body = h.make_graph([h.make_node("Identity", ["c"], ["c_out"]),
                         h.make_node("Add", ["x_in", "x_in"], ["x_out"])], "body",
                        [h.make_tensor_value_info("i", T.INT64, []),
                         h.make_tensor_value_info("c", T.BOOL, []),
                         h.make_tensor_value_info("x_in", T.FLOAT, [1])],
                        [h.make_tensor_value_info("c_out", T.BOOL, []),
                         h.make_tensor_value_info("x_out", T.FLOAT, [1])])
    graph = h.make_graph([h.make_node("Loop", ["", "cond", "x"], ["y"], body=body)], "forever",
                         [h.make_tensor_value_info("cond", T.BOOL, []),
                          h.make_tensor_value_info("x", T.FLOAT, [1])],
                         [h.make_tensor_value_info("y", T.FLOAT, [1])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 16)])
    xml = irtool.save(irtool.convert(model), tmp_path / "forever.xml")
    feed = {"cond": np.array(True), "x": np.ones(1, np.float32)}
    hung = isolate.Isolated(OpenVINOEngine(xml), timeout=5).try_run(feed)
    assert hung.error == "openvino gave no result within 5 s (stopped)"
    # ... and the next call gets a fresh child that works.
    done = isolate.Isolated(OpenVINOEngine(xml)).try_run({"cond": np.array(False),
                                                            "x": np.ones(1, np.float32)})
    assert done.error is None and done.outputs["y"].tolist() == [1.0]
