"""Shared test setup: slow suites run in CI (``CI`` set), with ``IRTOOL_SLOW=1``, or
with ``--run-slow``; elsewhere they are deselected, and the header says so."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# The shared helpers are the package ``support`` (tests/support/), imported by name.
sys.path.insert(0, str(Path(__file__).parent))

# session fixtures: OpenVINO-written IR of ONNX cases; every saved IR validated; OpenVINO's
# quirks recorded, not required (support/quirks.py: the summary line at the end)
pytest_plugins = ["support.ov_irs", "support.saved_irs", "support.quirks"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", help="also run tests marked slow")


def _slow_enabled(config: pytest.Config) -> bool:
    env = os.environ
    truthy = ("1", "true", "yes")
    return (config.getoption("--run-slow") or env.get("CI", "").lower() in truthy
            or env.get("IRTOOL_SLOW", "").lower() in truthy)


def pytest_report_header(config: pytest.Config) -> str:
    if _slow_enabled(config):
        return "slow suites: included"
    return "slow suites: deselected (set IRTOOL_SLOW=1 or pass --run-slow to include them)"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _slow_enabled(config):
        return
    slow = [item for item in items if "slow" in item.keywords]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if "slow" not in item.keywords]
