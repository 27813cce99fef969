"""PROTOBUF schemas in the built-in registry, with confluent-kafka's ProtobufSerializer/Deserializer
and SchemaRegistryClient against a real broker (message classes are built at test time)."""

from __future__ import annotations

import base64
import uuid

from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2

from ..protobuf_classes import message_classes
from .broker import BrokerProcess
from .test_schema_registry import client, error_of, raw, registry_broker, subject  # noqa: F401 - fixtures

USER_V1 = """
syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";

// A customer.
message User {
  string name = 1;
  int64 id = 2;
  google.protobuf.Timestamp joined = 3;
  map<string, int32> scores = 4;
  repeated Address addresses = 5;
  Kind kind = 6;
  enum Kind { PERSON = 0; COMPANY = 1; }
}
message Address { string city = 1; }
"""
# Compatible by Confluent's rules: a field added, one renamed, int64 read as uint64, a message added.
USER_V2 = (
    USER_V1.replace("int64 id = 2;", "uint64 id = 2;")
    .replace("string name = 1;", "string full_name = 1;")
    .replace("Kind kind = 6;", "Kind kind = 6;\n  string email = 7;")
    + "message Note { string text = 1; }\n"
)
USER_SCALAR_CHANGED = USER_V1.replace("int64 id = 2;", "string id = 2;")
USER_KIND_CHANGED = USER_V1.replace("string name = 1;", "Address name = 1;")
USER_MESSAGE_REMOVED = USER_V1.replace("repeated Address addresses = 5;", "").replace(
    "message Address { string city = 1; }", ""
)


def produce_and_consume(broker, topic, serializer, deserializer, messages):
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for message in messages:
        producer.produce(topic, value=serializer(message, SerializationContext(topic, MessageField.VALUE)))
    assert producer.flush(30) == 0
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": topic, "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    raws, seen = [], []
    try:
        while len(seen) < len(messages):
            record = consumer.poll(30)
            assert record is not None and record.error() is None
            raws.append(record.value())
            seen.append(deserializer(record.value(), SerializationContext(topic, MessageField.VALUE)))
    finally:
        consumer.close()
    return raws, seen


def test_protobuf_serializer_and_deserializer_round_trip_through_the_broker(registry_broker, client):
    topic = f"users-{uuid.uuid4().hex[:8]}"
    classes = message_classes({"shop/user.proto": USER_V1})
    User, Address = classes["shop.User"], classes["shop.Address"]
    users = [User(name=f"u{i}", id=i, scores={"a": i}, addresses=[Address(city="Oslo")], kind=i % 2) for i in range(4)]
    users[0].joined.FromSeconds(1_700_000_000)
    serializer = ProtobufSerializer(User, client)
    deserializer = ProtobufDeserializer(User, {}, schema_registry_client=client)
    raws, seen = produce_and_consume(registry_broker, topic, serializer, deserializer, users)
    assert seen == users

    latest = client.get_latest_version(f"{topic}-value")
    assert latest.schema.schema_type == "PROTOBUF" and latest.version == 1
    # Registered as a base64 FileDescriptorProto, answered as .proto text.
    assert latest.schema.schema_str.startswith('syntax = "proto3";\npackage shop;')
    assert "message User {" in latest.schema.schema_str and "map<string, int32> scores = 4;" in latest.schema.schema_str
    # Confluent's framing: magic 0, the id, the message-index array [0] as the single byte 0.
    assert all(r[0] == 0 and int.from_bytes(r[1:5], "big") == latest.schema_id and r[5] == 0 for r in raws)
    # Same schema, same id: the text form looks up to the version the serializer registered.
    found = client.lookup_schema(f"{topic}-value", Schema(USER_V1, "PROTOBUF"))
    assert (found.schema_id, found.version) == (latest.schema_id, 1)
    assert client.register_schema(f"other-{topic}-value", Schema(USER_V1, "PROTOBUF")) == latest.schema_id
    # ?format=serialized is the base64 FileDescriptorProto the deserializer asked for.
    status, _, body = raw(f"{registry_broker.http_url}/schemas/ids/{latest.schema_id}?format=serialized")
    assert status == 200
    file = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(body["schema"]))
    assert [m.name for m in file.message_type] == ["User", "Address"]
    # A serializer that only uses the latest version reads it in that form too (with a client of its
    # own: the client caches the latest version by subject alone, whatever form was asked for).
    fresh = SchemaRegistryClient({"url": registry_broker.http_url})
    latest_only = ProtobufSerializer(User, fresh, {"use.latest.version": True, "auto.register.schemas": False})
    framed = latest_only(users[1], SerializationContext(topic, MessageField.VALUE))
    assert int.from_bytes(framed[1:5], "big") == latest.schema_id and framed[6:] == users[1].SerializeToString()


def test_a_second_message_of_the_file_is_framed_with_its_index(registry_broker, client):
    topic = f"addresses-{uuid.uuid4().hex[:8]}"
    Address = message_classes({"shop/user.proto": USER_V1})["shop.Address"]
    serializer = ProtobufSerializer(Address, client)
    deserializer = ProtobufDeserializer(Address, {}, schema_registry_client=client)
    raws, seen = produce_and_consume(registry_broker, topic, serializer, deserializer, [Address(city="Rome")])
    assert seen == [Address(city="Rome")]
    assert raws[0][5:7] == b"\x02\x02"  # one index (zigzag 1), index 1 (zigzag 1)


def test_evolution_is_accepted_and_rejected_per_level(client, subject):
    first = client.register_schema(subject, Schema(USER_V1, "PROTOBUF"))
    assert client.test_compatibility(subject, Schema(USER_V2, "PROTOBUF"))
    for changed, difference in [
        (USER_SCALAR_CHANGED, "FIELD_SCALAR_KIND_CHANGED"),
        (USER_KIND_CHANGED, "FIELD_KIND_CHANGED"),
        (USER_MESSAGE_REMOVED, "MESSAGE_REMOVED"),
    ]:
        refused = error_of(lambda changed=changed: client.register_schema(subject, Schema(changed, "PROTOBUF")))
        assert refused.http_status_code == 409 and refused.error_code == 40901
        assert difference in refused.error_message
    assert client.register_schema(subject, Schema(USER_V2, "PROTOBUF")) == first + 1

    # A message dropped: refused under BACKWARD (MESSAGE_REMOVED), accepted under FORWARD, where the
    # latest schema reads the new data and finds Note merely added.
    without_note = USER_V2.replace("message Note { string text = 1; }\n", "")
    assert not client.test_compatibility(subject, Schema(without_note, "PROTOBUF"))
    client.set_compatibility(subject, "FORWARD")
    assert client.register_schema(subject, Schema(without_note, "PROTOBUF")) == first + 2
    client.set_compatibility(subject, "BACKWARD_TRANSITIVE")
    v3 = USER_V2.replace("string email = 7;", "string email = 7;\n  sint64 rank = 8;")
    assert client.register_schema(subject, Schema(v3, "PROTOBUF")) == first + 3
    v4 = v3.replace("uint64 id = 2;", "bool id = 2;")  # general numbers read each other
    assert client.test_compatibility(subject, Schema(v4, "PROTOBUF"))
    v4_bad = v3.replace("sint64 rank = 8;", "int64 rank = 8;")
    assert not client.test_compatibility(subject, Schema(v4_bad, "PROTOBUF"))
    client.set_compatibility(subject, "NONE")
    assert client.register_schema(subject, Schema(v4_bad, "PROTOBUF")) == first + 4


def test_references_are_registered_and_resolved_by_the_serializers(registry_broker, client):
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    common = 'syntax = "proto3";\npackage common;\nmessage Money { string currency = 1; int64 units = 2; }\n'
    order = (
        'syntax = "proto3";\npackage shop;\nimport "common/money.proto";\n'
        "message Order { string id = 1; common.Money total = 2; }\n"
    )
    classes = message_classes({"common/money.proto": common, "shop/order.proto": order})
    Order, Money = classes["shop.Order"], classes["common.Money"]
    orders = [Order(id="o1", total=Money(currency="EUR", units=12))]
    serializer = ProtobufSerializer(Order, client)
    deserializer = ProtobufDeserializer(Order, {}, schema_registry_client=client)
    _, seen = produce_and_consume(registry_broker, topic, serializer, deserializer, orders)
    assert seen == orders
    latest = client.get_latest_version(f"{topic}-value")
    assert [(r.name, r.subject, r.version) for r in latest.schema.references] == [
        ("common/money.proto", "common/money.proto", 1)
    ]
    assert 'import "common/money.proto";' in latest.schema.schema_str

    # A changed referenced type is compared: Money.units int64 -> string is refused.
    client.set_compatibility("common/money.proto", "NONE")
    bad_common = Schema(common.replace("int64 units", "string units"), "PROTOBUF")
    assert client.register_schema("common/money.proto", bad_common) > latest.schema_id
    moved = Schema(
        latest.schema.schema_str, "PROTOBUF", [SchemaReference("common/money.proto", "common/money.proto", 2)]
    )
    refused = error_of(lambda: client.register_schema(f"{topic}-value", moved))
    assert refused.error_code == 40901 and "FIELD_SCALAR_KIND_CHANGED" in refused.error_message
    assert "FIELD_NAMED_TYPE_CHANGED" in refused.error_message


def test_google_types_need_no_references(registry_broker, client):
    topic = f"prices-{uuid.uuid4().hex[:8]}"
    text = (
        'syntax = "proto3";\npackage shop;\nimport "google/type/money.proto";\nimport "google/type/date.proto";\n'
        "message Price { google.type.Money amount = 1; google.type.Date valid_until = 2; }\n"
    )
    Price = message_classes({"shop/price.proto": text})["shop.Price"]
    price = Price()
    price.amount.currency_code, price.amount.units, price.valid_until.year = "EUR", 12, 2027
    serializer = ProtobufSerializer(Price, client)
    deserializer = ProtobufDeserializer(Price, {}, schema_registry_client=client)
    _, seen = produce_and_consume(registry_broker, topic, serializer, deserializer, [price])
    assert seen == [price]
    assert client.get_latest_version(f"{topic}-value").schema.references == []


def test_bad_protobuf_schemas_get_confluent_errors(registry_broker, subject):
    url = f"{registry_broker.http_url}/subjects/{subject}/versions"
    status, _, body = raw(
        url, "POST", {"schemaType": "PROTOBUF", "schema": 'syntax = "proto3";\nmessage X { strin a = 1; }'}
    )
    assert status == 422 and body["error_code"] == 42201 and '"strin" is not defined' in body["message"]
    status, _, body = raw(
        url,
        "POST",
        {"schemaType": "PROTOBUF", "schema": 'syntax = "proto3";\nimport "missing.proto";\nmessage X { int32 a = 1; }'},
    )
    assert status == 422 and body["error_code"] == 42201
    status, _, body = raw(url, "POST", {"schemaType": "PROTOBUF", "schema": "bm90IGEgZGVzY3JpcHRvcg=="})
    assert status == 422 and body["error_code"] == 42201
    assert raw(f"{registry_broker.http_url}/subjects")[2].count(subject) == 0
    assert "PROTOBUF" in raw(f"{registry_broker.http_url}/schemas/types")[2]


def test_a_restart_keeps_protobuf_schemas_and_their_ids(tmp_path):
    broker = BrokerProcess(["--data-dir", str(tmp_path), "--http-port", "0"]).start()
    client = SchemaRegistryClient({"url": broker.http_url})
    first = client.register_schema("p-value", Schema(USER_V1, "PROTOBUF"))
    text = client.get_schema(first).schema_str
    assert broker.stop() == 0, broker.log()

    again = BrokerProcess(["--data-dir", str(tmp_path), "--http-port", "0"]).start()
    try:
        client = SchemaRegistryClient({"url": again.http_url})
        assert client.get_schema(first).schema_str == text
        assert client.lookup_schema("p-value", Schema(USER_V1, "PROTOBUF")).schema_id == first
        assert not client.test_compatibility("p-value", Schema(USER_SCALAR_CHANGED, "PROTOBUF"))
    finally:
        assert again.stop() == 0, again.log()
