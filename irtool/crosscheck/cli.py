"""``irtool check MODEL.onnx [INPUTS.npz]``: the command-line face of ``check``.

Prints the table (or ``--json``) on stdout and progress on stderr; exit 0 only
when every backend ran and agrees with onnxruntime, 1 otherwise. Errors (a
model that does not convert, inputs that do not fit) are ``IRToolError``s,
which ``irtool.cli.main`` prints as one line with exit status 1.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from ..errors import IRToolError
from .inputs import parse_shape_option


def _load_npz(path: str) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError) as err:
        raise IRToolError(f"cannot read inputs: {err}", file=path) from None


def run_check(args: argparse.Namespace) -> int:
    """Run ``irtool check`` for parsed ``args``; returns the exit status."""
    from .check import check

    shapes = dict(parse_shape_option(text) for text in (args.shape or []))
    given = _load_npz(args.inputs) if args.inputs else None

    def progress(message: str) -> None:
        print(f"irtool check: {message}...", file=sys.stderr, flush=True)

    report = check(args.model, given, seed=args.seed, shapes=shapes, rtol=args.rtol,
                   atol=args.atol, keep_dir=args.keep, progress=progress)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(report.format_table())
    return 0 if report.ok else 1
