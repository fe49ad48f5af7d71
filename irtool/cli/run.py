"""``irtool run MODEL [INPUTS.npz ...] [-o OUT.npz|OUT.json]``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .. import api
from ..core.errors import IRToolError
from ..core.files import check_writable, write_files, write_npz, write_npz_files
from ._common import extension_option, load_npz


def add_parser(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    """The ``run`` subcommand and its options."""
    p = sub.add_parser("run", parents=parents,
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
    extension_option(p)
    p.set_defaults(func=run, subparser=p)


def run(args: argparse.Namespace) -> int:
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
    inputs = load_npz(args.inputs[0]) if args.inputs else {}
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
    steps = [load_npz(path) for path in args.inputs]
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
