"""What every engine is: a way of computing a model's outputs from inputs named by tensor.

An ``Engine`` runs one model; ``run`` returns outputs by tensor name and raises
``BackendError`` with a one-line reason, ``try_run`` never raises: a failure becomes an
``EngineResult`` with that reason. The engines: onnxruntime on the ONNX model
(``onnxruntime``, the cross-check's reference), irtool's own runtime (``runtime``),
OpenVINO's CPU runtime on IR files, over the steps of a stateful session, or reading the
``.onnx`` with its own frontend (``openvino``); ``isolate`` runs any of them in a worker
process. ``irtool.run(backend=...)``, ``irtool check`` and the conformance runner use
them. Heavy libraries are imported inside the methods.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..core.errors import BackendError, IRToolError

Feed = Mapping[str, np.ndarray]

# OpenVINO wraps its messages in lines saying where they were thrown from.
_BOILERPLATE = re.compile(r"^(Exception from \S+|Check '.*' failed at \S+|\[ ?\w+ ?\]\s*$)")


def one_line(err: BaseException) -> str:
    """The informative line of an OpenVINO exception message."""
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    useful = [ln for ln in lines if not _BOILERPLATE.match(ln)]
    text = (useful or lines or [type(err).__name__])[0]
    return text.rstrip(":")


def first_line(err: BaseException) -> str:
    """A one-line reason for ``err``: irtool errors as they are, others with their type.

    OpenVINO's "Exception from ..." / "Check ... failed at" location lines are skipped.
    """
    if isinstance(err, IRToolError):
        text = str(err)
    else:
        text = f"{type(err).__name__}: {one_line(err)}"
    return text.strip().splitlines()[0] if text.strip() else type(err).__name__


@dataclass
class EngineResult:
    """What one engine did: its outputs, or why it failed."""

    engine: str
    outputs: dict[str, np.ndarray] | None
    error: str | None
    seconds: float

    @property
    def ok(self) -> bool:
        return self.error is None


class Engine:
    """One way of computing a model's outputs from named inputs."""

    name = "engine"

    def run(self, inputs: Feed) -> dict[str, np.ndarray]:
        """Outputs by tensor name. Raises ``BackendError`` with a one-line reason."""
        try:
            return self._run(inputs)
        except BackendError:
            raise
        except Exception as err:
            raise BackendError(f"{self.name}: {first_line(err)}") from err

    def try_run(self, inputs: Feed) -> EngineResult:
        """``run`` with failures captured as a reason string."""
        start = time.perf_counter()
        try:
            outputs = self._run(inputs)
            error = None
        except Exception as err:  # the reason is the report; the others still run
            outputs, error = None, first_line(err)
        return EngineResult(self.name, outputs, error, time.perf_counter() - start)

    def _run(self, inputs: Feed) -> dict[str, np.ndarray]:
        raise NotImplementedError


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
