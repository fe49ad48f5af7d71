"""The ``irtool`` command: thin over the public API.

Exit codes: 0 success; 1 the input is bad or the check failed (one line on
stderr says where and why); 2 usage errors (argparse); 3 an internal error
(still one line, never a traceback, unless ``IRTOOL_DEBUG=1``).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from . import api
from .errors import InternalError, IRToolError
from .files import check_writable, write_files, write_npz, write_npz_files
from .sniff import file_kind, refuse_other_kind

log = logging.getLogger("irtool")


def _load_npz(path: str) -> dict:
    """The arrays of an ``.npz`` by key; a file numpy cannot read is an ``IRToolError``."""
    import numpy as np

    refuse_other_kind(path, "npz")
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError) as err:
        raise IRToolError(f"cannot read inputs: {err}", file=path) from None


def _onnx_opsets(path: str) -> str:
    import onnx

    proto = onnx.load(path, load_external_data=False)
    return ", ".join(f"{imp.domain or 'ai.onnx'}:{imp.version}" for imp in proto.opset_import)


def output_path(model: str, output: str | None) -> Path:
    """Where ``convert`` writes, as ovc decides: no ``-o``, the current folder; a folder
    (one that exists, or a path ending in ``/``), the model's name in it; a file name
    without ``.xml``, that name with ``.xml`` added."""
    stem = Path(model).stem + ".xml"
    if not output:
        return Path(stem)
    if output.endswith(("/", os.sep)) or Path(output).is_dir():
        return Path(output) / stem
    path = Path(output)
    return path if path.suffix.lower() == ".xml" else path.with_name(path.name + ".xml")


def cmd_convert(args: argparse.Namespace) -> int:
    """``irtool convert MODEL.onnx [-o OUT]``: writes OUT.xml + OUT.bin, or nothing.

    ``--opset`` also prints the ONNX opsets the model imports and the IR operation
    versions the conversion used (nested bodies included).
    """
    from .onnx.input_shapes import parse_input_option

    try:
        shapes = parse_input_option(args.input) if args.input else None
    except ValueError as err:
        raise IRToolError(str(err)) from None
    out = output_path(args.model, args.output)
    check_writable(out)
    if args.no_optimize and args.slice_inputs:
        raise IRToolError("--slice-inputs is an optimisation, which --no-optimize turns off")
    model = api.convert(args.model, slice_inputs=args.slice_inputs,
                        vectorize=not args.no_vectorize, input_shapes=shapes,
                        optimize=not args.no_optimize)
    api.save(model, out, compress_to_fp16=args.compress_to_fp16)
    print(f"wrote {out} and {out.with_suffix('.bin')}")
    from .backends.openvino import cpu_plugin_refusals

    for line in cpu_plugin_refusals(model):  # the IR is for OpenVINO: say what it refuses
        log.warning("warning: %s", line)
    if args.opset:
        from collections import Counter

        used = Counter(f"{layer.type}-{layer.version}" for _, layer in model.graph.walk()
                       if layer.type not in ("Parameter", "Result", "Const"))
        print(f"ONNX opsets: {_onnx_opsets(args.model)}")
        print("IR operations: " + ", ".join(f"{op} x{n}" for op, n in sorted(used.items())))
    return 0


def _output_format(path: str) -> str:
    """``npz`` or ``json`` by the suffix of ``-o``; anything else is refused before running."""
    suffix = Path(path).suffix.lower()
    if suffix in (".npz", ".json"):
        return suffix[1:]
    raise IRToolError("-o: outputs are written as .npz (arrays, keyed by tensor name) or "
                      f".json (dtype, shape and values), not {suffix or 'a file without suffix'}",
                      file=path)


def _outputs_json(outputs: dict) -> bytes:
    """Every output as ``{"dtype", "shape", "data"}`` (nested lists; strings as text)."""
    import numpy as np

    def entry(value: object) -> dict:
        arr = np.asarray(value)
        if arr.dtype.kind in "USO":
            data = arr.astype(str)
        elif arr.dtype.kind in "biuf" and type(arr.dtype).__module__.startswith("numpy"):
            data = arr
        else:  # ml_dtypes' bfloat16, float8s, int4...: their exact values as f32
            data = arr.astype(np.float32)
        return {"dtype": arr.dtype.name, "shape": list(arr.shape), "data": data.tolist()}

    return (json.dumps({name: entry(v) for name, v in outputs.items()}, indent=2)
            + "\n").encode("utf-8")


def cmd_run(args: argparse.Namespace) -> int:
    """``irtool run MODEL [INPUTS.npz...] [-o OUT.npz|OUT.json]``: outputs by tensor name.

    MODEL is an IR .xml, or an ONNX model converted on the fly (as OpenVINO's
    ``read_model`` takes either). Several input files run as consecutive steps of one
    session (variables kept); ``-o OUTDIR`` then writes each step's outputs to
    ``OUTDIR/<input file name>``, all files or none.
    """
    if len(args.inputs) > 1:
        return _run_steps(args)
    if args.output:
        fmt = _output_format(args.output)
        check_writable(args.output)
    inputs = _load_npz(args.inputs[0]) if args.inputs else {}
    outputs = api.run(args.model, inputs, backend=args.backend,
                      max_iterations=args.max_iterations, timeout=args.timeout,
                      optimize=not args.no_optimize)
    if args.output:
        if fmt == "json":
            write_files({args.output: _outputs_json(outputs)})
        else:
            write_npz(args.output, outputs)
        print(f"wrote {args.output} ({', '.join(outputs)})")
    else:
        _print_outputs(outputs)
    return 0


def _run_steps(args: argparse.Namespace) -> int:
    names = [Path(p).name for p in args.inputs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if args.output and twice:
        raise IRToolError(f"input files share the name {twice[0]!r}, so their outputs would "
                          f"share {Path(args.output) / twice[0]}", file=args.inputs[0])
    targets = [Path(args.output) / name for name in names] if args.output else []
    for target in targets:
        check_writable(target)
    steps = [_load_npz(path) for path in args.inputs]
    outputs = api.run_steps(args.model, steps, backend=args.backend,
                            max_iterations=args.max_iterations, timeout=args.timeout,
                            optimize=not args.no_optimize)
    if targets:
        write_npz_files(dict(zip(targets, outputs)))
        for target, out in zip(targets, outputs):
            print(f"wrote {target} ({', '.join(out)})")
    else:
        for path, out in zip(args.inputs, outputs):
            print(f"== step {path}")
            _print_outputs(out)
    return 0


def _print_outputs(outputs: dict) -> None:
    import numpy as np

    for name, value in outputs.items():
        arr = np.asarray(value)
        print(f"{name}: {arr.dtype}{list(arr.shape)}")
        print(np.array2string(arr, threshold=50))


def cmd_validate(args: argparse.Namespace) -> int:
    """``irtool validate FILE.xml...``: every problem, one a line; exit 1 on any error.

    Lines read ``file:line: CODE layer <id> "<name>": message``; warnings end in
    `` [warning]`` and do not fail the run. ``--json`` prints one JSON object instead,
    and nothing else on stdout: ``summary`` (files, valid, errors, warnings) and
    ``files``, one entry per file (``file``, ``valid``, ``errors``, ``warnings``,
    ``diagnostics`` as ``Diagnostic.to_dict``).
    """
    if args.openvino is not None:
        from .validation.compat import UnknownRelease, resolve_release

        try:
            resolve_release(args.openvino)
        except UnknownRelease as err:
            print(f"irtool validate: {err}", file=sys.stderr)
            return 2
    entries = []
    for path in _progress(args.files, "validate", unit="file", quiet=args.quiet):
        found = api.validate(path, openvino=args.openvino)
        errors = sum(1 for p in found if p.severity == "error")
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


def cmd_diff(args: argparse.Namespace) -> int:
    """``irtool diff A.xml B.xml`` / ``irtool diff --reference-dir DIR PATH...``: every
    difference in meaning, one a line (``--json``: one object); exit 0 when equal, 1 on a
    difference (a missing or extra file too), 2 for a usage error (one line)."""
    from .ir.diff import diff_files
    from .ir.diff_dirs import FileComparison, compare_with_references

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
        found = diff_files(*args.paths, rt_info=args.rt_info)
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


def _progress(items: Sequence, what: str, *, unit: str, quiet: bool):  # type: ignore[no-untyped-def]
    """``items``, with a tqdm bar on stderr when it is a terminal (and not ``-q``)."""
    from tqdm import tqdm

    return tqdm(items, desc=f"irtool {what}", unit=unit, leave=False,
                disable=quiet or not sys.stderr.isatty() or len(items) < 2)


def cmd_check(args: argparse.Namespace) -> int:
    """``irtool check MODEL.onnx [INPUTS.npz]``: the table (or ``--json``) on stdout,
    progress on stderr; exit 0 only when every backend ran and agrees with onnxruntime."""
    from .crosscheck.inputs import parse_shape_option

    shapes = dict(parse_shape_option(text) for text in (args.shape or []))
    given = _load_npz(args.inputs) if args.inputs else None

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


def cmd_inspect(args: argparse.Namespace) -> int:
    """``irtool inspect MODEL``: print the summary (or ``--json``), then write ``--dot`` /
    ``--svg`` / ``--png`` if asked."""
    from .inspection import load_for_inspect, summary, summary_dict, to_dot, write_image

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


def _common() -> argparse.ArgumentParser:
    """-v / -q, accepted after every subcommand."""
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_mutually_exclusive_group()
    group.add_argument("-v", "--verbose", action="count", default=0,
                       help="say what is being done (-vv: debug detail) on stderr, through "
                            "Python's logging (default: warnings and errors only)")
    group.add_argument("-q", "--quiet", action="store_true",
                       help="no progress bars and no warnings; errors only")
    return common


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="irtool",
        description="OpenVINO IR with control flow: convert, validate, run, diff, check, inspect.",
        epilog="Exit status: 0 success; 1 bad input or a failed check (one line on stderr "
               "says where); 2 usage errors; 3 an internal error (IRTOOL_DEBUG=1 or -vv shows the "
               "traceback).")
    parser.add_argument("--version", action="version", version=f"irtool {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    common = [_common()]

    p = sub.add_parser("convert", parents=common,
                       help="convert an ONNX model to IR v11 (.xml + .bin)",
                       description="Convert an ONNX model to OpenVINO IR v11 (.xml + .bin), "
                                   "placed as ovc places it.")
    p.add_argument("model", help="ONNX model (.onnx)")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="output .xml, or a folder to write MODEL.xml into; .xml is added "
                        "when missing (default: MODEL.xml in the current folder)")
    p.add_argument("--input", metavar="NAME[D0,D1,...],...",
                   help="fix dynamic dims of inputs, in ovc's syntax: \"x[1,?],y[2,3]\" "
                        "(? keeps a dim dynamic; default: the model's own shapes)")
    p.add_argument("--compress-to-fp16", action=argparse.BooleanOptionalAction, default=False,
                   help="store f32 constants as f16, decompressed at load. Off by default, "
                        "unlike ovc (which compresses unless told not to): irtool keeps the "
                        "weights exact so that check compares like with like")
    slicing = p.add_mutually_exclusive_group()
    slicing.add_argument("--slice-inputs", action="store_true",
                         help="turn Gather(X, iteration) in loop bodies into sliced port_map "
                              "inputs where provably the same (OpenVINO runs the Gather "
                              "form faster)")
    slicing.add_argument("--no-slice-inputs", dest="slice_inputs", action="store_false",
                         help="keep Gather(X, iteration) in loop bodies (the default)")
    p.add_argument("--no-vectorize", action="store_true",
                   help="keep loops whose iterations are independent instead of computing "
                        "their body once over all iterations (default: vectorised)")
    p.add_argument("--no-optimize", action="store_true",
                   help="no optimising pass at all: no vectorisation, no slicing, no "
                        "Identity layer dropped (kept: pruning dead layers, folding a loop "
                        "that runs no iteration, copies on crossed back edges, which "
                        "OpenVINO needs; default: optimised)")
    p.add_argument("--opset", action="store_true",
                   help="also print the ONNX opsets imported and the IR operations used")
    p.set_defaults(func=cmd_convert, subparser=p)

    p = sub.add_parser("run", parents=common,
                       help="run an IR (or an ONNX model) with irtool's executor or OpenVINO",
                       description="Run an IR with irtool's executor (or OpenVINO); an ONNX "
                                   "model is converted first, as OpenVINO's read_model does.")
    p.add_argument("model", help="IR .xml, or an ONNX .onnx (converted on the fly)")
    p.add_argument("inputs", nargs="*",
                   help=".npz of inputs keyed by tensor name; several run as consecutive "
                        "steps of one stateful session (default: none, for a model without "
                        "inputs)")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="write the outputs: .npz keyed by tensor name, or .json with dtype, "
                        "shape and values; with several inputs a folder, one <input file "
                        "name> per step (default: print them)")
    p.add_argument("--backend", choices=("irtool", "openvino"), default="irtool",
                   help="irtool's numpy executor, or OpenVINO's CPU runtime on the same IR "
                        "(default: irtool)")
    p.add_argument("--max-iterations", type=int, default=None, metavar="N",
                   # The default is irtool.runtime.DEFAULT_MAX_ITERATIONS (a test keeps them
                   # equal; importing the runtime here would slow every command's start).
                   help="stop any loop that would run more than N iterations, with an error "
                        "naming it (default 1,000,000, whatever the trip count)")
    p.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                   help="OpenVINO runs in a child process, stopped after this long "
                        "(default 300); a crash of it is one line too")
    p.add_argument("--no-optimize", action="store_true",
                   help="irtool's executor without its speed rewrites (no constant folding, "
                        "pool fusion, specialised or inlined kernels, in-place writes or "
                        "batched loops), and an .onnx converted without optimising passes "
                        "(default: optimised)")
    _extension_option(p)
    p.set_defaults(func=cmd_run, subparser=p)

    p = sub.add_parser("validate", parents=common,
                       help="check IR files against the XSD and the spec's rules",
                       description="Check IR files against the XSD and the spec's rules: "
                                   "every problem, one a line (file:line: CODE layer: "
                                   "message). Exit 1 when any file has an error.")
    p.add_argument("files", nargs="+", help="IR .xml files (each with its .bin beside it)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object instead: a summary (files, valid, errors, "
                        "warnings) and an entry per file with its diagnostics")
    p.add_argument("--openvino", metavar="VERSION",
                   help="also flag operations, opsets, attributes and element types that "
                        "this OpenVINO release (2023.0 ... 2026.4) does not know, offline "
                        "(OPENVINO_COMPAT; default: no release asked)")
    _extension_option(p)
    p.set_defaults(func=cmd_validate, subparser=p)

    p = sub.add_parser("diff", parents=common,
                       help="what differs in meaning between two IRs (or a folder of "
                            "reference IRs)",
                       description="Semantic diff of IR files: layers matched by name and "
                                   "structure, op types and versions, attributes, ports, "
                                   "edges, port maps, back edges, bodies, weights (by digest); "
                                   "ids, order, formatting and the .bin layout ignored. One "
                                   "line per difference (file:line in A and B: layer: what). "
                                   "Exit 0 when equal, 1 on a difference, 2 usage error.")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="A.xml B.xml; with --reference-dir, IR files or folders (every .xml "
                        "under them)")
    p.add_argument("--reference-dir", metavar="DIR",
                   help="compare each IR given with the file of the same name (path inside "
                        "a folder given) in DIR, and report references a folder lacks "
                        "(default: compare two files)")
    p.add_argument("--rt-info", action="store_true",
                   help="compare <rt_info> too (default: ignored)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object: a summary and per file its differences")
    p.set_defaults(func=cmd_diff, subparser=p)

    p = sub.add_parser("check", parents=common,
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
    _extension_option(p)
    p.set_defaults(func=cmd_check, subparser=p)

    p = sub.add_parser("inspect", parents=common,
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
    _extension_option(p)
    p.set_defaults(func=cmd_inspect, subparser=p)
    return parser


def _extension_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--extension", action="append", default=[], metavar="FILE.py",
                   help="load user-defined operations from this Python file first "
                        "(repeatable; see samples/extensions/)")


def _version() -> str:
    from . import __version__

    return __version__


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # argparse would show the top-level usage: show the subcommand's instead
        args.subparser.error(f"unrecognized arguments: {' '.join(extra)}")
    _configure_logging(args.verbose, args.quiet)
    if args.command in ("convert", "check") or str(getattr(args, "model", "")).endswith(".onnx"):
        from . import onnx_analysis

        onnx_analysis.prestart()  # its worker loads while this process does
    try:
        if getattr(args, "extension", None):
            from .extensions import load_extension

            for path in args.extension:
                load_extension(path)
        return int(args.func(args))
    except IRToolError as err:
        print(f"irtool {args.command}: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("irtool: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (``irtool validate ... | head``)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no flush error at exit
        return 128 + 13  # as if killed by SIGPIPE, like other command-line tools
    except Exception as err:  # irtool's own bug: one line for users, IRTOOL_DEBUG=1 shows more
        return _internal_error(args.command, err)


def _configure_logging(verbose: int, quiet: bool) -> None:
    """irtool's loggers print to stderr as ``irtool: message``; -v shows INFO, -vv DEBUG,
    -q only errors."""
    level = logging.ERROR if quiet else (logging.WARNING, logging.INFO)[min(verbose, 1)]
    if verbose >= 2:
        level = logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    root = logging.getLogger("irtool")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False


def _internal_error(command: str, err: Exception) -> int:
    """Report a bug of irtool's (exit 3): one line, after the traceback under IRTOOL_DEBUG=1."""
    if os.environ.get("IRTOOL_DEBUG") or log.isEnabledFor(logging.DEBUG):  # or -vv
        import traceback

        traceback.print_exception(type(err), err, err.__traceback__, file=sys.stderr)
        hint = ""
    else:
        hint = " (set IRTOOL_DEBUG=1 for the traceback)"
    if isinstance(err, InternalError):
        cause = err.__cause__
        what = str(err) + (f": {type(cause).__name__}: {cause}" if cause is not None else "")
    else:
        what = f"{type(err).__name__}: {err}"
    what = " ".join(what.split())  # one line, whatever the exception's text holds
    print(f"irtool {command}: internal error: {what}{hint}", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())
