"""Carried values that take another body input's value directly (a swap, a rotation, the
iteration number, a captured outer value): OpenVINO's CPU plugin computes the form without
a copy wrong (docs/openvino-quirks.md), so the converter puts an Identity on such back
edges. irtool's IR gives onnxruntime's values on OpenVINO and on irtool's runtime, for
every trip count, with and without vectorisation; the documented reproducer is run to
record whether this CPU's plugin still computes it wrong.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from support import REPO
from support.conversion import check_conversion, make_model, vi
from support.quirks import QuirkRecorder

from irtool.ir.graph import Model

F32, I64, BOOL = np.float32, np.int64, np.bool_


def carried_loop(case: str, trip: int) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A Loop of ``trip`` iterations over carried values whose next values the ``case``
    says; the final values are the outputs."""
    feeds = {"A": np.array([1, 2], F32), "B": np.array([3, 4], F32),
             "C": np.array([5, 6], F32)}
    names = ["a", "b"]
    nodes: list[onnx.NodeProto] = []
    outer: list[onnx.NodeProto] = []
    # a' = b, b' = a: through Identity as exporters write it, or the inputs named directly
    if case in ("swap", "swap, outputs named as inputs"):
        nexts = {"a": "b_in", "b": "a_in"}
    elif case == "rotate":  # a' = b, b' = c, c' = a
        names = ["a", "b", "c"]
        nexts = {"a": "b_in", "b": "c_in", "c": "a_in"}
    elif case == "iteration number":  # a' = float(i), b' = a
        nodes.append(helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT))
        nodes.append(helper.make_node("Expand", ["fi", "two"], ["a_next"]))
        outer.append(helper.make_node("Constant", [], ["two"], value=helper.make_tensor(
            "t", TensorProto.INT64, [1], [2])))
        nexts = {"a": "a_next", "b": "a_in"}
    elif case == "captured value":  # a' = X (an outer value), b' = a
        nexts = {"a": "X", "b": "a_in"}
        feeds["X"] = np.array([7, 8], F32)
    else:
        raise ValueError(case)
    direct = case == "swap, outputs named as inputs"
    outs = []
    for n in names:
        if direct or nexts[n] == "a_next":
            outs.append(nexts[n])
            continue
        nodes.append(helper.make_node("Identity", [nexts[n]], [f"{n}_out"]))
        outs.append(f"{n}_out")
    cond_out = "cond_in" if direct else "cond_out"
    if not direct:
        nodes.append(helper.make_node("Identity", ["cond_in"], ["cond_out"]))
    body = helper.make_graph(
        nodes, "body", [vi("i", I64, []), vi("cond_in", BOOL, []),
                        *(vi(f"{n}_in", F32, [2]) for n in names)],
        [vi(cond_out, BOOL, []), *(vi(o, F32, [2]) for o in outs)])
    m = helper.make_tensor("M", TensorProto.INT64, [], [trip])
    cond = helper.make_tensor("cond", TensorProto.BOOL, [], [True])
    loop = helper.make_node("Loop", ["M", "cond", *(n.upper() for n in names)],
                            [f"{n.upper()}F" for n in names], body=body)
    inputs = [vi(n.upper(), F32, [2]) for n in names] + \
        ([vi("X", F32, [2])] if "X" in feeds else [])
    feeds = {k: v for k, v in feeds.items() if k in {i.name for i in inputs}}
    model = make_model([*outer, loop], inputs, [vi(f"{n.upper()}F", F32, [2]) for n in names],
                       initializers=[m, cond])
    return model, feeds


CASES = ["swap", "swap, outputs named as inputs", "rotate", "iteration number",
         "captured value"]


def _identities(model: Model) -> int:
    return sum(1 for _, layer in model.graph.walk() if layer.type == "Identity")


@pytest.mark.parametrize("trip", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("case", CASES)
def test_irtools_ir_gives_onnxruntimes_values_on_openvino(case: str, trip: int,
                                                         tmp_path: Path) -> None:
    model, feeds = carried_loop(case, trip)
    for vectorize in (True, False):
        ir = check_conversion(model, feeds, tmp_path, vectorize=vectorize)
        if trip:
            assert _identities(ir) >= 1  # the copies on the back edges


def test_scan_states_that_swap(tmp_path: Path) -> None:
    """A Scan (TensorIterator) whose two states swap every step and a scan output of each
    step's first state."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["s1"], ["s0_out"]),
         helper.make_node("Identity", ["s0"], ["s1_out"]),
         helper.make_node("Add", ["s0", "x"], ["y"])], "body",
        [vi("s0", F32, [2]), vi("s1", F32, [2]), vi("x", F32, [2])],
        [vi("s0_out", F32, [2]), vi("s1_out", F32, [2]), vi("y", F32, [2])])
    scan = helper.make_node("Scan", ["S0", "S1", "X"], ["F0", "F1", "Y"], body=body,
                            num_scan_inputs=1)
    model = make_model([scan], [vi("S0", F32, [2]), vi("S1", F32, [2]), vi("X", F32, [5, 2])],
                       [vi("F0", F32, [2]), vi("F1", F32, [2]), vi("Y", F32, [5, 2])])
    feeds = {"S0": np.array([1, 2], F32), "S1": np.array([3, 4], F32),
             "X": np.arange(10, dtype=F32).reshape(5, 2)}
    check_conversion(model, feeds, tmp_path)


def test_the_documented_reproducer(tmp_path: Path, openvino_quirk: QuirkRecorder) -> None:
    """The doc's reproducer (irtool's form before the fix) runs; whether this CPU's plugin
    still gives the wrong values it says is recorded (tests/support/quirks.py)."""
    text = (REPO / "docs" / "openvino-quirks.md").read_text()
    section = text.split("## A back edge whose Result reads another body Parameter")[1]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)  # type: ignore[union-attr]
    script = tmp_path / "repro.py"
    script.write_text(code)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-500:]
    got = proc.stdout.strip().splitlines()[-1]
    openvino_quirk("crossed-back-edge", behaves=got == "[[1.0, 1.0], [2.0, 2.0]]",
                   reproduced=got == "[[2.0, 2.0], [2.0, 2.0]]", answer=got)


def test_openvino_with_no_iteration_known_at_run_time(tmp_path: Path,
                                                      openvino_quirk: QuirkRecorder) -> None:
    """A trip count of 0 given at run time cannot be folded: irtool's runtime gives the
    initial values (onnxruntime's), OpenVINO's CPU plugin another carried value's initial
    value or uninitialised memory, here recorded (tests/support/quirks.py)."""
    from support.compare import assert_same
    from support.conversion import run_onnxruntime, run_openvino

    import irtool

    model, feeds = carried_loop("iteration number", 3)
    graph = model.graph
    del graph.initializer[0]  # M becomes a graph input
    graph.input.append(vi("M", I64, []))
    feeds["M"] = np.array(0, I64)
    expected = run_onnxruntime(model, feeds)
    ir = irtool.convert(model)
    assert_same(irtool.run(ir, feeds), expected, "irtool")
    got = run_openvino(irtool.save(ir, tmp_path / "model.xml"), feeds)
    openvino_quirk("crossed-back-edge-no-iteration",
                   behaves=all(np.array_equal(got[k], v) for k, v in expected.items()),
                   # only BF, the value whose next value is another's, is the plugin's own
                   reproduced=np.array_equal(got["AF"], expected["AF"]),
                   answer=f"AF = {got['AF']}, BF = {got['BF']} after no iteration, not "
                          f"{expected['AF']}, {expected['BF']}")
