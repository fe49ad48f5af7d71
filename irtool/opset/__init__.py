"""OpenVINO operations: attribute parsing, type/shape inference and numpy kernels.

Every module of this package registers its ops on import; importing the package
loads them all, so ``lookup`` sees the full registry.
"""

import importlib
import pkgutil

from .base import (
    REQUIRED,
    Kernel,
    NumpyCall,
    Op,
    TensorInfo,
    broadcast_shapes,
    lookup,
    make_op,
    register,
    registered,
)

for _module in pkgutil.iter_modules(__path__):
    if _module.name != "base":
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = [
    "REQUIRED", "Kernel", "NumpyCall", "Op", "TensorInfo", "broadcast_shapes", "lookup", "make_op",
    "register", "registered",
]
