"""The runtime's tracing hook (``runtime/trace.py``): every value of a run, loop bodies
iteration by iteration, keyed by where it is in the IR; checked against values computed by
hand from each model's definition. Plans compiled without a tracer are unchanged."""

from __future__ import annotations

import numpy as np
import pytest
from support.ir_builders import counting_loop, doubling_if
from support.planted import code, nested_expected, nested_loops

from irtool.runtime import Executor, Tracer
from irtool.runtime.codegen import straight
from irtool.runtime.session import CompiledModel

F32 = np.float32
A0 = np.array([1.5, -2.0], F32)


def collect(scopes=None) -> tuple[Tracer, list]:  # type: ignore[no-untyped-def]
    seen: list = []
    return Tracer(scopes, lambda key, its, value: seen.append((key, its,
                                                               np.array(value)))), seen


def test_a_loop_body_value_by_value_and_iteration() -> None:
    model = counting_loop()  # acc += float(i), three iterations here
    loop = next(layer for layer in model.graph if layer.type == "Loop")
    body = loop.bodies["body"]
    add = next(layer for layer in body if layer.type == "Add")
    param = next(layer for layer in body if layer.name == "acc_in")
    tracer, seen = collect()
    out = Executor(model, trace=tracer).run({"trip": np.array(3), "cond": np.array(True),
                                             "a0": A0})
    scope = f"{loop.id}/body"
    adds = [(its, v) for (s, layer, _), its, v in seen if s == scope and layer == add.id]
    params = [(its, v) for (s, layer, _), its, v in seen if s == scope and layer == param.id]
    acc = A0.copy()
    for i in range(3):  # by hand: the carried value read, then the one made
        assert params[i][0] == (i,) and np.array_equal(params[i][1], acc)
        acc = acc + F32(i)
        assert adds[i][0] == (i,) and np.array_equal(adds[i][1], acc)
    assert len(adds) == len(params) == 3
    top = [(layer, v) for (s, layer, _), its, v in seen if s == "" and layer == loop.id]
    assert np.array_equal(top[0][1], out["acc"]) and top[0][0] == loop.id


def test_nested_loops_key_each_value_by_every_iteration_around_it() -> None:
    model, planted = nested_loops(3)
    tan_scope, tan_id = planted.path.rsplit("/", 1)
    tracer, seen = collect({tan_scope})  # the innermost body only
    x = np.array([1, 2, 3, 4], F32)
    out = Executor(model, trace=tracer).run({"x": x})
    np.testing.assert_allclose(out["y"], nested_expected(x, 3), rtol=1e-6)
    tans = {its: float(v) for (s, layer, _), its, v in seen if layer == int(tan_id)}
    assert {s for (s, _, _), _, _ in seen} == {tan_scope}
    assert len(tans) == 3 * 4 * 5
    for its, value in tans.items():
        assert value == pytest.approx(np.tan(F32(code(its))), rel=1e-6)


def test_an_if_reports_the_branch_it_takes() -> None:
    model = doubling_if()  # then x + x, else x
    if_layer = next(layer for layer in model.graph if layer.type == "If")
    for cond, branch in ((True, "then_body"), (False, "else_body")):
        tracer, seen = collect()
        Executor(model, trace=tracer).run({"c": np.array(cond), "x": np.array([1, 2], F32)})
        scopes = {s for (s, _, _), _, _ in seen}
        assert f"{if_layer.id}/{branch}" in scopes
        other = "else_body" if branch == "then_body" else "then_body"
        assert f"{if_layer.id}/{other}" not in scopes


def test_a_session_step_by_step() -> None:
    """A traced session keeps its variables as an untraced one does."""
    from tools.test_localize import _accumulator

    model, tan, _ = _accumulator()
    tracer, seen = collect()
    session = CompiledModel(model, trace=tracer)
    plain = CompiledModel(model)
    for k in range(3):
        x = np.full(4, 0.1 * k, F32)
        assert np.array_equal(session.run({"x": x})["out"], plain.run({"x": x})["out"])
    tans = [v for (_, layer, _), _, v in seen if layer == int(tan)]
    np.testing.assert_allclose(tans, [np.tan(np.full(4, 0.1 * k, F32)) for k in range(3)])


def test_plans_without_a_tracer_are_unchanged() -> None:
    """The generated code of an untraced plan has no tracing line; a traced plan's does."""
    model = counting_loop()
    plain = Executor(model)
    assert "trace" not in plain.plan.execute.source  # type: ignore[attr-defined]
    loop_kernel = plain.plan.steps[-1].kernel
    assert "trace" not in loop_kernel.iteration.iterate.source  # type: ignore[attr-defined]
    traced = Executor(model, trace=Tracer())
    assert "trace(" in traced.plan.execute.source  # type: ignore[attr-defined]
    assert traced.optimizations == {}  # traced plans are compiled without rewrites


def test_a_plan_run_as_a_loop_over_its_steps_is_traced_too(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(straight, "GENERATED_STEPS_LIMIT", 1)
    model, _ = nested_loops(1)
    tracer, seen = collect({""})
    x = np.array([1, 2, 3, 4], F32)
    out = Executor(model, trace=tracer).run({"x": x})
    relu = [v for (s, _, _), _, v in seen if s == ""][-1]
    np.testing.assert_array_equal(relu, out["y"])
