"""Topic configs, DeleteRecords and retention through real admin clients on the filesystem store."""

from __future__ import annotations

import os
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
    ResourceType,
)

from tests.waiting import eventually

from .broker import BrokerProcess


@pytest.fixture(scope="module")
def fs_broker(tmp_path_factory):
    data = tmp_path_factory.mktemp("logs")
    broker = BrokerProcess(
        ["--data-dir", str(data)],
        env={"TRAFKA_STORAGE_RETENTION_CHECK_INTERVAL_MS": "500", "TRAFKA_STORAGE_RETENTION_INITIAL_DELAY_MS": "0"},
    ).start()
    broker.data_dir = data
    yield broker
    assert broker.stop() == 0, broker.log()


def _admin(broker) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap, "log_level": 0})


def _produce(broker, topic: str, count: int, size: int = 100, timestamp: int | None = None) -> None:
    """One batch per message (a flush after each), so segments can roll between them."""
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0, "log_level": 0})
    for i in range(count):
        kwargs = {"timestamp": timestamp} if timestamp is not None else {}
        producer.produce(topic, value=b"%06d" % i + b"x" * size, partition=0, **kwargs)
        assert producer.flush(10) == 0


def _watermarks(broker, topic: str) -> tuple[int, int]:
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "w", "log_level": 0})
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    finally:
        consumer.close()


def _configs(admin: AdminClient, topic: str) -> dict[str, str]:
    resource = ConfigResource(ResourceType.TOPIC, topic)
    return {k: v.value for k, v in admin.describe_configs([resource])[resource].result(10).items()}


def test_incremental_alter_configs_shows_in_describe_configs_and_survives_restart(fs_broker, topic_name, tmp_path):
    admin = _admin(fs_broker)
    admin.create_topics([NewTopic(topic_name, 1, 1, config={"retention.ms": "86400000"})])[topic_name].result(10)
    resource = ConfigResource(
        ResourceType.TOPIC,
        topic_name,
        incremental_configs=[
            ConfigEntry("segment.bytes", "1048576", incremental_operation=AlterConfigOpType.SET),
            ConfigEntry("retention.ms", None, incremental_operation=AlterConfigOpType.DELETE),
        ],
    )
    admin.incremental_alter_configs([resource])[resource].result(10)
    configs = _configs(admin, topic_name)
    assert configs["segment.bytes"] == "1048576"
    assert configs["retention.ms"] == "604800000"  # back to the default
    bad = ConfigResource(
        ResourceType.TOPIC,
        topic_name,
        incremental_configs=[ConfigEntry("no.such", "1", incremental_operation=AlterConfigOpType.SET)],
    )
    with pytest.raises(Exception, match="INVALID_CONFIG|Unknown topic config"):
        admin.incremental_alter_configs([bad])[bad].result(10)


def test_delete_records_moves_the_low_watermark(fs_broker, topic_name):
    admin = _admin(fs_broker)
    admin.create_topics([NewTopic(topic_name, 1, 1)])[topic_name].result(10)
    _produce(fs_broker, topic_name, 20)
    futures = admin.delete_records([TopicPartition(topic_name, 0, 12)])
    (result,) = [f.result(10) for f in futures.values()]
    assert result.low_watermark == 12
    assert _watermarks(fs_broker, topic_name) == (12, 20)


def test_retention_deletes_old_segments_in_the_background(fs_broker, topic_name):
    admin = _admin(fs_broker)
    admin.create_topics(
        [NewTopic(topic_name, 1, 1, config={"internal.segment.bytes": "2000", "retention.ms": "60000"})]
    )[topic_name].result(10)
    old = int(time.time() * 1000) - 3_600_000  # an hour ago: past retention.ms
    _produce(fs_broker, topic_name, 30, size=200, timestamp=old)
    segments_before = sorted(n for n in os.listdir(fs_broker.data_dir / f"{topic_name}-0") if n.endswith(".log"))
    assert len(segments_before) > 2
    eventually(
        lambda: _watermarks(fs_broker, topic_name)[0] > 0, 15, what="retention to move the log start", interval=0.2
    )
    low, high = _watermarks(fs_broker, topic_name)
    assert high == 30 and low > 0
    remaining = sorted(n for n in os.listdir(fs_broker.data_dir / f"{topic_name}-0") if n.endswith(".log"))
    assert remaining[0] == f"{low:020d}.log"
    assert len(remaining) < len(segments_before)
