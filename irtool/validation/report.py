"""Collecting diagnostics, plus small helpers over layers and ports the rules share."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.diagnostics import Diagnostic
from ..ir.graph import Graph, Layer, Port, shape_text
from ..ir.types import ElementType
from .codes import severity


@dataclass
class Reporter:
    """Appends ``Diagnostic``s for one file (``file`` None for an in-memory model).

    ``earlier`` holds ``(scope, layer_id, code)`` of what the XML reader already
    reported; rules that would only restate the reader's finding consult it.
    ``as_read``: the model is the one the XML reader made, unchanged since, so what the
    reader checks on the way (each port's precision and dims, each Const's data against
    the .bin: ``irtool.ir.serde.xml_reader``) holds or is in ``earlier``, and the rules
    do not check it again.
    """

    file: str | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    earlier: set[tuple[str, int | None, str]] = field(default_factory=set)
    as_read: bool = False

    def reported(self, scope: str, layer: Layer, *codes: str) -> bool:
        """Whether the reader already reported one of ``codes`` on ``layer``."""
        if not self.earlier:
            return False  # the common case: the reader found nothing
        return any((scope, layer.id, code) in self.earlier for code in codes)

    def aside(self) -> Reporter:
        """A reporter for the same file and reader's findings whose own findings are kept
        aside, for a rule that runs out of the order its findings are reported in."""
        return Reporter(self.file, earlier=self.earlier, as_read=self.as_read)

    def add(self, code: str, message: str, *, layer: Layer | None = None,
            line: int | None = None, scope: str = "", layer_id: int | None = None) -> None:
        if line is None and layer is not None:
            line = layer.line
        self.diagnostics.append(Diagnostic(
            code=code,
            message=message,
            file=self.file,
            line=line,
            layer_id=layer.id if layer is not None else layer_id,
            layer_name=layer.name if layer is not None else None,
            scope=scope,
            severity=severity(code),
        ))


def layer_map(graph: Graph) -> dict[int, Layer]:
    """Node key -> Layer, skipping nodes networkx made up for edges to missing layers."""
    # (networkx's node dicts read directly: its NodeDataView costs more than the dict)
    return {node: data["layer"] for node, data in graph.nx._node.items() if "layer" in data}


def repeats_a_port_id(layer: Layer) -> bool:
    """Whether two of the layer's ports, inputs and outputs together, have one id."""
    inputs, outputs = layer.inputs, layer.outputs
    count = len(inputs) + len(outputs)
    return count > 1 and len({p.id for p in inputs} | {p.id for p in outputs}) != count


def find_port(ports: list[Port], port_id: int) -> Port | None:
    return next((p for p in ports if p.id == port_id), None)


def known_rank(port: Port | None) -> int | None:
    """The rank a port certainly has, or None.

    OpenVINO writes no ``<dim>`` both for scalars and for dynamic rank, so an
    empty dims list proves nothing; only a listed dim fixes the rank.
    """
    if port is None or port.dims is None or len(port.dims) == 0:
        return None
    return len(port.dims)


def precision(port: Port | None) -> ElementType | None:
    """The port's element type when it is a real one (not missing, not dynamic)."""
    if port is None or not isinstance(port.precision, ElementType):
        return None
    return None if port.precision.kind == "dynamic" else port.precision


def one_element(port: Port | None) -> bool:
    """Whether the port may hold a scalar or a 1-element 1D tensor."""
    if port is None or port.dims is None:
        return True
    dims = port.dims
    if len(dims) == 0:
        return True
    return len(dims) == 1 and dims[0] in (1, -1)


def static_dims_differ(a: tuple[int, ...] | None, b: tuple[int, ...] | None) -> int | None:
    """The first axis where both dims are static and different, else None."""
    for axis, (x, y) in enumerate(zip(a or (), b or ())):
        if x >= 0 and y >= 0 and x != y:
            return axis
    return None


def dims(port: Port) -> tuple[int, ...]:
    """The dims of a port whose rank is known (``known_rank`` said so)."""
    assert port.dims is not None
    return port.dims


def fmt_dims(port: Port | None) -> str:
    """The port's shape as messages show it (``[...]``: none known)."""
    return shape_text(port.dims if port is not None else None)


def producer(graph: Graph, layers: dict[int, Layer], layer: Layer,
             port_id: int) -> tuple[Layer, Port | None] | None:
    """The layer (and its output port) that feeds input ``port_id`` of ``layer``."""
    for u, _, data in graph.nx.in_edges(layer.id, data=True):
        if data.get("to_port") == port_id and u in layers:
            src = layers[u]
            return src, find_port(src.outputs, data.get("from_port"))
    return None
