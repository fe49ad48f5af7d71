"""irtool: OpenVINO IR with control flow.

Convert ONNX Loop/Scan/If to IR v11, validate IR files, run IR with a numpy
executor, and cross-check against onnxruntime and OpenVINO::

    model = irtool.convert("m.onnx")
    irtool.save(model, "out/m.xml")
    outputs = irtool.run(irtool.load("out/m.xml"), {"X": x})
    problems = irtool.validate("out/m.xml")
    report = irtool.check("m.onnx", seed=1, rtol=1e-3)
    print(irtool.inspect("out/m.xml"))
    session = irtool.compile(model)   # stateful: variables kept from run to run
"""

from .api import check, compile, convert, inspect, load, run, run_steps, save, validate
from .core.diagnostics import Diagnostic
from .core.errors import (
    BackendError,
    ConversionError,
    ExecutionError,
    InternalError,
    IRParseError,
    IRToolError,
    IRValidationError,
    UnsupportedOpError,
)
from .core.extensions import load_extension
from .ir import Model

__version__ = "0.1.0"

__all__ = [
    "BackendError", "ConversionError", "Diagnostic", "ExecutionError", "IRParseError",
    "IRToolError", "IRValidationError", "InternalError", "Model", "UnsupportedOpError",
    "__version__", "backend", "check", "compile", "convert", "inspect", "load",
    "load_extension", "run", "run_steps", "save", "validate",
]


def __getattr__(name: str) -> object:
    """``irtool.backend``, the ONNX backend, on first use: it imports onnx, which takes
    longer than the rest of ``import irtool`` (every command pays for what this imports)."""
    if name == "backend":
        import importlib

        return importlib.import_module(".backend", __name__)
    raise AttributeError(f"module 'irtool' has no attribute {name!r}")
