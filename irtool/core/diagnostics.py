"""Diagnostics: problems found in an IR, collected rather than raised."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

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
        """``file:line: error: CODE layer <id> "<name>": message``: the compiler convention
        (the severity word after the place; ``file:`` alone when no line is known), which
        editors and CI log parsers jump from. The CLI's line format."""
        loc = self.file or "<model>"
        if self.line is not None:
            loc += f":{self.line}"
        return f"{loc}: {self.severity}: {self.what()}"

    def what(self) -> str:
        """The line without its location: ``CODE layer <id> "<name>": message``."""
        layer = ""
        if self.layer_id is not None:
            layer = f' layer {layer_path(self.scope, self.layer_id)} "{self.layer_name or ""}"'
        return f"{self.code}{layer}: {self.message}"

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Diagnostic:
        """The diagnostic ``to_dict`` gave (keys it does not know are ignored)."""
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})


def errors_only(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """The diagnostics that make an IR invalid (warnings dropped)."""
    return [d for d in diagnostics if d.severity == "error"]
