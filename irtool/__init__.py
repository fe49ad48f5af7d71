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
    irtool.reduce("m.xml", "in.npz", "openvino-crash", "out/")  # a minimal reproducer
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what the names below are, for type checkers; bound on first use
    from . import backend
    from .api import (
        check,
        compile,
        convert,
        diff,
        inspect,
        load,
        reduce,
        run,
        run_steps,
        save,
        validate,
    )
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
    "__version__", "backend", "check", "compile", "convert", "diff", "inspect", "load",
    "load_extension", "reduce", "run", "run_steps", "save", "validate",
]


# Where each exported name lives. ``import irtool`` imports none of them: the command line
# (``irtool --version``, a pre-commit hook validating one file) pays only for what it uses,
# and numpy, networkx, onnx and OpenVINO load with the first function that needs them.
_HOMES = {
    **dict.fromkeys(["check", "compile", "convert", "diff", "inspect", "load", "reduce",
                     "run", "run_steps", "save", "validate"], ".api"),
    "Diagnostic": ".core.diagnostics",
    **dict.fromkeys(["BackendError", "ConversionError", "ExecutionError", "InternalError",
                     "IRParseError", "IRToolError", "IRValidationError",
                     "UnsupportedOpError"], ".core.errors"),
    "load_extension": ".core.extensions",
    "Model": ".ir",
}


def __getattr__(name: str) -> object:
    """An exported name, imported from its module on first use and kept (``_HOMES``);
    ``irtool.backend``, the ONNX backend, is a module of its own."""
    if name == "backend":
        return importlib.import_module(".backend", __name__)
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'irtool' has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
