"""Bad input closes the offending connection with one log line; the broker keeps serving."""

from __future__ import annotations

import struct
import time

import pytest
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse

from .wire import WireClient


def _still_serving(bootstrap: str) -> None:
    with WireClient(bootstrap) as client:
        response = client.request(MetadataRequest[1](topics=[]), MetadataResponse, 1)
        assert response.brokers[0].node_id == 1


BAD_STREAMS = {
    "garbage": b"\x13\x37" * 40,
    "negative size": struct.pack(">i", -5) + b"xxxx",
    "zero size": struct.pack(">i", 0),
    "huge size": struct.pack(">i", 2**31 - 1) + b"abc",
    "over the request limit": struct.pack(">i", 100 * 1024 * 1024 + 1),
    "truncated header": struct.pack(">i", 3) + b"\x00\x03\x00",
    "unknown api key": struct.pack(">i", 10) + struct.pack(">hhi", 4242, 0, 1) + b"\xff\xff",
    "unsupported metadata version": struct.pack(">i", 10) + struct.pack(">hhi", 3, 99, 1) + b"\xff\xff",
    "truncated body": struct.pack(">i", 12) + struct.pack(">hhi", 3, 1, 1) + b"\x00\x01" + b"\x00\x00\x00\x09",
}


@pytest.mark.parametrize("name", sorted(BAD_STREAMS))
def test_bad_input_closes_the_connection_and_nothing_else(broker, name):
    before = len(broker.output)
    with WireClient(broker.bootstrap) as client:
        client.send_raw(BAD_STREAMS[name])
        assert client.is_closed_by_peer()
    _still_serving(broker.bootstrap)
    logged = broker.wait_for_lines("closing connection", since=before)
    assert len(logged) == 1, broker.output[before:]


def test_a_client_that_closes_mid_frame_is_forgotten(broker):
    with WireClient(broker.bootstrap) as client:
        client.send_raw(struct.pack(">i", 1000) + b"\x00" * 10)
    _still_serving(broker.bootstrap)


def test_unsupported_api_versions_version_gets_error_35_with_a_v0_body(broker):
    with WireClient(broker.bootstrap) as client:
        frame = struct.pack(">hhi", ApiVersionsRequest.API_KEY, 77, 42) + struct.pack(">h", 4) + b"test" + b"\x00"
        client.send_raw(struct.pack(">i", len(frame)) + frame)
        response = client.receive(ApiVersionsResponse, 0)
        assert response.header.correlation_id == 42
        assert response.error_code == 35
        assert [(k.api_key, k.min_version, k.max_version) for k in response.api_keys] == [
            (18, 0, 5)
        ]  # v5: KIP-1242, served unpinned (ADR 86)
        # The connection stays usable: the client retries with a version it now knows.
        again = client.request(
            ApiVersionsRequest[3](client_software_name="t", client_software_version="1"), ApiVersionsResponse, 3
        )
        assert again.error_code == 0 and len(again.api_keys) >= 10


def test_pipelined_requests_are_answered_in_order(broker):
    with WireClient(broker.bootstrap) as client:
        frames = b"".join(
            client.frame(ApiVersionsRequest[v % 4](client_software_name="t", client_software_version="1"), v % 4)
            if v % 2
            else client.frame(MetadataRequest[9](topics=[]), 9)
            for v in range(40)
        )
        client.send_raw(frames)
        seen = []
        for v in range(40):
            response = client.receive(ApiVersionsResponse if v % 2 else MetadataResponse, v % 4 if v % 2 else 9)
            seen.append(response.header.correlation_id)
        assert seen == list(range(1, 41))


def test_pipelined_produce_requests_mixed_with_others_are_answered_in_order_with_their_offsets(broker):
    """One-partition Produce requests that arrive together are answered together (one log write per
    partition); a request of another kind among them, a multi-partition Produce or acks=0, and a bad
    frame after them are handled in their turn: every response in order, offsets as one at a time."""
    from kafka.protocol.producer import ProduceRequest, ProduceResponse

    from tests.batches import make_batch

    from .clients import create_topic

    topic = f"lane-{time.monotonic_ns()}"
    create_topic(broker.bootstrap, topic, 2)
    data = ProduceRequest.TopicProduceData
    batch = make_batch([(int(time.time() * 1000), None, b"v")])

    def produce(partitions, acks=-1, version=9):
        return ProduceRequest[version](
            transactional_id=None,
            acks=acks,
            timeout_ms=1000,
            topic_data=[
                data(name=topic, partition_data=[data.PartitionProduceData(index=p, records=batch) for p in partitions])
            ],
        )

    with WireClient(broker.bootstrap) as client:
        plan = [  # (request, version, response class or None for acks=0)
            (produce([0]), 9, ProduceResponse),
            (produce([1]), 9, ProduceResponse),
            (produce([0]), 7, ProduceResponse),
            (ApiVersionsRequest[3](client_software_name="t", client_software_version="1"), 3, ApiVersionsResponse),
            (produce([0]), 9, ProduceResponse),
            (produce([0, 1]), 9, ProduceResponse),
            (produce([1], acks=0), 9, None),
            (produce([1]), 9, ProduceResponse),
            (produce([0]), 3, ProduceResponse),
        ]
        frames = b"".join(client.frame(request, version) for request, version, _ in plan)
        client.send_raw(frames + struct.pack(">i", -1))  # and then a bad frame: the connection ends after
        answers = [(client.receive(cls, version), version) for _, version, cls in plan if cls is not None]
        assert [r.header.correlation_id for r, _ in answers] == [1, 2, 3, 4, 5, 6, 8, 9]
        offsets = [
            [(p.index, p.error_code, p.base_offset) for t in r.responses for p in t.partition_responses]
            for r, _ in answers
            if isinstance(r, ProduceResponse)
        ]
        assert offsets == [
            [(0, 0, 0)],
            [(1, 0, 0)],
            [(0, 0, 1)],
            [(0, 0, 2)],
            [(0, 0, 3), (1, 0, 1)],
            [(1, 0, 3)],
            [(0, 0, 4)],
        ]
        assert client.is_closed_by_peer()
    _still_serving(broker.bootstrap)


def _rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_a_client_that_pipelines_large_fetches_without_reading_cannot_make_the_broker_hold_them_all():
    from confluent_kafka import Producer
    from kafka.protocol.consumer import FetchRequest, FetchResponse

    from .broker import BrokerProcess

    broker = BrokerProcess(["--memory"], env={"TRAFKA_SERVER_MAX_QUEUED_RESPONSE_BYTES": str(16 * 1024 * 1024)}).start()
    try:
        producer = Producer({"bootstrap.servers": broker.bootstrap, "log_level": 0, "message.max.bytes": 1_000_000})
        for _ in range(9):
            producer.produce("big", value=b"x" * 900_000, partition=0)
            producer.flush(10)
        Topic = FetchRequest.FetchTopic
        fetch = FetchRequest[11](
            replica_id=-1,
            max_wait_ms=0,
            min_bytes=1,
            max_bytes=50_000_000,
            isolation_level=0,
            session_id=0,
            session_epoch=-1,
            rack_id="",
            forgotten_topics_data=[],
            topics=[
                Topic(
                    topic="big",
                    partitions=[
                        Topic.FetchPartition(
                            partition=0,
                            current_leader_epoch=-1,
                            fetch_offset=0,
                            log_start_offset=-1,
                            partition_max_bytes=50_000_000,
                        )
                    ],
                )
            ],
        )
        before = _rss_bytes(broker.process.pid)
        with WireClient(broker.bootstrap, timeout=30) as client:
            client.send_raw(b"".join(client.frame(fetch, 11) for _ in range(40)))  # ~8 MB answer each
            time.sleep(1.0)  # the broker handles what it will before the client reads anything
            grown = _rss_bytes(broker.process.pid) - before
            assert grown < 150 * 1024 * 1024, f"the broker grew by {grown / 2**20:.0f} MiB"
            sizes = [len(client.receive(FetchResponse, 11).responses[0].partitions[0].records) for _ in range(40)]
        assert all(size > 8_000_000 for size in sizes)
    finally:
        assert broker.stop() == 0
