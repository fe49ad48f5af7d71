"""irtool's own runtime (``irtool.runtime.Executor``) as an engine, on an IR model or file."""

from __future__ import annotations

import os

import numpy as np

from ..ir import Model
from .base import Engine, Feed


class IrtoolEngine(Engine):
    """irtool's runtime (``irtool.runtime.Executor``) on an IR model or file."""

    name = "irtool"

    def __init__(self, model_or_path: Model | str | os.PathLike[str],
                 max_iterations: int | None = None, optimize: bool = True) -> None:
        self.model_or_path = model_or_path
        self.max_iterations = max_iterations
        self.optimize = optimize
        self.applied: dict[str, int] = {}  # what the executor's rewrites did (last run)

    def _run(self, inputs: Feed) -> dict[str, np.ndarray]:
        from ..runtime import Executor
        from ..validation import read_valid

        model = self.model_or_path
        if isinstance(model, Model):
            executor = Executor(model, max_iterations=self.max_iterations,
                                optimize=self.optimize)
        else:
            executor = Executor(read_valid(model), max_iterations=self.max_iterations,
                                check=False, optimize=self.optimize)
        self.applied = executor.optimizations
        feed = {n: inputs[n] for n in executor.input_names if n in inputs}
        return executor.run(feed)
