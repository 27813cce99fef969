"""What every test folder shares: the `integration` marker, given by where a test lives.

A test under `tests/integration/`, `tests/browser/`, `tests/kafka/` or `tests/differential/` starts the real server and drives it with real
clients: it is marked `integration` here, so `pytest -m "not integration"` runs the fast suites and no
module has to remember to mark itself.
"""

from __future__ import annotations

import pathlib

import pytest

from tests.kafka.fixture import apache_kafka  # noqa: F401 (Apache Kafka, one per session: ADR 63)

_HERE = pathlib.Path(__file__).parent
_INTEGRATION = (_HERE / "integration", _HERE / "browser", _HERE / "kafka", _HERE / "differential")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if any(folder in item.path.parents for folder in _INTEGRATION):
            item.add_marker(pytest.mark.integration)
