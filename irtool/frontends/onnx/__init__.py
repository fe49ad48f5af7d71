"""The ONNX frontend: ONNX models (Loop, Scan and If included) -> irtool IR v11.

``convert_model`` is the entry point (``irtool.convert`` calls it). Importing
this package registers every translator: the ordinary operators of ``ops``,
the control-flow operators of ``control_flow`` and the sequence operators of
``sequences``.
"""

# Every conversion asks ONNX's checker and shape inference, which run in a worker process
# (``analysis``) that takes about as long to start as the translators below take to
# import: this is the one place that starts it, first, so that it loads meanwhile. (The
# worker itself imports nothing of this package; see ``analysis``.)
from . import analysis

analysis.prestart()

from . import control_flow, ops, sequences  # noqa: E402, F401  (registration)
from .converter import Converter, convert_model  # noqa: E402

__all__ = ["Converter", "convert_model"]
