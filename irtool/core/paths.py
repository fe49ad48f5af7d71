"""The model files a command is given: files, folders searched recursively, and globs.

``irtool validate irs/ 'zoo/**/*.xml' m.xml`` names models three ways; ``expand`` turns
them into one list of ``Found`` files, each with the name it has inside the folder (or
below the glob's fixed part) it was found in, which is where a command writing one file
per model (``convert DIR/ -o OUT/``) puts its output. A file named on the command line
is kept whatever it holds (the command then says what is wrong with it); in a folder or
a glob's matches, only the files of the wanted kind count (``.xml`` whose root element
is ``<net>``: IR; ``.onnx``), and the others are listed in ``skipped`` with the reason,
for ``-v``. Hidden folders (``.git``, ``.venv``) are not entered. A folder or a pattern
that yields no model is a ``NoModels`` error: a gate that checks nothing must not pass.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from .sniff import file_kind, read_head, xml_root

SUFFIXES = {"ir": ".xml", "onnx": ".onnx"}
"""The suffix of each kind of model a folder or glob is searched for."""

_MAGIC = frozenset("*?[")


class NoModels(ValueError):
    """A folder or glob that holds no model of the kind wanted (a usage error)."""


@dataclass(frozen=True)
class Found:
    """A model file: ``path`` as the command will open it, ``name`` its path inside the
    folder (or below the glob's fixed part) it was found in, ``/``-separated; the file's
    own name when it was named on the command line."""

    path: str
    name: str


@dataclass
class Expanded:
    """The models found, in the order given (each once), and what was passed over."""

    found: list[Found] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why)

    @property
    def paths(self) -> list[str]:
        return [f.path for f in self.found]


def is_model(path: str, kind: str) -> str | None:
    """None when ``path`` is a model of ``kind`` (``"ir"``, ``"onnx"``); else why not."""
    if not path.lower().endswith(SUFFIXES[kind]):
        return f"not a {SUFFIXES[kind]} file"
    head = read_head(path)  # one read for both questions
    found = file_kind(path, head)
    if kind == "ir":
        if found != "ir":
            return "not XML" if found is None else f"holds {found}, not IR"
        root = xml_root(path, head)
        return None if root == "net" else f"XML, but not IR (its root element is <{root}>)"
    return None if found == kind else f"holds {found or 'something else'}, not {kind}"


def expand(args: Sequence[str], kind: str, *, only_models: bool = False) -> Expanded:
    """Every model ``args`` name (see the module docstring); ``NoModels`` for a folder or a
    glob without one. ``only_models``: a file named that is not a model of ``kind`` is
    skipped too (a pre-commit hook is given every ``.xml`` of a commit)."""
    out = Expanded()
    seen: set[str] = set()

    def add(path: str, name: str) -> None:
        key = os.path.normcase(os.path.realpath(path))
        if key not in seen:
            seen.add(key)
            out.found.append(Found(path, name))

    for arg in args:
        if os.path.isdir(arg):
            candidates: Iterable[tuple[str, str]] = _walk(arg)
        elif os.path.exists(arg) or not _MAGIC & set(arg):
            why = is_model(arg, kind) if only_models and os.path.isfile(arg) else None
            if why is None:
                add(arg, os.path.basename(arg))  # named: kept, whatever it is
            else:
                out.skipped.append((arg, why))
            continue
        else:
            candidates = _matches(arg)
        models = 0
        for path, name in candidates:
            why = is_model(path, kind)
            if why is None:
                models += 1
                add(path, name)
            elif path.lower().endswith(SUFFIXES[kind]):  # a .bin beside an .xml is no news
                out.skipped.append((path, why))
        if not models:
            where = "in this folder" if os.path.isdir(arg) else "matches this pattern"
            raise NoModels(f"{arg}: no {_WHAT[kind]} {where}")
    return out


_WHAT = {"ir": "IR file (.xml)", "onnx": "ONNX model (.onnx)"}


def models_under(folder: str, kind: str) -> list[Found]:
    """Every model of ``kind`` under ``folder`` (recursively, hidden folders left out), by
    its name inside it; none is no error here (``diff --reference-dir`` pairs folders)."""
    return [Found(path, name) for path, name in _walk(folder) if is_model(path, kind) is None]


def _walk(folder: str) -> Iterator[tuple[str, str]]:
    """Every file under ``folder`` (hidden folders left out), sorted, with its name inside."""
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        inside = os.path.relpath(root, folder).replace(os.sep, "/")  # once per folder
        prefix = "" if inside == "." else inside + "/"
        for name in sorted(files):
            yield os.path.join(root, name), prefix + name


def _matches(pattern: str) -> Iterator[tuple[str, str]]:
    """The files ``pattern`` matches (``**`` spans folders; a folder matched is searched),
    sorted, each named below the pattern's fixed leading folders."""
    parts = pattern.replace(os.sep, "/").split("/")
    fixed = []
    for part in parts[:-1]:
        if _MAGIC & set(part):
            break
        fixed.append(part)
    base = "/".join(fixed) or "."
    for path in sorted(glob.glob(pattern, recursive=True)):
        if os.path.isdir(path):
            for inner, _ in _walk(path):
                yield inner, os.path.relpath(inner, base).replace(os.sep, "/")
        elif os.path.isfile(path):
            yield path, os.path.relpath(path, base).replace(os.sep, "/")
