"""irtool's control-flow kernels beyond the semantics: caps, bad inputs, malformed port maps,
error messages that name the layer and iteration."""

from __future__ import annotations

import re
import traceback

import numpy as np
import pytest
from support.compare import assert_same
from support.ir_builders import (
    A0,
    F32,
    Net,
    counted_loop,
    counting_expected,
    counting_loop,
    doubling_if,
    finish,
    growing_history,
    history_loop,
    info,
    run_openvino,
    runaway_body,
    runaway_loop,
    true_result,
)

import irtool
from irtool.core.errors import ExecutionError, IRValidationError
from irtool.runtime import Executor, control_flow

FEEDS = {"trip": np.array(5), "cond": np.array(True), "a0": A0}


def refused(model: irtool.Model, code: str, layer: str) -> None:
    """The gate refuses ``model`` before the runtime sees it, with the validator's line."""
    with pytest.raises(IRValidationError) as info:
        Executor(model)
    assert f"{code} layer {layer}" in str(info.value), str(info.value)
    assert code in {d.code for d in irtool.validate(model)}


def unchecked_run(model: irtool.Model, feeds: dict) -> dict:
    """What the runtime itself does with ``model`` when the gate is skipped."""
    return Executor(model, check=False).run(feeds)


def runaway_feeds() -> dict:
    return {"trip": np.array(-1), "cond": np.array(True), "a0": np.array(0, F32)}


def test_max_iterations_stops_a_runaway_loop() -> None:
    with pytest.raises(ExecutionError) as info:
        Executor(runaway_loop(), max_iterations=5).run(runaway_feeds())
    msg = str(info.value)
    assert '"runaway" (Loop-opset5)' in msg
    assert "more than 5 iterations" in msg and "max_iterations=5" in msg


@pytest.mark.parametrize("trip", [-1, 10**12])
def test_every_loop_has_a_default_cap(trip: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Unbounded or not: a trip count of 10**12 is as much a runaway (it used to run on)."""
    monkeypatch.setattr(control_flow, "DEFAULT_MAX_ITERATIONS", 40)
    feeds = {**runaway_feeds(), "trip": np.array(trip)}
    with pytest.raises(ExecutionError, match=r"more than 40 iterations \(the default cap is 40; "
                       r"max_iterations \(--max-iterations\) sets another\)"):
        Executor(runaway_loop()).run(feeds)
    # A larger cap lets the same loop run to its own end (the body stops it at 10**12 only).
    assert Executor(runaway_loop(), max_iterations=50).run(
        {**feeds, "trip": np.array(45)})["acc"] == 45


def test_a_for_loop_beyond_the_default_cap_stops_before_it_starts() -> None:
    """With no condition in the body, the trip count alone decides: 10**12 is refused at
    once, with the real default cap (no waiting for a million iterations)."""
    assert control_flow.DEFAULT_MAX_ITERATIONS == 1_000_000
    with pytest.raises(ExecutionError, match="more than 1000000 iterations"):
        Executor(counting_loop()).run({**FEEDS, "trip": np.array(10**12)})
    np.testing.assert_array_equal(Executor(counting_loop()).run(FEEDS)["acc"],
                                  counting_expected(5, True, A0)["acc"])


def test_the_help_states_the_default_cap(capsys: pytest.CaptureFixture[str]) -> None:
    from irtool.cli import main

    with pytest.raises(SystemExit):
        main(["run", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"default {control_flow.DEFAULT_MAX_ITERATIONS:,}, whatever the trip count" \
        in help_text


def test_max_iterations_with_a_finite_trip_count() -> None:
    np.testing.assert_array_equal(irtool.run(counting_loop(), FEEDS, max_iterations=5)["acc"],
                                  counting_expected(5, True, A0)["acc"])
    with pytest.raises(ExecutionError, match="more than 4 iterations"):
        irtool.run(counting_loop(), FEEDS, max_iterations=4)


@pytest.mark.parametrize("bad", [-1, 2.5, True])
def test_max_iterations_must_be_a_count(bad: object) -> None:
    with pytest.raises(ExecutionError, match="max_iterations"):
        irtool.run(counting_loop(), FEEDS, max_iterations=bad)  # type: ignore[arg-type]


def nested_runaway() -> irtool.Model:
    """An outer for loop whose body holds ``runaway_loop``'s loop (layer "inner")."""
    inner, acc, r_acc, r_keep = runaway_body()
    outer_body = Net()
    x = outer_body.param("x", "f32", ())
    ilp = outer_body.loop(inner, "inner")
    ilp.trip_count(outer_body.const(np.int64(-1)))
    ilp.condition(outer_body.const(np.array(True)))
    ilp.carried(x, acc, r_acc)
    ilp.execution_condition(r_keep)
    ilp.output(r_acc, info("f32", ()), names=["y"])
    (y,) = ilp.build()[1]
    r_y = outer_body.result(y)
    net = Net()
    lp = counted_loop(net, outer_body, name="outer")
    a0 = net.param("a0", "f32", ())
    lp.carried(a0, x, r_y)
    lp.execution_condition(true_result(outer_body))
    lp.output(r_y, info("f32", ()), names=["acc"])
    return finish(net, lp)


def test_max_iterations_reaches_nested_loops() -> None:
    feeds = {"trip": np.array(2), "cond": np.array(True), "a0": np.array(0, F32)}
    with pytest.raises(ExecutionError) as info:
        irtool.run(nested_runaway(), feeds, max_iterations=7)
    msg = str(info.value)
    assert '"inner" (Loop-opset5)' in msg and "more than 7 iterations" in msg
    assert "at iteration 0 of 3" in msg  # the outer loop's layer id and iteration


@pytest.mark.parametrize("name,value,words", [
    ("trip", np.array(2.0, F32), ["trip count", "float32"]),
    ("trip", np.array([2, 3]), ["trip count", "int64[2]"]),
    ("cond", np.array([True, False]), ["execution condition", "bool[2]"]),
])
def test_bad_trip_count_or_condition(name: str, value: np.ndarray, words: list[str]) -> None:
    model = counting_loop(trip_et="f32" if value.dtype == F32 else "i64",
                          trip_shape=value.shape if name == "trip" else (),
                          cond_shape=value.shape if name == "cond" else ())
    feeds = dict(FEEDS, **{name: value})
    refused(model, "LOOP_TRIP_COUNT" if name == "trip" else "LOOP_CONDITION", "3 \"Loop_3\"")
    with pytest.raises(ExecutionError) as info:  # the runtime checks the value itself too
        unchecked_run(model, feeds)
    msg = str(info.value)
    assert "(Loop-opset5)" in msg
    for word in words:
        assert word in msg


def growing_then_failing() -> irtool.Model:
    """hist grows by one each iteration; Add(hist, zeros(3)) fails once hist has 2 elements."""
    body = Net()
    i, hist, grown = growing_history(body)
    r_hist = body.result(grown)
    bad = body.op("Add", "opset1", [hist, body.const(np.zeros(3, np.int64))],
                  {"auto_broadcast": "numpy"}, name="bad_add", shape=(3,))
    r_bad = body.result(bad)
    net, lp = history_loop(body, i, hist, r_hist, name="grower")
    lp.output(r_bad, info("i64", (3,)), names=["bad"])
    return finish(net, lp)


def test_kernel_error_in_a_body_names_the_body_layer_and_iteration() -> None:
    feeds = {"trip": np.array(5), "cond": np.array(True), "h0": np.array([7])}
    with pytest.raises(ExecutionError) as info:
        irtool.run(growing_then_failing(), feeds)
    msg = str(info.value)
    assert '/body/' in msg and '"bad_add" (Add-opset1)' in msg
    assert "(at iteration 1 of 3)" in msg


def test_traceback_through_generated_loop_code_shows_the_line_and_its_layer() -> None:
    """The generated loop is in linecache: the traceback of the kernel failure behind the
    error shows the line that failed, and that line's comment names the layer."""
    feeds = {"trip": np.array(5), "cond": np.array(True), "h0": np.array([7])}
    model = growing_then_failing()
    bad = next(layer for _, layer in model.graph.walk() if layer.name == "bad_add")
    with pytest.raises(ExecutionError) as info:
        irtool.run(model, feeds)
    cause = info.value.__cause__
    assert cause is not None and not isinstance(cause, ExecutionError)
    frames = [f for f in traceback.extract_tb(cause.__traceback__)
              if f.filename.startswith("<loop 3 #")]
    assert len(frames) == 1, [f.filename for f in traceback.extract_tb(cause.__traceback__)]
    line = frames[0].line
    assert re.match(r"v\d+ = [fk]\d+\(", line), line  # the Add, as generated
    assert line.endswith(f'# 3/body/{bad.id} "bad_add" (Add-opset1)'), line
    shown = "".join(traceback.format_exception(info.value))
    assert f'File "{frames[0].filename}", line {frames[0].lineno}' in shown and line in shown


@pytest.mark.parametrize("second", [None, 4, 2], ids=["alone", "longer-last", "shorter-last"])
def test_sliced_input_that_runs_out(second: int | None) -> None:
    """X has 3 rows, a second sliced input Y (listed after X) 4 or 2: the shortest one
    runs out first, and says how many parts it has."""
    body = Net()
    part = body.param("part", "f32", (1, 2))
    r_part = body.result(part)
    net = Net()
    lp = counted_loop(net, body)
    x = net.param("X", "f32", (3, 2))
    lp.sliced(x, part, 0)
    feeds = {"trip": np.array(5), "cond": np.array(True), "X": np.ones((3, 2), F32)}
    if second is not None:
        y_part = body.param("y_part", "f32", (1, 2))
        lp.sliced(net.param("Y", "f32", (second, 2)), y_part, 0)
        lp.output(body.result(y_part), info("f32", (-1, 2)), names=["y_parts"], axis=0)
        feeds["Y"] = np.arange(2 * second, dtype=F32).reshape(second, 2)
    lp.execution_condition(true_result(body))
    lp.output(r_part, info("f32", (-1, 2)), names=["parts"], axis=0)
    model = finish(net, lp)
    fewest = min(3, second or 3)
    with pytest.raises(ExecutionError, match=f"needs part {fewest} of the sliced inputs, "
                       f"which have only {fewest} parts"):
        irtool.run(model, feeds)
    feeds["trip"] = np.array(fewest)
    got = irtool.run(model, feeds)
    np.testing.assert_array_equal(got["parts"], np.ones((fewest, 2), F32))
    if second is not None:
        np.testing.assert_array_equal(got["y_parts"], feeds["Y"][:fewest])


def test_zero_iterations_with_an_unknown_concat_shape() -> None:
    body = Net()
    v = body.param("v", "f32", (1, -1))
    r_v = body.result(v)
    net = Net()
    lp = counted_loop(net, body)
    vv = net.param("V", "f32", (1, -1))
    lp.invariant(vv, v)
    lp.execution_condition(true_result(body))
    lp.output(r_v, info("f32", (-1, -1)), names=["scan"], axis=0)
    model = finish(net, lp)
    feeds = {"trip": np.array(0), "cond": np.array(True), "V": np.ones((1, 4), F32)}
    # Nothing fixes dim 1 without an iteration: OpenVINO (and onnxruntime, on the ONNX
    # form in tests/frontends/onnx/test_zero_trip_loops.py) give 0 for it.
    assert run_openvino(model, feeds)["scan"].shape == (0, 0)
    assert irtool.run(model, feeds)["scan"].shape == (0, 0)
    feeds["trip"] = np.array(2)
    assert irtool.run(model, feeds)["scan"].shape == (2, 4)


def test_body_parameter_without_port_map_entry() -> None:
    model = counting_loop()
    loop = model.graph.layers_of_type("Loop")[0]
    entries = loop.port_maps["port_map"]
    loop.port_maps["port_map"] = [e for e in entries if e.purpose != "current_iteration"]
    refused(model, "PARAMETER_UNMAPPED", '3/body/0 "i"')
    with pytest.raises(ExecutionError, match=r'body Parameter .* "i" has no port_map input'):
        Executor(model, check=False)


def test_port_map_naming_a_missing_body_layer() -> None:
    model = counting_loop()
    loop = model.graph.layers_of_type("Loop")[0]
    loop.port_maps["port_map"][0].internal_layer_id = 99
    refused(model, "PORT_MAP_UNKNOWN_LAYER", '3 "Loop_3"')
    with pytest.raises(ExecutionError, match="body layer 99, which is not a body Parameter"):
        Executor(model, check=False)


def test_output_without_port_map_entry() -> None:
    model = counting_loop()
    loop = model.graph.layers_of_type("Loop")[0]
    loop.port_maps["port_map"] = [e for e in loop.port_maps["port_map"]
                                  if e.kind == "input" or e.purpose]
    refused(model, "OUTPUT_UNMAPPED", '3 "Loop_3"')
    with pytest.raises(ExecutionError, match=r"output port\(s\) 3, 4 have no port_map output"):
        Executor(model, check=False)


def test_if_picks_a_branch() -> None:
    x = np.array([1.0, 2.0], F32)
    assert irtool.run(doubling_if(), {"c": np.array(True), "x": x})["y"].tolist() == [2.0, 4.0]
    one = doubling_if(cond_shape=(1,))
    assert irtool.run(one, {"c": np.array([False]), "x": x})["y"].tolist() == [1.0, 2.0]


def test_if_branch_without_an_output_mapping() -> None:
    refused(doubling_if(with_else_output=False), "OUTPUT_UNMAPPED", '2 "If_2"')
    with pytest.raises(ExecutionError, match="output port 2 has no else_port_map output"):
        Executor(doubling_if(with_else_output=False), check=False)


def test_if_condition_must_be_boolean() -> None:
    model = doubling_if()
    model.graph.layer(0).attrs["element_type"] = "i64"
    refused(model, "ATTR_PORT_MISMATCH", '0 "c"')
    with pytest.raises(ExecutionError, match=r"condition .* boolean"):
        unchecked_run(model, {"c": np.array(1), "x": np.zeros(2, F32)})


def test_body_condition_must_be_boolean() -> None:
    model = counting_loop()
    loop = model.graph.layers_of_type("Loop")[0]
    body = loop.bodies["body"]
    cond_entry = next(e for e in loop.port_maps["port_map"] if e.purpose == "execution_condition")
    # Re-point the condition at the (f32) accumulator Result.
    acc_result = next(e.from_layer for e in loop.back_edges)
    cond_entry.internal_layer_id = acc_result
    assert body.layer(acc_result).type == "Result"
    refused(model, "LOOP_BODY_CONDITION", '3 "Loop_3"')
    with pytest.raises(ExecutionError, match=r"body's execution condition .* float32\[2\]"):
        unchecked_run(model, FEEDS)


def test_executor_reuses_the_compiled_plan() -> None:
    ex = Executor(counting_loop())
    for trip in (0, 3, 1):
        out = ex.run(dict(FEEDS, trip=np.array(trip)))
        want = counting_expected(trip, True, A0)
        np.testing.assert_array_equal(out["acc"], want["acc"])
        np.testing.assert_array_equal(out["steps"], want["steps"])


@pytest.mark.parametrize("trip", [0, 3])
def test_a_const_output_next_to_a_counter_is_the_constant_after_zero_iterations(
        trip: int) -> None:
    """As above, in a body that also reads its iteration number (the generated loop keeps
    a counter then, and keeps last values another way): acc += float(i) is carried, and
    the Const's output is the constant whether or not the body ran."""
    body = Net()
    i = body.param("i", "i64", ())
    acc = body.param("acc_in", "f32", (2,))
    fi = body.op("Convert", "opset1", [i], {"destination_type": "f32"}, et="f32")
    r_acc = body.result(body.op("Add", "opset1", [acc, fi], {"auto_broadcast": "numpy"},
                                shape=(2,)))
    r_const = body.result(body.const(np.array([7, 8], F32)))
    net = Net()
    lp = counted_loop(net, body)
    lp.carried(net.param("a0", "f32", (2,)), acc, r_acc)
    lp.current_iteration(i)
    lp.execution_condition(true_result(body))
    lp.output(r_acc, info("f32", (2,)), names=["acc"])
    lp.output(r_const, info("f32", (2,)), names=["last"])
    model = finish(net, lp)
    a0 = np.array([1.5, -2], F32)
    feeds = {"trip": np.array(trip), "cond": np.array(True), "a0": a0}
    expected = {"acc": a0 + F32(sum(range(trip))), "last": np.array([7, 8], F32)}
    assert_same(run_openvino(model, feeds), expected, "openvino")
    for vectorize in (True, False):
        assert_same(Executor(model, vectorize=vectorize).run(feeds), expected, "irtool")


@pytest.mark.parametrize("fed_by", ["Const", "Multiply of Consts"])
@pytest.mark.parametrize("trip", [0, 2])
def test_output_fed_by_a_body_const_is_the_constant_even_after_zero_iterations(
        trip: int, fed_by: str) -> None:
    """A body whose Result reads a Const, or a value computed from Consts alone: OpenVINO
    gives the (folded) constant whether or not the body ran (irtool gave zeros after zero
    iterations), and a body of Consts alone runs (irtool generated a loop with no
    statement in it)."""
    body = Net()
    v = body.param("v", "f32", (2,))
    if fed_by == "Const":
        r = body.result(body.const(np.array([7, 8], F32)))
    else:  # folded when the body's plan compiles, as OpenVINO folds it
        r = body.result(body.op("Multiply", "opset1", [body.const(np.array([3.5, 2], F32)),
                                                       body.const(np.array([2, 4], F32))],
                                {"auto_broadcast": "numpy"}))
    net = Net()
    lp = counted_loop(net, body)
    lp.invariant(net.param("V", "f32", (2,)), v)
    lp.execution_condition(true_result(body))
    lp.output(r, info("f32", (2,)), names=["last"])
    model = finish(net, lp)
    feeds = {"trip": np.array(trip), "cond": np.array(True), "V": np.ones(2, F32)}
    expected = {"last": np.array([7, 8], F32)}
    assert_same(run_openvino(model, feeds), expected, "openvino")
    for vectorize in (True, False):
        assert_same(Executor(model, vectorize=vectorize).run(feeds), expected, "irtool")
