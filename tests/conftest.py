"""What every test folder shares: the `integration` marker, given by where a test lives.

A test under `tests/integration/`, `tests/browser/`, `tests/kafka/` or `tests/differential/` starts the real server and drives it with real
clients: it is marked `integration` here, so `pytest -m "not integration"` runs the fast suites and no
module has to remember to mark itself.

Hypothesis runs without its per-example deadline: a wall-clock limit is a timed test, and on a loaded
2-core CI machine it fails examples for the machine's sake, not the code's (performance is bench/'s).
"""

from __future__ import annotations

import pathlib

import pytest
from hypothesis import settings

from tests.kafka.fixture import apache_kafka  # noqa: F401 (Apache Kafka, one per session: ADR 63)

settings.register_profile("trafka", deadline=None)
settings.load_profile("trafka")

_HERE = pathlib.Path(__file__).parent
_INTEGRATION = (_HERE / "integration", _HERE / "browser", _HERE / "kafka", _HERE / "differential")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if any(folder in item.path.parents for folder in _INTEGRATION):
            item.add_marker(pytest.mark.integration)
