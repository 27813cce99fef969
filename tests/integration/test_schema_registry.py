"""The built-in Schema Registry with confluent-kafka's own clients and serializers, on a real broker."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from .broker import BrokerProcess

USER_V1 = json.dumps(
    {
        "type": "record",
        "name": "User",
        "namespace": "t",
        "fields": [{"name": "name", "type": "string"}, {"name": "age", "type": "int"}],
    }
)
USER_V2 = json.dumps(
    {
        "type": "record",
        "name": "User",
        "namespace": "t",
        "fields": [
            {"name": "name", "type": "string"},
            {"name": "age", "type": "long"},
            {"name": "email", "type": ["null", "string"], "default": None},
        ],
    }
)
USER_REQUIRED = json.dumps(
    {
        "type": "record",
        "name": "User",
        "namespace": "t",
        "fields": [
            {"name": "name", "type": "string"},
            {"name": "age", "type": "int"},
            {"name": "city", "type": "string"},
        ],
    }
)


@pytest.fixture(scope="module")
def registry_broker(tmp_path_factory):
    process = BrokerProcess(
        ["--data-dir", str(tmp_path_factory.mktemp("logs")), "--http-port", "0"],
        env={"TRAFKA_GROUPS_INITIAL_REBALANCE_DELAY_MS": "0"},
    ).start()
    yield process
    assert process.stop() == 0, process.log()


@pytest.fixture
def client(registry_broker) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": registry_broker.http_url})


@pytest.fixture
def subject() -> str:
    return f"s-{uuid.uuid4().hex[:8]}-value"


def error_of(call) -> SchemaRegistryError:
    with pytest.raises(SchemaRegistryError) as caught:
        call()
    return caught.value


def raw(url: str, method: str = "GET", body: dict | list | None = None) -> tuple[int, str, dict | list | int]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, method=method, headers={"Content-Type": "application/vnd.schemaregistry.v1+json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers["Content-Type"], json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], json.loads(error.read())


def test_avro_serializer_and_deserializer_round_trip_through_the_broker(registry_broker, client):
    topic = f"users-{uuid.uuid4().hex[:8]}"
    serializer = AvroSerializer(client, USER_V1)
    producer = Producer({"bootstrap.servers": registry_broker.bootstrap})
    users = [{"name": f"user{i}", "age": i} for i in range(5)]
    for user in users:
        producer.produce(topic, value=serializer(user, SerializationContext(topic, MessageField.VALUE)))
    assert producer.flush(10) == 0
    registered = client.get_latest_version(f"{topic}-value")
    assert registered.version == 1 and json.loads(registered.schema.schema_str) == json.loads(USER_V1)

    consumer = Consumer(
        {"bootstrap.servers": registry_broker.bootstrap, "group.id": topic, "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic])
    deserializer = AvroDeserializer(client)
    seen = []
    try:
        while len(seen) < len(users):
            message = consumer.poll(10)
            assert message is not None and message.error() is None
            assert message.value()[0] == 0 and int.from_bytes(message.value()[1:5], "big") == registered.schema_id
            seen.append(deserializer(message.value(), SerializationContext(topic, MessageField.VALUE)))
    finally:
        consumer.close()
    assert seen == users


def test_evolution_is_accepted_and_rejected_per_level(client, subject):
    first = client.register_schema(subject, Schema(USER_V1, "AVRO"))
    assert client.get_compatibility() == "BACKWARD"
    assert client.test_compatibility(subject, Schema(USER_V2, "AVRO"))
    assert not client.test_compatibility(subject, Schema(USER_REQUIRED, "AVRO"))
    refused = error_of(lambda: client.register_schema(subject, Schema(USER_REQUIRED, "AVRO")))
    assert refused.http_status_code == 409 and refused.error_code == 40901
    second = client.register_schema(subject, Schema(USER_V2, "AVRO"))
    assert second == first + 1
    assert client.get_versions(subject) == [1, 2]

    client.set_compatibility(subject, "FORWARD")
    assert client.get_compatibility(subject) == "FORWARD"
    # Forward: the latest (v2, age long) must read the new data; an int age reads as long.
    assert client.register_schema(subject, Schema(USER_REQUIRED, "AVRO")) == second + 1
    client.set_compatibility(subject, "FULL_TRANSITIVE")
    narrowed = json.dumps(
        {"type": "record", "name": "User", "namespace": "t", "fields": [{"name": "name", "type": "string"}]}
    )
    refused = error_of(lambda: client.register_schema(subject, Schema(narrowed, "AVRO")))
    assert refused.error_code == 40901
    client.set_compatibility(subject, "NONE")
    assert client.register_schema(subject, Schema(narrowed, "AVRO")) == second + 2
    bad = error_of(lambda: client.set_compatibility(subject, "SIDEWAYS"))
    assert bad.http_status_code == 422 and bad.error_code == 42203


def test_lookups(client, subject):
    schema_id = client.register_schema(subject, Schema(USER_V1, "AVRO"))
    found = client.lookup_schema(subject, Schema(json.dumps(json.loads(USER_V1), indent=2), "AVRO"))
    assert (found.schema_id, found.version, found.subject) == (schema_id, 1, subject)
    assert json.loads(client.get_schema(schema_id).schema_str) == json.loads(USER_V1)
    assert client.get_version(subject, 1).schema_id == schema_id
    assert subject in client.get_subjects()
    other = subject.replace("-value", "-key")
    assert client.register_schema(other, Schema(USER_V1, "AVRO")) == schema_id
    assert {subject, other} <= set(client.get_subjects_by_schema_id(schema_id))
    assert error_of(lambda: client.lookup_schema(subject, Schema(USER_REQUIRED, "AVRO"))).error_code == 40403
    assert error_of(lambda: client.lookup_schema("nobody", Schema(USER_V1, "AVRO"))).error_code == 40401
    assert error_of(lambda: client.get_version(subject, 9)).error_code == 40402
    assert error_of(lambda: client.get_schema(999999)).error_code == 40403
    invalid = error_of(lambda: client.register_schema(subject, Schema('{"type": "record"}', "AVRO")))
    assert invalid.http_status_code == 422 and invalid.error_code == 42201


def test_soft_and_hard_deletes(client, subject):
    client.set_compatibility(subject, "NONE")
    client.register_schema(subject, Schema(USER_V1, "AVRO"))
    client.register_schema(subject, Schema(USER_REQUIRED, "AVRO"))
    assert error_of(lambda: client.delete_version(subject, 1, permanent=True)).error_code == 40407
    assert client.delete_version(subject, 1) == 1
    assert client.get_versions(subject) == [2]
    assert error_of(lambda: client.delete_version(subject, 1)).error_code == 40406
    assert client.delete_version(subject, 1, permanent=True) == 1
    assert error_of(lambda: client.delete_subject(subject, permanent=True)).error_code == 40405
    assert client.delete_subject(subject) == [2]
    assert subject not in client.get_subjects()
    assert error_of(lambda: client.get_versions(subject)).error_code == 40401
    assert client.delete_subject(subject, permanent=True) == [2]
    assert error_of(lambda: client.delete_subject(subject)).error_code == 40401


def test_confluent_bodies_content_type_and_modes(registry_broker, subject):
    url = registry_broker.http_url
    status, content_type, body = raw(f"{url}/subjects/{subject}/versions")
    assert (status, content_type) == (404, "application/vnd.schemaregistry.v1+json")
    assert body == {"error_code": 40401, "message": f"Subject '{subject}' not found."}
    status, _, registered = raw(f"{url}/subjects/{subject}/versions", "POST", {"schema": USER_V1})
    assert status == 200 and registered == {
        "id": raw(f"{url}/subjects/{subject}", "POST", {"schema": USER_V1})[2]["id"]
    }
    assert raw(f"{url}/subjects/{subject}/versions/latest/schema")[2] == json.loads(USER_V1)
    assert raw(f"{url}/subjects/{subject}/versions/zero")[2]["error_code"] == 42202
    assert raw(f"{url}/schemas/types")[2] == ["AVRO", "JSON", "PROTOBUF"]
    assert raw(f"{url}/config/{subject}")[2]["error_code"] == 40408
    assert raw(f"{url}/config/{subject}?defaultToGlobal=true")[2] == {"compatibilityLevel": "BACKWARD"}
    assert raw(f"{url}/mode")[2] == {"mode": "READWRITE"}
    assert raw(f"{url}/mode/{subject}", "PUT", {"mode": "READONLY"})[2] == {"mode": "READONLY"}
    assert raw(f"{url}/subjects/{subject}/versions", "POST", {"schema": USER_V2})[2]["error_code"] == 42205
    assert raw(f"{url}/mode/{subject}", "DELETE")[2] == {"mode": "READONLY"}
    assert raw(f"{url}/mode", "PUT", {"mode": "SIDEWAYS"})[2]["error_code"] == 42204
    assert (
        raw(f"{url}/compatibility/subjects/{subject}/versions/latest?verbose=true", "POST", {"schema": USER_REQUIRED})[
            2
        ]["is_compatible"]
        is False
    )
    status, _, body = raw(f"{url}/subjects/{subject}/versions", "POST", {"schemaType": "AVRO"})
    assert (status, body["error_code"]) == (422, 42201)


def test_bad_requests_get_confluent_errors_and_change_nothing(registry_broker, subject):
    url = registry_broker.http_url
    request = urllib.request.Request(
        f"{url}/subjects/{subject}/versions",
        data=b"{not json",
        method="POST",
        headers={"Content-Type": "application/vnd.schemaregistry.v1+json"},
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    assert caught.value.code == 400 and json.loads(caught.value.read())["error_code"] == 400
    assert raw(f"{url}/subjects/{subject}/versions", "POST", [1])[0] == 422  # type: ignore[arg-type]
    assert (
        raw(f"{url}/subjects/{subject}/versions", "POST", {"schema": USER_V1, "schemaType": "XML"})[2]["error_code"]
        == 42201
    )
    assert (
        raw(f"{url}/subjects/{subject}/versions", "POST", {"schema": USER_V1, "references": [{"name": "x"}]})[2][
            "error_code"
        ]
        == 42201
    )
    assert (
        raw(
            f"{url}/subjects/{subject}/versions",
            "POST",
            {"schema": USER_V1, "references": [{"name": "A", "subject": "missing", "version": 1}]},
        )[2]["error_code"]
        == 42201
    )
    assert raw(f"{url}/schemas/ids/abc")[2]["error_code"] == 40403
    assert raw(f"{url}/config", "PUT", {"compatibility": 7})[2]["error_code"] == 42203
    assert raw(f"{url}/subjects/{subject}/versions", "POST", {"schema": USER_V1, "id": 5})[2]["error_code"] == 42205
    assert subject not in raw(f"{url}/subjects?deleted=true")[2]
    assert raw(f"{url}/readyz")[0] == 200  # the console's listener routes are still served beside


def test_a_restart_keeps_every_schema_and_the_id_counter(tmp_path):
    broker = BrokerProcess(["--data-dir", str(tmp_path), "--http-port", "0"]).start()
    client = SchemaRegistryClient({"url": broker.http_url})
    first = client.register_schema("a-value", Schema(USER_V1, "AVRO"))
    second = client.register_schema("a-value", Schema(USER_V2, "AVRO"))
    client.set_compatibility("a-value", "FULL")
    client.register_schema("b-value", Schema(USER_V1, "AVRO"))
    client.delete_subject("b-value")
    assert broker.stop() == 0, broker.log()

    again = BrokerProcess(["--data-dir", str(tmp_path), "--http-port", "0"]).start()
    try:
        client = SchemaRegistryClient({"url": again.http_url})
        assert client.get_versions("a-value") == [1, 2]
        assert client.get_version("a-value", 2).schema_id == second
        assert json.loads(client.get_schema(first).schema_str) == json.loads(USER_V1)
        assert client.get_compatibility("a-value") == "FULL"
        assert client.get_subjects() == ["a-value"]
        third = json.dumps({"type": "record", "name": "Other", "fields": [{"name": "x", "type": "int"}]})
        assert client.register_schema("c-value", Schema(third, "AVRO")) == second + 1
    finally:
        assert again.stop() == 0, again.log()


ORDER_V1 = json.dumps(
    {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "Order",
        "type": "object",
        "properties": {"id": {"type": "integer"}, "item": {"type": "string"}},
        "required": ["id"],
        "additionalProperties": False,
    }
)
ORDER_V2 = json.dumps(
    {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "Order",
        "type": "object",
        "properties": {"id": {"type": "integer"}, "item": {"type": "string"}, "qty": {"type": "number"}},
        "required": ["id"],
        "additionalProperties": False,
    }
)
ORDER_BAD = json.dumps(
    {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "Order",
        "type": "object",
        "properties": {"id": {"type": "string"}},
        "required": ["id"],
        "additionalProperties": False,
    }
)


def test_json_serializer_and_deserializer_round_trip_and_evolution(registry_broker, client):
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    serializer = JSONSerializer(ORDER_V1, client)
    producer = Producer({"bootstrap.servers": registry_broker.bootstrap})
    orders = [{"id": i, "item": f"thing{i}"} for i in range(3)]
    for order in orders:
        producer.produce(topic, value=serializer(order, SerializationContext(topic, MessageField.VALUE)))
    assert producer.flush(10) == 0
    latest = client.get_latest_version(f"{topic}-value")
    assert latest.schema.schema_type == "JSON"
    assert client.register_schema(f"{topic}-value", Schema(ORDER_V2, "JSON")) == latest.schema_id + 1
    refused = error_of(lambda: client.register_schema(f"{topic}-value", Schema(ORDER_BAD, "JSON")))
    assert refused.error_code == 40901
    found = client.lookup_schema(f"{topic}-value", Schema(ORDER_V1, "JSON"))
    assert (found.schema_id, found.version) == (latest.schema_id, 1)

    consumer = Consumer(
        {"bootstrap.servers": registry_broker.bootstrap, "group.id": topic, "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic])
    deserializer = JSONDeserializer(None, schema_registry_client=client)
    seen = []
    try:
        while len(seen) < len(orders):
            message = consumer.poll(10)
            assert message is not None and message.error() is None
            seen.append(deserializer(message.value(), SerializationContext(topic, MessageField.VALUE)))
    finally:
        consumer.close()
    assert seen == orders
