"""What an OpenVINO release would not know in an IR: ``validate --openvino VERSION``.

An IR written by a newer OpenVINO can fail to load on the runtime a product ships with.
This family checks, offline, a model (every body included) against what one release
knows, from ``irtool/data/openvino_support.json``: a table read out of each release's own
wheel by ``bench/openvino_support.py`` (never written by hand). Flagged, as
``OPENVINO_COMPAT`` errors naming the layer and the line:

- a layer whose opset (``version="opset15"``) the release does not have, or whose type
  that opset of the release does not hold (OpenVINO's IR reader looks the type up in the
  opset the layer names, ignoring case);
- an attribute (``<data>``) of an operation that the release's version of the operation
  does not read;
- an element type the release does not have: a port's precision, or an attribute that
  holds an element type (``element_type``, ``destination_type``...).

Only what some release in the table knows is judged: an operation, opset, attribute or
element type that no release knows (an extension's, a typo) is another rule's business
(``UNKNOWN_OP``, ``ELEMENT_TYPE``), not a version question.
"""

from __future__ import annotations

import json
import os
from functools import cache
from importlib import resources
from typing import Any

from ..core.diagnostics import Diagnostic
from ..core.scopes import body_scope
from ..ir.graph import Graph, Layer, Model
from ..ir.types import element_type
from .report import Reporter, layer_map

CODE = "OPENVINO_COMPAT"


class UnknownRelease(ValueError):
    """A release the table does not hold; the message lists those it does."""


@cache
def _table() -> dict[str, Any]:
    text = resources.files("irtool").joinpath("data/openvino_support.json").read_text()
    table: dict[str, Any] = json.loads(text)
    return table


def known_releases() -> list[str]:
    """The releases the table holds, oldest first (``"2023.0"``, ...)."""
    return list(_table()["releases"])


def resolve_release(version: str) -> str:
    """``"2024.6"`` for ``"2024.6"``, ``"2024.6.0"`` or ``"2024.6.0-17404-..."``; raises
    ``UnknownRelease`` for a version the table does not hold."""
    parts = version.strip().split("-")[0].split(".")
    release = ".".join(parts[:2])
    if len(parts) < 2 or release not in _table()["releases"]:
        raise UnknownRelease(f"unknown OpenVINO release {version!r}: known are "
                             f"{', '.join(known_releases())}")
    return release


@cache
def _releases_in(runs: tuple[str, ...]) -> frozenset[str]:
    """The releases a list of runs (``"2023.0..2024.6"``, ``"2025.1"``) names."""
    order = known_releases()
    found: set[str] = set()
    for run in runs:
        first, _, last = run.partition("..")
        i, j = order.index(first), order.index(last or first)
        found.update(order[i:j + 1])
    return frozenset(found)


def _first(runs: list[str]) -> str:
    """``first in 2024.5`` (or ``only in 2024.0..2024.6`` for what a release dropped)."""
    latest = known_releases()[-1]
    return f"first in {runs[0].split('..')[0]}" if runs[-1].endswith(latest) \
        else f"only in {', '.join(runs)}"


@cache
def _opsets_lower() -> dict[str, dict[str, dict[str, list[str]]]]:
    """opset -> lower-cased type -> {version of the op: runs}."""
    return {opset: {name.lower(): versions for name, versions in members.items()}
            for opset, members in _table()["opsets"].items()}


def _type_runs(name: str) -> list[str] | None:
    runs: list[str] | None = _table()["element_types"].get(name)
    return runs


class _Check:
    def __init__(self, release: str, rep: Reporter) -> None:
        self.release, self.rep = release, rep

    def known(self, runs: list[str]) -> bool:
        return self.release in _releases_in(tuple(runs))

    def graph(self, graph: Graph, scope: str) -> None:
        for layer in layer_map(graph).values():
            self.layer(layer, scope)
            for name, body in layer.bodies.items():
                self.graph(body, body_scope(scope, layer.id, name))

    def layer(self, layer: Layer, scope: str) -> None:
        op = f"{layer.type}-{layer.version}"
        said_types: set[str] = set()
        members = _opsets_lower().get(layer.version)
        if members is not None and layer.type:
            versions = members.get(layer.type.lower())
            opset_runs = self.opset_runs(layer.version)
            if not self.known(opset_runs):
                self.flag(layer, scope, f"{op}: OpenVINO {self.release} has no "
                          f"{layer.version} ({_first(opset_runs)})")
            elif versions is not None:
                runs = sorted({r for rs in versions.values() for r in rs},
                              key=lambda r: known_releases().index(r.split("..")[0]))
                here = [v for v, rs in versions.items() if self.known(rs)]
                if not here:
                    self.flag(layer, scope, f"{op} is not in OpenVINO {self.release}'s "
                              f"{layer.version} ({_first(runs)})")
                else:
                    self.attributes(layer, scope, f"{layer.type}-{here[0]}", op, said_types)
        for key in ("element_type",):
            if key in layer.attrs:
                self.element_type(layer, scope, layer.attrs[key], f"attribute {key}",
                                  layer.line, said_types)
        for direction, ports in (("input", layer.inputs), ("output", layer.outputs)):
            for port in ports:
                if port.precision is not None:
                    self.element_type(layer, scope, port.precision.name,
                                      f"{direction} port {port.id}", port.line, said_types)

    @staticmethod
    def opset_runs(opset: str) -> list[str]:
        """The releases that have ``opset`` (any op of it)."""
        runs: set[str] = set()
        for versions in _table()["opsets"][opset].values():
            for rs in versions.values():
                runs.update(rs)
        releases = _releases_in(tuple(runs))
        order = known_releases()
        return _as_runs([r for r in order if r in releases], order)

    def attributes(self, layer: Layer, scope: str, key: str, op: str, said: set[str]) -> None:
        info = _table()["ops"].get(key)
        if info is None or self.known(info.get("attributes_unread", [])):
            return
        for name, value in layer.attrs.items():
            runs = info["attributes"].get(name)
            if runs is not None and not self.known(runs):
                self.flag(layer, scope, f"attribute {name} of {op} is not in OpenVINO "
                          f"{self.release} ({_first(runs)})")
            if name in info["typed"] and name != "element_type":
                self.element_type(layer, scope, value, f"attribute {name}", layer.line, said)

    def element_type(self, layer: Layer, scope: str, value: str, where: str, line: int | None,
                     said: set[str]) -> None:
        try:
            name = element_type(value).name
        except KeyError:
            name = value
        runs = _type_runs(name)
        if runs is None or self.known(runs) or name in said:
            return
        said.add(name)
        self.flag(layer, scope, f"element type {name} ({where}) is not in OpenVINO "
                  f"{self.release} ({_first(runs)})", line)

    def flag(self, layer: Layer, scope: str, message: str, line: int | None = None) -> None:
        self.rep.add(CODE, message, layer=layer, scope=scope, line=line)


def _as_runs(present: list[str], order: list[str]) -> list[str]:
    runs: list[list[str]] = []
    for release in present:
        if runs and order.index(runs[-1][-1]) == order.index(release) - 1:
            runs[-1].append(release)
        else:
            runs.append([release])
    return [r[0] if len(r) == 1 else f"{r[0]}..{r[-1]}" for r in runs]


def check_openvino(model: Model, version: str, *, file: str | None = None) -> list[Diagnostic]:
    """``OPENVINO_COMPAT`` errors for what OpenVINO ``version`` (``"2024.6"``, a full
    version string too) does not know in ``model``, bodies included; ``UnknownRelease``
    for a version the table does not hold."""
    rep = Reporter(file if file is not None else model.path)
    _Check(resolve_release(version), rep).graph(model.graph, "")
    return rep.diagnostics


def validate_for(model_or_path: Model | str | os.PathLike[str], version: str) -> list[Diagnostic]:
    """``irtool.validate(..., openvino=version)``: every rule, plus ``check_openvino`` on
    the model read (once) from the file."""
    from .checker import check_file, validate_model

    resolve_release(version)  # an unknown release is refused before any work
    if isinstance(model_or_path, Model):
        return [*validate_model(model_or_path, file=model_or_path.path),
                *check_openvino(model_or_path, version)]
    model, found = check_file(model_or_path)
    if model is not None:
        found += check_openvino(model, version, file=str(model_or_path))
    return found
