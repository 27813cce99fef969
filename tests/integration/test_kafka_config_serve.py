"""`trafka serve server.properties`: Kafka's own file starts the broker, and the broker's log.* defaults
reach its topics (DescribeConfigs on the broker and on a topic, and segments rolling at them)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic

from .broker import BrokerProcess

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_kafkas_server_properties_starts_trafka(tmp_path):
    # The file as Kafka ships it; flags (later, so winning) only move it to a free port and a temp dir,
    # and advertise that port (the file advertises localhost:9092).
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    broker = BrokerProcess(
        [
            str(FIXTURES / "kafka-4.0-server.properties"),
            "--data-dir",
            str(tmp_path),
            "--port",
            port,
            "--advertised-port",
            port,
        ]
    ).start()
    try:
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
        configs = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "1")], config_filter="all")
        admin.close()
        assert configs["broker"]["1"]["log.retention.ms"]["value"] == str(168 * 3_600_000)
        assert "Kafka configs trafka does not implement, ignored: " in broker.log()
        assert "controller.quorum.voters" in broker.log()
    finally:
        assert broker.stop() == 0, broker.log()


def test_broker_log_defaults_reach_topics(tmp_path):
    props = tmp_path / "server.properties"
    props.write_text("log.retention.hours=2\nlog.segment.bytes=1048576\nlog.dirs=" + str(tmp_path / "logs") + "\n")
    broker = BrokerProcess(["--config", str(props)]).start()
    try:
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
        admin.create_topics([NewTopic("rolled", 1, 1, topic_configs={"retention.bytes": "99999"})])
        described = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "rolled")], config_filter="all")
        topic = described["topic"]["rolled"]
        # the hours' value, with Kafka's source: DEFAULT_CONFIG, as Kafka 4.2.2 answers the same request
        # (its ConfigHelper shows no synonym, hence no source, when log.retention.ms itself is unset: ADR 140)
        assert (topic["retention.ms"]["value"], topic["retention.ms"]["config_source"]) == (
            "7200000",
            "DEFAULT_CONFIG",
        )
        assert (topic["segment.bytes"]["value"], topic["segment.bytes"]["config_source"]) == (
            "1048576",
            "STATIC_BROKER_CONFIG",
        )
        assert topic["retention.bytes"]["config_source"] == "DYNAMIC_TOPIC_CONFIG"
        assert topic["flush.ms"]["config_source"] == "DEFAULT_CONFIG"
        broker_configs = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "1")], config_filter="all")
        assert broker_configs["broker"]["1"]["log.segment.bytes"]["value"] == "1048576"
        admin.close()

        producer = KafkaProducer(bootstrap_servers=broker.bootstrap, linger_ms=0)
        for _ in range(6):  # 1.2 MB: past Kafka's smallest log.segment.bytes
            producer.send("rolled", b"x" * 200_000).get(10)
        producer.close()
        segments = [f for f in os.listdir(tmp_path / "logs" / "rolled-0") if f.endswith(".log")]
        assert len(segments) > 1, "segments roll at the broker's log.segment.bytes"
    finally:
        assert broker.stop() == 0, broker.log()
