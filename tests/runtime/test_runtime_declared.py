"""The runtime checks what it computes against the element types and shapes the IR
declares on each output port, and names the layer when they differ; IR that passes the
validator (which does not infer types) but says one thing and computes another is not
run to a quiet wrong answer. Plans too large for generated code run in a loop over their
steps, with the same results, errors and checks."""

from __future__ import annotations

import re

import numpy as np
import pytest
from support.ir_builders import F32, Net, counted_loop, finish, true_result

import irtool
from irtool.core.errors import ExecutionError
from irtool.runtime import Executor
from irtool.runtime.codegen import straight


def convert_declared(et: str, shape: tuple, x_shape: tuple = (2,)) -> irtool.Model:
    """x (f32[x_shape]) -> Convert to f32 -> Result, whose output port says ``et[shape]``."""
    net = Net()
    x = net.param("x", "f32", x_shape)
    y = net.op("Convert", "opset1", [x], {"destination_type": "f32"}, et=et, shape=shape,
               name="conv")
    net.result(net.op("Negative", "opset1", [y], name="neg"))
    return net.model()


@pytest.mark.parametrize("et,shape,says", [
    ("i16", (2,), "computed f32[2] but its output port 1 declares i16[2]"),
    ("f32", (3,), "computed f32[2] but its output port 1 declares f32[3]"),
    ("f32", (2, 1), "computed f32[2] but its output port 1 declares f32[2,1]"),
])
def test_a_computed_value_unlike_its_port_names_the_layer(et: str, shape: tuple,
                                                          says: str) -> None:
    model = convert_declared(et, shape)
    assert irtool.validate(model) == []  # only running it tells
    with pytest.raises(ExecutionError) as info:
        irtool.run(model, {"x": np.array([1.5, -2], F32)})
    assert 'layer 1 "conv" (Convert-opset1)' in str(info.value)
    assert says in str(info.value)


def test_dynamic_declarations_check_only_what_they_say() -> None:
    model = convert_declared("f32", (-1,))
    got = irtool.run(model, {"x": np.array([1.5, -2], F32)})
    np.testing.assert_array_equal(got["neg"], [-1.5, 2])


@pytest.mark.parametrize("shape,says", [
    ((-1, 3), None), ((2, -1), None), ((-1, -1), None), ((2, 3), None),
    ((-1, 4), "declares f32[?,4]"), ((3, -1), "declares f32[3,?]"),
    ((-1, -1, 3), "declares f32[?,?,3]"), ((-1,), "declares f32[?]"),
    ((2, 3, -1), "declares f32[2,3,?]"),
])
def test_partly_dynamic_declarations(shape: tuple, says: str | None) -> None:
    """A value of shape [2, 3] against dims some of which are dynamic (-1): the rank and
    each static dim must match, the dynamic ones may be anything."""
    model = convert_declared("f32", shape, x_shape=(2, 3))
    x = np.arange(6, dtype=F32).reshape(2, 3)
    if says is None:
        np.testing.assert_array_equal(irtool.run(model, {"x": x})["neg"], -x)
        return
    with pytest.raises(ExecutionError, match=re.escape(f"computed f32[2,3] but its output "
                                                       f"port 1 {says}")):
        irtool.run(model, {"x": x})


def body_declaring(shape: tuple) -> irtool.Model:
    """A Loop whose body Add declares ``shape`` for its f32[2] result."""
    body = Net()
    acc = body.param("acc_in", "f32", (2,))
    nxt = body.op("Add", "opset1", [acc, body.const(np.ones(2, F32))],
                  {"auto_broadcast": "numpy"}, shape=shape, name="body_add")
    r = body.result(nxt)
    net = Net()
    lp = counted_loop(net, body)
    lp.carried(net.param("a0", "f32", (2,)), acc, r)
    lp.execution_condition(true_result(body))
    lp.output(r, nxt.info)
    return finish(net, lp)


def test_a_loop_body_value_is_checked_on_the_first_iteration() -> None:
    feeds = {"trip": np.array(3), "cond": np.array(True), "a0": np.zeros(2, F32)}
    (got,) = irtool.run(body_declaring((2,)), feeds).values()
    np.testing.assert_array_equal(got, [3, 3])  # three Adds of 1, by hand
    with pytest.raises(ExecutionError) as info:
        irtool.run(body_declaring((5,)), feeds)
    message = str(info.value)
    assert '3/body/2 "body_add" (Add-opset1)' in message
    assert "computed f32[2] but its output port 2 declares f32[5]" in message
    assert "at iteration 0 of 3" in message


def chain(n: int) -> irtool.Model:
    """y = x after n steps alternately adding and multiplying by 1; r = Reshape(x, s)."""
    net = Net()
    x = net.param("x", "f32", (3,))
    s = net.param("s", "i64", (1,))
    v = x
    for k in range(n):
        v = net.op("Add" if k % 2 == 0 else "Multiply", "opset1",
                   [v, net.const(np.ones(3, F32))], {"auto_broadcast": "numpy"})
    net.result(v)
    net.result(net.op("Reshape", "opset1", [x, s], {"special_zero": "false"}, shape=(-1,),
                      name="reshape"))
    return net.model()


def test_large_plans_run_as_a_loop_over_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    model = chain(40)
    generated = Executor(model)
    monkeypatch.setattr(straight, "GENERATED_STEPS_LIMIT", 10)
    looped = Executor(model)
    assert hasattr(generated.plan.execute, "source")
    assert not hasattr(looped.plan.execute, "source")  # the loop, not generated code
    x = np.array([1, 2, 3], F32)
    for executor in (generated, looped):
        y, r = executor.run({"x": x, "s": np.array([3])}).values()
        np.testing.assert_array_equal(y, x + 20)  # 20 Adds of 1, by hand
        np.testing.assert_array_equal(r, x)
        with pytest.raises(ExecutionError, match='layer 83 "reshape" \\(Reshape-opset1\\)'):
            executor.run({"x": x, "s": np.array([5])})  # 3 elements into 5: named alike


def test_large_plans_check_declared_types_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(straight, "GENERATED_STEPS_LIMIT", 0)
    with pytest.raises(ExecutionError, match=r'layer 1 "conv" .*declares i16'):
        irtool.run(convert_declared("i16", (2,)), {"x": np.array([1.5, -2], F32)})
