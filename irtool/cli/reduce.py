"""``irtool reduce MODEL.xml [INPUTS.npz] --until CONDITION [-o OUT_DIR]``."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from ._common import extension_option, load_npz

log = logging.getLogger("irtool")

# api.REDUCE_TIMEOUT_S, written out: the API (numpy, the IR) loads when the command runs
REDUCE_TIMEOUT_S = 60.0


def add_parser(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    """The ``reduce`` subcommand and its options."""
    p = sub.add_parser(
        "reduce", parents=parents,
        help="shrink an IR to a small one that still shows a problem, for a bug report",
        description="Shrink an IR to a small one on which a condition still holds (OpenVINO "
                    "crashes, irtool and OpenVINO disagree, validate reports a code, a command "
                    "fails): cut layers (their values fed in as inputs), go into loops and "
                    "branches, lower trip counts, shrink and simplify inputs and constants. "
                    "Every candidate must pass validate first. Writes reduced.xml/.bin, "
                    "inputs.npz and a README.md to paste into a bug report.")
    p.add_argument("model", help="IR .xml (its .bin beside it)")
    p.add_argument("inputs", nargs="?",
                   help=".npz of every input of the model, keyed by name (none for a model "
                        "without inputs)")
    p.add_argument("--until", required=True, metavar="CONDITION",
                   help="what must stay true: openvino-crash (OpenVINO dies of the signal it "
                        "dies of on MODEL, or of one or an error matching --match), disagree "
                        "(irtool and OpenVINO differ beyond --rtol/--atol on some output), "
                        "validate:CODE (validate reports CODE), command:'CMD {xml}' (the shell "
                        "command exits non-zero; {xml}, {bin}, {inputs} are the candidate's "
                        "files)")
    p.add_argument("-o", "--output", metavar="OUT_DIR",
                   help="folder for reduced.xml, reduced.bin, inputs.npz and README.md "
                        "(default: MODEL-reduced/ in the current folder)")
    p.add_argument("--match", metavar="REGEX",
                   help="openvino-crash: a signal or an error whose text this matches counts "
                        "(default: the signal OpenVINO dies of on MODEL); command: its output "
                        "must match too")
    p.add_argument("--rtol", type=float, default=None,
                   help="disagree: relative tolerance (default per dtype, as irtool check)")
    p.add_argument("--atol", type=float, default=None,
                   help="disagree: absolute tolerance (default per dtype, as irtool check)")
    p.add_argument("--timeout", type=float, default=REDUCE_TIMEOUT_S, metavar="SECONDS",
                   help="OpenVINO (or the command) runs in a child process per candidate, "
                        f"stopped after this long (default {REDUCE_TIMEOUT_S:g}); a "
                        "candidate that takes longer does not show the condition")
    p.add_argument("--max-iterations", type=int, default=None, metavar="N",
                   help="irtool's executor stops any loop beyond N iterations (default "
                        "1,000,000)")
    p.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                   help="stop searching after this long and write the smallest IR found so "
                        "far (default: no limit)")
    extension_option(p)
    p.set_defaults(func=run, subparser=p)


def run(args: argparse.Namespace) -> int:
    """``irtool reduce``: progress on stderr (a bar on a terminal, each IR kept with -v), the
    summary line on stdout; exit 0 when the reduced IR is written."""
    from .. import api
    from ..tools.reduce import ConditionError, parse_condition

    try:
        condition = parse_condition(args.until, match=args.match, rtol=args.rtol,
                                    atol=args.atol, timeout=args.timeout,
                                    max_iterations=args.max_iterations)
    except ConditionError as err:
        args.subparser.error(str(err))
    given = load_npz(args.inputs) if args.inputs else None
    out = args.output or f"{Path(args.model).stem}-reduced"

    from tqdm import tqdm

    bar = tqdm(total=None, desc="irtool reduce", leave=False, bar_format="{desc}",
               disable=args.quiet or not sys.stderr.isatty())

    def progress(candidate: Any, reducer: Any) -> None:
        from ..tools.reduce.edits import layer_counts

        top, total = layer_counts(candidate.model)
        bar.set_description(f"irtool reduce: {top} layers ({total} with bodies), "
                            f"{reducer.tried} candidates tried")

    try:
        result = api.reduce(args.model, given, condition, out, timeout=args.timeout,
                            max_iterations=args.max_iterations, time_limit=args.time_limit,
                            progress=progress)
    finally:
        bar.close()
    print(result.summary())
    return 0
