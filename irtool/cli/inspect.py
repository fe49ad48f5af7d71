"""``irtool inspect MODEL.xml|MODEL.onnx``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from ..core.files import write_files

if TYPE_CHECKING:
    from ..ir import Model
    from ..tools.inspection import Highlight
from ._common import extension_option


def add_parser(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    """The ``inspect`` subcommand and its options."""
    p = sub.add_parser("inspect", parents=parents,
                       help="summarise an IR or ONNX model, loops and all",
                       description="Inputs, outputs, op counts and every Loop/TensorIterator/"
                                   "If in words; drawings with --dot/--svg/--png.")
    p.add_argument("model", help="IR .xml or ONNX .onnx")
    p.add_argument("--json", action="store_true",
                   help="print the summary as JSON instead of text")
    p.add_argument("--dot", metavar="OUT.dot", help="write a graphviz drawing (default: none)")
    p.add_argument("--svg", metavar="OUT.svg",
                   help="render the drawing as SVG (needs graphviz `dot`; default: none)")
    p.add_argument("--png", metavar="OUT.png",
                   help="render the drawing as PNG (needs graphviz `dot`; default: none)")
    p.add_argument("--highlight", metavar="PATH",
                   help="draw out one layer, by its path as messages name it (\"7\", "
                        "\"3/body/7\": layer 7 of the body of layer 3), and the loops and "
                        "branches it is inside; with --radius, only its neighbourhood")
    p.add_argument("--note", metavar="TEXT", default=None,
                   help="with --highlight: text to write on the layer (error statistics...)")
    p.add_argument("--radius", type=int, default=None, metavar="N",
                   help="with --highlight: draw only layers within N edges of the way to it, "
                        "and only the bodies on that way (default: the whole model)")
    extension_option(p)
    p.set_defaults(func=run, subparser=p)


def run(args: argparse.Namespace) -> int:
    """``irtool inspect MODEL``: print the summary (or ``--json``), then write ``--dot`` /
    ``--svg`` / ``--png`` if asked."""
    from ..tools.inspection import load_for_inspect, summary, summary_dict, to_dot, write_image

    model, note = load_for_inspect(args.model)
    if args.json:
        print(json.dumps(summary_dict(model, note), indent=2))
    else:
        print(summary(model, note))
    if (args.note or args.radius is not None) and not args.highlight:
        args.subparser.error("--note and --radius go with --highlight")
    if args.dot or args.svg or args.png:
        dot_text = to_dot(model, _highlight(model, args) if args.highlight else None)
        wrote = []
        if args.dot:
            write_files({args.dot: dot_text.encode("utf-8")})
            wrote.append(args.dot)
        for fmt, path in (("svg", args.svg), ("png", args.png)):
            if path:
                write_image(dot_text, path, fmt)
                wrote.append(path)
        for path in wrote:
            print(f"wrote {path}", file=sys.stderr if args.json else sys.stdout)
    return 0


def _highlight(model: Model, args: argparse.Namespace) -> Highlight:
    """``--highlight PATH``: the layer and the control-flow layers on its way, checked."""
    from ..core.errors import IRToolError
    from ..tools.inspection import Highlight as Mark

    parts = args.highlight.strip("/").split("/")
    graph, scope = model.graph, ""
    around: dict[str, str] = {}
    for k in range(0, len(parts), 2):
        try:
            layer_id = int(parts[k])
        except ValueError:
            layer_id = -1
        if layer_id not in graph:
            raise IRToolError(f"--highlight {args.highlight}: no layer {parts[k]} in "
                              f"{scope or 'the main graph'}", file=args.model)
        path = f"{scope}/{layer_id}" if scope else str(layer_id)
        if k + 1 == len(parts):
            return Mark(path, args.note or "", around, args.radius)
        layer = graph.layer(layer_id)
        if parts[k + 1] not in layer.bodies:
            raise IRToolError(f"--highlight {args.highlight}: layer {path} ({layer.type}) has "
                              f"no {parts[k + 1]}", file=args.model)
        around[path] = ""
        scope = f"{path}/{parts[k + 1]}"
        graph = layer.bodies[parts[k + 1]]
    raise IRToolError(f"--highlight {args.highlight}: a path ends with a layer id "
                      "(\"3/body/7\")", file=args.model)
