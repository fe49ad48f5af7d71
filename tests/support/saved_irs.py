"""A property every test checks: each IR that irtool saves passes ``irtool validate``.

Every save path (``irtool.save``, the OpenVINO backend's temporary IR, ``check``'s kept
files, the ONNX backend) writes through ``irtool.ir.serde.xml_writer.write_model``, which hands
the XML tree and the weights to ``write_ir_files``. This plugin wraps that call for the
duration of each test: once the files are in place, the ``.xml`` is validated (XSD +
semantic rules), and the test fails at teardown naming every saved IR with an error and
validate's first line.

A test that saves a model it knows to be wrong on purpose says so with
``@pytest.mark.saves_invalid_ir``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import irtool
from irtool.ir.serde import xml_writer


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "saves_invalid_ir: the test saves IR that validate rejects, on purpose")


@pytest.fixture(autouse=True)
def saved_irs_validate(request: pytest.FixtureRequest,
                       monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """Validate every IR written during the test; the list of saved ``.xml`` paths."""
    if request.node.get_closest_marker("saves_invalid_ir"):
        yield []
        return
    real = xml_writer.write_ir_files
    saved: list[Path] = []
    failures: list[str] = []
    lock = threading.Lock()  # some tests save from several threads at once

    def write_and_validate(xml_path: Path, *args, **kwargs) -> None:
        real(xml_path, *args, **kwargs)
        errors = [str(p) for p in irtool.validate(xml_path) if p.severity == "error"]
        with lock:
            saved.append(Path(xml_path))
            if errors:
                failures.append(f"{xml_path}: {len(errors)} error(s), first: {errors[0]}")

    monkeypatch.setattr(xml_writer, "write_ir_files", write_and_validate)
    yield saved
    if failures:
        pytest.fail("irtool saved IR that irtool validate rejects:\n" + "\n".join(failures),
                    pytrace=False)
