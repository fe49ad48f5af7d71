"""The validator: ``validate`` a file (read, XSD, semantic rules) or an in-memory Model.

The rules live in one module per family (``codes.RULES`` gives each code's family, and
the family is the module's name): ``reading`` (the file itself), ``xsd``, ``structure``,
``tensors``, ``ops``, ``axes``, ``control_flow``, ``variables``, ``weights``. Nothing
here raises for bad input: every finding is a ``Diagnostic``; ``read_valid`` and
``require_valid`` turn the errors into an ``IRValidationError`` for the callers that
must refuse such IR (``irtool.load``, the runtime).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence

from ..core.bulk import paused_gc
from ..core.diagnostics import Diagnostic, errors_only
from ..core.errors import IRValidationError
from ..core.scopes import body_scope
from ..ir.graph import Graph, Model
from .axes import check_axes
from .codes import severity
from .control_flow import check_control_flow
from .ops import check_op
from .reading import read
from .report import Reporter, layer_map
from .structure import check_structure
from .tensors import check_tensors
from .variables import check_variables
from .weights import check_weights


def validate(model_or_path: Model | str | os.PathLike[str]) -> list[Diagnostic]:
    """Every problem of an IR file (XSD + semantics) or of a ``Model`` (semantics only).

    Never raises for bad input; returns an empty list when the IR is sound. Warnings
    (``severity="warning"``) do not make an IR invalid.
    """
    if isinstance(model_or_path, Model):
        return validate_model(model_or_path)
    # The model read is garbage on return, and cyclic (networkx's graph views refer to
    # their graph): the collector, paused until then, frees it in its youngest
    # generation. Resumed while the model was alive, it moved it to an older one, which
    # cost a second pass (a third of validating a small IR of a zoo).
    with paused_gc():
        return check_file(model_or_path)[1]


def check_graph(graph: Graph, scope: str, rep: Reporter) -> None:
    """Every rule on ``graph``, then on each nested body with its scope."""
    layers = layer_map(graph)
    check_structure(graph, layers, scope, rep)
    for layer in layers.values():
        check_tensors(layer, scope, rep)
        check_op(layer, scope, rep)
        check_axes(graph, layers, layer, scope, rep)
        check_control_flow(graph, layers, layer, scope, rep)
        for body_name, body in layer.bodies.items():
            check_graph(body, body_scope(scope, layer.id, body_name), rep)


def validate_model(model: Model, *, file: str | None = None,
                   earlier: Sequence[Diagnostic] = (), as_read: bool = False
                   ) -> list[Diagnostic]:
    """Semantic checks of an in-memory model (no XML, no XSD).

    ``earlier``: what reading the file already reported, so that no rule says it twice.
    ``as_read``: ``model`` is as the XML reader made it (see ``Reporter``).
    """
    rep = Reporter(file, earlier={(d.scope, d.layer_id, d.code) for d in earlier},
                   as_read=as_read)
    with paused_gc():
        check_graph(model.graph, "", rep)
        check_variables(model.graph, rep)
    return rep.diagnostics


def check_file(path: str | os.PathLike[str], bin_path: str | os.PathLike[str] | None = None
               ) -> tuple[Model | None, list[Diagnostic]]:
    """Read the file (``reading``: at most two passes), then run the semantic rules.

    Returns the model read (None when the file could not be read at all) and every
    diagnostic, in the order ``irtool validate`` prints them.
    """
    with paused_gc():
        found = read(path, bin_path)
        if found.model is None:
            return None, found.diagnostics
        file = str(path)
        diagnostics = found.diagnostics
        for problem in found.problems:
            if problem.severity != severity(problem.code):
                problem = dataclasses.replace(problem, severity=severity(problem.code))
            diagnostics.append(problem)
        diagnostics += validate_model(found.model, file=file, earlier=found.problems,
                                      as_read=True)
        diagnostics += check_weights(found.model, found.weights_size, file)
        return found.model, diagnostics


def read_valid(path: str | os.PathLike[str],
               bin_path: str | os.PathLike[str] | None = None) -> Model:
    """The model in ``path`` if ``validate`` finds no error in it, else
    ``IRValidationError`` (its message is the first error's diagnostic line)."""
    model, diagnostics = check_file(path, bin_path)
    errors = errors_only(diagnostics)
    if errors or model is None:
        raise IRValidationError.from_diagnostics(errors)
    return model


def require_valid(model: Model) -> Model:
    """``model`` itself if the semantic rules find no error in it, else
    ``IRValidationError`` naming the first (for models built in memory)."""
    errors = errors_only(validate_model(model, file=model.path))
    if errors:
        raise IRValidationError.from_diagnostics(errors)
    return model
