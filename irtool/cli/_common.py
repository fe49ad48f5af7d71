"""What every subcommand shares: -v / -q, --extension, reading an .npz of inputs, the
progress bar."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..core.errors import IRToolError
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


def load_npz(path: str) -> dict:
    """The arrays of an ``.npz`` by key; a file numpy cannot read is an ``IRToolError``."""
    import numpy as np

    refuse_other_kind(path, "npz")
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError) as err:
        raise IRToolError(f"cannot read inputs: {err}", file=path) from None


def progress_bar(items: Sequence, what: str, *, unit: str, quiet: bool):
    """``items``, with a tqdm bar on stderr when it is a terminal (and not ``-q``)."""
    from tqdm import tqdm

    return tqdm(items, desc=f"irtool {what}", unit=unit, leave=False,
                disable=quiet or not sys.stderr.isatty() or len(items) < 2)
