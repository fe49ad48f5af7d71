"""``irtool validate FILE.xml ...``."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import Any

from .. import api
from ..core.diagnostics import errors_only
from ._common import extension_option, progress_bar

log = logging.getLogger("irtool")


def add_parser(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    """The ``validate`` subcommand and its options."""
    p = sub.add_parser("validate", parents=parents,
                       help="check IR files against the XSD and the spec's rules",
                       description="Check IR files against the XSD and the spec's rules: "
                                   "every problem, one a line (file:line: CODE layer: "
                                   "message). Exit 1 when any file has an error.")
    p.add_argument("files", nargs="+", help="IR .xml files (each with its .bin beside it)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object instead: a summary (files, valid, errors, "
                        "warnings) and an entry per file with its diagnostics")
    extension_option(p)
    p.set_defaults(func=run, subparser=p)


def run(args: argparse.Namespace) -> int:
    """``irtool validate FILE.xml...``: every problem, one a line; exit 1 on any error.

    Lines read ``file:line: CODE layer <id> "<name>": message``; warnings end in
    `` [warning]`` and do not fail the run. ``--json`` prints one JSON object instead,
    and nothing else on stdout: ``summary`` (files, valid, errors, warnings) and
    ``files``, one entry per file (``file``, ``valid``, ``errors``, ``warnings``,
    ``diagnostics`` as ``Diagnostic.to_dict``).
    """
    entries: list[dict[str, Any]] = []
    for path in progress_bar(args.files, "validate", unit="file", quiet=args.quiet):
        found = api.validate(path)
        errors = len(errors_only(found))
        entries.append({"file": str(path), "valid": errors == 0, "errors": errors,
                        "warnings": len(found) - errors, "diagnostics": found})
        log.info("%s: %d error(s), %d warning(s)", path, errors, len(found) - errors)
    errors = sum(e["errors"] for e in entries)
    warnings = sum(e["warnings"] for e in entries)
    if args.json:
        summary = {"files": len(entries), "valid": sum(e["valid"] for e in entries),
                   "errors": errors, "warnings": warnings}
        for entry in entries:
            entry["diagnostics"] = [p.to_dict() for p in entry["diagnostics"]]
        print(json.dumps({"summary": summary, "files": entries}, indent=2))
    else:
        for entry in entries:
            for p in entry["diagnostics"]:
                print(p.format() + ("" if p.severity == "error" else f" [{p.severity}]"))
        if not errors:
            print(f"{len(args.files)} file(s) valid"
                  + (f" ({warnings} warning(s))" if warnings else ""))
    if errors:
        print(f"irtool validate: {errors} error(s), {warnings} warning(s) in "
              f"{len(args.files)} file(s)", file=sys.stderr)
    return 1 if errors else 0
