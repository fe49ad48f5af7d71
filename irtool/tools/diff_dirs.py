"""IR files compared with the same-named files of a folder of reference IRs.

Export regression tests keep reference IRs of small models and fail when an export changes
them (optimum-intel does). ``compare_with_references(paths, reference_dir)`` pairs every IR
given, or every IR file under a folder given (recursively, by its path inside that
folder), with the file of the same relative path in ``reference_dir`` and diffs each pair
(``irtool.tools.diff``; the reference is A, the new file B). A file without a reference is
``extra``; for a folder given, a reference that it lacks is ``missing``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.paths import models_under
from .diff import Difference, diff_files

PathLike = str | os.PathLike


@dataclass
class FileComparison:
    """One file of a reference-folder comparison. ``status``: ``equal``, ``different``
    (``differences`` says how), ``extra`` (no reference for it) or ``missing`` (a reference
    with no new file)."""

    name: str
    file: str | None
    reference: str | None
    status: str
    differences: list[Difference] = field(default_factory=list)

    def summary(self) -> str:
        """One line: ``out/m.xml: 2 differences from ref/m.xml``."""
        if self.status == "equal":
            return f"{self.file}: same as {self.reference}"
        if self.status == "different":
            return f"{self.file}: {len(self.differences)} difference(s) from {self.reference}"
        if self.status == "extra":
            return f"{self.file}: extra: no reference {self.reference}"
        return f"{self.reference}: missing: no new file for this reference"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "file": self.file, "reference": self.reference,
                "status": self.status,
                "differences": [d.to_dict() for d in self.differences]}


def _xml_files(folder: Path) -> dict[str, Path]:
    """Every IR file under ``folder`` by its path inside it (``/``-separated), as
    ``validate`` finds them (``core.paths``: other XML and hidden folders left out)."""
    return {f.name: Path(f.path) for f in models_under(str(folder), "ir")}


def compare_with_references(paths: list[PathLike], reference_dir: PathLike, *,
                            rt_info: bool = False) -> list[FileComparison]:
    """Each IR of ``paths`` (files, or folders searched recursively) against the file of
    the same name in ``reference_dir``; references a folder given lacks are ``missing``.
    Raises ``FileNotFoundError`` for a path or folder that does not exist."""
    ref_root = Path(reference_dir)
    if not ref_root.is_dir():
        raise FileNotFoundError(f"reference folder {ref_root} does not exist")
    references = _xml_files(ref_root)
    results: list[FileComparison] = []
    covered: set[str] = set()
    folder_given = False
    for given in map(Path, paths):
        if given.is_dir():
            folder_given = True
            pairs = list(_xml_files(given).items())
        elif given.is_file():
            pairs = [(given.name, given)]
        else:
            raise FileNotFoundError(f"{given} does not exist")
        for name, path in pairs:
            covered.add(name)
            reference = ref_root / name
            if name not in references:
                results.append(FileComparison(name, str(path), str(reference), "extra"))
                continue
            found = diff_files(reference, path, rt_info=rt_info)
            results.append(FileComparison(name, str(path), str(reference),
                                          "different" if found else "equal", found))
    if folder_given:
        results += [FileComparison(name, None, str(path), "missing")
                    for name, path in references.items() if name not in covered]
    return results
