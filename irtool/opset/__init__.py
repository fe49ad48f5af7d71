"""OpenVINO operations: attribute parsing, type/shape inference and numpy kernels.

One module per family of operations; each registers its ops on import, and importing the
package loads them all, so ``lookup`` sees the full registry. Modules whose name starts
with ``_`` are helpers (``_common``, ``_nn``), as in ``irtool.frontends.onnx.ops``.
"""

import importlib
import pkgutil

from .base import (
    REQUIRED,
    Attrs,
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
    if _module.name != "base" and not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = [
    "REQUIRED", "Attrs", "Kernel", "NumpyCall", "Op", "TensorInfo", "broadcast_shapes", "lookup",
    "make_op", "register", "registered",
]
