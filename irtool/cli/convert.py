"""``irtool convert MODEL.onnx [-o OUT] [--output NAMES] [--input SHAPES]``."""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path

from ..core.errors import UsageError
from ..core.files import check_writable
from ._batch import add_options, many
from ._common import input_shape_options, input_shapes, ovc_bool

log = logging.getLogger("irtool")


def add_parser(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    """The ``convert`` subcommand and its options."""
    p = sub.add_parser("convert", parents=parents,
                       help="convert an ONNX model to IR v11 (.xml + .bin)",
                       description="Convert an ONNX model to OpenVINO IR v11 (.xml + .bin), "
                                   "placed as ovc places it.")
    p.add_argument("model", help="ONNX model (.onnx); a folder or a quoted glob converts every "
                                 ".onnx in it into the folder -o names, keeping its folders")
    p.add_argument("-o", "--output_model", "--output-model", metavar="OUT", dest="output_model",
                   help="output .xml, or a folder to write MODEL.xml into; .xml is added "
                        "when missing (default: MODEL.xml in the current folder)")
    p.add_argument("--output", metavar="NAME,...", dest="cut",
                   help="tensors to cut the model at, comma separated: they become its "
                        "outputs, in that order, and only what they need is converted (ovc's "
                        "option, which takes model outputs; any tensor of the main graph here; "
                        "default: the model's outputs)")
    input_shape_options(p, "fix dynamic dims of inputs in the IR (default: the model's own "
                           "shapes)")
    p.add_argument("--compress-to-fp16", action=argparse.BooleanOptionalAction, default=False,
                   help="store f32 constants as f16, decompressed at load. Off by default, "
                        "unlike ovc (which compresses unless told not to): irtool keeps the "
                        "weights exact so that check compares like with like")
    p.add_argument("--compress_to_fp16", nargs="?", const=True, type=ovc_bool,
                   metavar="True|False", dest="compress_to_fp16",
                   help="ovc's spelling of the same (--compress_to_fp16=False, =True; alone: "
                        "True; default: False)")
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
                        "that runs no iteration, copies on back edges, which "
                        "OpenVINO needs; default: optimised)")
    p.add_argument("--opset", action="store_true",
                   help="also print the ONNX opsets imported and the IR operations used")
    add_options(p, timeout_default="none")
    p.set_defaults(func=run, subparser=p)


def run(args: argparse.Namespace) -> int:
    """``irtool convert MODEL.onnx [-o OUT]``: writes OUT.xml + OUT.bin, or nothing.

    ``--opset`` also prints the ONNX opsets the model imports and the IR operation
    versions the conversion used (nested bodies included).
    """
    from .. import api  # the API (numpy, the IR) loads with the command that uses it

    shapes = input_shapes(args) or None
    cut = None
    if args.cut is not None:
        from ..frontends.onnx.cut import parse_output_option

        try:
            cut = parse_output_option(args.cut)
        except ValueError as err:
            raise UsageError(str(err)) from None
    if args.output_model is None and args.cut is not None \
            and args.cut.lower().endswith((".xml", "/")):  # irtool's --output before ovc's
        raise UsageError(f"--output {args.cut}: --output names the tensors to cut the model "
                         f"at, as in ovc; the file to write is -o / --output_model")
    if many(args.model):
        from ._batch import convert_models

        if cut is not None:
            raise UsageError("--output cuts one model at its tensors: give one model")
        return convert_models(args, shapes)
    out = output_path(args.model, args.output_model)
    check_writable(out)
    if args.no_optimize and args.slice_inputs:
        raise UsageError("--slice-inputs is an optimisation, which --no-optimize turns off")
    model = api.convert(args.model, slice_inputs=args.slice_inputs,
                        vectorize=not args.no_vectorize, input_shapes=shapes,
                        optimize=not args.no_optimize, outputs=cut)
    api.save(model, out, compress_to_fp16=args.compress_to_fp16)
    print(f"wrote {out} and {out.with_suffix('.bin')}")
    from ..engines.openvino import cpu_plugin_refusals

    for line in cpu_plugin_refusals(model):  # the IR is for OpenVINO: say what it refuses
        log.warning("warning: %s", line)
    if args.opset:
        from collections import Counter

        used = Counter(f"{layer.type}-{layer.version}" for _, layer in model.graph.walk()
                       if layer.type not in ("Parameter", "Result", "Const"))
        print(f"ONNX opsets: {_onnx_opsets(args.model)}")
        print("IR operations: " + ", ".join(f"{op} x{n}" for op, n in sorted(used.items())))
    return 0


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


def _onnx_opsets(path: str) -> str:
    import onnx

    proto = onnx.load(path, load_external_data=False)
    return ", ".join(f"{imp.domain or 'ai.onnx'}:{imp.version}" for imp in proto.opset_import)
