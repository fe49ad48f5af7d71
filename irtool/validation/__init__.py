"""The validator's rules, one module per family; ``irtool.validate`` is the entry point."""

from .checker import (
    check_file,
    check_graph,
    check_model,
    load_checked,
    validate_file,
    validate_model,
)
from .codes import RULES, Rule, severity

__all__ = [
    "RULES", "Rule", "check_file", "check_graph", "check_model", "load_checked", "severity",
    "validate_file", "validate_model",
]
