"""Translators for ordinary ONNX operators, one module per family.

Importing this package imports every module in it; each registers its
translators with ``onnx_op``. Modules whose name starts with ``_`` are helpers.
Last, operators that ONNX defines as a function of other operators and that
have no translator of their own get one that expands the function body
(see ``functions``).
"""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")

from .functions import register_function_fallbacks  # noqa: E402

register_function_fallbacks()
