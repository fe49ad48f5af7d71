"""The ``irtool`` command: thin over the public API, one module per subcommand
(``convert``, ``run``, ``validate``, ``check``, ``inspect``), each with its
``add_parser`` and ``run``.

Exit codes: 0 success; 1 the input is bad or the check failed (one line on
stderr says where and why); 2 usage errors (argparse); 3 an internal error
(still one line, never a traceback, unless ``IRTOOL_DEBUG=1``).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from ..core.errors import InternalError, IRToolError
from . import check, convert, inspect, run, validate
from ._common import verbosity_options

log = logging.getLogger("irtool")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="irtool",
        description="OpenVINO IR with control flow: convert, validate, run, check, inspect.",
        epilog="Exit status: 0 success; 1 bad input or a failed check (one line on stderr "
               "says where); 2 usage errors; 3 an internal error (IRTOOL_DEBUG=1 or -vv shows the "
               "traceback).")
    parser.add_argument("--version", action="version", version=f"irtool {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    parents = [verbosity_options()]

    for command in (convert, run, validate, check, inspect):
        command.add_parser(sub, parents)
    return parser


def _version() -> str:
    from .. import __version__

    return __version__


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # argparse would show the top-level usage: show the subcommand's instead
        args.subparser.error(f"unrecognized arguments: {' '.join(extra)}")
    _configure_logging(args.verbose, args.quiet)
    try:
        if getattr(args, "extension", None):
            from ..core.extensions import load_extension

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
