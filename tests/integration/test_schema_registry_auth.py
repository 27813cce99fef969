"""The Schema Registry of a broker whose Kafka listener uses SASL: confluent-kafka's SchemaRegistryClient
authenticates with HTTP Basic (`basic.auth.user.info`) as the same users, and is refused (401) otherwise;
/healthz, /readyz and /metrics stay open for probes and Prometheus."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError

from .clients import unique
from .secured import PLAIN_USERS, SCRAM_USERS, add_scram_users, sasl_config, secured_broker

SCHEMA = json.dumps({"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}]})


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    config = sasl_config("SASL_PLAINTEXT://127.0.0.1:0")
    with secured_broker(
        tmp_path_factory.mktemp("registry-auth"), config, ("--memory", "--http-port", "0")
    ) as listeners:
        listener = listeners["SASL_PLAINTEXT"]
        add_scram_users(
            listener["bootstrap"],
            SCRAM_USERS,
            **{
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "PLAIN",
                "sasl.username": "alice",
                "sasl.password": PLAIN_USERS["alice"],
            },
        )
        yield listener["process"].http_url


def test_a_registry_client_with_basic_auth_registers_and_reads(secured):
    subject = unique("orders") + "-value"
    for user, password in (("alice", PLAIN_USERS["alice"]), ("carol", SCRAM_USERS["carol"])):
        client = SchemaRegistryClient({"url": secured, "basic.auth.user.info": f"{user}:{password}"})
        schema_id = client.register_schema(subject, Schema(SCHEMA, "AVRO"))
        assert client.get_latest_version(subject).schema_id == schema_id
        assert subject in client.get_subjects()


def test_a_registry_client_without_or_with_wrong_credentials_gets_401(secured):
    for conf in ({}, {"basic.auth.user.info": "alice:wrong"}, {"basic.auth.user.info": "mallory:x"}):
        client = SchemaRegistryClient({"url": secured, **conf})
        with pytest.raises(SchemaRegistryError) as caught:
            client.get_subjects()
        assert caught.value.http_status_code == 401 and caught.value.error_code == 401, conf
        assert caught.value.error_message == "Unauthorized"


def test_health_and_metrics_stay_open_and_the_console_asks_for_a_login(secured):
    for path in ("/healthz", "/readyz", "/metrics"):
        with urllib.request.urlopen(secured + path, timeout=10) as response:
            assert response.status == 200, path
    with urllib.request.urlopen(secured + "/", timeout=10) as response:  # follows the redirect
        assert response.url.startswith(secured + "/login?next=") and 'id="login-form"' in response.read().decode()
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(urllib.request.Request(secured + "/topics", data=b"name=x"), timeout=10)
    assert caught.value.code == 403
