"""Test shorthands over ``irtool.ir.builder``, and a direct OpenVINO run of the result
(independent of irtool's own backends).

``Net`` is a ``GraphBuilder`` that takes element types by name and types an op's output
like its first input unless told otherwise; Loops, TensorIterators and Ifs are the
library's own builders (``net.loop(body)`` ...). Every port gets its precision and
dims, since the IR is written to disk and read by OpenVINO, and irtool's runtime
reads declared dims for zero-iteration outputs.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

import irtool
from irtool.ir import (
    GraphBuilder,
    IfBuilder,
    Layer,
    LoopBuilder,
    Model,
    Shape,
    TensorInfo,
    TensorIteratorBuilder,
    Value,
    element_type,
)
from irtool.runtime import Executor
from support.compare import assert_same

Builder = LoopBuilder | TensorIteratorBuilder | IfBuilder


def info(et: str, shape: Shape | None) -> TensorInfo:
    """A ``TensorInfo`` with the element type given by name (``"f32"``)."""
    return TensorInfo(element_type(et), shape)


class Net:
    """A graph under construction (the top graph or a body), with the tests' shorthands."""

    def __init__(self) -> None:
        self.builder = GraphBuilder()
        self.graph = self.builder.graph

    def param(self, name: str, et: str, shape: Shape | None) -> Value:
        return self.builder.parameter(info(et, shape), name, tensor_names=[name])

    def const(self, value: object, dtype: object = None) -> Value:
        return self.builder.const(np.asarray(value, dtype=dtype))

    def op(self, type: str, version: str, inputs: Sequence[Value], attrs: Mapping[str, str] | None
           = None, *, et: str | None = None, shape: Shape | None = None,
           name: str | None = None) -> Value:
        """A one-output layer; its output type defaults to the first input's."""
        out = info(et, shape if shape is not None else inputs[0].shape) if et else \
            TensorInfo(inputs[0].element_type, shape if shape is not None else inputs[0].shape)
        return self.builder.op(type, version, inputs, attrs, outputs=[out], name=name,
                               output_names=[[name]] if name else ())[0]

    def result(self, val: Value, name: str | None = None) -> Layer:
        return self.builder.result(val, name)

    def loop(self, body: Net, name: str | None = None) -> LoopBuilder:
        return self.builder.loop(body.graph, name)

    def tensor_iterator(self, body: Net, name: str | None = None) -> TensorIteratorBuilder:
        return self.builder.tensor_iterator(body.graph, name)

    def if_(self, cond: Value, then_body: Net, else_body: Net) -> IfBuilder:
        return self.builder.if_(cond, then_body.graph, else_body.graph)

    def model(self, name: str = "model") -> Model:
        return Model(self.graph, name=name)


def run_openvino(model: Model, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Save ``model``, read it with OpenVINO, compile for CPU and infer: outputs by name."""
    import openvino as ov

    with tempfile.TemporaryDirectory() as tmp:
        xml = irtool.save(model, Path(tmp) / "model.xml")
        core = ov.Core()
        # f32 inference: some CPUs would otherwise run matmuls in bf16.
        compiled = core.compile_model(core.read_model(str(xml)), "CPU",
                                      {"INFERENCE_PRECISION_HINT": "f32"})
        result = compiled({k: np.asarray(v) for k, v in inputs.items()})
        return {out.get_any_name(): np.array(result[out]) for out in compiled.outputs}


# ---------------------------------------------------------------------------
# Ready-made pieces and models shared by several test modules

F32 = np.float32
A0 = np.array([1.5, -2.0], F32)


def iterate(net: Net, body: Net, ti: bool) -> LoopBuilder | TensorIteratorBuilder:
    """A TensorIterator over ``body`` (``ti``), or a ``counted_loop`` whose body condition
    is a constant true."""
    if ti:
        return net.tensor_iterator(body)
    lp = counted_loop(net, body)
    lp.execution_condition(true_result(body))
    return lp


def counted_loop(net: Net, body: Net, trip_et: str = "i64", trip_shape: tuple = (),
                 cond_shape: tuple = (), name: str | None = None) -> LoopBuilder:
    """A Loop over ``body`` whose trip count and execution condition are new inputs of
    ``net`` named "trip" and "cond"."""
    lp = net.loop(body, name)
    lp.trip_count(net.param("trip", trip_et, trip_shape))
    lp.condition(net.param("cond", "boolean", cond_shape))
    return lp


def finish(net: Net, outs: Builder | Sequence[Value]) -> irtool.Model:
    """The model of ``net`` with a Result for each of ``outs`` (a layer builder: its
    outputs, built now)."""
    values = outs.build()[1] if isinstance(outs, Builder) else outs
    for o in values:
        net.result(o)
    return net.model()


def doubling_if(with_else_output: bool = True, cond_shape: tuple = ()) -> irtool.Model:
    """If(c) over x: then ``x + x``, else ``x``; output y (without the else branch's output
    mapping when ``with_else_output`` is false)."""
    net = Net()
    c = net.param("c", "boolean", cond_shape)
    x = net.param("x", "f32", (2,))
    t, e = Net(), Net()
    tx = t.param("tx", "f32", (2,))
    ex = e.param("ex", "f32", (2,))
    t_out = t.result(t.op("Add", "opset1", [tx, tx], {"auto_broadcast": "numpy"}))
    e_out = e.result(ex)
    branch = net.if_(c, t, e)
    branch.then_input(x, tx)
    branch.else_input(x, ex)
    branch.output(t_out, e_out, info("f32", (2,)), names=["y"])
    layer, outs = branch.build()
    if not with_else_output:
        layer.port_maps["else_port_map"] = [entry for entry in layer.port_maps["else_port_map"]
                                            if entry.kind == "input"]
    return finish(net, outs)


def true_result(body: Net):  # type: ignore[no-untyped-def]
    return body.result(body.const(np.array(True)))


def unsqueeze(body: Net, v: Value, axis: int = 0) -> Value:
    """``Unsqueeze(v, [axis])`` with its output shape worked out (negative axes too)."""
    rank = len(v.shape) + 1  # type: ignore[arg-type]
    ax = axis + rank if axis < 0 else axis
    shape = (*v.shape[:ax], 1, *v.shape[ax:])  # type: ignore[index]
    return body.op("Unsqueeze", "opset1", [v, body.const(np.array([axis], np.int64))],
                   shape=shape)


def check(model: Model, feeds: Mapping[str, np.ndarray], expected: Mapping[str, np.ndarray],
          openvino: bool = True) -> None:
    """irtool (and OpenVINO, on the same IR saved to disk) must give the hand-written
    ``expected``. irtool runs twice: as ``run`` does (a loop whose iterations are
    independent may run as one batched computation) and with every loop run as a loop
    (``vectorize=False``: the generated code of ``runtime/codegen/loops.py``)."""
    assert_same(irtool.run(model, feeds), expected, "irtool")
    assert_same(Executor(model, vectorize=False).run(feeds), expected, "irtool, loops as loops")
    if openvino:
        assert_same(run_openvino(model, feeds), expected, "openvino")


def counting_loop(trip_et: str = "i64", trip_shape: tuple = (), cond_shape: tuple = (),
                  iter_shape: tuple = (), iter_et: str = "i64") -> irtool.Model:
    """acc += float(i) each iteration; outputs acc (carried) and the acc of every step."""
    body = Net()
    i = body.param("i", iter_et, iter_shape)
    acc = body.param("acc_in", "f32", (2,))
    fi = body.op("Convert", "opset1", [i], {"destination_type": "f32"}, et="f32")
    nxt = body.op("Add", "opset1", [acc, fi], {"auto_broadcast": "numpy"}, shape=(2,))
    r_acc = body.result(nxt)
    r_scan = body.result(unsqueeze(body, nxt))
    net = Net()
    lp = counted_loop(net, body, trip_et, trip_shape, cond_shape)
    a0 = net.param("a0", "f32", (2,))
    lp.carried(a0, acc, r_acc)
    lp.current_iteration(i)
    lp.execution_condition(true_result(body))
    lp.output(r_acc, info("f32", (2,)), names=["acc"])
    lp.output(r_scan, info("f32", (-1, 2)), names=["steps"], axis=0)
    return finish(net, lp)


def growing_history(body: Net) -> tuple[Value, Value, Value]:
    """hist <- Concat(hist, [i]) in ``body``: a carried value whose shape grows every
    iteration. Returns the iteration-number Parameter, the hist Parameter and the grown
    value."""
    i = body.param("i", "i64", ())
    hist = body.param("hist_in", "i64", (-1,))
    return i, hist, body.op("Concat", "opset1", [hist, unsqueeze(body, i)], {"axis": "0"},
                            shape=(-1,))


def history_loop(body: Net, i: Value, hist: Value, r_hist: Layer, name: str | None = None
                 ) -> tuple[Net, LoopBuilder]:
    """A for loop over a ``growing_history`` body: inputs trip, cond and h0, output "hist"
    (more outputs may follow before ``build``)."""
    net = Net()
    lp = counted_loop(net, body, name=name)
    lp.carried(net.param("h0", "i64", (-1,)), hist, r_hist)
    lp.current_iteration(i)
    lp.execution_condition(true_result(body))
    lp.output(r_hist, info("i64", (-1,)), names=["hist"])
    return net, lp


def counting_expected(trip: int, run: bool, a0: np.ndarray) -> dict:
    """``counting_loop``'s outputs, by hand: ``for (i = 0; i < trip && run; ++i)``."""
    acc, steps = a0.copy(), []
    i = 0
    while run and i < trip:
        acc = acc + F32(i)
        steps.append(acc)
        i += 1
    return {"acc": acc, "steps": np.array(steps, F32).reshape(-1, 2)}


def runaway_body() -> tuple[Net, Value, Layer, Layer]:
    """acc += 1 with a condition (acc < 1e30) that holds for ~forever: body, the acc
    Parameter, its Result and the condition Result."""
    body = Net()
    acc = body.param("acc_in", "f32", ())
    r_acc = body.result(body.op("Add", "opset1", [acc, body.const(F32(1))],
                                {"auto_broadcast": "numpy"}))
    keep = body.op("Less", "opset1", [acc, body.const(F32(1e30))], {"auto_broadcast": "numpy"},
                   et="boolean")
    return body, acc, r_acc, body.result(keep)


def runaway_loop() -> irtool.Model:
    """trip -1 and a body condition that stays true: never ends without a cap."""
    body, acc, r_acc, r_keep = runaway_body()
    net = Net()
    lp = counted_loop(net, body, name="runaway")
    a0 = net.param("a0", "f32", ())
    lp.carried(a0, acc, r_acc)
    lp.execution_condition(r_keep)
    lp.output(r_acc, info("f32", ()), names=["acc"])
    return finish(net, lp)
