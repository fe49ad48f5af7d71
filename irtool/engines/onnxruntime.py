"""onnxruntime's CPU provider on an ONNX model: the reference of a cross-check."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .base import Engine, Feed

if TYPE_CHECKING:
    import onnx


class OnnxRuntimeEngine(Engine):
    """onnxruntime's CPU provider on an ONNX model: the reference."""

    name = "onnxruntime"

    def __init__(self, model: onnx.ModelProto) -> None:
        self.model = model

    def _run(self, inputs: Feed) -> dict[str, np.ndarray]:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.log_severity_level = 4  # the failure is reported as this engine's reason
        session = ort.InferenceSession(self.model.SerializeToString(), options,
                                       providers=["CPUExecutionProvider"])
        wanted = [i.name for i in session.get_inputs()]
        feed = {n: inputs[n] for n in wanted if n in inputs}
        names = [o.name for o in session.get_outputs()]
        return dict(zip(names, (np.asarray(v) for v in session.run(names, feed))))
