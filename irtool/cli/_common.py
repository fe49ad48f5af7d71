"""What every subcommand shares: -v / -q, --extension, reading an .npz of inputs."""

from __future__ import annotations

import argparse

from ..core.errors import IRToolError, UsageError
from ..core.sniff import refuse_other_kind


def verbosity_options() -> argparse.ArgumentParser:
    """-v / -q, accepted after every subcommand."""
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_mutually_exclusive_group()
    group.add_argument("-v", "--verbose", action="count", default=0,
                       help="say what is being done (-vv: debug detail) on stderr, through "
                            "Python's logging (default: warnings and errors only)")
    group.add_argument("-q", "--quiet", action="store_true",
                       help="no progress bars and no warnings; errors only")
    return common


def extension_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--extension", action="append", default=[], metavar="FILE.py",
                   help="load user-defined operations from this Python file first "
                        "(repeatable; see samples/extensions/)")


def input_shape_options(p: argparse.ArgumentParser, what: str, *, alias: bool = False) -> None:
    """``--input "x[1,?],y[2,3]"`` (ovc's syntax, the one spelling of shapes for convert,
    run and check; ``what`` says what the shapes do), and for ``check`` the older
    ``--shape x=2,3`` as an alias."""
    p.add_argument("--input", metavar="NAME[D0,D1,...],...", dest="input_shapes",
                   help=f"{what}, in ovc's syntax: \"x[1,?],y[2,3]\" (? keeps a dim dynamic)")
    if alias:
        p.add_argument("--shape", action="append", default=[], metavar="NAME=D0,D1,...",
                       help="the same as --input \"NAME[D0,D1,...]\", an older spelling kept "
                            "(repeatable)")


def input_shapes(args: argparse.Namespace) -> dict[str, tuple[int | None, ...]]:
    """The shapes ``--input`` (and ``--shape``) give, by input name; bad text is a
    ``UsageError`` (exit 2)."""
    shapes: dict[str, tuple[int | None, ...]] = {}
    try:
        if args.input_shapes:
            from ..frontends.onnx.input_shapes import parse_input_option

            shapes.update(parse_input_option(args.input_shapes))
        if getattr(args, "shape", None):
            from ..tools.inputs import parse_shape_option

            for text in args.shape:
                name, dims = parse_shape_option(text)
                if name in shapes:
                    raise ValueError(f"--shape {name}: its shape is given twice")
                shapes[name] = dims
    except (ValueError, IRToolError) as err:
        message = err.message if isinstance(err, IRToolError) else str(err)
        raise UsageError(message) from None
    return shapes


def ovc_bool(text: str) -> bool:
    """ovc's boolean option values: ``True`` / ``False`` (any case; 1/0, yes/no too)."""
    value = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False} \
        .get(text.strip().lower())
    if value is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not True or False")
    return value


def load_npz(path: str) -> dict:
    """The arrays of an ``.npz`` by key; a file numpy cannot read is an ``IRToolError``."""
    import numpy as np

    refuse_other_kind(path, "npz")
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError) as err:
        raise IRToolError(f"cannot read inputs: {err}", file=path) from None
