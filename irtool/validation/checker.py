"""Drive the rules: a file (parse, XSD, lenient read, semantics) or an in-memory Model."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..core.bulk import paused_gc
from ..core.diagnostics import Diagnostic
from ..core.errors import IRParseError, IRValidationError
from ..core.sniff import other_kind
from ..ir.graph import Graph, Model
from ..ir.serde import xml_reader
from .axes import check_axes
from .codes import severity
from .control_flow import check_control_flow
from .ops import attribute_problem, is_known_op
from .report import Reporter, body_scope, layer_map
from .structure import check_structure
from .tensors import check_tensors
from .variables import check_variables
from .weights import check_weights
from .xsd import load_schema, xsd_diagnostics


def check_graph(graph: Graph, scope: str, rep: Reporter) -> None:
    """Every rule on ``graph``, then on each nested body with its scope."""
    layers = layer_map(graph)
    check_structure(graph, layers, scope, rep)
    for layer in layers.values():
        check_tensors(layer, scope, rep)
        if layer.type and not is_known_op(layer.type, layer.version):
            rep.add("UNKNOWN_OP", f"operation {layer.type}-{layer.version or '?'} is known "
                    "neither to irtool nor to OpenVINO's opsets", layer=layer, scope=scope)
        problem = attribute_problem(layer.type, layer.version, layer.attrs) \
            if layer.type else None
        if problem is not None:
            rep.add("ATTR_VALUE", problem, layer=layer, scope=scope)
        check_axes(graph, layers, layer, scope, rep)
        check_control_flow(graph, layers, layer, scope, rep)
        for body_name, body in layer.bodies.items():
            check_graph(body, body_scope(scope, layer, body_name), rep)


def validate_model(model: Model, *, file: str | None = None,
                   earlier: Sequence[Diagnostic] = ()) -> list[Diagnostic]:
    """Semantic checks of an in-memory model (no XML, no XSD).

    ``earlier``: what reading the file already reported, so that no rule says it twice.
    """
    rep = Reporter(file, earlier={(d.scope, d.layer_id, d.code) for d in earlier})
    with paused_gc():
        check_graph(model.graph, "", rep)
        check_variables(model.graph, rep)
    return rep.diagnostics


def _file_problem(code: str, message: str, file: str, line: int | None = None) -> Diagnostic:
    return Diagnostic(code, message, file, line, severity=severity(code))


def check_file(path: str | os.PathLike, bin_path: str | os.PathLike | None = None
               ) -> tuple[Model | None, list[Diagnostic]]:
    """Parse safely (once), check against the XSD, read leniently, run the semantic rules.

    Returns the model read (None when the file could not be read at all) and every
    diagnostic, in the order ``irtool validate`` prints them.
    """
    with paused_gc():
        return _check_file(path, bin_path)


_HEAD_CODES = {"io": "FILE_UNREADABLE", "size": "XML_MALFORMED", "dtd": "XML_DTD"}


def _check_file(path: str | os.PathLike, bin_path: str | os.PathLike | None
                ) -> tuple[Model | None, list[Diagnostic]]:
    """Read the file as a stream checked against the schema on the way; when the schema
    finds something (or the .bin cannot be opened), read it again as a whole tree to
    report every schema error with the layer it is in."""
    file = str(path)
    mixup = other_kind(path, "ir")
    if mixup is not None:
        return None, [_file_problem("FILE_UNREADABLE", mixup, file)]
    try:
        head = xml_reader.read_head(path)
    except xml_reader.HeadError as err:
        return None, [_file_problem(_HEAD_CODES[err.kind], err.message, file, err.line)]
    version = xml_reader.ir_version(head)
    schema, why = load_schema(version if version in (10, 11) else 11)
    del head
    try:
        weights = xml_reader.open_weights(path, bin_path)
    except IRParseError:
        return _check_tree(path, bin_path)
    problems: list[Diagnostic] = []
    try:
        model = xml_reader.stream_model(path, weights, problems=problems, schema=schema)
    except xml_reader.NeedsTree:
        return _check_tree(path, bin_path)
    except xml_reader.HeadError as err:  # a DOCTYPE only the parser could see
        return None, [_file_problem(_HEAD_CODES[err.kind], err.message, file, err.line)]
    except IRParseError as err:
        return None, [_file_problem("XML_MALFORMED", err.message, file, err.line)]
    diagnostics = [] if schema is not None else [
        _file_problem("XSD_UNAVAILABLE", f"XSD checks skipped: {why}", file, model.graph.line)]
    return model, _semantics(model, weights, file, diagnostics, problems)


def _check_tree(path: str | os.PathLike, bin_path: str | os.PathLike | None
                ) -> tuple[Model | None, list[Diagnostic]]:
    """``_check_file`` on the whole XML tree at once (every schema error located)."""
    file = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        return None, [_file_problem("FILE_UNREADABLE", f"cannot read: {err.strerror or err}",
                                    file)]
    try:
        root = xml_reader.parse_xml(data, file)
    except xml_reader.HeadError as err:
        return None, [_file_problem(_HEAD_CODES[err.kind], err.message, file, err.line)]
    except IRParseError as err:
        return None, [_file_problem("XML_MALFORMED", err.message, file, err.line)]
    del data
    try:
        version = int(root.get("version", "11"))
    except ValueError:
        version = 11
    diagnostics = xsd_diagnostics(root, file, version if version in (10, 11) else 11)
    problems: list[Diagnostic] = []
    try:
        weights = xml_reader.open_weights(path, bin_path)
        model = xml_reader.model_from_xml(root, weights, file=file, problems=problems)
    except IRParseError as err:  # the .bin cannot be read
        return None, [*diagnostics, *problems,
                      _file_problem("FILE_UNREADABLE", err.message, file, err.line)]
    del root
    return model, _semantics(model, weights, file, diagnostics, problems)


def _semantics(model: Model, weights: object, file: str, diagnostics: list[Diagnostic],
               problems: list[Diagnostic]) -> list[Diagnostic]:
    """``diagnostics`` (of the XML) plus the reader's ``problems`` and the semantic and
    weights rules' findings."""
    for problem in problems:
        if problem.severity != severity(problem.code):
            problem = Diagnostic(**{**problem.to_dict(), "severity": severity(problem.code)})
        diagnostics.append(problem)
    diagnostics += validate_model(model, file=file, earlier=problems)
    size = len(weights) if weights is not None else 0  # type: ignore[arg-type]
    diagnostics += check_weights(model, size, file)
    return diagnostics


def validate_file(path: str | os.PathLike, bin_path: str | os.PathLike | None = None
                  ) -> list[Diagnostic]:
    """Every diagnostic of an IR file (see ``check_file``)."""
    return check_file(path, bin_path)[1]


def load_checked(path: str | os.PathLike, bin_path: str | os.PathLike | None = None) -> Model:
    """The model in ``path`` if ``validate`` finds no error in it, else
    ``IRValidationError`` (its message is the first error's diagnostic line)."""
    model, diagnostics = check_file(path, bin_path)
    errors = [d for d in diagnostics if d.severity == "error"]
    if errors or model is None:
        raise IRValidationError.from_diagnostics(errors)
    return model


def check_model(model: Model) -> Model:
    """``model`` itself if the semantic rules find no error in it, else
    ``IRValidationError`` naming the first (for models built in memory)."""
    errors = [d for d in validate_model(model, file=model.path) if d.severity == "error"]
    if errors:
        raise IRValidationError.from_diagnostics(errors)
    return model
