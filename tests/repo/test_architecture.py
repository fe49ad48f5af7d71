"""The layering of docs/architecture.md holds: no import cycles, no upward imports.

Every ``import`` and ``from ... import`` of every module under ``irtool/`` is read
with ``ast``, wherever it stands: at the top, inside functions (lazy imports) and
under ``if TYPE_CHECKING:``. The layer order comes from the table in
docs/architecture.md, so the document and the code cannot drift apart.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import networkx as nx
import pytest
from support import REPO

PACKAGE = REPO / "irtool"
DOC = REPO / "docs" / "architecture.md"
STANDALONE = {"irtool.frontends.onnx.protos"}  # imports nothing from irtool (the doc says why)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def layer_table() -> dict[str, int]:
    """Module prefix -> layer number, from the rows ``| 3 | name | `a`, `b` | ... |``."""
    table: dict[str, int] = {}
    for line in DOC.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].isdigit():
            for prefix in re.findall(r"`([\w.]+)`", cells[2]):
                table[prefix] = int(cells[0])
    return table


LAYERS = layer_table()


def layer_of(module: str) -> tuple[str, int] | None:
    """The most specific table entry that ``module`` is, or lies inside of."""
    entries = [e for e in LAYERS if module == e or module.startswith(e + ".")]
    if not entries:
        return None
    entry = max(entries, key=len)
    return entry, LAYERS[entry]


def imports(module: str) -> list[tuple[str, int]]:
    """The irtool modules ``module`` imports, anywhere in its code, with line numbers."""
    path = MODULES[module]
    return imports_in(path.read_text(), module, path.name == "__init__.py")


def imports_in(source: str, module: str, is_package: bool) -> list[tuple[str, int]]:
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names if a.name.split(".")[0] == "irtool"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "irtool":
                continue
            for alias in node.names:  # `from pkg import submodule` imports the submodule
                sub = f"{target}.{alias.name}"
                found.append((sub if sub in MODULES else target, node.lineno))
    return found


def import_graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_nodes_from(MODULES)
    for module in MODULES:
        for target, line in imports(module):
            if target != module:
                graph.add_edge(module, target, line=line)
    return graph


def test_the_table_is_read() -> None:
    assert len(LAYERS) >= 15 and set(LAYERS.values()) == set(range(1, 12)), LAYERS


def test_every_module_has_a_layer() -> None:
    """A module outside every row (``irtool`` alone names only the package itself)."""
    homeless = [m for m in MODULES if m != "irtool"
                and (layer_of(m) is None or layer_of(m)[0] == "irtool")]
    assert not homeless, f"add these to the layer table of docs/architecture.md: {homeless}"


def test_no_upward_imports() -> None:
    upward = []
    for module in sorted(MODULES):
        _, mine = layer_of(module)  # type: ignore[misc]
        for target, line in imports(module):
            theirs = layer_of(target)
            if theirs is not None and theirs[1] > mine:
                upward.append(f"{MODULES[module].relative_to(REPO)}:{line}: {module} (layer "
                              f"{mine}) imports {target} (layer {theirs[1]})")
    assert not upward, "\n".join(upward)


def test_no_import_cycles() -> None:
    graph = import_graph()
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    described = []
    for members in cycles:
        cycle = nx.find_cycle(graph.subgraph(members))
        described.append(" -> ".join(f"{a} (line {graph.edges[a, b]['line']})"
                                     for a, b in cycle) + f" -> {cycle[0][0]}")
    assert not cycles, "\n".join(described)


@pytest.mark.parametrize("module", sorted(STANDALONE))
def test_standalone_modules_import_nothing_from_irtool(module: str) -> None:
    assert imports(module) == []


def test_the_reader_sees_lazy_and_type_checking_imports() -> None:
    source = ("import numpy\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
              "    from ..api import load\n"
              "def f():\n    from . import plan\n    import irtool.frontends.onnx.protos\n")
    assert imports_in(source, "irtool.runtime.iteration", is_package=False) == [
        ("irtool.api", 4), ("irtool.runtime.plan", 6), ("irtool.frontends.onnx.protos", 7)]
    assert layer_of("irtool.runtime.codegen.loops") == ("irtool.runtime.codegen",
                                                       LAYERS["irtool.runtime"])
