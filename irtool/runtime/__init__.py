"""The irtool executor: compile IR graphs into flat plans and run them with numpy."""

from . import (
    control_flow,  # registers Loop, TensorIterator and If into CONTROL_FLOW
    variables,  # registers ReadValue and Assign into CONTROL_FLOW
)
from .compiler import compile_graph
from .control_flow import DEFAULT_MAX_ITERATIONS
from .executor import Executor
from .plan import CONTROL_FLOW, Plan, RunOptions, Step

__all__ = [
    "CONTROL_FLOW", "DEFAULT_MAX_ITERATIONS", "Executor", "Plan", "RunOptions", "Step",
    "compile_graph", "control_flow", "variables",
]
