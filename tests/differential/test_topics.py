"""Topic administration side by side: creation errors a client can reach, Metadata for unknown topics."""

from __future__ import annotations

import uuid

import pytest
from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

# The first test to ask for `apache_kafka` waits for Maven and Kafka's start (ADR 63).
pytestmark = pytest.mark.timeout(900)


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _create(name: str, partitions: int = 1, replication: int = 1, configs=(), validate_only: bool = False):
    topic = CreateTopicsRequest.CreatableTopic(
        name=name,
        num_partitions=partitions,
        replication_factor=replication,
        assignments=[],
        configs=[CreateTopicsRequest.CreatableTopic.CreatableTopicConfig(name=k, value=v) for k, v in configs],
    )
    return CreateTopicsRequest[7](topics=[topic], timeout_ms=10000, validate_only=validate_only)


CREATE_CASES = {
    "valid, validate only": {"partitions": 3, "validate_only": True},
    "zero partitions": {"partitions": 0},
    "replication factor above the brokers": {"replication": 3, "validate_only": True},
    "unknown config": {"configs": [("no.such.config", "1")], "validate_only": True},
    "bad config value": {"configs": [("retention.ms", "soon")], "validate_only": True},
    "bad cleanup policy": {"configs": [("cleanup.policy", "sometimes")], "validate_only": True},
    # Of two invalid values Kafka names the first in its LogConfig's definition order (ConfigDef.parse),
    # not the request's: segment.bytes before retention.ms, max.message.bytes before cleanup.policy
    # (trafka's `_KAFKA_CHECK_ORDER` in domain/topic_config_checks.py). Given here in the other order.
    "two bad config values": {
        "configs": [("retention.ms", "soon"), ("segment.bytes", "big")],
        "validate_only": True,
    },
    "two bad config values, later keys": {
        "configs": [("compression.type", "brotli"), ("cleanup.policy", "sometimes"), ("max.message.bytes", "-5")],
        "validate_only": True,
    },
}


@pytest.mark.parametrize("case", sorted(CREATE_CASES))
def test_create_topics(pair, case):
    name = _name("create")  # the same name on both brokers
    pair.raw(f"CreateTopics {case}", lambda: _create(name, **CREATE_CASES[case]), CreateTopicsResponse, 7)


@pytest.mark.parametrize("name", ["bad name!", "x" * 250, ".", ".."])
def test_create_topics_with_an_invalid_name(pair, name):
    pair.raw(
        f"CreateTopics invalid name {name[:10]}", lambda: _create(name, validate_only=True), CreateTopicsResponse, 7
    )


def test_metadata_of_an_unknown_topic_without_auto_creation(pair):
    name = _name("unknown")

    def make():
        topic = MetadataRequest.MetadataRequestTopic(name=name, topic_id=None)
        return MetadataRequest[12](topics=[topic], allow_auto_topic_creation=False)

    pair.raw("Metadata unknown topic", make, MetadataResponse, 12)
