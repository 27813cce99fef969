"""Several listeners: each connection is answered with the advertised address of the listener it came in on."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from confluent_kafka.admin import AdminClient
from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse, MetadataRequest, MetadataResponse

from .broker import BrokerProcess
from .wire import WireClient

CONFIG = """
[server]
listeners = "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0"
advertised_listeners = "PLAINTEXT://localhost:0,INTERNAL://127.0.0.1:0"
listener_security_protocol_map = "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT"
"""


@pytest.fixture(scope="module")
def two_listeners(tmp_path_factory):
    folder = tmp_path_factory.mktemp("listeners")
    (folder / "trafka.toml").write_text(CONFIG)
    ready = folder / "ready.json"
    broker = BrokerProcess(["--memory", "--config", str(folder / "trafka.toml"), "--ready-file", str(ready)]).start()
    yield json.loads(ready.read_text())["listeners"]
    assert broker.stop() == 0, broker.log()


def _address(listener) -> str:
    return f"127.0.0.1:{listener['port']}"


def test_the_ready_file_names_every_listener(two_listeners):
    assert set(two_listeners) == {"PLAINTEXT", "INTERNAL"}
    assert two_listeners["PLAINTEXT"]["advertised"] == f"localhost:{two_listeners['PLAINTEXT']['port']}"
    assert two_listeners["INTERNAL"]["advertised"] == f"127.0.0.1:{two_listeners['INTERNAL']['port']}"
    assert two_listeners["PLAINTEXT"]["port"] != two_listeners["INTERNAL"]["port"]


@pytest.mark.parametrize("name", ["PLAINTEXT", "INTERNAL"])
def test_metadata_and_find_coordinator_answer_with_the_listener_s_advertised_address(two_listeners, name):
    listener = two_listeners[name]
    with WireClient(_address(listener)) as client:
        metadata = client.request(MetadataRequest[1](topics=[]), MetadataResponse, 1)
        coordinator = client.request(FindCoordinatorRequest[2](key="g", key_type=0), FindCoordinatorResponse, 2)
    [broker] = metadata.brokers
    assert f"{broker.host}:{broker.port}" == listener["advertised"]
    assert f"{coordinator.host}:{coordinator.port}" == listener["advertised"]


@pytest.mark.parametrize("name", ["PLAINTEXT", "INTERNAL"])
def test_a_real_client_sees_the_listener_it_bootstrapped_from(two_listeners, name):
    listener = two_listeners[name]
    admin = AdminClient({"bootstrap.servers": _address(listener)})
    brokers = admin.list_topics(timeout=10).brokers
    assert [f"{b.host}:{b.port}" for b in brokers.values()] == [listener["advertised"]]


@pytest.mark.parametrize(
    "config, message",
    [
        ('listeners = "PLAINTEXT://127.0.0.1:0,PLAINTEXT://127.0.0.1:0"', "Each listener must have a different name"),
        ('listeners = "INTERNAL://127.0.0.1:0"', "No security protocol defined for listener INTERNAL"),
        ('listeners = "PLAINTEXT://0.0.0.0:0"', "cannot use the nonroutable meta-address 0.0.0.0"),
    ],
)
def test_a_listener_kafka_would_refuse_stops_the_broker_with_kafka_s_message(tmp_path, config, message):
    (tmp_path / "trafka.toml").write_text(f"[server]\n{config}\n")
    done = subprocess.run(
        [sys.executable, "-m", "trafka", "serve", "--memory", "--config", str(tmp_path / "trafka.toml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1
