"""The pytest side of the reference broker: one Apache Kafka per test session (ADR 63).

`apache_kafka` is session-scoped and registered by `tests/conftest.py`, so every suite (the
differential suite, the tools checks, the log dir round trip) requests the same JVM: it starts on the
first request, prints how long it took, and stops when the session ends. It runs with the
StandardAuthorizer (ANONYMOUS on PLAINTEXT and `admin` are super users), so the authorization scenarios
have ACLs to be denied by, and with a SASL_PLAINTEXT listener (PLAIN users `PLAIN_USERS`, SCRAM users
added through the admin API).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .reference import ReferenceKafka, kafka_version

# The exit status of a JVM that ran its shutdown hooks on SIGTERM (128 + 15), as Kafka does.
STOPPED_BY_SIGTERM = 143


@pytest.fixture(scope="session")
def apache_kafka(tmp_path_factory, request) -> Iterator[ReferenceKafka]:
    """Apache Kafka (the pom's version), one combined node on ephemeral ports, for the whole session."""
    kafka = ReferenceKafka(tmp_path_factory.mktemp("apache-kafka"), authorizer=True)
    kafka.start()
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    line = f"Apache Kafka {kafka_version()} started in {kafka.startup_seconds:.1f}s on {kafka.bootstrap}"
    if reporter is not None:
        reporter.write_line(f"\n{line}")
    try:
        yield kafka
    finally:
        status = kafka.stop()
        assert status in (0, STOPPED_BY_SIGTERM), f"Apache Kafka stopped with {status}:\n{kafka.log_tail()}"
