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
    changes = irtool.diff("ref/m.xml", "out/m.xml")  # what differs in meaning
"""

# Load the ``irtool.validate`` submodule before binding the function of the same
# name: importing it later (api.validate does, lazily) would rebind
# ``irtool.validate`` to the module and break the second call.
from . import validate as _validate_module  # noqa: F401
from .api import check, compile, convert, diff, inspect, load, run, run_steps, save, validate
from .diagnostics import Diagnostic
from .errors import (
    BackendError,
    ConversionError,
    ExecutionError,
    InternalError,
    IRParseError,
    IRToolError,
    IRValidationError,
    UnsupportedOpError,
)
from .extensions import load_extension
from .ir import Model

__version__ = "0.1.0"

__all__ = [
    "BackendError", "ConversionError", "Diagnostic", "ExecutionError", "IRParseError",
    "IRToolError", "IRValidationError", "InternalError", "Model", "UnsupportedOpError",
    "__version__", "backend", "check", "compile", "convert", "diff", "inspect", "load",
    "load_extension", "run", "run_steps", "save", "validate",
]


def __getattr__(name: str):  # type: ignore[no-untyped-def]
    """``irtool.backend`` (the ONNX backend) imports onnx, so it loads on first use."""
    if name == "backend":
        import importlib

        return importlib.import_module(".backend", __name__)
    raise AttributeError(f"module 'irtool' has no attribute {name!r}")
