"""Tests compile kafka-python classes from trafka's schemas (the codec's oracle, clients of the APIs
kafka-python lacks): kafka-python registers each compiled response class as the one its own clients read
for that API key. kafka-python's clients in the same test run must still read with kafka-python's classes
(a KafkaConsumer read ApiVersions v4 with a class whose header is flexible and failed, issue 39: the
user's client library is theirs)."""

from __future__ import annotations

from kafka.protocol.admin import DeleteGroupsResponse
from kafka.protocol.api_header import ResponseClassRegistry
from kafka.protocol.metadata import ApiVersionsResponse
from kafka.protocol.producer.transaction import TxnOffsetCommitResponse

import tests.kafka_python_messages
from tests.kafka_python_oracle import kafka_python_class_from_trafkas_schema

KAFKA_PYTHONS = (ApiVersionsResponse, DeleteGroupsResponse, TxnOffsetCommitResponse)


def _read_by_kafka_python_clients() -> list[bool]:
    registry = ResponseClassRegistry._response_class_registry
    return [registry[ours.API_KEY]._VERSIONS is ours._VERSIONS for ours in KAFKA_PYTHONS]


def test_compiling_trafkas_schemas_leaves_kafka_pythons_response_classes_registered() -> None:
    for ours in KAFKA_PYTHONS:
        kafka_python_class_from_trafkas_schema.__wrapped__(ours.__name__)
    assert _read_by_kafka_python_clients() == [True] * len(KAFKA_PYTHONS)


def test_the_messages_kafka_python_lacks_leave_its_own_registered() -> None:  # (imported above)
    assert _read_by_kafka_python_clients() == [True] * len(KAFKA_PYTHONS)
    # an API kafka-python does not declare stays readable by its clients
    heartbeat = tests.kafka_python_messages.ConsumerGroupHeartbeatResponse
    registered = ResponseClassRegistry._response_class_registry.get(heartbeat.API_KEY)
    # the class other tests compiled for it later may be the one registered (named with its version)
    assert registered is not None and registered.__name__.startswith(heartbeat.__name__)
