"""What kind of file a path holds, so that a file given where another kind belongs gets a
message saying what it is and which command takes it, not a parser's complaint.

Kinds are told by the first bytes (XML starts with ``<``, an ``.npz`` is a zip archive,
an ``.npy`` starts ``\\x93NUMPY``) and, for ONNX (protobuf has no magic number), by the
``.onnx`` suffix of a file that is none of those.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .errors import IRToolError

PathLike = str | os.PathLike[str]

_WHAT = {
    "ir": "an OpenVINO IR .xml",
    "onnx": "an ONNX model",
    "npz": "a numpy .npz archive",
    "npy": "a numpy .npy array",
}
# What to do with a file of each kind given where a model was wanted.
_DO = {
    "onnx": "use `irtool convert {path}` to make IR of it, or `irtool check {path}` to compare "
            "backends on it",
    "ir": "use `irtool validate`, `irtool run`, `irtool check` or `irtool inspect` on it; "
          "`convert` takes the ONNX model it was made from",
    "npz": "it holds inputs or outputs: give the model first and the .npz after it",
    "npy": "a model goes here, and inputs are an .npz keyed by input name",
}
# ... and where inputs (an .npz) were wanted.
_DO_INPUTS = {
    "onnx": "give the model first and the inputs .npz after it",
    "ir": "give the model first and the inputs .npz after it",
    "npy": "inputs are an .npz keyed by input name: np.savez(path, **{{name: array}})",
}


_HEAD = 4096
"""How much of a file tells its kind and, for XML, its root element."""


def read_head(path: PathLike) -> bytes | None:
    """The first bytes of ``path`` that ``file_kind`` and ``xml_root`` look at (None:
    unreadable), for a caller asking both of one file."""
    try:
        with open(path, "rb") as f:
            return f.read(_HEAD)
    except OSError:
        return None


def file_kind(path: PathLike, head: bytes | None = b"") -> str | None:
    """``"ir"``, ``"onnx"``, ``"npz"``, ``"npy"``, or None (unknown, or unreadable).
    ``head``: the file's ``read_head``, when the caller has it (not given, or empty: read
    here; an empty file reads as empty again)."""
    if head == b"":
        try:
            with open(path, "rb") as f:
                head = f.read(64)
        except OSError:
            return None
    if head is None:
        return None
    head = head[:64]
    if head.startswith(b"\x93NUMPY"):
        return "npy"
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return "npz"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"<"):
        return "ir"
    if Path(path).suffix.lower() == ".onnx":
        return "onnx"
    return None


_PROLOG = re.compile(rb"\s*(?:<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>]*>)", re.DOTALL)
_TAG = re.compile(rb"\s*<([A-Za-z_][\w.:-]*)")


def xml_root(path: PathLike, head: bytes | None = b"") -> str | None:
    """The name of an XML file's root element (``net`` for IR), read from its first 4 KiB
    past the declaration, comments and a DOCTYPE; None when that does not show one.
    ``head``: the file's ``read_head``, when the caller has it."""
    if head == b"":
        head = read_head(path)
    if head is None:
        return None
    head = head.removeprefix(b"\xef\xbb\xbf")
    pos = 0
    while (m := _PROLOG.match(head, pos)) is not None and m.end() > pos:
        pos = m.end()
    tag = _TAG.match(head, pos)
    return tag.group(1).decode("ascii", "replace") if tag else None


def other_kind(path: PathLike, wanted: str) -> str | None:
    """What to tell a user who gave ``path`` where ``wanted`` ("ir", "onnx", "npz") belongs
    when it holds another known kind of file; None when it does not (or cannot be told)."""
    kind = file_kind(path)
    if kind is None or kind == wanted:
        return None
    hint = (_DO_INPUTS if wanted == "npz" else _DO)[kind]
    return f"this is {_WHAT[kind]}, not {_WHAT[wanted]}: " + hint.format(path=path)


def refuse_other_kind(path: PathLike, wanted: str,
                      error: type[IRToolError] = IRToolError) -> None:
    """Raise ``error`` naming ``path`` when it holds another known kind of file than
    ``wanted``; anything else is left to the reader of ``wanted``."""
    message = other_kind(path, wanted)
    if message is not None:
        raise error(message, file=str(path))
