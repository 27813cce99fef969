"""The differential suite's two brokers: the session's Apache Kafka (`apache_kafka`, tests/kafka) and a
trafka started as the integration suites start it (`trafka serve`, filesystem store, ephemeral ports),
configured alike: `kafka_version = "4.2"`, a PLAINTEXT listener and a SASL_PLAINTEXT one with the same
PLAIN users, the StandardAuthorizer with the same super users, no initial rebalance delay."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from kafka.protocol.admin import DescribeGroupsRequest, DescribeGroupsResponse
from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse

from tests.integration.broker import DATA_DIR_ENV, BrokerProcess
from tests.kafka.reference import PLAIN_USERS, STANDARD_AUTHORIZER, SUPER_USERS

from .compare import Node, Pair, Wire

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
    deadline = time.monotonic() + timeout
    for key_type in (0, 1):  # group, transaction
        while True:
            with Wire(node.bootstrap) as wire:
                request = FindCoordinatorRequest[4](key_type=key_type, coordinator_keys=["differential-warm-up"])
                answer = wire.request(request, FindCoordinatorResponse, 4)
            if answer.coordinators[0].error_code == 0:
                break
            assert time.monotonic() < deadline, f"{node.name}: no coordinator for key type {key_type}"
            time.sleep(0.5)
    with Wire(node.bootstrap) as wire:  # the group coordinator has loaded its partitions
        while True:
            groups = wire.request(DescribeGroupsRequest[5](groups=["differential-warm-up"]), DescribeGroupsResponse, 5)
            if groups.groups[0].error_code == 0:
                return
            assert time.monotonic() < deadline, f"{node.name}: the group coordinator did not load"
            time.sleep(0.5)
