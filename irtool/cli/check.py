"""``irtool check MODEL.onnx [INPUTS.npz]``."""

from __future__ import annotations

import argparse
import json
import logging
import sys

from .. import api
from ._common import extension_option, load_npz

log = logging.getLogger("irtool")


def add_parser(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    """The ``check`` subcommand and its options."""
    p = sub.add_parser("check", parents=parents,
                       help="convert, run onnxruntime, irtool and OpenVINO, compare",
                       description="Convert an ONNX model, run onnxruntime (the reference), "
                                   "irtool and OpenVINO on the same inputs and compare every "
                                   "output. Exit 0 only when all agree.")
    p.add_argument("model", help="ONNX model (.onnx)")
    p.add_argument("inputs", nargs="?",
                   help=".npz of inputs keyed by name (default: random ones of the declared "
                        "shapes, see --seed and --shape; inputs missing from it are random too)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the random inputs (default 0)")
    p.add_argument("--shape", action="append", default=[], metavar="NAME=D0,D1,...",
                   help="shape for an input with dynamic dimensions (repeatable; needed "
                        "for each such input that INPUTS does not give)")
    p.add_argument("--rtol", type=float, default=None,
                   help="relative tolerance for every output (default per dtype: f32/f64 "
                        "1e-4, f16 1e-2, bf16 2e-2, 8- and 4-bit floats 0.125; integers and "
                        "bools exact)")
    p.add_argument("--atol", type=float, default=None,
                   help="absolute tolerance for every output (default per dtype: f32/f64 "
                        "1e-5, f16 1e-3, bf16 1e-2, 8- and 4-bit floats 0.1; integers and "
                        "bools exact)")
    p.add_argument("--json", action="store_true",
                   help="print the report as JSON (inputs, and per backend per output the "
                        "errors and the verdict) instead of the table")
    p.add_argument("--keep", metavar="DIR",
                   help="keep the converted IR and the inputs in DIR (default: a temporary "
                        "folder, removed)")
    p.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                   help="onnxruntime and OpenVINO each run in a child process, stopped after "
                        "this long (default 300); their column then says so")
    p.add_argument("--max-iterations", type=int, default=None, metavar="N",
                   help="irtool's runtime stops any loop beyond N iterations (default "
                        "1,000,000)")
    p.add_argument("--no-optimize", action="store_true",
                   help="convert without optimising passes and run irtool's executor "
                        "without its speed rewrites (the report says what was applied "
                        "either way; default: optimised)")
    extension_option(p)
    p.set_defaults(func=run, subparser=p)


def run(args: argparse.Namespace) -> int:
    """``irtool check MODEL.onnx [INPUTS.npz]``: the table (or ``--json``) on stdout,
    progress on stderr; exit 0 only when every backend ran and agrees with onnxruntime."""
    from ..tools.inputs import parse_shape_option

    shapes = dict(parse_shape_option(text) for text in (args.shape or []))
    given = load_npz(args.inputs) if args.inputs else None

    from tqdm import tqdm

    # The stages: converting, then onnxruntime, irtool and OpenVINO. A bar on a terminal;
    # with -v each stage is also logged (and that is all a pipe or a file gets).
    bar = tqdm(total=4, desc="irtool check", leave=False, bar_format="{desc}: {n}/{total}",
               disable=args.quiet or not sys.stderr.isatty())

    def progress(message: str) -> None:
        log.info("%s...", message)
        if bar.n < bar.total:
            bar.set_description(f"irtool check: {message}")
            bar.update(1)

    try:
        report = api.check(args.model, given, seed=args.seed, shapes=shapes, rtol=args.rtol,
                           atol=args.atol, keep_dir=args.keep, progress=progress,
                           timeout=args.timeout, max_iterations=args.max_iterations,
                           optimize=not args.no_optimize)
    finally:
        bar.close()
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(report.format_table())
    return 0 if report.ok else 1
