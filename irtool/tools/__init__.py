"""Cross-check backends (onnxruntime, the irtool runtime, OpenVINO), comparison and reports.

``check`` converts an ONNX model and compares what onnxruntime, irtool's runtime
and OpenVINO compute. Only numpy is imported here; onnx, onnxruntime and
OpenVINO load inside the functions that need them.
"""

from ..engines.base import (
    Backend,
    IrtoolBackend,
    OnnxRuntimeBackend,
    OpenVINOBackend,
    OpenVINOFrontendBackend,
    Outcome,
)
from .check import BackendReport, CheckReport, check
from .compare import Comparison, compare, compare_outputs, default_tolerance
from .inputs import CheckInputError, make_inputs

__all__ = [
    "Backend", "BackendReport", "CheckInputError", "CheckReport", "Comparison",
    "IrtoolBackend", "OnnxRuntimeBackend", "OpenVINOBackend", "OpenVINOFrontendBackend",
    "Outcome", "check", "compare", "compare_outputs", "default_tolerance", "make_inputs",
]
