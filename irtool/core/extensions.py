"""Loading user-defined operations from a Python file (``--extension FILE.py``).

An extension is an ordinary Python file that registers ``irtool.opset.Op`` subclasses with
``irtool.opset.register``, exactly as irtool's own operations are registered (see
``samples/extensions/`` and the README). Loading it once makes its ops known to every
later ``validate``, ``run``, ``check`` and ``inspect`` of the process. A file that cannot be
loaded (missing, a syntax error, an exception while it runs, an op registered twice) is an
``IRToolError`` of one line naming the file and, where Python knows it, the line.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import traceback
from pathlib import Path
from types import ModuleType

from .errors import IRToolError

_LOADED: dict[Path, ModuleType] = {}


def load_extension(path: str | os.PathLike[str]) -> ModuleType:
    """Run the extension file ``path`` once per process (a second call returns the module
    loaded the first time) and return it as a module."""
    file = Path(path)
    try:
        resolved = file.resolve(strict=True)
    except OSError as err:
        raise IRToolError(f"cannot load extension: {err.strerror or err}", file=str(file)
                          ) from None
    if resolved in _LOADED:
        return _LOADED[resolved]
    if not resolved.is_file():
        raise IRToolError("cannot load extension: not a file", file=str(file))
    digest = hashlib.sha1(str(resolved).encode()).hexdigest()[:12]
    name = f"irtool_extension_{resolved.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:
        raise IRToolError("cannot load extension: not a Python file", file=str(file))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as err:  # the user's code: any failure is one line naming the file
        sys.modules.pop(name, None)
        raise IRToolError(f"cannot load extension: {_describe(err)}",
                          file=str(file), line=_line_in(err, resolved)) from None
    _LOADED[resolved] = module
    return module


def _describe(err: BaseException) -> str:
    text = " ".join(str(err).split())
    if isinstance(err, SyntaxError):
        text = " ".join((err.msg or "invalid syntax").split())
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def _line_in(err: BaseException, file: Path) -> int | None:
    """The line of ``file`` the failure happened at (the innermost frame in it)."""
    if isinstance(err, SyntaxError) and err.filename and Path(err.filename) == file:
        return err.lineno
    line = None
    for frame in traceback.extract_tb(err.__traceback__):
        if Path(frame.filename) == file:
            line = frame.lineno
    return line
