"""The walking skeleton driven by aiokafka 0.14, unmodified and auto-negotiating.

aiokafka is asyncio, and the project's pytest runs `async def` tests under Trio, so each test is a
plain function that runs its scenario with `asyncio.run`. Consumers have `group_id=None` and use
`assign()`: these tests are about the log, not groups.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka import errors as Errors
from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from tests.waiting import eventually_async

from .clients import aiokafka_admin, client_log_fixture

TIMEOUT = 10.0
SCENARIO_TIMEOUT = 30.0
CODECS = [None, "gzip", "snappy", "lz4", "zstd"]
TOPIC_ALREADY_EXISTS = 36
INVALID_TOPIC_EXCEPTION = 17
UNKNOWN_TOPIC_OR_PARTITION = 3
DYNAMIC_TOPIC_CONFIG = 1
DEFAULT_CONFIG = 5


aiokafka_logs = client_log_fixture("aiokafka", autouse=True)


def run(scenario: Callable[..., Awaitable[None]], *args) -> None:
    async def bounded() -> None:
        await asyncio.wait_for(scenario(*args), SCENARIO_TIMEOUT)

    asyncio.run(bounded())


@contextlib.asynccontextmanager
async def producer_client(bootstrap: str, **configs) -> AsyncIterator[AIOKafkaProducer]:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, **configs)
    await producer.start()
    try:
        yield producer
    finally:
        await producer.stop()


@contextlib.asynccontextmanager
async def consumer_client(bootstrap: str, **configs) -> AsyncIterator[AIOKafkaConsumer]:
    configs.setdefault("auto_offset_reset", "earliest")
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False, **configs)
    await consumer.start()
    try:
        yield consumer
    finally:
        await consumer.stop()


async def create_topic(admin: AIOKafkaAdminClient, name: str, partitions: int = 1, configs=None) -> None:
    response = await admin.create_topics([NewTopic(name, partitions, 1, topic_configs=configs or {})])
    assert [(e[0], e[1]) for e in response.topic_errors] == [(name, 0)]


async def create_error_code(admin: AIOKafkaAdminClient, name: str, **kwargs) -> int:
    response = await admin.create_topics([NewTopic(name, 1, 1)], **kwargs)
    [error] = response.topic_errors
    assert error[0] == name
    return error[1]


async def describe_topic(admin: AIOKafkaAdminClient, name: str) -> dict:
    [topic] = await admin.describe_topics([name])
    return topic


async def consume(consumer: AIOKafkaConsumer, count: int, timeout: float = TIMEOUT) -> list:
    records: list = []

    async def read() -> bool:
        for batch in (await consumer.getmany(timeout_ms=100)).values():
            records.extend(batch)
        return len(records) >= count

    await eventually_async(read, timeout, what=f"{count} records", state=lambda: len(records))
    return records


def now_ms() -> int:
    return int(time.time() * 1000)


# --- admin: topics -------------------------------------------------------------------------------


def test_create_topic_shows_in_metadata(bootstrap, topic_name):
    async def scenario():
        async with aiokafka_admin(bootstrap) as admin:
            await create_topic(admin, topic_name, partitions=3)

            assert topic_name in await admin.list_topics()
            topic = await describe_topic(admin, topic_name)
            assert (topic["error_code"], topic["topic"]) == (0, topic_name)
            assert sorted(p["partition"] for p in topic["partitions"]) == [0, 1, 2]
            assert all(p["leader"] == 1 for p in topic["partitions"])

    run(scenario)


def test_create_topic_errors(bootstrap, topic_name):
    async def scenario():
        async with aiokafka_admin(bootstrap) as admin:
            await create_topic(admin, topic_name)
            assert await create_error_code(admin, topic_name) == TOPIC_ALREADY_EXISTS
            assert await create_error_code(admin, "bad/name") == INVALID_TOPIC_EXCEPTION
            assert await create_error_code(admin, "a" * 250) == INVALID_TOPIC_EXCEPTION

    run(scenario)


def test_create_topic_validate_only_creates_nothing(bootstrap, topic_name):
    async def scenario():
        async with aiokafka_admin(bootstrap) as admin:
            assert await create_error_code(admin, topic_name, validate_only=True) == 0

            # Only list_topics: aiokafka's describe_topics sends Metadata with
            # allow_auto_topic_creation=true, which would create the topic on any broker.
            assert topic_name not in await admin.list_topics()

    run(scenario)


def test_delete_topic(bootstrap, topic_name):
    async def scenario():
        async with aiokafka_admin(bootstrap) as admin:
            await create_topic(admin, topic_name, partitions=2)

            response = await admin.delete_topics([topic_name])

            assert [tuple(e) for e in response.topic_error_codes] == [(topic_name, 0)]
            assert topic_name not in await admin.list_topics()
            again = await admin.delete_topics([topic_name])
            assert [tuple(e) for e in again.topic_error_codes] == [(topic_name, UNKNOWN_TOPIC_OR_PARTITION)]

    run(scenario)


def test_create_partitions_grows_topic(bootstrap, topic_name):
    async def scenario():
        async with aiokafka_admin(bootstrap) as admin:
            await create_topic(admin, topic_name, partitions=1)

            await admin.create_partitions({topic_name: NewPartitions(4)})

            topic = await describe_topic(admin, topic_name)
            assert sorted(p["partition"] for p in topic["partitions"]) == [0, 1, 2, 3]
            with pytest.raises(Errors.InvalidPartitionsError):
                await admin.create_partitions({topic_name: NewPartitions(2)})

    run(scenario)


# --- produce and consume -------------------------------------------------------------------------


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c or "none")
def test_produce_consume_every_codec(bootstrap, topic_name, codec):
    base = now_ms() - 60_000
    per_partition = 6
    records = []
    for partition in (0, 1):
        for i in range(per_partition):
            records.append(
                {
                    "partition": partition,
                    "key": None if i == 1 else f"key-{partition}-{i}".encode(),
                    "value": None if i == 2 else f"value-{partition}-{i}-{codec}".encode() * (i + 1),
                    "headers": [("h", f"{i}".encode()), ("h", b"dup"), ("empty", b"")],
                    "timestamp_ms": base + partition * 1000 + i * 10,
                }
            )

    async def scenario():
        async with aiokafka_admin(bootstrap) as admin:
            await create_topic(admin, topic_name, partitions=2)
        async with producer_client(bootstrap, compression_type=codec, linger_ms=20) as producer:
            futures = [await producer.send(topic_name, **record) for record in records]
            await producer.flush()
            metadata = [await asyncio.wait_for(f, TIMEOUT) for f in futures]
        assert [(m.partition, m.offset) for m in metadata] == [(p, o) for p in (0, 1) for o in range(per_partition)]

        async with consumer_client(bootstrap) as consumer:
            partitions = [TopicPartition(topic_name, p) for p in (0, 1)]
            consumer.assign(partitions)
            await consumer.seek_to_beginning(*partitions)
            got = await consume(consumer, len(records))

        assert len(got) == len(records)
        for partition in (0, 1):
            received = [r for r in got if r.partition == partition]
            sent = [r for r in records if r["partition"] == partition]
            assert [r.offset for r in received] == list(range(per_partition))
            assert [r.key for r in received] == [s["key"] for s in sent]
            assert [r.value for r in received] == [s["value"] for s in sent]
            assert [list(r.headers) for r in received] == [s["headers"] for s in sent]
            assert [(r.timestamp_type, r.timestamp) for r in received] == [(0, s["timestamp_ms"]) for s in sent]

    run(scenario)


@pytest.mark.parametrize("acks", [0, 1, "all"])
def test_every_acks_level_delivers(bootstrap, topic_name, acks):
    values = [f"acks-{acks}-{i}".encode() for i in range(5)]

    async def scenario():
        async with aiokafka_admin(bootstrap) as admin:
            await create_topic(admin, topic_name)
        async with producer_client(bootstrap, acks=acks) as producer:
            for offset, value in enumerate(values):
                metadata = await producer.send_and_wait(topic_name, value, partition=0)
                if acks == 0:
                    assert metadata is None  # aiokafka has no response to read an offset from
                else:
                    assert (metadata.partition, metadata.offset) == (0, offset)
        async with consumer_client(bootstrap) as consumer:
            consumer.assign([TopicPartition(topic_name, 0)])
            got = await consume(consumer, len(values))
        assert [(r.offset, r.value) for r in got] == list(enumerate(values))

    run(scenario)


def test_producing_to_unknown_topic_auto_creates_it(bootstrap, topic_name):
    async def scenario():
        async with producer_client(bootstrap) as producer:
            metadata = await producer.send_and_wait(topic_name, key=b"k", value=b"auto")
        assert (metadata.partition, metadata.offset) == (0, 0)
        async with aiokafka_admin(bootstrap) as admin:
            topic = await describe_topic(admin, topic_name)
        assert topic["error_code"] == 0
        assert [p["partition"] for p in topic["partitions"]] == [0]  # num.partitions=1

    run(scenario)


def test_long_poll_fetch_wakes_on_append(bootstrap, topic_name):
    async def scenario():
        async with aiokafka_admin(bootstrap) as admin:
            await create_topic(admin, topic_name)
        tp = TopicPartition(topic_name, 0)
        async with (
            consumer_client(bootstrap, fetch_max_wait_ms=20_000, request_timeout_ms=40_000) as consumer,
            producer_client(bootstrap) as producer,
        ):
            consumer.assign([tp])
            consumer.seek(tp, 0)
            # Let a Fetch reach the broker and park on the empty partition.
            assert await consumer.getmany(timeout_ms=1000) == {}

            started = time.monotonic()
            await producer.send_and_wait(topic_name, b"wake up", partition=0)
            record = await asyncio.wait_for(consumer.getone(), 8.0)
            elapsed = time.monotonic() - started

        assert (record.offset, record.value) == (0, b"wake up")
        assert elapsed < 5.0, f"message took {elapsed:.1f}s: the parked fetch did not wake on append"

    run(scenario)


# --- offsets -------------------------------------------------------------------------------------


def test_watermarks_and_offsets_for_times(bootstrap, topic_name):
    base = now_ms() - 100_000
    stamps = [base + i * 1000 for i in range(5)]

    async def scenario():
        async with aiokafka_admin(bootstrap) as admin:
            await create_topic(admin, topic_name, partitions=2)
        async with producer_client(bootstrap) as producer:
            for ts in stamps:  # one batch each, so the index lookup has to find the right batch
                await producer.send_and_wait(topic_name, b"x", partition=0, timestamp_ms=ts)
        tp0, tp1 = TopicPartition(topic_name, 0), TopicPartition(topic_name, 1)
        async with consumer_client(bootstrap) as consumer:
            assert await consumer.beginning_offsets([tp0, tp1]) == {tp0: 0, tp1: 0}
            assert await consumer.end_offsets([tp0, tp1]) == {tp0: 5, tp1: 0}

            async def offset_for(ts: int):
                found = (await consumer.offsets_for_times({tp0: ts}))[tp0]
                return None if found is None else (found.offset, found.timestamp)

            assert await offset_for(0) == (0, stamps[0])
            assert await offset_for(stamps[2]) == (2, stamps[2])
            assert await offset_for(stamps[2] + 1) == (3, stamps[3])
            assert await offset_for(stamps[4]) == (4, stamps[4])
            assert await offset_for(stamps[4] + 1) is None  # after every record: none
            assert await consumer.offsets_for_times({tp1: 0}) == {tp1: None}

    run(scenario)


def test_fetch_past_end_without_reset_raises_out_of_range(bootstrap, topic_name):
    async def scenario():
        async with aiokafka_admin(bootstrap) as admin:
            await create_topic(admin, topic_name)
        async with producer_client(bootstrap) as producer:
            await producer.send_and_wait(topic_name, b"only", partition=0)
        tp = TopicPartition(topic_name, 0)
        async with consumer_client(bootstrap, auto_offset_reset="none") as consumer:
            consumer.assign([tp])
            consumer.seek(tp, 100)
            with pytest.raises(Errors.OffsetOutOfRangeError):
                await asyncio.wait_for(consumer.getone(), TIMEOUT)

    run(scenario)


def test_fetch_past_end_resets_to_earliest(bootstrap, topic_name):
    async def scenario():
        async with aiokafka_admin(bootstrap) as admin:
            await create_topic(admin, topic_name)
        async with producer_client(bootstrap) as producer:
            for i in range(3):
                await producer.send_and_wait(topic_name, f"{i}".encode(), partition=0)
        tp = TopicPartition(topic_name, 0)
        async with consumer_client(bootstrap, auto_offset_reset="earliest") as consumer:
            consumer.assign([tp])
            consumer.seek(tp, 100)
            got = await consume(consumer, 3)
        assert [(r.offset, r.value) for r in got] == [(0, b"0"), (1, b"1"), (2, b"2")]

    run(scenario)


# --- configs and cluster -------------------------------------------------------------------------


def _configs(response) -> dict[str, tuple]:
    """{name: (value, read_only, source)} from a DescribeConfigs v1+ response with one resource."""
    [resource] = response.resources
    error_code, _message, _type, _name, entries = resource
    assert error_code == 0
    return {entry[0]: (entry[1], entry[2], entry[3]) for entry in entries}


def test_describe_topic_configs(bootstrap, topic_name):
    async def scenario():
        async with aiokafka_admin(bootstrap) as admin:
            await create_topic(admin, topic_name, configs={"retention.ms": "3600000"})
            [response] = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic_name)])
        configs = _configs(response)
        assert configs["retention.ms"] == ("3600000", False, DYNAMIC_TOPIC_CONFIG)
        assert configs["cleanup.policy"] == ("delete", False, DEFAULT_CONFIG)
        assert configs["max.message.bytes"][0] == "1048588"

    run(scenario)


def test_describe_broker_configs(bootstrap):
    async def scenario():
        async with aiokafka_admin(bootstrap) as admin:
            [response] = await admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "1")])
        configs = _configs(response)
        assert configs["num.partitions"][0] == "1"
        assert configs["message.max.bytes"][0] == "1048588"
        assert configs["auto.create.topics.enable"][0] == "true"

    run(scenario)


def test_describe_cluster(bootstrap, broker):
    async def scenario():
        async with aiokafka_admin(bootstrap) as admin:
            cluster = await admin.describe_cluster()
        assert cluster["cluster_id"]
        assert cluster["controller_id"] == 1
        assert [(b["node_id"], b["host"], b["port"]) for b in cluster["brokers"]] == [(1, "127.0.0.1", broker.port)]

    run(scenario)
