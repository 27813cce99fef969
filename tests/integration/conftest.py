from __future__ import annotations

import itertools
import uuid

import pytest

from .broker import BrokerProcess

_names = itertools.count()


@pytest.fixture(scope="session")
def broker():
    """One real broker for the whole integration session; tests use unique topic names."""
    process = BrokerProcess(["--memory"]).start()
    yield process
    assert process.stop() == 0, process.log()


@pytest.fixture
def bootstrap(broker) -> str:
    return broker.bootstrap


@pytest.fixture
def topic_name() -> str:
    return f"t{next(_names)}-{uuid.uuid4().hex[:8]}"
