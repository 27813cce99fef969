"""Kafka 4.2's topic configs trafka stores and describes without acting on them (compression levels,
replication throttles, tiered storage, max.decompressed.message.bytes): ConfigDef's checks and words,
read from LogConfig's ConfigDef in the 4.2.2 jar (tests/differential compares them with Kafka's)."""

from __future__ import annotations

import pytest

from trafka.domain.configs import TOPIC_CONFIG_DEFAULTS
from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.topic_config_checks import validate_topic_configs

THROTTLED = (
    "must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],"
    "[partitionId]:[brokerId],..."
)


@pytest.mark.parametrize(
    ("config", "value", "message"),
    [
        (
            "compression.gzip.level",
            "0",
            "Invalid value 0 for configuration compression.gzip.level: Value must be between 1 and 9 or equal to -1",
        ),
        (
            "compression.gzip.level",
            "abc",
            "Invalid value abc for configuration compression.gzip.level: Not a number of type INT",
        ),
        (
            "compression.lz4.level",
            "0",
            "Invalid value 0 for configuration compression.lz4.level: Value must be at least 1",
        ),
        (
            "compression.zstd.level",
            "23",
            "Invalid value 23 for configuration compression.zstd.level: Value must be no more than 22",
        ),
        (
            "leader.replication.throttled.replicas",
            "x",
            "Invalid value [x] for configuration "
            f"leader.replication.throttled.replicas: leader.replication.throttled.replicas {THROTTLED}",
        ),
        (
            "follower.replication.throttled.replicas",
            " 0:1 , 1:x ",
            "Invalid value [0:1, 1:x] for configuration "
            f"follower.replication.throttled.replicas: follower.replication.throttled.replicas {THROTTLED}",
        ),
        (
            "local.retention.ms",
            "-3",
            "Invalid value -3 for configuration local.retention.ms: Value must be at least -2",
        ),
        (
            "max.decompressed.message.bytes",
            "0",
            "Invalid value 0 for configuration max.decompressed.message.bytes: Value must be at least 1",
        ),
        (
            "remote.storage.enable",
            "maybe",
            "Invalid value maybe for configuration remote.storage.enable: Expected value to be either true or false",
        ),
        (
            "remote.storage.enable",
            "true",
            "Tiered Storage functionality is disabled in the broker. Topic cannot be "
            "configured with remote log storage.",
        ),
    ],
)
def test_refused_as_kafka_refuses_them(config, value, message):
    with pytest.raises(KafkaError) as refused:
        validate_topic_configs({config: value})
    assert (refused.value.code, refused.value.message) == (ErrorCode.INVALID_CONFIG, message)


@pytest.mark.parametrize(
    ("config", "value"),
    [
        ("compression.gzip.level", "-1"),
        ("compression.gzip.level", "9"),
        ("compression.zstd.level", "-131072"),
        ("leader.replication.throttled.replicas", "*"),
        ("leader.replication.throttled.replicas", "0:1,1:2"),
        ("follower.replication.throttled.replicas", ""),
        ("local.retention.bytes", "-2"),
        ("remote.log.copy.disable", "true"),
        ("remote.storage.enable", "false"),
    ],
)
def test_accepted_as_kafka_accepts_them(config, value):
    assert validate_topic_configs({config: value}) == {config: value}


def test_their_defaults_are_kafkas():
    assert {
        name: TOPIC_CONFIG_DEFAULTS[name][0]
        for name in (
            "compression.gzip.level",
            "compression.lz4.level",
            "compression.zstd.level",
            "leader.replication.throttled.replicas",
            "local.retention.ms",
            "max.decompressed.message.bytes",
            "remote.storage.enable",
        )
    } == {
        "compression.gzip.level": "-1",
        "compression.lz4.level": "9",
        "compression.zstd.level": "3",
        "leader.replication.throttled.replicas": "",
        "local.retention.ms": "-2",
        "max.decompressed.message.bytes": "2147483639",
        "remote.storage.enable": "false",
    }


def test_a_minimum_compaction_lag_over_the_maximum_is_kafkas_conflict():
    with pytest.raises(KafkaError) as refused:
        validate_topic_configs({"min.compaction.lag.ms": "2000", "max.compaction.lag.ms": "1000"})
    assert (
        refused.value.message
        == "conflict topic config setting min.compaction.lag.ms (2000) > max.compaction.lag.ms (1000)"
    )
    assert validate_topic_configs({"min.compaction.lag.ms": "1000", "max.compaction.lag.ms": "1000"})
    # an alter is checked against the topic's configs once altered
    with pytest.raises(KafkaError):
        validate_topic_configs(
            {"min.compaction.lag.ms": "2000"}, {"max.compaction.lag.ms": "1000", "min.compaction.lag.ms": "2000"}
        )
