"""The backends a cross-check runs, behind one small interface.

* ``OnnxRuntimeBackend``: onnxruntime (CPU) on the ONNX model, the reference;
* ``IrtoolBackend``: irtool's own runtime on an IR;
* ``OpenVINOBackend``: OpenVINO's CPU runtime on IR files (``irtool.backends.openvino``);
* ``OpenVINOFrontendBackend``: OpenVINO reading the ``.onnx`` itself (its own frontend);
* ``OpenVINOSessionBackend``: OpenVINO over consecutive steps of one stateful session.

``run`` returns outputs by tensor name and raises ``BackendError``;
``try_run`` never raises: a failure becomes an ``Outcome`` with a one-line reason.
Heavy libraries are imported inside the methods.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import BackendError, IRToolError

if TYPE_CHECKING:
    import onnx

    from ..ir import Model

Feed = Mapping[str, np.ndarray]


def first_line(err: BaseException) -> str:
    """A one-line reason for ``err``: irtool errors as they are, others with their type.

    OpenVINO's "Exception from ..." / "Check ... failed at" location lines are skipped.
    """
    if isinstance(err, IRToolError):
        text = str(err)
    else:
        from ..backends.openvino import one_line

        text = f"{type(err).__name__}: {one_line(err)}"
    return text.strip().splitlines()[0] if text.strip() else type(err).__name__


@dataclass
class Outcome:
    """What one backend did: its outputs, or why it failed."""

    backend: str
    outputs: dict[str, np.ndarray] | None
    error: str | None
    seconds: float

    @property
    def ok(self) -> bool:
        return self.error is None


class Backend:
    """One way of computing a model's outputs from named inputs."""

    name = "backend"

    def run(self, inputs: Feed) -> dict[str, np.ndarray]:
        """Outputs by tensor name. Raises ``BackendError`` with a one-line reason."""
        try:
            return self._run(inputs)
        except BackendError:
            raise
        except Exception as err:
            raise BackendError(f"{self.name}: {first_line(err)}") from err

    def try_run(self, inputs: Feed) -> Outcome:
        """``run`` with failures captured as a reason string."""
        start = time.perf_counter()
        try:
            outputs = self._run(inputs)
            error = None
        except Exception as err:  # the reason is the report; the others still run
            outputs, error = None, first_line(err)
        return Outcome(self.name, outputs, error, time.perf_counter() - start)

    def _run(self, inputs: Feed) -> dict[str, np.ndarray]:
        raise NotImplementedError


class OnnxRuntimeBackend(Backend):
    """onnxruntime's CPU provider on an ONNX model: the reference."""

    name = "onnxruntime"

    def __init__(self, model: onnx.ModelProto) -> None:
        self.model = model

    def _run(self, inputs: Feed) -> dict[str, np.ndarray]:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.log_severity_level = 4  # the failure is reported as this backend's reason
        session = ort.InferenceSession(self.model.SerializeToString(), options,
                                       providers=["CPUExecutionProvider"])
        wanted = [i.name for i in session.get_inputs()]
        feed = {n: inputs[n] for n in wanted if n in inputs}
        names = [o.name for o in session.get_outputs()]
        return dict(zip(names, (np.asarray(v) for v in session.run(names, feed))))


class IrtoolBackend(Backend):
    """irtool's runtime (``irtool.runtime.Executor``) on an IR model or file."""

    name = "irtool"

    def __init__(self, model_or_path: Model | str | os.PathLike,
                 max_iterations: int | None = None, optimize: bool = True) -> None:
        self.model_or_path = model_or_path
        self.max_iterations = max_iterations
        self.optimize = optimize
        self.applied: dict[str, int] = {}  # what the executor's rewrites did (last run)

    def _run(self, inputs: Feed) -> dict[str, np.ndarray]:
        from ..ir import Model
        from ..runtime import Executor
        from ..validation import load_checked

        model = self.model_or_path
        if isinstance(model, Model):
            executor = Executor(model, max_iterations=self.max_iterations,
                                optimize=self.optimize)
        else:
            executor = Executor(load_checked(model), max_iterations=self.max_iterations,
                                check=False, optimize=self.optimize)
        self.applied = executor.optimizations
        feed = {n: inputs[n] for n in executor.input_names if n in inputs}
        return executor.run(feed)


class OpenVINOBackend(Backend):
    """OpenVINO's CPU runtime on IR files, read from disk so the files themselves are tested."""

    name = "openvino"

    def __init__(self, xml_path: str | os.PathLike) -> None:
        self.xml_path = Path(xml_path)

    def _run(self, inputs: Feed) -> dict[str, np.ndarray]:
        from ..backends.openvino import run_ir

        return run_ir(self.xml_path, _only_inputs_of(self.xml_path, inputs))


def flatten_steps(steps: Sequence[Feed]) -> dict[str, np.ndarray]:
    """The feeds (or outputs) of consecutive steps as one mapping keyed ``"<step>/<name>"``,
    so that a whole session travels where one feed does (``Isolated``)."""
    return {f"{number}/{name}": value for number, step in enumerate(steps)
            for name, value in step.items()}


def split_steps(flat: Feed) -> list[dict[str, np.ndarray]]:
    """The inverse of ``flatten_steps``."""
    steps: list[dict[str, np.ndarray]] = []
    for key, value in flat.items():
        number, _, name = key.partition("/")
        while len(steps) <= int(number):
            steps.append({})
        steps[int(number)][name] = value
    return steps


class OpenVINOSessionBackend(Backend):
    """OpenVINO's CPU runtime over consecutive steps of one infer request, its variables
    (ReadValue/Assign) kept from step to step. Inputs and outputs are the whole session,
    flattened by ``flatten_steps``; ``extensions`` are OpenVINO extension libraries."""

    name = "openvino"

    def __init__(self, xml_path: str | os.PathLike,
                 extensions: Sequence[str | os.PathLike] = ()) -> None:
        self.xml_path = Path(xml_path)
        self.extensions = [str(e) for e in extensions]

    def _run(self, inputs: Feed) -> dict[str, np.ndarray]:
        from ..backends.openvino import run_ir_steps

        return flatten_steps(run_ir_steps(self.xml_path, split_steps(inputs),
                                          extensions=self.extensions))


class OpenVINOFrontendBackend(Backend):
    """OpenVINO's own ONNX frontend: ``read_model`` on the ``.onnx`` file, then CPU.

    Inputs are fed and outputs named by position in the ONNX graph's order, which
    the frontend keeps: it renames the Parameter of a graph that only passes a
    value through (e.g. a Loop that runs zero times) after the output.
    """

    name = "openvino-frontend"

    def __init__(self, onnx_path: str | os.PathLike) -> None:
        self.onnx_path = Path(onnx_path)

    def _run(self, inputs: Feed) -> dict[str, np.ndarray]:
        import onnx

        from ..backends.openvino import run_ir

        ov_inputs = _read_with_openvino(self.onnx_path).inputs  # a frontend failure, its reason
        graph = onnx.load(str(self.onnx_path), load_external_data=False).graph
        initialized = {t.name for t in graph.initializer}
        names = [vi.name for vi in graph.input if vi.name not in initialized]
        missing = [n for n in names if n not in inputs]
        if missing:
            raise BackendError(f"missing input(s) {', '.join(missing)}")
        port_names = [port.get_names() for port in ov_inputs]
        feed: dict[str, np.ndarray] | list[np.ndarray] = [inputs[n] for n in names]
        if len(port_names) < len(names) and all(ns & set(names) for ns in port_names):
            # The frontend drops inputs that only lend a type (CastLike's): feed by name.
            feed = {n: inputs[n] for n in names if any(n in ns for ns in port_names)}
        # run_ir hands the path to ov.Core().read_model, which reads ONNX as well as IR.
        outputs = run_ir(self.onnx_path, feed)
        out_names = [vi.name for vi in graph.output]
        if len(outputs) == len(out_names) and set(outputs) != set(out_names):
            return dict(zip(out_names, outputs.values()))
        return outputs


_OV_NOISE = re.compile(r"^(Exception from |Check '.*' failed at |FrontEnd API failed with |"
                       r"While validating ONNX node |Model wasn't fully converted|Summary:)")


def openvino_frontend_reason(err: BaseException) -> str:
    """The line of an OpenVINO ONNX-frontend failure that says what failed: the ops without
    a conversion rule, or ``Op-N: message`` of the first op whose conversion failed."""
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    for ln in lines:
        if ln.startswith("-- No conversion rule found"):
            return ln[3:]
    for i, ln in enumerate(lines):
        m = re.match(r"^-- (\S+) with a message:$", ln)
        if m:
            detail = []
            for nxt in lines[i + 1:]:
                if nxt.startswith(("Summary:", "-- ")):
                    break
                if not _OV_NOISE.match(nxt):
                    detail.append(nxt)
            if detail:
                return f"{m.group(1)}: {detail[-1]}"
    return first_line(err)


def _read_with_openvino(path: Path) -> Any:
    """OpenVINO's model read from ``path``; a failure is a ``BackendError`` saying why."""
    import openvino as ov

    try:
        return ov.Core().read_model(str(path))
    except Exception as err:
        raise BackendError(f"read_model: {openvino_frontend_reason(err)}") from None


def _only_inputs_of(xml_path: Path, inputs: Feed) -> dict[str, np.ndarray]:
    """The part of ``inputs`` the IR takes (ONNX initializers may be fed but not wanted)."""
    from ..ir import read_model

    try:
        names = read_model(xml_path).input_names()
    except IRToolError:
        return dict(inputs)  # let OpenVINO say what it thinks of the file
    return {n: inputs[n] for n in names if n in inputs}
