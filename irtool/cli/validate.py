"""``irtool validate PATH...``: a deployment gate over IR files, folders and globs."""

from __future__ import annotations

import argparse
import sys

from ..core.errors import UsageError
from ._batch import add_options, early_workers, found_models, one_format, run_models
from ._common import extension_option


def add_parser(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    """The ``validate`` subcommand and its options."""
    p = sub.add_parser("validate", parents=parents,
                       help="check IR files against the XSD and the spec's rules",
                       description="Check IR files (folders searched recursively, quoted "
                                   "globs expanded, ** too) against the XSD and the spec's "
                                   "rules: every problem, one a line (file:line: error: "
                                   "CODE layer <id> \"<name>\": message), then a summary on "
                                   "stderr. Exit 0 when every file passes, 1 when one does "
                                   "not, 2 for a usage error.")
    p.add_argument("files", nargs="+", metavar="PATH",
                   help="IR .xml files (each with its .bin beside it), folders (every IR "
                        "under them) or globs ('zoo/**/*.xml')")
    p.add_argument("--json", action="store_true",
                   help="the same as --format json: one JSON object, a summary (files, "
                        "valid, errors, warnings, baselined) and an entry per file")
    p.add_argument("--strict", action="store_true",
                   help="warnings fail too (default: only errors do)")
    p.add_argument("--baseline", metavar="FILE",
                   help="findings recorded in FILE (by file, code, layer name and message; "
                        "not by line) do not fail (default: none)")
    p.add_argument("--write-baseline", metavar="FILE",
                   help="record every finding of this run in FILE as the accepted ones "
                        "(exit 0 unless a model could not be validated)")
    p.add_argument("--only-ir", action="store_true",
                   help="skip files named that are not IR (XML whose root is not <net>) "
                        "instead of reporting them, as folders and globs do (the "
                        "pre-commit hook uses it)")
    p.add_argument("--openvino", metavar="VERSION",
                   help="also flag operations, opsets, attributes and element types that "
                        "this OpenVINO release (2023.0 ... 2026.4) does not know, offline "
                        "(OPENVINO_COMPAT; default: no release asked)")
    add_options(p, timeout_default="none")
    extension_option(p)
    p.set_defaults(func=run, subparser=p)


def run(args: argparse.Namespace) -> int:
    """``irtool validate PATH...``: every problem, one a line (or the report ``--format``
    asks for); exit 0 when every file passes, 1 when one does not, 2 for a usage error.

    Lines read ``file:line: error: CODE layer <id> "<name>": message`` (``warning`` for
    findings that do not fail unless ``--strict``); the summary line (files, valid,
    errors, warnings, baselined) goes to stderr. ``--json`` is ``--format json``: one
    object, ``summary`` and ``files``, one entry per file (``file``, ``valid``, ``status``,
    ``errors``, ``warnings``, ``baselined``, ``seconds``, ``diagnostics`` as
    ``Diagnostic.to_dict`` plus ``baselined``).
    """
    return _validate(args)


def _validate(args: argparse.Namespace) -> int:
    if args.json:
        args.format = one_format(args.format, "json")
    if args.openvino is not None:
        from ..validation.compat import UnknownRelease, resolve_release

        try:
            resolve_release(args.openvino)
        except UnknownRelease as err:
            raise UsageError(str(err)) from None
    if args.baseline and args.write_baseline:
        raise UsageError("--baseline and --write-baseline: give one (a new baseline "
                         "records every finding)")
    with early_workers(args) as pool:  # they load while the folders are searched
        found = found_models(args.files, "ir", only_models=args.only_ir)
        if not found.found:  # --only-ir, and nothing named is IR
            if not args.quiet:
                print("irtool validate: no IR file to validate", file=sys.stderr)
            return 0
        options = {"openvino": args.openvino, "extensions": list(args.extension)}
        return run_models(args, "validate", found, options, strict=args.strict,
                          baseline=args.baseline, write_baseline=args.write_baseline,
                          pool=pool)
