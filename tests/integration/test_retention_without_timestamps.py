"""Records without a timestamp live `retention.ms` after they were written (issue 44, item 1).

librdkafka's `produce(..., timestamp=-1)` writes records with timestamp -1 and a batch header with
MaxTimestamp 0; a raw kafka-python batch carries -1 in both. Kafka stores the records' largest
timestamp (-1) and keeps a segment without record timestamps by its last-modified time. Before the
fix, trafka took such segments for 1970 and deleted them at the next retention check. The real
server with the filesystem store and the manual clock: nothing sleeps.
"""

from __future__ import annotations

import os
import struct

import crc32c
from confluent_kafka import Producer
from kafka.protocol.producer import ProduceRequest, ProduceResponse

import trafka
from tests.batches import make_batch

from .clients import TIMEOUT
from .wire import WireClient

HOUR_MS = 3_600_000


def _produce_raw(bootstrap: str, topic: str, batch: bytes) -> None:
    data = ProduceRequest.TopicProduceData
    request = ProduceRequest[9](
        transactional_id=None,
        acks=-1,
        timeout_ms=5000,
        topic_data=[data(name=topic, partition_data=[data.PartitionProduceData(index=0, records=batch)])],
    )
    with WireClient(bootstrap) as wire:
        response = wire.request(request, ProduceResponse, 9)
    assert response.responses[0].partition_responses[0].error_code == 0


def _librdkafka_header(batch: bytes) -> bytes:
    """librdkafka's msgset writer: MaxTimestamp 0 when every record has -1 (CRC recomputed)."""
    patched = bytearray(batch)
    struct.pack_into(">q", patched, 35, 0)
    struct.pack_into(">I", patched, 17, crc32c.crc32c(bytes(patched[21:])))
    return bytes(patched)


def test_records_without_a_timestamp_survive_until_retention_ms_after_they_were_written(tmp_path):
    with trafka.Broker(clock="manual", data_dir=str(tmp_path)) as broker:
        broker.create_topic("t", 1, {"retention.ms": str(HOUR_MS)})
        producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 0})
        producer.produce("t", b"librdkafka", timestamp=-1)
        assert producer.flush(TIMEOUT) == 0
        _produce_raw(broker.bootstrap_servers, "t", make_batch([(-1, None, b"kafka-python")]))
        _produce_raw(broker.bootstrap_servers, "t", _librdkafka_header(make_batch([(-1, None, b"raw librdkafka")])))
        assert [(r.timestamp, r.value) for r in broker.records("t")] == [
            (-1, b"librdkafka"),
            (-1, b"kafka-python"),
            (-1, b"raw librdkafka"),
        ]
        broker.advance(120)  # the next retention checks, two minutes on: the records were deleted here
        broker.advance(1800)
        assert len(broker.records("t")) == 3
        broker.advance(1800)  # an hour and two minutes since they were written
        assert broker.records("t") == []


def test_a_restart_keeps_them_by_the_segment_files_modification_time(tmp_path):
    with trafka.Broker(data_dir=str(tmp_path)) as broker:
        broker.create_topic("t", 1, {"retention.ms": str(HOUR_MS), "internal.segment.bytes": "100"})
        for i in range(3):  # a segment each
            _produce_raw(broker.bootstrap_servers, "t", _librdkafka_header(make_batch([(-1, None, b"%d" % i * 80)])))
    log = os.path.join(tmp_path, "t-0", f"{0:020d}.log")
    hour_ago = os.stat(log).st_mtime - 3700
    os.utime(log, (hour_ago, hour_ago))  # the first segment was last written over an hour ago
    with trafka.Broker(clock="manual", data_dir=str(tmp_path)) as broker:
        broker.advance(31)  # the first retention check (log.initial.task.delay.ms)
        assert [r.offset for r in broker.records("t")] == [1, 2]
