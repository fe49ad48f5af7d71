"""``irtool check MODEL.onnx|MODEL.xml [INPUTS.npz ...]``."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import TYPE_CHECKING

from ..core.errors import IRToolError
from ._batch import add_options, many
from ._common import extension_option, input_shape_options, input_shapes, load_npz

if TYPE_CHECKING:
    from ..tools.check import CheckReport

log = logging.getLogger("irtool")


def add_parser(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    """The ``check`` subcommand and its options."""
    p = sub.add_parser("check", parents=parents,
                       help="compare engines: onnxruntime, irtool and OpenVINO on an ONNX "
                            "model; irtool and OpenVINO on an IR",
                       description="On an ONNX model: convert it, run onnxruntime (the "
                                   "reference), irtool and OpenVINO on the same inputs and "
                                   "compare every output. On an IR (.xml): run irtool's "
                                   "executor (the reference, or --reference outputs) and "
                                   "OpenVINO on it; several input files are the steps of one "
                                   "session, compared output by output and variable by "
                                   "variable. OpenVINO runs in its exact modes unless "
                                   "--openvino-config says otherwise. Exit 0 only when all "
                                   "agree.")
    p.add_argument("model", help="ONNX model (.onnx) or IR (.xml); a folder or a quoted glob "
                                 "checks every .onnx in it, one report (see below)")
    p.add_argument("inputs", nargs="*", metavar="INPUTS.npz",
                   help=".npz of inputs keyed by name (default: random ones of the declared "
                        "shapes, see --seed and --input; inputs missing from it are random "
                        "too); on an IR, several files are consecutive steps of one session")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the random inputs (default 0)")
    input_shape_options(p, "the shapes of the random inputs (default: the declared ones, "
                           "each dynamic dim 1, with a warning naming them)", alias=True)
    p.add_argument("--rtol", type=float, default=None,
                   help="relative tolerance for every output (default per dtype: f32/f64 "
                        "1e-4, f16 1e-2, bf16 2e-2, 8- and 4-bit floats 0.125; integers and "
                        "bools exact)")
    p.add_argument("--atol", type=float, default=None,
                   help="absolute tolerance for every output (default per dtype: f32/f64 "
                        "1e-5, f16 1e-3, bf16 1e-2, 8- and 4-bit floats 0.1; integers and "
                        "bools exact)")
    p.add_argument("--reference", action="append", default=[], metavar="OUTPUTS.npz",
                   help="IR only: saved outputs (e.g. the framework's) both engines are "
                        "compared with, one file per step (default: irtool is the "
                        "reference)")
    p.add_argument("--openvino-config", action="append", default=[], metavar="KEY=VALUE",
                   help="run OpenVINO with this CPU property, as a deployment does "
                        "(repeatable; its defaults for the rest; 'default' alone: its "
                        "defaults). Default: its exact modes (INFERENCE_PRECISION_HINT=f32, "
                        "KV_CACHE_PRECISION=f32, DYNAMIC_QUANTIZATION_GROUP_SIZE=0); a "
                        "difference that goes away in them is reported as caused by the "
                        "settings")
    p.add_argument("--localize", action="store_true",
                   help="when irtool and OpenVINO disagree, find the first layer whose "
                        "output disagrees while its inputs agree, inside loop bodies (which "
                        "iteration) and If branches")
    p.add_argument("--memory-budget", default="256M", metavar="SIZE",
                   help="--localize holds at most this many bytes of intermediate values, "
                        "comparing in segments beyond (default 256M; K, M, G)")
    p.add_argument("--png", metavar="OUT.png",
                   help="with --localize: draw the layer found, its neighbours and the "
                        "bodies around it, with its error statistics (needs graphviz `dot`)")
    p.add_argument("--svg", metavar="OUT.svg", help="as --png, in SVG")
    p.add_argument("--json", action="store_true",
                   help="print the report as JSON (inputs, and per backend per output the "
                        "errors and the verdict) instead of the table")
    p.add_argument("--keep", metavar="DIR",
                   help="keep the IR checked and the inputs in DIR (default: a temporary "
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
    add_options(p, timeout_default="none")
    extension_option(p)
    p.set_defaults(func=run, subparser=p)


def parse_openvino_config(items: list[str]) -> dict[str, str] | None:
    """``["KEY=VALUE", ...]`` -> the properties (None: none given, the exact modes; ``[
    "default"]``: OpenVINO's own defaults)."""
    if not items:
        return None
    config: dict[str, str] = {}
    for item in items:
        if item.strip().lower() == "default":
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise IRToolError(f"--openvino-config {item!r}: expected KEY=VALUE (e.g. "
                              "INFERENCE_PRECISION_HINT=bf16) or 'default'")
        config[key.strip()] = value.strip()
    return config


def run(args: argparse.Namespace) -> int:
    """``irtool check MODEL [INPUTS.npz ...]``: the table (or ``--json``) on stdout, progress
    on stderr; exit 0 only when every backend ran and agrees with the reference."""
    from .. import api  # the API (numpy, the IR) loads with the command that uses it
    from ..core.sniff import file_kind
    from ..tools.localize import parse_size

    shapes = input_shapes(args)
    if many(args.model):
        from ._batch import check_models

        return check_models(args, shapes)
    is_ir = file_kind(args.model) == "ir"
    if (args.png or args.svg) and not args.localize:
        args.subparser.error("--png and --svg draw what --localize finds: add --localize")
    if not is_ir and len(args.inputs) > 1:
        raise IRToolError("an ONNX model takes one inputs file; the steps of a session are "
                          "checked on an IR", file=args.model)
    if not is_ir and args.reference:
        raise IRToolError("--reference compares saved outputs on an IR; an ONNX model's "
                          "reference is onnxruntime", file=args.model)
    steps = [load_npz(path) for path in args.inputs]
    given: dict | list | None = (steps[0] if len(steps) == 1 else steps) if steps else None
    saved = [load_npz(path) for path in args.reference]
    reference: dict | list | None = (saved[0] if len(saved) == 1 and len(steps) <= 1
                                     else saved) if saved else None
    budget = parse_size(args.memory_budget)
    config = parse_openvino_config(args.openvino_config)

    from tqdm import tqdm

    # The stages: converting, then the engines one by one. A bar on a terminal; with -v
    # each stage is also logged (and that is all a pipe or a file gets).
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
                           optimize=not args.no_optimize, reference=reference,
                           openvino_config=config, localize=args.localize,
                           memory_budget=budget)
    finally:
        bar.close()
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(report.format_table())
    _draw(args, report)
    return 0 if report.ok else 1


def _draw(args: argparse.Namespace, report: CheckReport) -> None:
    """``--png`` / ``--svg``: the picture of the layer ``--localize`` found."""
    if not (args.png or args.svg):
        return
    found = report.localization.finding if report.localization is not None else None
    if found is None:
        log.warning("warning: no layer was localized, so no picture is drawn")
        return
    from ..tools.inspection import highlight_dot, write_image

    assert report.localization is not None and report.localization.model is not None
    dot_text = highlight_dot(report.localization.model, found, report.localization)
    for fmt, path in (("png", args.png), ("svg", args.svg)):
        if path:
            write_image(dot_text, path, fmt)
            print(f"wrote {path}", file=sys.stderr if args.json else sys.stdout)
