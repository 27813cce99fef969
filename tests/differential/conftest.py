"""The differential suite's two brokers: the session's Apache Kafka (`apache_kafka`, tests/kafka) and a
trafka started as the integration suites start it (`trafka serve`, filesystem store, ephemeral ports),
configured alike: `kafka_version = "4.2"`, a PLAINTEXT listener and a SASL_PLAINTEXT one with the same
PLAIN users, the StandardAuthorizer with the same super users, no initial rebalance delay."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from kafka.protocol.admin import DescribeGroupsRequest, DescribeGroupsResponse
from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse

from tests.integration.broker import DATA_DIR_ENV, BrokerProcess
from tests.kafka.reference import PLAIN_USERS, STANDARD_AUTHORIZER, SUPER_USERS
from tests.waiting import eventually

from .compare import REPORT, Node, Pair, Wire

_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    + " ".join(f'user_{name}="{password}"' for name, password in PLAIN_USERS.items())
    + ";"
)
TRAFKA_CONFIG = f"""
[server]
listeners = "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0"

[broker]
kafka_version = "4.2"

[security]
sasl_enabled_mechanisms = "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512"
authorizer_class_name = "{STANDARD_AUTHORIZER}"
super_users = "{";".join(SUPER_USERS)}"

[security.listener_name.sasl_plaintext]
plain_sasl_jaas_config = '{_JAAS}'
"""


@pytest.fixture(scope="session")
def trafka_node(tmp_path_factory) -> Iterator[Node]:
    folder = tmp_path_factory.mktemp("differential-trafka")
    (folder / "trafka.toml").write_text(TRAFKA_CONFIG)
    ready = folder / "ready.json"
    args = ["--data-dir", str(folder / "data"), "--config", str(folder / "trafka.toml"), "--ready-file", str(ready)]
    process = BrokerProcess(args, env=DATA_DIR_ENV).start()
    try:
        listeners = json.loads(ready.read_text())["listeners"]
        addresses = {name.upper(): f"127.0.0.1:{listener['port']}" for name, listener in listeners.items()}
        yield Node("trafka", addresses["PLAINTEXT"], addresses["SASL_PLAINTEXT"], process.log)
    finally:
        if process.process is not None and process.process.poll() is None:
            assert process.stop() == 0, process.log()


@pytest.fixture(scope="session")
def pair(apache_kafka, trafka_node) -> Pair:
    kafka = Node("kafka", apache_kafka.bootstrap, apache_kafka.listeners["SASL_PLAINTEXT"], apache_kafka.log_tail)
    for node in (kafka, trafka_node):
        _warm_up(node)
    return Pair(kafka, trafka_node)


def _warm_up(node: Node, timeout: float = 120.0) -> None:
    """Until the group and transaction coordinators answer: a fresh Kafka creates `__consumer_offsets`
    and `__transaction_state` on the first FindCoordinator and answers COORDINATOR_NOT_AVAILABLE, then
    NOT_COORDINATOR while it loads them, which is not what a running cluster answers."""

    def coordinator(key_type: int) -> bool:
        with Wire(node.bootstrap) as wire:
            request = FindCoordinatorRequest[4](key_type=key_type, coordinator_keys=["differential-warm-up"])
            answer = wire.request(request, FindCoordinatorResponse, 4)
        return answer.coordinators[0].error_code == 0

    for key_type in (0, 1):  # group, transaction
        eventually(
            lambda: coordinator(key_type),
            timeout,
            what=f"{node.name}: a coordinator for key type {key_type}",
            interval=0.5,
        )
    with Wire(node.bootstrap) as wire:  # the group coordinator has loaded its partitions
        describe = DescribeGroupsRequest[5](groups=["differential-warm-up"])
        eventually(
            lambda: wire.request(describe, DescribeGroupsResponse, 5).groups[0].error_code == 0,
            timeout,
            what=f"{node.name}: the group coordinator to load",
            interval=0.5,
        )


def pytest_terminal_summary(terminalreporter) -> None:
    """The differential report: scenarios compared, identical, and the listed divergences applied."""
    report = REPORT
    if not report.scenarios:
        return
    terminalreporter.write_sep("-", "differential report (tests/differential)")
    terminalreporter.write_line(
        f"{len(report.scenarios)} comparisons against Apache Kafka: {report.identical} identical, "
        f"{report.explained} with listed divergences (tests/differential/divergences.py), "
        f"unexplained: {report.unexplained}"
    )
