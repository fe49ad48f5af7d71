"""The ONNX frontend: ONNX models (Loop, Scan and If included) -> irtool IR v11.

``convert_model`` is the entry point (``irtool.convert`` calls it). Importing
this package registers every translator: the ordinary operators of ``ops``,
the control-flow operators of ``control_flow`` and the sequence operators of
``sequences``.
"""

from . import control_flow, ops, sequences  # noqa: F401  (registration)
from .converter import Converter, convert_model

__all__ = ["Converter", "convert_model"]
