"""Does a change to the reader or the validator keep every finding? ``irtool validate`` of
the same hostile IRs by this tree and by a git revision, reports compared.

Speeding up validation (issue 27: validate/load at 10^5 layers) must not change what it
finds, and the test suite pins chosen cases only. This script makes ``--count`` mutated IRs
(``tests/support/fuzz_ir.py``'s mutations: attributes, ports, edges, element types, dims,
port maps, back edges, cut XML, foreign .bin) from the OpenVINO-written corpus
(``irtool.tools.corpus``, when built) and from the seeds irtool writes, validates them with
``--format json`` under both trees, and compares the reports with the timings taken out.

    python bench/validate_same.py [--against REV] [--count N] [--seed S] [--keep DIR]

``--against`` (default ``HEAD``) is exported with ``git archive`` into a temporary folder and
put first on ``PYTHONPATH`` for its run. Prints the files, errors and warnings found, and
either ``identical`` (exit 0) or the first files whose findings differ (exit 1).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the IR fuzzer: tests/support/fuzz_ir.py

VALIDATE = ("import sys; from irtool.cli import main; "
            "sys.argv = ['irtool', 'validate', sys.argv[1], '--format', 'json', '--jobs', '1']; "
            "sys.exit(main())")


def make_cases(folder: Path, count: int, seed: int) -> int:
    """``count`` mutated IRs in ``folder``, from the corpus and irtool's own seeds."""
    from support.fuzz_ir import irtool_seeds, mutate
    from support.fuzzing import RandomChooser

    seeds = [(xml.read_bytes(), _bin(xml)) for xml in _corpus_files()]
    seeds += [(xml, weights) for _, xml, weights in irtool_seeds()]
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(count):
        chooser = RandomChooser(seed * 1_000_003 + k)
        xml, weights = seeds[chooser.below(len(seeds))]
        xml, weights = mutate(xml, weights, chooser)
        (folder / f"case{k:05d}.xml").write_bytes(xml)
        (folder / f"case{k:05d}.bin").write_bytes(weights)
    return len(seeds)


def _corpus_files() -> list[Path]:
    from irtool.tools.corpus import corpus_dir

    root = corpus_dir()
    return sorted(root.rglob("*.xml")) if root.is_dir() else []


def _bin(xml: Path) -> bytes:
    weights = xml.with_suffix(".bin")
    return weights.read_bytes() if weights.exists() else b""


def export(rev: str, into: Path) -> None:
    """The tree of ``rev`` in ``into`` (``git archive``)."""
    data = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "irtool", "schemas"],
                          capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="data")


def findings(folder: Path, pythonpath: Path) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    # Run from the cases' folder: ``python -c`` puts the working directory first on the
    # path, and a checkout's would shadow the tree asked for.
    proc = subprocess.run([sys.executable, "-c", VALIDATE, str(folder)], env=env,
                          capture_output=True, text=True, cwd=folder)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"validate under {pythonpath} failed ({proc.returncode}): "
                         f"{proc.stderr[-2000:]}")
    return _untimed(json.loads(proc.stdout))


def _untimed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k != "seconds"}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def _per_file(report: dict[str, Any]) -> dict[str, str]:
    return {str(f["file"]): json.dumps(f, sort_keys=True) for f in report["files"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default="HEAD", help="git revision (default HEAD)")
    parser.add_argument("--count", type=int, default=2000, help="mutated IRs (default 2000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="make the IRs here and keep them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="irtool-validate-same-") as tmp:
        cases = args.keep or Path(tmp) / "cases"
        seeds = make_cases(cases, args.count, args.seed)
        other = Path(tmp) / "tree"
        export(args.against, other)
        mine, theirs = findings(cases, ROOT), findings(cases, other)
    summary = mine.get("summary", {})
    print(f"{args.count} mutated IRs from {seeds} seeds: {summary.get('valid')} valid, "
          f"{summary.get('errors')} errors, {summary.get('warnings')} warnings")
    if mine == theirs:
        print(f"identical findings: this tree and {args.against}")
        return 0
    a, b = _per_file(mine), _per_file(theirs)
    differing = [f for f in sorted(set(a) | set(b)) if a.get(f) != b.get(f)]
    print(f"findings differ from {args.against} in {len(differing)} file(s), e.g.:")
    for name in differing[:5]:
        print(f"  {name}\n    here:  {a.get(name, '-')[:300]}\n    there: {b.get(name, '-')[:300]}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
