"""trafka's pytest plugin: `kafka_broker`, `kafka_broker_session` and `kafka_cluster`, registered by the `pytest11`
entry point so a project that installs trafka needs no conftest. See `trafka.testing`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .threaded import Broker, Cluster


def pytest_configure(config: pytest.Config) -> None:
    # kafka-python 3.0 loads its protocol schemas with importlib.resources' legacy calls; their
    # deprecation warnings are about that library, not the user's code.
    config.addinivalue_line("filterwarnings", "ignore:read_text is deprecated:DeprecationWarning")
    config.addinivalue_line("filterwarnings", "ignore:open_text is deprecated:DeprecationWarning")
    config.addinivalue_line(
        "markers",
        "kafka_broker(topics=None, partitions=None, **settings): configure the test's trafka broker "
        "(topics as {name: partitions} or [names]; partitions: the default partition count; other "
        "keywords are trafka.Broker's, e.g. auto_create_topics=False)",
    )
    config.addinivalue_line(
        "markers",
        "kafka_cluster(brokers=3, topics=None, partitions=None, **settings): configure the test's trafka "
        "cluster (keywords as kafka_broker's)",
    )


@pytest.fixture
def kafka_broker_options() -> dict[str, Any]:
    """Keyword arguments for every `kafka_broker` of a module or package; override it to change them."""
    return {}


def _options(base: dict[str, Any], marker: pytest.Mark | None) -> dict[str, Any]:
    options = dict(base)
    if marker is not None:
        if marker.args:
            raise pytest.UsageError("kafka_broker marker takes keywords only, e.g. topics={'orders': 3}")
        options.update(marker.kwargs)
    partitions = options.pop("partitions", None)
    if partitions is not None:
        options["num_partitions"] = partitions
    return options


@pytest.fixture
def kafka_broker(request: pytest.FixtureRequest, kafka_broker_options: dict[str, Any]) -> Iterator[Broker]:
    """A fresh trafka broker for this test; `broker.bootstrap_servers` is what clients take."""
    from .threaded import Broker  # imported on first use, so a run without the fixtures pays nothing

    options = _options(kafka_broker_options, request.node.get_closest_marker("kafka_broker"))
    with Broker(**options) as broker:
        yield broker


@pytest.fixture(scope="session")
def kafka_broker_session() -> Iterator[Broker]:
    """One trafka broker shared by the whole session (not cleared between tests)."""
    from .threaded import Broker

    with Broker() as broker:
        yield broker


@pytest.fixture
def kafka_cluster(request: pytest.FixtureRequest, kafka_broker_options: dict[str, Any]) -> Iterator[Cluster]:
    """A fresh simulated cluster of 3 brokers for this test (`trafka.Cluster`): for failover tests."""
    from .threaded import Cluster

    options = _options(kafka_broker_options, request.node.get_closest_marker("kafka_cluster"))
    with Cluster(**options) as cluster:
        yield cluster
