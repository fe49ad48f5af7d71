"""The irtool executor: compile IR graphs into flat plans and run them with numpy."""

from .executor import Executor
from .plan import CONTROL_FLOW, Plan, RunOptions, Step, compile_graph

__all__ = ["CONTROL_FLOW", "Executor", "Plan", "RunOptions", "Step", "compile_graph"]
