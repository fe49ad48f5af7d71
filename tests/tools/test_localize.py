"""``check --localize``: the first layer where irtool and OpenVINO part, found inside loop
bodies (which iteration), If branches and sessions (which step).

Each divergence is planted in irtool's kernel of one op (``support.planted``), wrong on the
inputs of one iteration or step only; OpenVINO computes that op right. The expected layer,
iterations and step are where the test planted it, never irtool's output; and the same
models with nothing planted agree (irtool, OpenVINO and a hand-written numpy loop).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from support.ir_builders import Net, info, true_result
from support.planted import code, input_is, nested_expected, nested_loops, wrong_kernel

import irtool
from irtool.cli import main
from irtool.opset.elementwise import Log, Tan

F32 = np.float32
X = np.array([1, 2, 3, 4], F32)


def saved(tmp_path: Path, model: irtool.Model, name: str = "m") -> Path:
    return irtool.save(model, tmp_path / f"{name}.xml")


@pytest.mark.parametrize("iterations", [(2,), (1, 2), (2, 1, 3), (0, 3, 0)])
def test_a_kernel_wrong_in_one_iteration_of_nested_loops(tmp_path: Path,
                                                          iterations: tuple[int, ...]) -> None:
    depth = len(iterations)
    model, planted = nested_loops(depth)
    xml = saved(tmp_path, model)
    clean = irtool.check(xml, {"x": X})
    assert clean.ok, clean.format_table()
    np.testing.assert_allclose(irtool.run(xml, {"x": X})["y"], nested_expected(X, depth),
                               rtol=1e-6)
    with wrong_kernel(Tan, input_is(code(iterations))):
        report = irtool.check(xml, {"x": X}, localize=True)
    assert not report.ok
    found = report.localization.finding
    assert found is not None, report.localization.format()
    assert (found.path, found.type) == (planted.path, "Tan")
    assert [f"{h.scope}/{h.layer}".lstrip("/") for h in found.hops] == planted.around
    assert found.iterations == iterations
    assert found.line is not None and f"{xml}:{found.line}" in report.format_table()
    row, = found.outputs
    assert row.verdict == "mismatch" and row.max_abs == pytest.approx(1, rel=1e-3)


def _tensor_iterator() -> tuple[irtool.Model, str]:
    """A TensorIterator over the rows of x [5, 4]: acc += tan(row * 0.1)."""
    body = Net()
    row = body.param("row", "f32", (1, 4))
    acc = body.param("acc", "f32", (1, 4))
    scaled = body.op("Multiply", "opset1", [row, body.const(F32(0.1))],
                     {"auto_broadcast": "numpy"})
    tan = body.op("Tan", "opset1", [scaled], name="tan")
    r = body.result(body.op("Add", "opset1", [acc, tan], {"auto_broadcast": "numpy"}))
    net = Net()
    x = net.param("x", "f32", (5, 4))
    ti = net.tensor_iterator(body, name="ti")
    ti.sliced(x, row, axis=0)
    ti.carried(net.const(np.zeros((1, 4), F32)), acc, r)
    ti.output(r, info("f32", (1, 4)), names=["acc"])
    layer, outs = ti.build()
    net.result(outs[0])
    return net.model(), f"{layer.id}/body/{tan.layer}"


def test_a_tensor_iterator_body(tmp_path: Path) -> None:
    model, path = _tensor_iterator()
    xml = saved(tmp_path, model)
    x = np.arange(20, dtype=F32).reshape(5, 4)
    assert irtool.check(xml, {"x": x}).ok
    # Row 3 is [12, 13, 14, 15]: its Tan reads 1.2 first.
    with wrong_kernel(Tan, input_is(1.2)):
        found = irtool.check(xml, {"x": x}, localize=True).localization.finding
    assert (found.path, found.iterations, found.hops[0].type) == (path, (3,), "TensorIterator")


def _if_in_loop() -> tuple[irtool.Model, dict[str, str]]:
    """A Loop of 6 iterations whose body takes an If on ``i % 2 == 1``: then tan(acc * 0.1),
    else -acc; acc' = branch + 1."""
    then, other = Net(), Net()
    tx = then.param("tx", "f32", (4,))
    t_tan = then.op("Tan", "opset1", [then.op("Multiply", "opset1", [tx, then.const(F32(0.1))],
                                              {"auto_broadcast": "numpy"})], name="tan")
    t_res = then.result(t_tan)
    ex = other.param("ex", "f32", (4,))
    e_log = other.op("Log", "opset1", [other.op("Abs", "opset1", [ex])], name="log")
    e_res = other.result(e_log)
    body = Net()
    i = body.param("i", "i64", ())
    acc = body.param("acc", "f32", (4,))
    odd = body.op("Equal", "opset1", [
        body.op("FloorMod", "opset1", [i, body.const(np.int64(2))], {"auto_broadcast": "numpy"}),
        body.const(np.int64(1))], {"auto_broadcast": "numpy"}, et="boolean", shape=())
    branch = body.if_(odd, then, other)
    branch.then_input(acc, tx)
    branch.else_input(acc, ex)
    branch.output(t_res, e_res, info("f32", (4,)))
    if_layer, outs = branch.build()
    r = body.result(body.op("Add", "opset1", [outs[0], body.const(F32(1))],
                            {"auto_broadcast": "numpy"}))
    net = Net()
    x = net.param("x", "f32", (4,))
    lp = net.loop(body, name="loop")
    lp.trip_count(net.const(np.int64(6)))
    lp.condition(net.const(np.bool_(True)))
    lp.carried(x, acc, r)
    lp.current_iteration(i)
    lp.execution_condition(true_result(body))
    lp.output(r, info("f32", (4,)), names=["acc"])
    loop, outs = lp.build()
    net.result(outs[0])
    inner = f"{loop.id}/body/{if_layer.id}"
    return net.model(), {"loop": str(loop.id), "if": inner,
                         "tan": f"{inner}/then_body/{t_tan.layer}",
                         "log": f"{inner}/else_body/{e_log.layer}"}


@pytest.mark.parametrize(("branch", "iteration"), [("then", 3), ("else", 4)])
def test_one_branch_of_an_if_in_a_loop(tmp_path: Path, branch: str, iteration: int) -> None:
    model, paths = _if_in_loop()
    xml = saved(tmp_path, model)
    assert irtool.check(xml, {"x": X}).ok
    # The branch's kernel is wrong on what it reads in that iteration: the values acc has
    # then, computed by hand from the loop's definition.
    acc = X.copy()
    reads = {}
    for i in range(6):
        reads[i] = acc.copy()
        acc = (np.tan(acc * F32(0.1)) if i % 2 else np.log(np.abs(acc))).astype(F32) + F32(1)
    cls, arg = (Tan, reads[iteration] * F32(0.1)) if branch == "then" else \
        (Log, np.abs(reads[iteration]))
    with wrong_kernel(cls, lambda inputs: np.allclose(inputs[0], arg)):
        found = irtool.check(xml, {"x": X}, localize=True).localization.finding
    assert found.path == paths["tan" if branch == "then" else "log"]
    assert found.iterations == (iteration,)
    assert [h.type for h in found.hops] == ["Loop", "If"]
    assert found.hops[1].body == f"{branch}_body"


def _chain() -> tuple[irtool.Model, str]:
    """y = sqrt(log(exp(x) + 1) * 2) + 1: a chain whose Log is where a NaN is planted."""
    net = Net()
    x = net.param("x", "f32", (2, 3))
    e = net.op("Exp", "opset1", [x], name="exp")
    a = net.op("Add", "opset1", [e, net.const(F32(1))], {"auto_broadcast": "numpy"}, name="add")
    log = net.op("Log", "opset1", [a], name="log")
    m = net.op("Multiply", "opset1", [log, net.const(F32(2))], {"auto_broadcast": "numpy"},
               name="mul")
    s = net.op("Sqrt", "opset1", [m], name="sqrt")
    y = net.op("Add", "opset1", [s, net.const(F32(1))], {"auto_broadcast": "numpy"}, name="y")
    net.result(y)
    return net.model(), str(log.layer)


def test_a_nan_that_appears_mid_graph(tmp_path: Path) -> None:
    model, log_path = _chain()
    xml = saved(tmp_path, model)
    x = np.linspace(-1, 1, 6, dtype=F32).reshape(2, 3)
    assert irtool.check(xml, {"x": x}).ok

    def nan_at_1_2(v: np.ndarray) -> np.ndarray:
        v = v.copy()
        v[1, 2] = np.nan
        return v

    with wrong_kernel(Log, lambda inputs: True, nan_at_1_2):
        report = irtool.check(xml, {"x": x}, localize=True)
    found = report.localization.finding
    assert (found.path, found.type) == (log_path, "Log")
    row, = found.outputs
    assert row.ref_first_nonfinite == (1, 2) and row.first_nonfinite is None
    assert "first NaN/inf at [1, 2]" in report.format_table()


def _accumulator() -> tuple[irtool.Model, str, str]:
    """A stateful model: acc <- acc + tan(x); outputs ``out = acc + x`` (after the update)
    and ``twice = 2 * x``."""
    net = Net()
    x = net.param("x", "f32", (4,))
    read = net.builder.op("ReadValue", "opset6", [], {"variable_id": "acc",
                                                      "variable_type": "f32",
                                                      "variable_shape": "4"},
                          outputs=[info("f32", (4,))], name="read")[0]
    tan = net.op("Tan", "opset1", [x], name="tan")
    total = net.op("Add", "opset1", [read, tan], {"auto_broadcast": "numpy"}, name="total")
    assign = net.builder.op("Assign", "opset6", [total], {"variable_id": "acc"},
                            outputs=[info("f32", (4,))], name="assign")[0]
    del assign
    out = net.op("Add", "opset1", [total, x], {"auto_broadcast": "numpy"}, name="out")
    twice = net.op("Multiply", "opset1", [x, net.const(F32(2))], {"auto_broadcast": "numpy"},
                   name="twice")
    net.result(out)
    net.result(twice)
    model = net.model()
    return model, str(tan.layer), "out"


def test_step_n_of_a_session_names_the_step_output_and_variable(tmp_path: Path) -> None:
    model, tan_path, _ = _accumulator()
    # Assign layers are sinks: no Result reads them. Build one with OpenVINO's reader's
    # help: irtool writes them and both engines take them as the model's sinks.
    xml = saved(tmp_path, model)
    steps = [{"x": np.full(4, 0.1 * k, F32)} for k in range(4)]
    assert irtool.check(xml, steps).ok
    with wrong_kernel(Tan, input_is(0.2)):  # the kernel is wrong at step 2 only
        report = irtool.check(xml, steps, localize=True)
    assert not report.ok
    assert any("first part at step 2: output 'out', variable 'acc'" in n for n in report.notes)
    found = report.localization.finding
    assert (found.path, found.step, found.type) == (tan_path, 2, "Tan")
    table = report.format_table()
    assert "out (step 2)" in table and "variable acc (step 2)" in table


def test_the_search_in_segments_under_a_small_budget(tmp_path: Path) -> None:
    model, planted = nested_loops(2)
    xml = saved(tmp_path, model)
    with wrong_kernel(Tan, input_is(code((1, 2)))):
        whole = irtool.check(xml, {"x": X}, localize=True).localization
        parts = irtool.check(xml, {"x": X}, localize=True, memory_budget=64).localization
    assert not whole.segmented and parts.segmented
    for found in (whole.finding, parts.finding):
        assert (found.path, found.iterations) == (planted.path, (1, 2))
    assert len(parts.runs) > len(whole.runs)
    assert "compared in segments" in parts.format()


def test_nothing_to_localize_when_the_engines_agree(tmp_path: Path) -> None:
    model, _ = nested_loops(1)
    report = irtool.check(saved(tmp_path, model), {"x": X}, localize=True)
    assert report.ok and report.localization is None


def test_the_command_line_json_and_picture(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    model, planted = nested_loops(2)
    xml = saved(tmp_path, model)
    inputs = tmp_path / "x.npz"
    np.savez(inputs, x=X)
    png, svg = tmp_path / "where.png", tmp_path / "where.svg"
    with wrong_kernel(Tan, input_is(code((2, 1)))):
        rc = main(["check", str(xml), str(inputs), "--localize", "--json", "--png", str(png),
                   "--svg", str(svg)])
    assert rc == 1
    out = capsys.readouterr().out
    report = json.loads(out)
    found = report["localization"]["finding"]
    assert (found["path"], found["type"]) == (planted.path, "Tan")
    assert [h["iteration"] for h in found["hops"]] == [2, 1]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = svg.read_text()
    assert "tan" in text and "iteration 2" in text and "iteration 1" in text


def test_png_without_localize_is_a_usage_error(tmp_path: Path) -> None:
    model, _ = nested_loops(1)
    with pytest.raises(SystemExit) as err:
        main(["check", str(saved(tmp_path, model)), "--png", str(tmp_path / "x.png")])
    assert err.value.code == 2


def test_irtool_against_onnxruntime_inside_an_onnx_loop() -> None:
    """On an ONNX model, where irtool parts from onnxruntime: the ONNX node (by the tensor
    names the converter keeps) and its IR layer, at the iteration planted."""
    from tools.test_check import counting_loop_model

    from irtool.opset.elementwise import Multiply

    model = counting_loop_model()  # x_out = x + 0 + 1 + ... + i; sq = x_out * x_out
    feed = {"M": np.array(4), "x": np.arange(6, dtype=F32).reshape(2, 3)}
    assert irtool.check(model, feed).ok
    at_2 = feed["x"] + F32(0 + 1 + 2)  # what Mul reads in iteration 2
    with wrong_kernel(Multiply, lambda inputs: np.array_equal(inputs[0], at_2)):
        report = irtool.check(model, feed, localize=True)
    loc = report.localization
    assert (loc.reference, loc.candidate) == ("onnxruntime", "irtool")
    found = loc.finding
    assert (found.type, found.onnx_node, found.iterations) == ("Multiply", "Mul(sq)", (2,))
    assert [h.type for h in found.hops] == ["Loop"]
    row, = found.outputs
    assert row.output == "sq" and row.at_first == (10.0, 9.0)  # (0 + 3)**2 + 1, (0 + 3)**2


def test_an_optimisation_that_causes_the_difference_is_named(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A wrong direct numpy call (what irtool's optimised runs use for Mul) parts irtool
    from onnxruntime; without optimisations irtool agrees, and the report says so."""
    from tools.test_check import counting_loop_model

    from irtool.opset.base import NumpyCall
    from irtool.opset.elementwise import Multiply

    def wrong(self: Multiply) -> NumpyCall:
        return NumpyCall(np.subtract, 2, False)

    monkeypatch.setattr(Multiply, "numpy_call", wrong)
    model = counting_loop_model()
    feed = {"M": np.array(3), "x": np.arange(6, dtype=F32).reshape(2, 3)}
    report = irtool.check(model, feed, localize=True)
    assert not report.ok
    loc = report.localization
    assert loc.finding is None and "without optimisations" in loc.reason
