"""Diagnostics: problems found in an IR, collected rather than raised."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

from .scopes import layer_path


@dataclass(frozen=True)
class Diagnostic:
    """One problem in an IR file.

    ``code`` is stable (tests and scripts match on it); ``message`` is for people.
    ``layer_id`` is the id of the layer in its own (sub-)graph; ``scope`` names the
    chain of enclosing control-flow layers, e.g. ``"5/body"``, empty at top level.
    """

    code: str
    message: str
    file: str | None = None
    line: int | None = None
    layer_id: int | None = None
    layer_name: str | None = None
    scope: str = ""
    severity: str = "error"

    def format(self) -> str:
        """``file:line: CODE layer <id> "<name>": message`` (the CLI's line format)."""
        loc = f"{self.file or '<model>'}:{self.line if self.line is not None else 0}"
        return f"{loc}: {self.what()}"

    def what(self) -> str:
        """The line without its location: ``CODE layer <id> "<name>": message``."""
        layer = ""
        if self.layer_id is not None:
            layer = f' layer {layer_path(self.scope, self.layer_id)} "{self.layer_name or ""}"'
        return f"{self.code}{layer}: {self.message}"

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def errors_only(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """The diagnostics that make an IR invalid (warnings dropped)."""
    return [d for d in diagnostics if d.severity == "error"]
