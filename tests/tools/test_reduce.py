"""``irtool.reduce`` / ``irtool reduce``: a problem buried in a large IR shrinks to the
layers that make it, and the result still shows it.

The models (``support.buried``) are long chains with one problem planted at a known layer;
the layers a minimal reproducer keeps come from how the model was built. That the reduced
IR still shows the problem is checked apart from the reducer: OpenVINO run directly (its
crash in a child process of its own), values by hand in numpy, validate on the files.
The wrong kernel (``support/wrong_sin.py``: ``Sin`` of opset16 is ``sin(x) + 1`` where
``x > 0.5`` in irtool, OpenVINO's own ``Sin``) is registered for one test at a time.
"""

from __future__ import annotations

import runpy
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support.buried import (
    WRONG_SIN,
    Buried,
    chain_numpy,
    swapped_carry,
    wrong_kernel_chain,
    wrong_kernel_in_if,
    wrong_kernel_in_loops,
    wrong_kernel_in_tensor_iterator,
    zero_trip_crash,
)
from support.ir_builders import run_openvino

import irtool
from irtool.ir.graph import tensor_name
from irtool.opset import base as opset_base
from irtool.tools.reduce import ConditionError, ReduceError, parse_condition
from irtool.tools.reduce.edits import Candidate, keep_layers, operations
from irtool.tools.reduce.search import ddmin
from irtool.tools.reduce.values import record

LAYERS = 100  # the chains here; bench/reduce.py takes them past 1,000
SHORT = 40  # where what is tested is not the length (each OpenVINO crash restarts its worker)


@pytest.fixture
def wrong_sin(monkeypatch: pytest.MonkeyPatch) -> None:
    """``support/wrong_sin.py`` registered for this test only."""
    monkeypatch.setitem(opset_base._REGISTRY._items, "Sin",
                        dict(opset_base._REGISTRY._items["Sin"]))
    runpy.run_path(str(WRONG_SIN))


def save(case: Buried, folder: Path) -> tuple[Path, Path]:
    xml = irtool.save(case.model, folder / "model.xml")
    np.savez(folder / "inputs.npz", **case.feed)
    return xml, folder / "inputs.npz"


def computing(xml: Path) -> list[tuple[str, str, str]]:
    """``(type, version, name)`` of each computing layer of the top graph, in order."""
    model = irtool.load(xml, strict=False)
    return [(model.graph.layer(lid).type, model.graph.layer(lid).version,
             model.graph.layer(lid).name) for lid in operations(model)]


def inputs_of(folder: Path) -> dict[str, np.ndarray]:
    with np.load(folder / "inputs.npz") as data:
        return {k: data[k] for k in data.files}


def errors(xml: Path) -> list[str]:
    return [d.format() for d in irtool.validate(xml) if d.severity == "error"]


def irtool_cli(*args: str | Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "irtool", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


def compile_in_child(xml: Path) -> int:
    """OpenVINO compiling and running ``xml`` (zeros for its inputs) in a process of its
    own: its exit code (negative: the signal it died of)."""
    code = ("import sys, numpy as np, openvino as ov\n"
            "core = ov.Core()\n"
            "c = core.compile_model(core.read_model(sys.argv[1]), 'CPU')\n"
            "c({p: np.zeros([d.get_length() for d in p.get_partial_shape()], "
            "p.get_element_type().to_dtype()) for p in c.inputs})\n")
    return subprocess.run([sys.executable, "-c", code, str(xml)], capture_output=True,
                          timeout=300).returncode


# -- disagree: a wrong kernel -------------------------------------------------------------------


@pytest.mark.parametrize("make", [wrong_kernel_chain, wrong_kernel_in_if,
                                  wrong_kernel_in_tensor_iterator],
                         ids=["chain", "if", "tensor-iterator"])
def test_a_wrong_kernel_reduces_to_the_planted_layer(make, wrong_sin, tmp_path: Path) -> None:
    case = make(LAYERS)
    xml, inputs = save(case, tmp_path)
    result = irtool.reduce(xml, inputs, "disagree", tmp_path / "out")

    assert computing(result.xml) == [("Sin", "opset16", case.planted)]
    assert result.after[1] == 3  # Parameter, Sin, Result: bodies gone too
    assert errors(result.xml) == []
    # Still shows it, by hand: OpenVINO computes sin, irtool sin + 1 above 0.5.
    feed = inputs_of(tmp_path / "out")
    (x,) = feed.values()
    assert (x > 0.5).any()
    (got,) = run_openvino(irtool.load(result.xml), feed).values()
    np.testing.assert_allclose(got, np.sin(x), rtol=1e-5, atol=1e-6)
    with np.load(tmp_path / "out" / "expected.npz") as expected:
        np.testing.assert_allclose(expected[case.planted], np.sin(x) + (x > 0.5), rtol=1e-5)
    readme = (tmp_path / "out" / "README.md").read_text()
    assert "disagree" in readme and "import openvino as ov" in readme
    assert result.tried < 60


def test_tolerances_decide_what_disagrees(wrong_sin, tmp_path: Path) -> None:
    """The wrong kernel is 1 off: within atol=2 irtool and OpenVINO agree."""
    case = wrong_kernel_chain(SHORT)
    xml, inputs = save(case, tmp_path)
    with pytest.raises(ReduceError, match="irtool and OpenVINO agree"):
        irtool.reduce(xml, inputs, "disagree", tmp_path / "out", rtol=0, atol=2)
    result = irtool.reduce(xml, inputs, "disagree", tmp_path / "out", rtol=0, atol=0.5)
    assert computing(result.xml) == [("Sin", "opset16", case.planted)]


def test_a_wrong_kernel_in_nested_loops_is_hoisted_out(wrong_sin, tmp_path: Path) -> None:
    case = wrong_kernel_in_loops(SHORT, depth=3)
    xml, inputs = save(case, tmp_path)
    before = sum(1 for _ in case.model.graph.walk())
    result = irtool.reduce(xml, inputs, "disagree", tmp_path / "out")
    assert result.before[1] == before
    assert computing(result.xml) == [("Sin", "opset16", case.planted)]
    assert errors(result.xml) == []
    feed = inputs_of(tmp_path / "out")
    (x,) = feed.values()
    (got,) = run_openvino(irtool.load(result.xml), feed).values()
    np.testing.assert_allclose(got, np.sin(x), rtol=1e-5, atol=1e-6)
    assert (x > 0.5).any()


def test_cut_values_are_what_the_layers_compute(tmp_path: Path) -> None:
    """A cut feeds the planted layer the value the chain computes before it (by hand)."""
    case = wrong_kernel_chain(40)
    graph = case.model.graph
    planted = next(lay.id for lay in graph.layers if lay.name == case.planted)
    cand = Candidate(case.model, dict(case.feed))
    cand.values = record(case.model, case.feed)
    cut = keep_layers(cand, [planted])
    assert cut is not None
    (name,) = cut.feed
    np.testing.assert_allclose(cut.feed[name], chain_numpy(case.feed["x"], case.before),
                               rtol=1e-6)
    # The cut IR is valid, its input and output named, its Sin fed by the new input.
    xml = irtool.save(cut.model, tmp_path / "cut.xml")
    assert errors(xml) == []
    assert [tensor_name(p, p.outputs[0]) for p in cut.model.inputs] == [name]


# -- openvino-crash ---------------------------------------------------------------------------


def test_openvino_crash_reduces_to_the_loop_and_the_reducer_lives(tmp_path: Path) -> None:
    """The zero-trip Loop of docs/openvino-quirks.md kills OpenVINO's worker again and
    again; the command goes on, and the reduced IR still kills a fresh OpenVINO."""
    case = zero_trip_crash(SHORT)
    xml, inputs = save(case, tmp_path)
    if compile_in_child(xml) != -signal.SIGFPE:
        pytest.skip("OpenVINO compiles the zero-trip Loop on this machine (the quirk of "
                    "docs/openvino-quirks.md does not reproduce)")
    proc = irtool_cli("reduce", xml, inputs, "--until", "openvino-crash", "-o",
                      tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stdout.strip().splitlines()) == 1
    assert "OpenVINO crashed (SIGFPE)" in proc.stdout
    reduced = tmp_path / "out" / "reduced.xml"
    assert [t for t, _, _ in computing(reduced)] == case.minimal_ops
    assert errors(reduced) == []
    assert compile_in_child(reduced) == -signal.SIGFPE
    assert "dies of SIGFPE" in (tmp_path / "out" / "README.md").read_text()


def test_a_crash_condition_with_match_takes_an_error_too(tmp_path: Path) -> None:
    """An error is no crash, unless ``--match`` finds it: here OpenVINO's refusal of an
    input of another type, which only the first layer reading that input needs."""
    case = wrong_kernel_chain(20)
    xml, _ = save(case, tmp_path)
    wrong = tmp_path / "wrong.npz"
    np.savez(wrong, x=np.ones((4, 16), np.float64))
    with pytest.raises(ReduceError, match="OpenVINO failed: input 'x' has dtype float64"):
        irtool.reduce(xml, wrong, "openvino-crash", tmp_path / "out")
    assert not (tmp_path / "out").exists()
    result = irtool.reduce(xml, wrong, "openvino-crash", tmp_path / "out",
                           match="has dtype float64")
    assert [t for t, _, _ in computing(result.xml)] == ["Negative"]  # the chain's first
    assert irtool.load(result.xml).input_names() == ["x"]


# -- disagree: an OpenVINO quirk ------------------------------------------------------------


def test_swapped_carried_values_reduce_to_the_loop(tmp_path: Path) -> None:
    """docs/openvino-quirks.md's swapped carried values, where they reproduce."""
    case = swapped_carry(LAYERS)
    xml, inputs = save(case, tmp_path)
    try:
        result = irtool.reduce(xml, inputs, "disagree", tmp_path / "out")
    except ReduceError as err:
        assert "irtool and OpenVINO agree" in str(err)
        pytest.skip("OpenVINO computes the swapped carried values right on this machine")
    assert [t for t, _, _ in computing(result.xml)] == case.minimal_ops
    assert errors(result.xml) == []
    model = irtool.load(result.xml)
    (loop,) = [model.graph.layer(lid) for lid in operations(model)]
    trips = model.graph.layer(model.graph.source(loop.id, 0)[0]).const_value()
    feed = inputs_of(tmp_path / "out")
    a, b = (feed[n] for n in model.input_names())
    # a' = b, b' = a, trips times: an even count gives (a, b) back.
    swapped = int(trips) % 2 == 1
    want = {0: b if swapped else a, 1: a if swapped else b}
    got = list(run_openvino(model, feed).values())
    outputs = [loop.output_index(model.graph.source(r.id, 0)[1]) for r in model.outputs]
    assert any(not np.allclose(g, want[k]) for g, k in zip(got, outputs))


# -- validate:CODE, command:CMD -------------------------------------------------------------


@pytest.mark.saves_invalid_ir
def test_a_validate_code_reduces_to_the_layer_it_names(tmp_path: Path) -> None:
    case = wrong_kernel_chain(LAYERS)
    layer = next(lay for lay in case.model.graph.layers if lay.name == case.planted)
    layer.type, layer.version, layer.attrs = "Softmax", "opset8", {"axis": "7"}
    xml, inputs = save(case, tmp_path)
    result = irtool.reduce(xml, inputs, "validate:AXIS_RANGE", tmp_path / "out")
    assert computing(result.xml) == [("Softmax", "opset8", case.planted)]
    found = irtool.validate(result.xml)
    assert [d.code for d in found if d.severity == "error"] == ["AXIS_RANGE"]
    assert "irtool validate reduced.xml" in (tmp_path / "out" / "README.md").read_text()


def test_a_failing_command_reduces_to_what_it_fails_on(tmp_path: Path) -> None:
    case = wrong_kernel_chain(LAYERS)
    xml, inputs = save(case, tmp_path)
    script = tmp_path / "has_sin16.py"
    script.write_text("import sys\nsys.exit(3 if 'version=\"opset16\"' in "
                      "open(sys.argv[1]).read() else 0)\n")
    until = f"command:{sys.executable} {script} {{xml}}"
    result = irtool.reduce(xml, inputs, until, tmp_path / "out")
    assert computing(result.xml) == [("Sin", "opset16", case.planted)]
    assert subprocess.run([sys.executable, script, result.xml]).returncode == 3
    assert "exit status 3" in result.detail


def test_a_command_that_hangs_is_stopped(tmp_path: Path) -> None:
    case = wrong_kernel_chain(20)
    xml, inputs = save(case, tmp_path)
    until = f"command:{sys.executable} -c 'import time; time.sleep(60)' {{xml}}"
    with pytest.raises(ReduceError, match="no answer within 1 s"):
        irtool.reduce(xml, inputs, until, tmp_path / "out", timeout=1)


# -- the search -----------------------------------------------------------------------------


def test_ddmin_finds_each_needed_item_in_few_trials() -> None:
    needed = {137, 731}
    trials: list[list[int]] = []

    def holds(items: list[int]) -> bool:
        trials.append(items)
        return needed <= set(items)

    assert ddmin(list(range(1000)), holds) == sorted(needed)
    assert len(trials) < 150  # 120: two apart cost a few trials per halving, not 1000s


def test_ddmin_of_one_needed_item_is_logarithmic() -> None:
    trials = []

    def holds(items: list[int]) -> bool:
        trials.append(items)
        return 613 in items

    assert ddmin(list(range(1024)), holds) == [613]
    assert len(trials) <= 2 * 10


def test_a_time_limit_writes_what_was_found(wrong_sin, tmp_path: Path) -> None:
    case = wrong_kernel_chain(LAYERS)
    xml, inputs = save(case, tmp_path)
    result = irtool.reduce(xml, inputs, "disagree", tmp_path / "out", time_limit=0)
    assert result.out_of_time
    assert "stopped at the time limit" in result.summary()
    assert errors(result.xml) == []
    assert result.after == result.before


# -- bad input --------------------------------------------------------------------------------


def test_a_condition_that_does_not_hold_is_one_line_and_exit_1(tmp_path: Path) -> None:
    case = wrong_kernel_chain(40)  # without the wrong kernel irtool and OpenVINO agree
    xml, inputs = save(case, tmp_path)
    proc = irtool_cli("reduce", xml, inputs, "--until", "disagree", "-o", tmp_path / "out")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"irtool reduce: {xml}: the condition does not hold on it (irtool's executor and "
        "OpenVINO's CPU plugin disagree beyond the tolerances of irtool check (per element "
        "type)): irtool and OpenVINO agree"]
    assert not (tmp_path / "out").exists()


def test_the_extension_plants_the_disagreement_from_the_command_line(tmp_path: Path) -> None:
    case = wrong_kernel_chain(SHORT)
    xml, inputs = save(case, tmp_path)
    proc = irtool_cli("reduce", xml, inputs, "--until", "disagree", "--extension", WRONG_SIN,
                      "-o", tmp_path / "out", "-v")
    assert proc.returncode == 0, proc.stderr
    assert "kept 1 layer" in proc.stderr  # -v: each smaller IR kept
    assert computing(tmp_path / "out" / "reduced.xml") == [("Sin", "opset16", case.planted)]


@pytest.mark.parametrize("args, message", [
    (["--until", "crash"], "not a condition (one of openvino-crash, disagree"),
    (["--until", "validate:NO_SUCH_CODE"], "no such code"),
    (["--until", "command:true"], "must name the candidate as {xml}"),
    (["--until", "disagree", "--match", "x"], "--match goes with"),
    (["--until", "openvino-crash", "--match", "("], "not a regular expression"),
])
def test_a_condition_not_understood_is_a_usage_error(args, message, tmp_path: Path) -> None:
    case = wrong_kernel_chain(8)
    xml, inputs = save(case, tmp_path)
    proc = irtool_cli("reduce", xml, inputs, *args)
    assert proc.returncode == 2
    assert message in proc.stderr


def test_inputs_that_do_not_fit_are_one_line(tmp_path: Path) -> None:
    case = wrong_kernel_chain(8)
    xml, _ = save(case, tmp_path)
    np.savez(tmp_path / "bad.npz", y=np.zeros((4, 16), np.float32))
    proc = irtool_cli("reduce", xml, tmp_path / "bad.npz", "--until", "disagree")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"irtool reduce: {xml}: missing input(s) x; unknown input(s) y; the model takes x"]


@pytest.mark.saves_invalid_ir
def test_an_invalid_ir_is_refused_naming_the_error(tmp_path: Path) -> None:
    case = wrong_kernel_chain(8)
    layer = next(lay for lay in case.model.graph.layers if lay.name == case.planted)
    layer.type, layer.version, layer.attrs = "Softmax", "opset8", {"axis": "7"}
    xml, inputs = save(case, tmp_path)
    with pytest.raises(ReduceError, match=r"validate finds errors in it.*AXIS_RANGE"):
        irtool.reduce(xml, inputs, "disagree", tmp_path / "out")


def test_parse_condition_kinds() -> None:
    assert parse_condition("openvino-crash").kind == "openvino-crash"
    assert parse_condition("disagree", rtol=1e-3).kind == "disagree"
    assert parse_condition("validate:AXIS_RANGE").allowed_codes == {"AXIS_RANGE"}
    assert parse_condition("command:run {xml}").kind == "command"
    with pytest.raises(ConditionError):
        parse_condition("validate:")
