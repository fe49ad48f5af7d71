"""Small builders for hand-made IR in tests: graphs, Loop / TensorIterator / If layers,
and a direct OpenVINO run of the result (independent of irtool's own backends).

Every port gets its precision and dims here, since the IR is written to disk
and read by OpenVINO, and irtool's runtime reads declared dims for zero-iteration
outputs.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import irtool
from irtool.ir import BackEdge, Graph, Model, PortMapEntry, constant, element_type, from_numpy
from irtool.ir.graph import Layer, format_shape
from support.compare import assert_same

Shape = tuple[int, ...]


@dataclass(frozen=True)
class Val:
    """One output port of a layer, with its type and shape (``-1`` = dynamic dim)."""

    layer: int
    port: int
    et: str
    shape: Shape | None

    @property
    def src(self) -> tuple[int, int]:
        return self.layer, self.port


class Net:
    """A graph under construction (the top graph or a body)."""

    def __init__(self) -> None:
        self.graph = Graph()

    def param(self, name: str, et: str, shape: Shape | None) -> Val:
        layer = self.graph.add_op("Parameter", "opset1", [], {
            "shape": format_shape(shape), "element_type": et}, name=name,
            output_names=[[name]])
        _set(layer.outputs[0], et, shape)
        return Val(layer.id, layer.outputs[0].id, et, shape)

    def param_layer(self, val: Val) -> Layer:
        return self.graph.layer(val.layer)

    def const(self, value: object, dtype: object = None) -> Val:
        arr = np.asarray(value, dtype=dtype)
        layer = constant(self.graph, arr)
        return Val(layer.id, layer.outputs[0].id, from_numpy(arr.dtype).name, tuple(arr.shape))

    def op(self, type: str, version: str, inputs: Sequence[Val], attrs: Mapping[str, str] | None
           = None, *, et: str | None = None, shape: Shape | None = None,
           name: str | None = None) -> Val:
        """A one-output layer; its output type defaults to the first input's."""
        layer = self.graph.add_op(type, version, [v.src for v in inputs], dict(attrs or {}),
                                  name=name, output_names=[[name]] if name else ())
        for port, v in zip(layer.inputs, inputs):
            _set(port, v.et, v.shape)
        et = et or inputs[0].et
        shape = shape if shape is not None else inputs[0].shape
        _set(layer.outputs[0], et, shape)
        return Val(layer.id, layer.outputs[0].id, et, shape)

    def result(self, val: Val, name: str | None = None) -> Layer:
        layer = self.graph.add_op("Result", "opset1", [val.src], name=name, num_outputs=0)
        _set(layer.inputs[0], val.et, val.shape)
        return layer

    def model(self, name: str = "model") -> Model:
        return Model(self.graph, name=name)


def _set(port, et: str, shape: Shape | None) -> None:  # type: ignore[no-untyped-def]
    port.precision = element_type(et)
    port.dims = shape


@dataclass
class SubgraphLayer:
    """Collects a Loop / TensorIterator's inputs, port map and back edges, then builds it.

    For a Loop, call ``trip_count`` and ``condition_input`` first (ports 0 and 1).
    """

    body: Net
    type: str = "Loop"
    version: str = "opset5"
    inputs: list[Val] = field(default_factory=list)
    entries: list[PortMapEntry] = field(default_factory=list)
    back_edges: list[BackEdge] = field(default_factory=list)
    outputs: list[tuple[str, Shape | None, str | None]] = field(default_factory=list)
    pending: list[tuple[PortMapEntry, int]] = field(default_factory=list)  # output entries

    def _input(self, val: Val) -> int:
        self.inputs.append(val)
        return len(self.inputs) - 1

    def trip_count(self, val: Val) -> None:
        assert not self.inputs
        self._input(val)

    def condition_input(self, val: Val, body_param: Val | None = None) -> None:
        """Loop input 1; ``body_param`` optionally receives it inside the body."""
        port = self._input(val)
        if body_param is not None:
            self.entries.append(PortMapEntry("input", port, body_param.layer))

    def invariant(self, val: Val, body_param: Val) -> None:
        self.entries.append(PortMapEntry("input", self._input(val), body_param.layer))

    def sliced(self, val: Val, body_param: Val, axis: int, **attrs: int) -> None:
        self.entries.append(PortMapEntry("input", self._input(val), body_param.layer, axis=axis,
                                         **attrs))

    def carried(self, val: Val, body_param: Val, body_result: Layer) -> None:
        self.invariant(val, body_param)
        self.back_edges.append(BackEdge(body_result.id, body_param.layer))

    def current_iteration(self, body_param: Val) -> None:
        self.entries.append(PortMapEntry("input", -1, body_param.layer,
                                         purpose="current_iteration"))

    def condition_output(self, body_result: Layer) -> None:
        self.entries.append(PortMapEntry("output", -1, body_result.id,
                                         purpose="execution_condition"))

    def output(self, body_result: Layer, et: str, shape: Shape | None, name: str | None = None,
               **attrs: int) -> int:
        """Map ``body_result`` to a new output (``axis=...`` concatenates); returns its index."""
        self.outputs.append((et, shape, name))
        index = len(self.outputs) - 1
        entry = PortMapEntry("output", -1, body_result.id, **attrs)
        self.entries.append(entry)
        self.pending.append((entry, index))  # the port id exists once the layer does
        return index

    def build(self, net: Net, name: str | None = None) -> list[Val]:
        names = [[n] if n else [] for _, _, n in self.outputs]
        layer = net.graph.add_op(self.type, self.version, [v.src for v in self.inputs], name=name,
                                 num_outputs=len(self.outputs), output_names=names)
        layer.has_data = False
        for port, v in zip(layer.inputs, self.inputs):
            _set(port, v.et, v.shape)
        for port, (et, shape, _) in zip(layer.outputs, self.outputs):
            _set(port, et, shape)
        for entry, index in self.pending:
            entry.external_port_id = layer.outputs[index].id
        layer.port_maps["port_map"] = self.entries
        layer.back_edges = self.back_edges
        layer.bodies["body"] = self.body.graph
        return [Val(layer.id, p.id, et, shape)
                for p, (et, shape, _) in zip(layer.outputs, self.outputs)]


def if_layer(net: Net, cond: Val, inputs: Sequence[Val], then_body: Net, else_body: Net,
             then_map: Sequence[tuple[int, Val]], else_map: Sequence[tuple[int, Val]],
             then_results: Sequence[Layer], else_results: Sequence[Layer],
             outputs: Sequence[tuple[str, Shape | None, str | None]]) -> list[Val]:
    """If-8: ``*_map`` pairs (index into ``inputs``, body Parameter); results pair up with
    ``outputs`` by position."""
    layer = net.graph.add_op("If", "opset8", [cond.src] + [v.src for v in inputs],
                             num_outputs=len(outputs),
                             output_names=[[n] if n else [] for _, _, n in outputs])
    layer.has_data = False
    for port, v in zip(layer.inputs, [cond, *inputs]):
        _set(port, v.et, v.shape)
    for port, (et, shape, _) in zip(layer.outputs, outputs):
        _set(port, et, shape)
    for tag, body, pairs, results in (("then", then_body, then_map, then_results),
                                      ("else", else_body, else_map, else_results)):
        entries = [PortMapEntry("input", layer.inputs[i + 1].id, p.layer) for i, p in pairs]
        entries += [PortMapEntry("output", port.id, r.id)
                    for port, r in zip(layer.outputs, results)]
        layer.port_maps[f"{tag}_port_map"] = entries
        layer.bodies[f"{tag}_body"] = body.graph
    return [Val(layer.id, p.id, et, shape) for p, (et, shape, _) in zip(layer.outputs, outputs)]


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


def iterate(net: Net, body: Net, ti: bool) -> SubgraphLayer:
    """A TensorIterator over ``body`` (``ti``), or a ``counted_loop`` whose body condition
    is a constant true."""
    if ti:
        return SubgraphLayer(body, "TensorIterator", "opset1")
    lp = counted_loop(net, body)
    lp.condition_output(true_result(body))
    return lp


def counted_loop(net: Net, body: Net, trip_et: str = "i64", trip_shape: tuple = (),
                 cond_shape: tuple = (), cond_param: Val | None = None) -> SubgraphLayer:
    """A Loop over ``body`` whose trip count and execution condition are new inputs of
    ``net`` named "trip" and "cond" (``cond_param`` receives the condition in the body)."""
    lp = SubgraphLayer(body)
    lp.trip_count(net.param("trip", trip_et, trip_shape))
    lp.condition_input(net.param("cond", "boolean", cond_shape), body_param=cond_param)
    return lp


def finish(net: Net, outs: list[Val]) -> irtool.Model:
    for o in outs:
        net.result(o)
    return net.model()


def true_result(body: Net):  # type: ignore[no-untyped-def]
    return body.result(body.const(np.array(True)))


def unsqueeze(body: Net, v: Val, axis: int = 0) -> Val:
    """``Unsqueeze(v, [axis])`` with its output shape worked out (negative axes too)."""
    rank = len(v.shape) + 1  # type: ignore[arg-type]
    ax = axis + rank if axis < 0 else axis
    shape = (*v.shape[:ax], 1, *v.shape[ax:])  # type: ignore[index]
    return body.op("Unsqueeze", "opset1", [v, body.const(np.array([axis], np.int64))],
                   shape=shape)


def check(model: Model, feeds: Mapping[str, np.ndarray], expected: Mapping[str, np.ndarray],
          openvino: bool = True) -> None:
    """irtool (and OpenVINO, on the same IR saved to disk) must give the hand-written
    ``expected``."""
    assert_same(irtool.run(model, feeds), expected, "irtool")
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
    lp.condition_output(true_result(body))
    lp.output(r_acc, "f32", (2,), name="acc")
    lp.output(r_scan, "f32", (-1, 2), name="steps", axis=0)
    return finish(net, lp.build(net))


def growing_history(body: Net) -> tuple[Val, Val, Val]:
    """hist <- Concat(hist, [i]) in ``body``: a carried value whose shape grows every
    iteration. Returns the iteration-number Parameter, the hist Parameter and the grown
    value."""
    i = body.param("i", "i64", ())
    hist = body.param("hist_in", "i64", (-1,))
    return i, hist, body.op("Concat", "opset1", [hist, unsqueeze(body, i)], {"axis": "0"},
                            shape=(-1,))


def history_loop(body: Net, i: Val, hist: Val, r_hist: Layer) -> tuple[Net, SubgraphLayer]:
    """A for loop over a ``growing_history`` body: inputs trip, cond and h0, output "hist"
    (more outputs may follow before ``build``)."""
    net = Net()
    lp = counted_loop(net, body)
    lp.carried(net.param("h0", "i64", (-1,)), hist, r_hist)
    lp.current_iteration(i)
    lp.condition_output(true_result(body))
    lp.output(r_hist, "i64", (-1,), name="hist")
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


def runaway_body() -> tuple[Net, Val, Layer, Layer]:
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
    lp = counted_loop(net, body)
    a0 = net.param("a0", "f32", ())
    lp.carried(a0, acc, r_acc)
    lp.condition_output(r_keep)
    lp.output(r_acc, "f32", (), name="acc")
    return finish(net, lp.build(net, name="runaway"))
