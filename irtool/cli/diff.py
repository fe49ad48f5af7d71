"""``irtool diff A.xml B.xml`` and ``irtool diff --reference-dir DIR PATH...``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..core.sniff import file_kind


def add_parser(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    """The ``diff`` subcommand and its options."""
    p = sub.add_parser("diff", parents=parents,
                       help="what differs in meaning between two IRs (or a folder of "
                            "reference IRs)",
                       description="Semantic diff of IR files: layers matched by name and "
                                   "structure, op types and versions, attributes, ports, "
                                   "edges, port maps, back edges, bodies, weights (by digest); "
                                   "ids, order, formatting and the .bin layout ignored. One "
                                   "line per difference (file:line in A and B: layer: what). "
                                   "Exit 0 when equal, 1 on a difference, 2 usage error.")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="A.xml B.xml; with --reference-dir, IR files or folders (every IR file "
                        "under them)")
    p.add_argument("--reference-dir", metavar="DIR",
                   help="compare each IR given with the file of the same name (path inside "
                        "a folder given) in DIR, and report references a folder lacks "
                        "(default: compare two files)")
    p.add_argument("--rt-info", action="store_true",
                   help="compare <rt_info> too (default: ignored)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object: a summary and per file its differences")
    p.set_defaults(func=run, subparser=p)


def run(args: argparse.Namespace) -> int:
    """Every difference in meaning, one a line (``--json``: one object); exit 0 when equal,
    1 on a difference (a missing or extra file too), 2 for a usage error (one line)."""
    from .. import api
    from ..tools.diff_dirs import FileComparison, compare_with_references

    def usage(message: str) -> int:
        print(f"irtool diff: {message}", file=sys.stderr)
        return 2

    for path in args.paths:
        if not Path(path).exists():
            return usage(f"{path} does not exist")
        kind = file_kind(path) if Path(path).is_file() else None
        if kind not in (None, "ir"):
            return usage(f"{path} is not IR but {'an ONNX model' if kind == 'onnx' else kind}")
    if args.reference_dir is None:
        if len(args.paths) != 2 or not all(Path(p).is_file() for p in args.paths):
            return usage("give two IR files (A.xml B.xml), or --reference-dir DIR and the "
                         "IR files or folders to compare with it")
        found = api.diff(*args.paths, rt_info=args.rt_info)
        results = [FileComparison(Path(args.paths[1]).name, args.paths[1], args.paths[0],
                                  "different" if found else "equal", found)]
    else:
        if not Path(args.reference_dir).is_dir():
            return usage(f"reference folder {args.reference_dir} does not exist")
        results = compare_with_references(args.paths, args.reference_dir,
                                          rt_info=args.rt_info)
    counts = {s: sum(r.status == s for r in results)
              for s in ("equal", "different", "missing", "extra")}
    if args.json:
        print(json.dumps({"summary": {"files": len(results), **counts},
                          "files": [r.to_dict() for r in results]}, indent=2))
    else:
        for result in results:
            for d in result.differences:
                print(d.format())
            if args.reference_dir is not None:
                print(result.summary())
        if args.reference_dir is None:
            print(f"{len(found)} difference(s)" if found else "no differences")
        else:
            print(f"{len(results)} file(s): " + ", ".join(f"{n} {s}" for s, n in counts.items()))
    return 0 if counts["equal"] == len(results) else 1
