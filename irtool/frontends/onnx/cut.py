"""A model cut at chosen tensors before conversion: ``convert --output NAMES`` (ovc's option).

ovc's ``--output`` keeps some of a model's outputs; irtool's takes any tensor of the main
graph too, and the model is cut there: the named tensors become the graph's outputs, in
the order given, and only the nodes they need are kept (a node whose body reads a value
of the outer graph needs that value too). The cut is made on the ONNX graph, before
anything else: nodes past it are never checked or translated, so an operator irtool does
not support there does not stop the conversion. The graph's inputs stay as they are.

A name defined only inside a Loop, Scan or If body is refused in one line (a body's
value has one instance per iteration or branch, not one tensor), and so is a name the
model does not have (with the name it probably means).
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx

from ...core.errors import ConversionError
from ...core.feeds import closest_name
from .protos import defined_names, node_label, outer_names, subgraphs


def parse_output_option(text: str) -> list[str]:
    """``"a,b"`` -> ``["a", "b"]`` (spaces around names dropped). Raises ``ValueError``."""
    names = [n.strip() for n in text.split(",")]
    if not all(names):
        raise ValueError(f"--output {text!r}: expected tensor names separated by commas")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"--output: {twice[0]} is given twice")
    return names


def cut_at(proto: onnx.ModelProto, names: Sequence[str], source: str | None = None
           ) -> onnx.ModelProto:
    """A copy of ``proto`` whose outputs are the tensors ``names`` and whose main graph
    keeps only the nodes they need (see the module)."""
    graph = proto.graph
    defined = defined_names(graph)
    for name in names:
        if name not in defined:
            raise ConversionError(_unknown(graph, name, defined), file=source)
    producer = {out: node for node in graph.node for out in node.output if out}
    needed: set[str] = set()
    kept: set[int] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in needed:
            continue
        needed.add(name)
        node = producer.get(name)
        if node is None or id(node) in kept:
            continue
        kept.add(id(node))
        todo.extend(i for i in node.input if i)
        for _, body in subgraphs(node):
            todo.extend(outer_names(body))
    declared = {vi.name: vi for vi in [*graph.input, *graph.value_info, *graph.output]}
    copy = onnx.ModelProto()
    copy.CopyFrom(proto)
    nodes = [n for n in graph.node if id(n) in kept]
    del copy.graph.node[:]
    copy.graph.node.extend(nodes)
    del copy.graph.output[:]
    for name in names:
        # The type ONNX knows, or none: shape inference gives it one before translation.
        copy.graph.output.append(declared[name] if name in declared
                                 else onnx.ValueInfoProto(name=name))
    return copy


def _unknown(graph: onnx.GraphProto, name: str, defined: set[str]) -> str:
    for node in graph.node:
        for _, body in subgraphs(node):
            if _defines(body, name):
                return (f"--output {name}: that tensor is inside the body of node "
                        f"{node_label(node)} (one value per iteration or branch); "
                        "--output takes tensors of the main graph")
    guess = closest_name(name, sorted(defined))
    return f"--output {name}: the model has no tensor of that name" + (
        f" (did you mean {guess}?)" if guess else "")


def _defines(graph: onnx.GraphProto, name: str) -> bool:
    if name in defined_names(graph):
        return True
    return any(_defines(body, name) for node in graph.node for _, body in subgraphs(node))
