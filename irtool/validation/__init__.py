"""Validate OpenVINO IR: the XSD plus the spec's semantic rules, every problem at once.

``validate(path)`` parses the file safely (no DTD, no entities, no network), checks it
against ``schemas/ir_v10.xsd`` / ``ir_v11.xsd``, reads it leniently (problems collected,
never raised) and runs the semantic rules on the model, descending into every
Loop/TensorIterator/If body with its scope (``"3/body"``). ``validate(model)`` runs the
semantic rules only. Every finding is a ``Diagnostic`` (code, message, file, line, layer
id/name, scope, severity); the codes, their severity, family and meaning are the table
``codes.RULES``, one module per family (see ``checker``).

"One element" means a scalar or a 1D tensor of one element. Ranks are compared only
where the IR states them: OpenVINO writes no ``<dim>`` both for a scalar and for a
dynamic rank, so a port without dims fixes nothing.
"""

from .checker import check_file, read_valid, require_valid, validate, validate_model
from .codes import RULES, Rule, severity

__all__ = ["RULES", "Rule", "check_file", "read_valid", "require_valid", "severity",
           "validate", "validate_model"]
