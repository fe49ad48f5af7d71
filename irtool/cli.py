"""The ``irtool`` command: thin over the public API.

Exit codes: 0 success; 1 the input is bad or the check failed (one line on
stderr says where and why); 2 usage errors (argparse); 3 an internal error
(still one line, never a traceback, unless ``IRTOOL_DEBUG=1``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from . import api
from .errors import InternalError, IRToolError
from .files import check_writable, write_files, write_npz, write_npz_files


def _load_npz(path: str) -> dict:
    """The arrays of an ``.npz`` by key; a file numpy cannot read is an ``IRToolError``."""
    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError) as err:
        raise IRToolError(f"cannot read inputs: {err}", file=path) from None


def _onnx_opsets(path: str) -> str:
    import onnx

    proto = onnx.load(path, load_external_data=False)
    return ", ".join(f"{imp.domain or 'ai.onnx'}:{imp.version}" for imp in proto.opset_import)


def cmd_convert(args: argparse.Namespace) -> int:
    """``irtool convert MODEL.onnx [-o OUT.xml]``: writes OUT.xml + OUT.bin, or nothing.

    ``--opset`` also prints the ONNX opsets the model imports and the IR operation
    versions the conversion used (nested bodies included).
    """
    out = args.output or str(Path(args.model).with_suffix(".xml"))
    model = api.convert(args.model, slice_inputs=not args.no_slice_inputs)
    api.save(model, out, compress_to_fp16=args.compress_to_fp16)
    print(f"wrote {out} and {Path(out).with_suffix('.bin')}")
    if args.opset:
        from collections import Counter

        used = Counter(f"{layer.type}-{layer.version}" for _, layer in model.graph.walk()
                       if layer.type not in ("Parameter", "Result", "Const"))
        print(f"ONNX opsets: {_onnx_opsets(args.model)}")
        print("IR operations: " + ", ".join(f"{op} x{n}" for op, n in sorted(used.items())))
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    """``irtool run MODEL.xml [INPUTS.npz] [-o OUT.npz]``: outputs by tensor name.

    Several input files run as consecutive steps of one session (variables kept);
    ``-o OUTDIR`` then writes each step's outputs to ``OUTDIR/<input file name>``, all
    files or none.
    """
    if len(args.inputs) > 1:
        return _run_steps(args)
    if args.output:
        check_writable(args.output)
    inputs = _load_npz(args.inputs[0]) if args.inputs else {}
    outputs = api.run(args.model, inputs, backend=args.backend,
                      max_iterations=args.max_iterations, timeout=args.timeout)
    if args.output:
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
                            max_iterations=args.max_iterations, timeout=args.timeout)
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
    `` [warning]`` and do not fail the run. ``--json`` prints one JSON list of all
    diagnostics (``Diagnostic.to_dict``) instead, and nothing else on stdout.
    """
    problems = []
    for path in args.files:
        problems.extend(api.validate(path))
    errors = sum(1 for p in problems if p.severity == "error")
    warnings = len(problems) - errors
    if args.json:
        print(json.dumps([p.to_dict() for p in problems], indent=2))
    else:
        for p in problems:
            print(p.format() + ("" if p.severity == "error" else f" [{p.severity}]"))
        if not errors:
            print(f"{len(args.files)} file(s) valid"
                  + (f" ({warnings} warning(s))" if warnings else ""))
    if errors:
        print(f"irtool validate: {errors} error(s), {warnings} warning(s) in "
              f"{len(args.files)} file(s)", file=sys.stderr)
    return 1 if errors else 0


def cmd_check(args: argparse.Namespace) -> int:
    """``irtool check MODEL.onnx [INPUTS.npz]``: the table (or ``--json``) on stdout,
    progress on stderr; exit 0 only when every backend ran and agrees with onnxruntime."""
    from .crosscheck.inputs import parse_shape_option

    shapes = dict(parse_shape_option(text) for text in (args.shape or []))
    given = _load_npz(args.inputs) if args.inputs else None

    def progress(message: str) -> None:
        print(f"irtool check: {message}...", file=sys.stderr, flush=True)

    report = api.check(args.model, given, seed=args.seed, shapes=shapes, rtol=args.rtol,
                       atol=args.atol, keep_dir=args.keep, progress=progress,
                       timeout=args.timeout, max_iterations=args.max_iterations)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(report.format_table())
    return 0 if report.ok else 1


def cmd_inspect(args: argparse.Namespace) -> int:
    """``irtool inspect MODEL``: print the summary, then write ``--dot`` / ``--svg`` if asked."""
    from .inspection import load_for_inspect, summary, to_dot, write_svg

    model, note = load_for_inspect(args.model)
    print(summary(model, note))
    if args.dot or args.svg:
        dot_text = to_dot(model)
        if args.dot:
            write_files({args.dot: dot_text.encode("utf-8")})
            print(f"wrote {args.dot}")
        if args.svg:
            write_svg(dot_text, args.svg)
            print(f"wrote {args.svg}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="irtool",
        description="OpenVINO IR with control flow: convert, validate, run, check, inspect.")
    parser.add_argument("--version", action="version", version=f"irtool {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("convert", help="convert an ONNX model to IR v11 (.xml + .bin)")
    p.add_argument("model", help="ONNX model (.onnx)")
    p.add_argument("-o", "--output", help="output .xml (default: beside the model)")
    p.add_argument("--compress-to-fp16", action="store_true",
                   help="store f32 constants as f16 (decompressed at load)")
    p.add_argument("--no-slice-inputs", action="store_true",
                   help="keep Gather(X, iteration) in loop bodies instead of sliced port_map "
                        "inputs")
    p.add_argument("--opset", action="store_true", help="also print the ONNX opsets used")
    p.set_defaults(func=cmd_convert)

    p = sub.add_parser("run", help="run an IR with irtool's executor (or OpenVINO)")
    p.add_argument("model", help="IR .xml")
    p.add_argument("inputs", nargs="*", help=".npz of inputs keyed by tensor name; several "
                   "run as consecutive steps of one stateful session")
    p.add_argument("-o", "--output", help=".npz to write outputs to (with several inputs: a "
                   "folder, one <input file name> per step; default: print them)")
    p.add_argument("--backend", choices=("irtool", "openvino"), default="irtool")
    p.add_argument("--max-iterations", type=int, default=None, metavar="N",
                   # The default is irtool.runtime.DEFAULT_MAX_ITERATIONS (a test keeps them
                   # equal; importing the runtime here would slow every command's start).
                   help="stop any loop that would run more than N iterations, with an error "
                        "naming it (default 1,000,000, whatever the trip count)")
    p.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                   help="OpenVINO runs in a child process, stopped after this long "
                        "(default 300); a crash of it is one line too")
    _extension_option(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("validate", help="check IR files against the XSD and the spec's rules")
    p.add_argument("files", nargs="+", help="IR .xml files")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    _extension_option(p)
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("check", help="convert, run onnxruntime, irtool and OpenVINO, compare")
    p.add_argument("model", help="ONNX model (.onnx)")
    p.add_argument("inputs", nargs="?", help=".npz of inputs (default: random, see --seed)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--shape", action="append", default=[], metavar="NAME=D0,D1,...",
                   help="shape for an input with dynamic dimensions (repeatable)")
    p.add_argument("--rtol", type=float, default=None)
    p.add_argument("--atol", type=float, default=None)
    p.add_argument("--json", action="store_true")
    p.add_argument("--keep", metavar="DIR", help="keep the converted IR in DIR")
    p.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                   help="onnxruntime and OpenVINO each run in a child process, stopped after "
                        "this long (default 300); their column then says so")
    p.add_argument("--max-iterations", type=int, default=None, metavar="N",
                   help="irtool's runtime stops any loop beyond N iterations (default "
                        "1,000,000)")
    _extension_option(p)
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("inspect", help="summarise an IR or ONNX model, loops and all")
    p.add_argument("model", help="IR .xml or ONNX .onnx")
    p.add_argument("--dot", metavar="OUT.dot", help="write a graphviz drawing")
    p.add_argument("--svg", metavar="OUT.svg", help="render the drawing (needs graphviz `dot`)")
    _extension_option(p)
    p.set_defaults(func=cmd_inspect)
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
    args = parser.parse_args(argv)
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


def _internal_error(command: str, err: Exception) -> int:
    """Report a bug of irtool's (exit 3): one line, after the traceback under IRTOOL_DEBUG=1."""
    if os.environ.get("IRTOOL_DEBUG"):
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
