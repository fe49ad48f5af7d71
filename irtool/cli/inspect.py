"""``irtool inspect MODEL.xml|MODEL.onnx``."""

from __future__ import annotations

import argparse
import json
import sys

from ..core.files import write_files
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
    if args.dot or args.svg or args.png:
        dot_text = to_dot(model)
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
