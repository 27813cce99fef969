"""The pytest side of the reference broker: one Apache Kafka per test session (ADR 63).

`apache_kafka` is session-scoped and registered by `tests/conftest.py`, so every suite (the
differential suite, the tools checks, the log dir round trip) requests the same JVM: it starts on the
first request, prints how long it took, and stops when the session ends. It runs with the
StandardAuthorizer (ANONYMOUS on PLAINTEXT and `admin` are super users), so the authorization scenarios
have ACLs to be denied by, and with a SASL_PLAINTEXT listener (PLAIN users `PLAIN_USERS`, SCRAM users
added through the admin API).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from .reference import ReferenceKafka, kafka_version

# For a developer's quicker loop: the folder of a node started by `python tests/kafka/reference.py DIR`
# (with the authorizer, as the session's), used instead of starting one. CI never sets it.
ATTACH = "REFERENCE_KAFKA_DIR"

# The exit status of a JVM that ran its shutdown hooks on SIGTERM (128 + 15), as Kafka does.
STOPPED_BY_SIGTERM = 143


@pytest.fixture(scope="session")
def apache_kafka(tmp_path_factory, request) -> Iterator[ReferenceKafka]:
    """Apache Kafka (the pom's version), one combined node on ephemeral ports, for the whole session."""
    attached = os.environ.get(ATTACH)
    if attached:  # a developer's running node (python tests/kafka/reference.py DIR): not stopped here
        yield ReferenceKafka.attach(Path(attached))
        return
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    kafka = ReferenceKafka(tmp_path_factory.mktemp("apache-kafka"), authorizer=True)
    try:
        kafka.start()
    except RuntimeError as failed:  # a free port taken before Kafka bound it, or a start past its limit
        if reporter is not None:  # said, then tried once more on new ports; a second failure is the error
            reporter.write_line(f"\nApache Kafka did not start, trying once more: {failed}")
        with contextlib.suppress(Exception):
            kafka.stop()
        kafka = ReferenceKafka(tmp_path_factory.mktemp("apache-kafka"), authorizer=True)
        kafka.start()
    line = f"Apache Kafka {kafka_version()} started in {kafka.startup_seconds:.1f}s on {kafka.bootstrap}"
    if reporter is not None:
        reporter.write_line(f"\n{line}")
    try:
        yield kafka
    finally:
        status = kafka.stop()
        assert status in (0, STOPPED_BY_SIGTERM), f"Apache Kafka stopped with {status}:\n{kafka.log_tail()}"
