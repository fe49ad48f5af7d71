"""Loops that run no iteration: irtool's IR runs on OpenVINO (in a worker) and on irtool's
runtime to onnxruntime's values, where OpenVINO's CPU plugin dies of SIGFPE on a Loop it
can tell runs zero times with a concatenated output (docs/openvino-quirks.md).

The models are the ONNX shapes that walk into it: a constant trip count of 0, a constant
false condition, a negative trip count (ONNX: no iteration; IR: no limit), given as a
constant or at run time. The doc's reproducer still crashes OpenVINO; when it stops doing
so, ``test_the_documented_reproducer_still_crashes_openvino`` fails and the doc and the
converter's fold can go.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from support.compare import assert_same
from support.conversion import run_onnxruntime

import irtool

ROOT = Path(__file__).resolve().parents[3]
vi = h.make_tensor_value_info


def loop_model(m: int | None, cond: bool | None, elem: list[int | None] = [2],  # noqa: B006
               ) -> onnx.ModelProto:
    """v = v0 + k after k iterations, scans stacks (v0 + i + 1)**2; ``m``/``cond`` None:
    graph inputs M/C given at run time, else constants."""
    body = h.make_graph(
        [h.make_node("Identity", ["c_in"], ["c_out"]),
         h.make_node("Add", ["v_in", "one"], ["v_out"]),
         h.make_node("Mul", ["v_out", "v_out"], ["scan"])], "body",
        [vi("i", T.INT64, []), vi("c_in", T.BOOL, []), vi("v_in", T.FLOAT, elem)],
        [vi("c_out", T.BOOL, []), vi("v_out", T.FLOAT, elem), vi("scan", T.FLOAT, elem)],
        [h.make_tensor("one", T.FLOAT, [], [1.0])])
    nodes, inputs = [], [vi("v0", T.FLOAT, elem)]
    if m is None:
        inputs.append(vi("M", T.INT64, []))
    else:
        nodes.append(h.make_node("Constant", [], ["M"], value=h.make_tensor("M", T.INT64, [],
                                                                            [m])))
    if cond is None:
        inputs.append(vi("C", T.BOOL, []))
    else:
        nodes.append(h.make_node("Constant", [], ["C"],
                                 value=h.make_tensor("C", T.BOOL, [], [cond])))
    nodes.append(h.make_node("Loop", ["M", "C", "v0"], ["v", "scans"], body=body,
                             name="loop"))
    graph = h.make_graph(nodes, "zero_trip", inputs,
                         [vi("v", T.FLOAT, elem), vi("scans", T.FLOAT, [None, *elem])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


V0 = np.array([1.0, 2.0], np.float32)
# name -> (M as a constant or None, cond as a constant or None, the run-time feed)
CASES = {
    "trip-0": (0, True, {}),
    "cond-false": (3, False, {}),
    "trip-minus-1-cond-false": (-1, False, {}),
    "trip-minus-2": (-2, True, {}),
    "runtime-trip-minus-2": (None, True, {"M": np.array(-2)}),
    "runtime-trip-0": (None, True, {"M": np.array(0)}),
    "runtime-cond-false": (None, None, {"M": np.array(4), "C": np.array(False)}),
    "trip-2": (2, True, {}),  # the loop that runs, for contrast
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_irtool_and_openvino_match_onnxruntime(name: str, tmp_path: Path) -> None:
    m, cond, feed = CASES[name]
    model = loop_model(m, cond)
    feed = {"v0": V0, **feed}
    want = run_onnxruntime(model, feed)
    runs = int(name == "trip-2") * 2
    assert want["scans"].shape == (runs, 2)  # the independent witness: no iteration ran
    np.testing.assert_array_equal(want["v"], V0 + runs)
    xml = irtool.save(irtool.convert(model), tmp_path / "m.xml")
    assert [d.format() for d in irtool.validate(xml) if d.severity == "error"] == []
    assert_same(irtool.run(xml, feed), want, "irtool")
    assert_same(irtool.run(xml, feed, backend="openvino", timeout=120), want, "openvino")


def test_a_constant_zero_trip_loop_is_folded_away(tmp_path: Path) -> None:
    """No Loop is left for OpenVINO to fold to zero iterations; the scan output is an empty
    constant of the element's shape."""
    ir = irtool.convert(loop_model(0, True))
    assert ir.graph.layers_of_type("Loop") == []
    ir = irtool.convert(loop_model(None, True))  # a run-time M keeps its Loop
    assert len(ir.graph.layers_of_type("Loop")) == 1


def _dynamic_element(tmp_path: Path) -> tuple[Path, dict, dict]:
    model = loop_model(0, True, elem=[None])
    feed = {"v0": V0}
    want = run_onnxruntime(model, feed)
    assert want["scans"].shape == (0, 0)
    return irtool.save(irtool.convert(model), tmp_path / "m.xml"), feed, want


def test_a_zero_trip_loop_of_dynamic_element_shape_keeps_its_loop(tmp_path: Path) -> None:
    """Without a static element shape there is no empty constant to fold to: the Loop
    stays. OpenVINO cannot tell the scan's shape when compiling either, so it does not
    crash, and returns onnxruntime's [0, 0]."""
    xml, feed, want = _dynamic_element(tmp_path)
    assert len(irtool.load(xml).graph.layers_of_type("Loop")) == 1
    assert_same(irtool.run(xml, feed, backend="openvino", timeout=120), want, "openvino")


def test_irtool_runs_a_zero_trip_loop_of_dynamic_element_shape(tmp_path: Path) -> None:
    xml, feed, want = _dynamic_element(tmp_path)
    assert_same(irtool.run(xml, feed), want, "irtool")


def test_the_documented_reproducer_still_crashes_openvino(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "openvino-quirks.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.DOTALL).group(1)  # type: ignore[union-attr]
    script = tmp_path / "repro.py"
    script.write_text(code)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == -signal.SIGFPE, (proc.returncode, proc.stderr[-500:])
    # The same model with a trip count of 2 compiles and runs: it is the zero that kills.
    script.write_text(code.replace("np.array(0, np.int64)", "np.array(2, np.int64)")
                      .replace('"CPU")  # SIGFPE', '"CPU")([np.ones(2, np.float32)])'))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-500:]
