"""The one exception family of irtool.

Every error a user can cause carries *where* (file, XML line, layer, ONNX node)
and *what*, so the command line can print one line that points at the problem.
"""

from __future__ import annotations

from collections.abc import Sequence

from .diagnostics import Diagnostic


class _Located(Exception):
    """An error that says where (file and line, layer, ONNX node) before what.

    ``str(err)`` is the one-line message the CLI prints: the location first,
    then what went wrong.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        layer: str | None = None,
        node: str | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.layer = layer
        self.node = node
        super().__init__(self.format())

    def format(self) -> str:
        where = []
        if self.file:
            where.append(self.file if self.line is None else f"{self.file}:{self.line}")
        elif self.line is not None:
            where.append(f"line {self.line}")
        if self.layer:
            where.append(f"layer {self.layer}")
        if self.node:
            where.append(f"node {self.node}")
        return f"{': '.join(where)}: {self.message}" if where else self.message


class IRToolError(_Located):
    """Base class of every error irtool raises on purpose: the input is at fault."""


class InternalError(_Located):
    """A bug in irtool, not in its input (the command line exits 3 for it).

    Raised where irtool still knows where it happened (the ONNX node, the layer);
    the exception that revealed the bug is its ``__cause__``. Deliberately not an
    ``IRToolError``: code that handles bad input must not swallow irtool's bugs.
    """


class IRParseError(IRToolError):
    """An IR file (XML or .bin) that cannot be read."""


class IRValidationError(IRToolError):
    """An IR that breaks the rules of the spec: what ``load`` (strict, the default) and the
    runtime raise instead of reading or running it. ``diagnostics`` holds every error
    ``validate`` reports; the message is the first one's line, as ``validate`` prints it."""

    diagnostics: list[Diagnostic]

    @classmethod
    def from_diagnostics(cls, errors: Sequence[Diagnostic]) -> IRValidationError:
        if not errors:
            err = cls("the IR could not be read")
            err.diagnostics = []
            return err
        first = errors[0]
        text = first.what()
        if len(errors) > 1:
            text += f" (and {len(errors) - 1} more error(s): irtool validate lists them all)"
        err = cls(text, file=first.file or "<model>", line=first.line or 0)
        err.diagnostics = list(errors)
        return err


class ConversionError(IRToolError):
    """An ONNX model that cannot be converted."""


class UnsupportedOpError(ConversionError):
    """ONNX operators without a translator, listed all at once."""


class ExecutionError(IRToolError):
    """A failure while running IR: bad inputs, a kernel error, a runaway loop."""


class BackendError(IRToolError):
    """A cross-check backend (onnxruntime, OpenVINO) that failed."""
