"""Hostile clients on Kafka 4's APIs (issue 42), over the raw wire against a real broker.

Each finding is closed as Apache Kafka 4.2 closes it; each test here failed before its fix.
- 1: a ConsumerGroupHeartbeat regex is compiled and matched by RE2 off the event loop (Kafka: RE2/J in
  a background executor); what RE2 cannot express is INVALID_REGULAR_EXPRESSION.
- 5: a compressed batch is inflated in a bounded stream: a 16 KB zstd batch declaring 512 MiB is
  INVALID_RECORD on a compacted topic and a partition error for ListOffsets by timestamp, with the
  broker's memory bounded; a batch whose body holds more than its declared record count is
  INVALID_RECORD, as Kafka's LogValidator refuses it.
"""

from __future__ import annotations

import select
import struct
import time
import uuid

import crc32c
import zstandard
from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.consumer import ListOffsetsRequest, ListOffsetsResponse
from kafka.protocol.metadata import MetadataRequest, MetadataResponse
from kafka.protocol.producer import ProduceRequest, ProduceResponse

from tests.batches import make_batch
from tests.kafka_python_messages import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    ShareAcknowledgeRequest,
    ShareAcknowledgeResponse,
)

from .wire import WireClient

INVALID_RECORD = 87
CORRUPT_MESSAGE = 2
INVALID_REGULAR_EXPRESSION = 128
PROMPT_S = 1.0  # another connection's well-formed request is answered within this


def create_topic(bootstrap: str, name: str, partitions: int = 1, configs: dict[str, str] | None = None) -> None:
    Topic = CreateTopicsRequest.CreatableTopic
    Config = Topic.CreatableTopicConfig
    request = CreateTopicsRequest[5](
        topics=[
            Topic(
                name=name,
                num_partitions=partitions,
                replication_factor=1,
                assignments=[],
                configs=[Config(name=k, value=v) for k, v in (configs or {}).items()],
            )
        ],
        timeout_ms=10_000,
        validate_only=False,
    )
    with WireClient(bootstrap) as client:
        answer = client.request(request, CreateTopicsResponse, 5)
    assert answer.topics[0].error_code in (0, 36), answer


def round_trip_s(client: WireClient) -> float:
    started = time.monotonic()
    assert client.request(MetadataRequest[1](topics=[]), MetadataResponse, 1).brokers
    return time.monotonic() - started


def join_with_regex(client: WireClient, group: str, pattern: str):
    request = ConsumerGroupHeartbeatRequest[1](
        group_id=group,
        member_id=f"{group}-member",
        member_epoch=0,
        rebalance_timeout_ms=30_000,
        subscribed_topic_regex=pattern,
        topic_partitions=[],
    )
    return client.request(request, ConsumerGroupHeartbeatResponse, 1)


def test_a_catastrophic_regex_does_not_stall_the_broker(bootstrap, topic_name):
    create_topic(bootstrap, topic_name + "-" + "a" * 26)
    with WireClient(bootstrap) as attacker, WireClient(bootstrap) as bystander:
        started = time.monotonic()
        answer = join_with_regex(attacker, topic_name, "(.+)+X")
        assert answer.error_code == 0 and time.monotonic() - started < PROMPT_S
        time.sleep(0.2)  # the resolution runs meanwhile
        assert round_trip_s(bystander) < PROMPT_S
        again = ConsumerGroupHeartbeatRequest[1](
            group_id=topic_name, member_id=answer.member_id, member_epoch=answer.member_epoch
        )
        assert attacker.request(again, ConsumerGroupHeartbeatResponse, 1).error_code == 0


def test_what_re2_cannot_express_is_invalid_regular_expression(bootstrap, topic_name):
    with WireClient(bootstrap) as client, WireClient(bootstrap) as bystander:
        for pattern in ["(?=x)", r"(a)\1", "a" * 1_600_000]:
            client.send(
                ConsumerGroupHeartbeatRequest[1](
                    group_id=topic_name,
                    member_id="m",
                    member_epoch=0,
                    rebalance_timeout_ms=30_000,
                    subscribed_topic_regex=pattern,
                    topic_partitions=[],
                ),
                1,
            )
            assert round_trip_s(bystander) < PROMPT_S  # a large pattern compiles in a worker thread
            answer = client.receive(ConsumerGroupHeartbeatResponse, 1)
            assert answer.error_code == INVALID_REGULAR_EXPRESSION, pattern[:10]
            assert "is not a valid regular expression" in answer.error_message


def with_records(batch: bytes, compression: int, body: bytes, count: int) -> bytes:
    """`batch` (one uncompressed record) with its records replaced by `body`, `count` declared, its
    attributes' codec set and its CRC recomputed: what a hostile producer can send."""
    header = bytearray(batch[:61])
    struct.pack_into(">i", header, 8, 49 + len(body))
    attributes = struct.unpack_from(">h", header, 21)[0] & ~0x7 | compression
    struct.pack_into(">h", header, 21, attributes)
    struct.pack_into(">i", header, 57, count)
    crc = crc32c.crc32c(bytes(header[21:]) + body)
    struct.pack_into(">I", header, 17, crc)
    return bytes(header) + body


def zstd_bomb(inflated: int) -> bytes:
    """One record whose value is `inflated` zero bytes, zstd-compressed in a stream (about 16 KB)."""

    def varint(n: int) -> bytes:
        n = (n << 1) ^ (n >> 63)
        out = bytearray()
        while n >= 0x80:
            out.append(n & 0x7F | 0x80)
            n >>= 7
        out.append(n)
        return bytes(out)

    inner = b"\0" + varint(0) + varint(0) + varint(1) + b"k" + varint(inflated)
    record_head = varint(len(inner) + inflated + 1) + inner
    compressor = zstandard.ZstdCompressor(level=3).compressobj()
    parts = [compressor.compress(record_head)]
    zeros = bytes(1 << 20)
    for _ in range(inflated >> 20):
        parts.append(compressor.compress(zeros))
    parts.append(compressor.compress(b"\0"))  # no headers
    parts.append(compressor.flush())
    return b"".join(parts)


def produce(client: WireClient, topic: str, batch: bytes) -> int:
    data = ProduceRequest.TopicProduceData
    request = ProduceRequest[9](
        transactional_id=None,
        acks=-1,
        timeout_ms=5000,
        topic_data=[data(name=topic, partition_data=[data.PartitionProduceData(index=0, records=batch)])],
    )
    return client.request(request, ProduceResponse, 9).responses[0].partition_responses[0].error_code


def rss_mib(broker) -> float:
    with open(f"/proc/{broker.process.pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def list_offsets_by_timestamp(client: WireClient, topic: str, timestamp: int):
    Topic = ListOffsetsRequest[5].ListOffsetsTopic
    request = ListOffsetsRequest[5](
        replica_id=-1,
        isolation_level=0,
        topics=[
            Topic(
                name=topic,
                partitions=[
                    Topic.ListOffsetsPartition(partition_index=0, current_leader_epoch=-1, timestamp=timestamp)
                ],
            )
        ],
    )
    return client.request(request, ListOffsetsResponse, 5).topics[0].partitions[0]


def test_a_compressed_batch_inflates_in_bounded_memory(broker, topic_name):
    compacted, plain = topic_name + "-compacted", topic_name + "-plain"
    create_topic(broker.bootstrap, compacted, configs={"cleanup.policy": "compact"})
    create_topic(broker.bootstrap, plain)
    now = int(time.time() * 1000)
    template = make_batch([(now, b"k", b"v")])
    bomb = with_records(template, 4, zstd_bomb(512 << 20), 1)  # zstd
    assert len(bomb) < 64 << 10
    before = rss_mib(broker)
    with WireClient(broker.bootstrap) as client, WireClient(broker.bootstrap) as bystander:
        assert produce(client, compacted, bomb) == INVALID_RECORD
        assert produce(client, plain, bomb) == 0  # stored as it came: no record is read on this path
        started = time.monotonic()
        answer = list_offsets_by_timestamp(client, plain, now)
        assert answer.error_code == INVALID_RECORD and time.monotonic() - started < PROMPT_S
        assert round_trip_s(bystander) < PROMPT_S
    assert rss_mib(broker) - before < 200


def test_a_batch_holding_more_than_its_declared_record_count_is_invalid_record(broker, topic_name):
    create_topic(broker.bootstrap, topic_name, configs={"cleanup.policy": "compact"})
    two = make_batch([(1, b"a", b"1"), (1, b"b", b"2")])
    body = two[61:]
    with WireClient(broker.bootstrap) as client:
        assert produce(client, topic_name, with_records(two, 0, body, 1)) == INVALID_RECORD
        assert produce(client, topic_name, with_records(two, 0, body, 3)) in (INVALID_RECORD, CORRUPT_MESSAGE)
        assert produce(client, topic_name, two) == 0


def test_a_null_in_a_non_nullable_array_closes_the_connection_without_a_traceback(broker):
    """Finding 14: Kafka's generated parser refuses it; the handler never sees None."""
    from tests.kafka_python_messages import ConsumerGroupDescribeRequest

    since = len(broker.output)
    with WireClient(broker.bootstrap) as client, WireClient(broker.bootstrap) as bystander:
        client.send(ConsumerGroupDescribeRequest[0](group_ids=None, include_authorized_operations=False), 0)
        assert client.is_closed_by_peer()
        assert round_trip_s(bystander) < PROMPT_S
    lines = broker.wait_for_lines("non-nullable field group_ids", since)
    assert lines and not any("Traceback" in line for line in broker.output[since:])


def test_a_huge_share_acknowledge_is_decoded_off_the_event_loop(bootstrap):
    """Issue 42 #9: millions of acknowledgement types take kafka-python seconds to decode. A frame that
    large is decoded in a worker thread, so every other connection is answered meanwhile (before, the
    loop stalled for the whole decode) and the sender still gets its answer."""
    Topic = ShareAcknowledgeRequest[1].AcknowledgeTopic
    Partition = Topic.AcknowledgePartition
    Batch = Partition.AcknowledgementBatch
    types = 6_000_000
    request = ShareAcknowledgeRequest[1](
        group_id="hostile",
        member_id="m",
        share_session_epoch=1,
        topics=[
            Topic(
                topic_id=uuid.uuid4(),
                partitions=[
                    Partition(
                        partition_index=0,
                        acknowledgement_batches=[
                            Batch(first_offset=0, last_offset=types - 1, acknowledge_types=[1] * types)
                        ],
                    )
                ],
            )
        ],
    )
    with WireClient(bootstrap, timeout=120) as attacker, WireClient(bootstrap) as bystander:
        attacker.send(request, 1)
        worst, rounds = 0.0, 0
        while not select.select([attacker.sock], [], [], 0)[0]:  # until the attacker's answer arrives
            worst, rounds = max(worst, round_trip_s(bystander)), rounds + 1
        answer = attacker.receive(ShareAcknowledgeResponse, 1)
    assert answer.error_code != 0  # no such member or share session
    assert rounds > 0 and worst < PROMPT_S, (rounds, worst)
