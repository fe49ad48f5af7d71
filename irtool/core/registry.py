"""One convention for versioned registries: items by name and since-version.

Both op trees look things up the same way: the OpenVINO operations (``irtool.opset``,
keyed by type and the opset that introduced each version: ``("Add", 1)``) and the ONNX
translators (``irtool.frontends.onnx.context``, keyed by operator and since-version:
``("Add", 13)``). A lookup at version N takes the item of the newest version at or below N:
``Add`` registered for opset 1 serves a layer of ``opset8`` (OpenVINO's reader does the
same), a translator since opset 13 a model importing opset 17. A version that is not a
number (an OpenVINO extension's ``"extension"``) matches only itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

T = TypeVar("T")
Version = int | str


class Registry(Generic[T]):
    """Items by name and since-version; ``what`` names them in the duplicate error."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._items: dict[str, dict[Version, T]] = {}

    def add(self, name: str, version: Version, item: T) -> None:
        """Register ``item``; another item already at ``(name, version)`` is an error."""
        versions = self._items.setdefault(name, {})
        if version in versions and versions[version] is not item:
            raise ValueError(f"{self.what}{name}-{version} is registered twice")
        versions[version] = item

    def find(self, name: str, version: Version) -> T | None:
        """The item at ``version``, else (a number) at the newest version below it."""
        versions = self._items.get(name)
        if not versions:
            return None
        if version in versions:
            return versions[version]
        if not isinstance(version, int):
            return None
        usable = [v for v in versions if isinstance(v, int) and v <= version]
        return versions[max(usable)] if usable else None

    def versions(self, name: str) -> list[Version]:
        """The versions ``name`` is registered at."""
        return list(self._items.get(name, {}))

    def __iter__(self) -> Iterator[tuple[str, Version, T]]:
        for name, versions in self._items.items():
            for version, item in versions.items():
                yield name, version, item
