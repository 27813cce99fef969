"""The differential suite's two brokers: the session's Apache Kafka (`apache_kafka`, tests/kafka) and a
trafka started as the integration suites start it (`trafka serve`, filesystem store, ephemeral ports),
configured alike: `kafka_version = "4.2"`, a PLAINTEXT listener and a SASL_PLAINTEXT one with the same
PLAIN users, the StandardAuthorizer with the same super users, no initial rebalance delay."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.integration.broker import DATA_DIR_ENV, BrokerProcess
from tests.kafka.reference import PLAIN_USERS, STANDARD_AUTHORIZER, SUPER_USERS

from .compare import Node, Pair

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
    return Pair(kafka, trafka_node)
