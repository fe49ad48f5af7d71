"""Known findings that do not fail a gate: ``validate --baseline FILE`` / ``--write-baseline``.

A team adopting the gate on a zoo with known problems records them once
(``--write-baseline``) and from then on fails only on new ones. A finding is matched by
its file (relative to the baseline file's folder, so the baseline works from any current
folder and on any checkout), its code, its layer's name and its message, never by its
line: an edit elsewhere in the file moves lines and must not revive accepted findings.
Each key is counted: a second, identical finding in the same file is new.

The file is JSON, sorted so that it diffs well in review::

    {"irtool_baseline": 1,
     "findings": [{"file": "zoo/m.xml", "code": "UNKNOWN_OP", "layer": "rms",
                   "message": "...", "count": 1}, ...]}
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..core.diagnostics import Diagnostic
from ..core.files import write_files

Key = tuple[str, str, str | None, str]
"""(file relative to the baseline's folder, code, layer name, message)."""

FORMAT_VERSION = 1


class BaselineError(ValueError):
    """A baseline file that cannot be read (a usage error)."""


def relative_file(path: str, folder: str) -> str:
    """``path`` relative to ``folder``, ``/``-separated (absolute when no relative path
    exists, as across Windows drives)."""
    try:
        return os.path.relpath(os.path.abspath(path), folder).replace(os.sep, "/")
    except ValueError:
        return os.path.abspath(path).replace(os.sep, "/")


@dataclass
class Baseline:
    """The accepted findings of ``path``, each with how often it is accepted."""

    path: str
    accepted: Counter[Key] = field(default_factory=Counter)

    @property
    def folder(self) -> str:
        return os.path.dirname(os.path.abspath(self.path))

    def key(self, diagnostic: Diagnostic, file: str) -> Key:
        """How ``diagnostic`` (of the model ``file``) is matched."""
        return (relative_file(diagnostic.file or file, self.folder), diagnostic.code,
                diagnostic.layer_name, diagnostic.message)

    def match(self, diagnostics: Sequence[Diagnostic], file: str) -> list[bool]:
        """Which of one model's ``diagnostics`` the baseline accepts (as many of each key
        as it counts)."""
        left = Counter[Key]()
        out = []
        for d in diagnostics:
            key = self.key(d, file)
            left.setdefault(key, self.accepted.get(key, 0))
            out.append(left[key] > 0)
            left[key] -= 1
        return out

    @classmethod
    def load(cls, path: str) -> Baseline:
        """The baseline in ``path``; ``BaselineError`` naming the file when it is not one."""
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
            if data.get("irtool_baseline") != FORMAT_VERSION:
                raise ValueError(f"not an irtool baseline (version {FORMAT_VERSION})")
            accepted = Counter[Key]()
            for entry in data["findings"]:
                accepted[(str(entry["file"]), str(entry["code"]), entry.get("layer"),
                          str(entry["message"]))] += int(entry.get("count", 1))
        except OSError as err:
            raise BaselineError(f"{path}: cannot read the baseline: "
                                f"{err.strerror or err}") from None
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            raise BaselineError(f"{path}: not an irtool baseline: {err}") from None
        return cls(path, accepted)

    @classmethod
    def of(cls, path: str, findings: Iterable[tuple[Diagnostic, str]]) -> Baseline:
        """A baseline in ``path`` accepting each ``(diagnostic, model file)`` given."""
        baseline = cls(path)
        for diagnostic, file in findings:
            baseline.accepted[baseline.key(diagnostic, file)] += 1
        return baseline

    def write(self) -> None:
        """Write the baseline file (all or nothing)."""
        entries = [{"file": f, "code": c, "layer": layer, "message": m, "count": n}
                   for (f, c, layer, m), n in sorted(self.accepted.items(),
                                                      key=lambda kv: _sortable(kv[0]))]
        text = json.dumps({"irtool_baseline": FORMAT_VERSION, "findings": entries},
                          indent=1) + "\n"
        write_files({self.path: text.encode("utf-8")})


def _sortable(key: Key) -> tuple[str, str, str, str]:
    return (key[0], key[1], key[2] or "", key[3])
