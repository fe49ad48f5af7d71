"""irtool as an ONNX backend (``onnx.backend.base.Backend``).

``prepare`` converts the model to IR; the returned rep runs it with irtool's
``Executor`` or, with ``target="openvino"``, on OpenVINO's CPU runtime from IR
files written at prepare time. This lets ONNX's own test runner drive irtool::

    import onnx.backend.test
    import irtool.backend

    tests = onnx.backend.test.BackendTest(irtool.backend, __name__)

The module-level ``prepare``/``run_model``/``run_node``/``supports_device``/
``is_compatible`` are what that runner calls. ``openvino`` is the same backend
with ``target="openvino"`` as its default.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.backend.base import Backend, BackendRep, Device, DeviceType, namedtupledict

from .core.errors import BackendError, ExecutionError
from .ir import Model

TARGETS = ("irtool", "openvino")


class IrtoolRep(BackendRep):
    """A converted model, ready to run many times."""

    def __init__(self, onnx_model: onnx.ModelProto, ir: Model, target: str = "irtool",
                 max_iterations: int | None = None) -> None:
        if target not in TARGETS:
            raise BackendError(f"unknown target {target!r} ({' or '.join(TARGETS)})")
        self.target = target
        self.ir = ir
        graph = onnx_model.graph
        self.input_names = [vi.name for vi in graph.input]
        self.output_names = [vi.name for vi in graph.output]
        self._initializers = {t.name: t for t in graph.initializer}
        self._ir_inputs = ir.input_names()
        self._executor = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if target == "irtool":
            from .runtime import Executor

            self._executor = Executor(ir, max_iterations=max_iterations)
        else:
            from .ir import write_model

            # The files OpenVINO reads live as long as this rep.
            self._tmp = tempfile.TemporaryDirectory(prefix="irtool-backend-")
            self._xml, _ = write_model(ir, Path(self._tmp.name) / "model.xml")

    def _feed(self, inputs: Any) -> dict[str, np.ndarray]:
        if isinstance(inputs, Mapping):
            given = {k: np.asarray(v) for k, v in inputs.items()}
        else:
            values = [inputs] if isinstance(inputs, np.ndarray) else list(inputs)
            if len(values) > len(self.input_names):
                raise ExecutionError(f"{len(values)} inputs given, the model takes "
                                     f"{len(self.input_names)}")
            given = {n: np.asarray(v) for n, v in zip(self.input_names, values)}
        feed = {}
        for name in self._ir_inputs:
            if name in given:
                feed[name] = given[name]
            elif name in self._initializers:  # an input with a default value
                feed[name] = numpy_helper.to_array(self._initializers[name])
            else:
                raise ExecutionError(f"missing input {name!r}; the model takes "
                                     f"{', '.join(self._ir_inputs)}")
        return feed

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Outputs in the order of the ONNX graph's outputs (also reachable by name)."""
        feed = self._feed(inputs)
        if self._executor is not None:
            outputs = self._executor.run(feed)
        else:
            from .engines.openvino import run_ir

            outputs = run_ir(self._xml, feed)
        missing = [n for n in self.output_names if n not in outputs]
        if missing:
            raise ExecutionError(f"the IR has no output(s) {', '.join(missing)}; it has "
                                 f"{', '.join(outputs)}")
        values = [np.asarray(outputs[n]) for n in self.output_names]
        return namedtupledict("Outputs", self.output_names)(*values)


class IrtoolBackend(Backend):
    """The ONNX backend: convert with irtool, run with irtool (or OpenVINO)."""

    default_target = "irtool"

    @classmethod
    def prepare(cls, model: onnx.ModelProto | str, device: str = "CPU",
                **kwargs: Any) -> IrtoolRep:
        """Convert ``model``; ``target="openvino"`` runs it on OpenVINO instead of irtool.
        ``max_iterations`` caps every loop of irtool's runtime."""
        from .frontends.onnx import convert_model

        if not cls.supports_device(device):
            raise BackendError(f"device {device!r} is not supported (CPU only)")
        target = kwargs.get("target", cls.default_target)
        proto = model if isinstance(model, onnx.ModelProto) else onnx.load(model)
        return IrtoolRep(proto, convert_model(proto), target, kwargs.get("max_iterations"))

    @classmethod
    def run_model(cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU",
                  **kwargs: Any) -> tuple[Any, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node: onnx.NodeProto, inputs: Any, device: str = "CPU",
                 outputs_info: Sequence[tuple[np.dtype, tuple[int, ...]]] | None = None,
                 **kwargs: Any) -> tuple[Any, ...]:
        """Run one node: wrapped in a model with inputs typed from ``inputs``."""
        values = [np.asarray(v) for v in (inputs.values() if isinstance(inputs, Mapping)
                                          else inputs)]
        names = [n for n in node.input if n]
        if len(names) != len(values):
            raise ExecutionError(f"node {node.op_type} takes {len(names)} inputs, "
                                 f"{len(values)} given")
        graph_inputs = [onnx.helper.make_tensor_value_info(
            n, onnx.helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
            for n, v in zip(names, values)]
        graph_outputs = [onnx.helper.make_empty_tensor_value_info(n) for n in node.output if n]
        opset = kwargs.pop("opset_version", onnx.defs.onnx_opset_version())
        model = onnx.helper.make_model(
            onnx.helper.make_graph([node], "node", graph_inputs, graph_outputs),
            opset_imports=[onnx.helper.make_opsetid("", opset)])
        return cls.run_model(model, values, device, **kwargs)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        """CPU only: irtool runs numpy, and the OpenVINO target uses the CPU plugin."""
        try:
            return Device(device).type == DeviceType.CPU
        except Exception:  # an unparsable device string is not supported
            return False


class IrtoolOpenVINOBackend(IrtoolBackend):
    """The same backend with ``target="openvino"`` as its default."""

    default_target = "openvino"


prepare = IrtoolBackend.prepare
run_model = IrtoolBackend.run_model
run_node = IrtoolBackend.run_node
supports_device = IrtoolBackend.supports_device
is_compatible = IrtoolBackend.is_compatible
openvino = IrtoolOpenVINOBackend

__all__ = ["IrtoolBackend", "IrtoolOpenVINOBackend", "IrtoolRep", "is_compatible", "openvino",
           "prepare", "run_model", "run_node", "supports_device"]
