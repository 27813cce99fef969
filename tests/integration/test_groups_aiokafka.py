"""Consumer groups driven by aiokafka 0.14, unmodified: AIOKafkaConsumer members and AIOKafkaAdminClient.

aiokafka is asyncio, and the project's pytest runs `async def` tests under Trio, so each test is a
plain function that runs its scenario with `asyncio.run`. Members of one group share the event loop;
aiokafka joins and heartbeats from background tasks, and the test drains records with `getmany`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener, TopicPartition
from aiokafka.structs import OffsetAndMetadata

from tests.waiting import eventually_async, throughout_async

from .clients import aiokafka_admin, client_log_fixture, create_topic, unique
from .groups_helpers import SESSION_TIMEOUT_MS, TIMEOUT, group_broker, is_disjoint_cover

SCENARIO_TIMEOUT = 40.0


@pytest.fixture(scope="module")
def gbroker():
    with group_broker() as process:
        yield process


aiokafka_logs = client_log_fixture("aiokafka", autouse=True)
rdkafka_logger = client_log_fixture("trafka.tests.groups.aio.librdkafka")


@pytest.fixture
def bootstrap(gbroker) -> str:
    return gbroker.bootstrap


def run(scenario: Callable[..., Awaitable[None]], *args) -> None:
    async def bounded() -> None:
        await asyncio.wait_for(scenario(*args), SCENARIO_TIMEOUT)

    asyncio.run(bounded())


async def until(
    condition: Callable[[], bool],
    what: str,
    step: Callable[[], Awaitable[None]],
    timeout: float = TIMEOUT,
    state: Callable[[], object] | None = None,
) -> None:
    """Await `step()` (a bounded getmany) until `condition()` holds, failing after `timeout`."""

    async def stepped() -> bool:
        await step()
        return condition()

    await eventually_async(stepped, timeout, what=what, state=state)


class Member(ConsumerRebalanceListener):
    """A subscribed AIOKafkaConsumer with the records it received and its rebalances."""

    def __init__(self, bootstrap: str, topic: str, group: str, **extra) -> None:
        self.consumer = AIOKafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id=group,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            session_timeout_ms=SESSION_TIMEOUT_MS,
            heartbeat_interval_ms=500,
            request_timeout_ms=10_000,
            **extra,
        )
        self.messages: list[tuple[int, int, str]] = []
        self.assigned: list[set[int]] = []
        self.revoked: list[set[int]] = []
        self.consumer.subscribe([topic], listener=self)

    async def on_partitions_revoked(self, revoked) -> None:
        self.revoked.append({tp.partition for tp in revoked})

    async def on_partitions_assigned(self, assigned) -> None:
        self.assigned.append({tp.partition for tp in assigned})

    async def poll(self) -> None:
        batches = await self.consumer.getmany(timeout_ms=50)
        for tp, records in batches.items():
            self.messages += [(tp.partition, r.offset, r.value.decode()) for r in records]

    def partitions(self) -> set[int]:
        return {tp.partition for tp in self.consumer.assignment()}


@contextlib.asynccontextmanager
async def started(*members: Member) -> AsyncIterator[None]:
    for member in members:
        await member.consumer.start()
    try:
        yield
    finally:
        for member in members:
            await member.consumer.stop()


def poll_all(*members: Member) -> Callable[[], Awaitable[None]]:
    async def step() -> None:
        await asyncio.gather(*(m.poll() for m in members))

    return step


async def produce(bootstrap: str, topic: str, partitions, per_partition: int, tag: str) -> set[tuple[int, str]]:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
    await producer.start()
    sent = set()
    try:
        for partition in partitions:
            for i in range(per_partition):
                value = f"{tag}-p{partition}-{i}"
                await producer.send_and_wait(topic, value.encode(), partition=partition)
                sent.add((partition, value))
    finally:
        await producer.stop()
    return sent


def test_consumer_subscribes_consumes_commits_and_resumes(bootstrap, rdkafka_logger):
    topic, group = unique("aio-resume"), unique("g")
    create_topic(bootstrap, topic, 2, logger=rdkafka_logger)

    async def scenario() -> None:
        first = await produce(bootstrap, topic, range(2), 5, "first")
        member = Member(bootstrap, topic, group)
        async with started(member):
            await until(
                lambda: len(member.messages) >= len(first),
                "the first 10 records",
                poll_all(member),
                state=lambda: member.messages,
            )
            assert sorted((p, v) for p, _, v in member.messages) == sorted(first)
            assert member.partitions() == {0, 1}
            await member.consumer.commit()
            assert await member.consumer.committed(TopicPartition(topic, 0)) == 5
            assert await member.consumer.committed(TopicPartition(topic, 1)) == 5

        second = await produce(bootstrap, topic, range(2), 3, "second")
        resumed = Member(bootstrap, topic, group)
        async with started(resumed):
            await until(
                lambda: len(resumed.messages) >= len(second),
                "the 6 records produced after the commit",
                poll_all(resumed),
                state=lambda: resumed.messages,
            )
        assert sorted((p, v) for p, _, v in resumed.messages) == sorted(second)  # no re-delivery
        assert sorted(o for _, o, _ in resumed.messages) == [5, 5, 6, 6, 7, 7]

    run(scenario)


def test_committed_is_none_for_a_partition_never_committed(bootstrap, rdkafka_logger):
    topic, group = unique("aio-none"), unique("g")
    create_topic(bootstrap, topic, 2, logger=rdkafka_logger)

    async def scenario() -> None:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False, request_timeout_ms=10_000
        )
        await consumer.start()
        try:
            consumer.assign([TopicPartition(topic, 0), TopicPartition(topic, 1)])
            assert await consumer.committed(TopicPartition(topic, 0)) is None
            await consumer.commit({TopicPartition(topic, 1): OffsetAndMetadata(2, "aio")})
            assert await consumer.committed(TopicPartition(topic, 0)) is None
            assert await consumer.committed(TopicPartition(topic, 1)) == 2
        finally:
            await consumer.stop()
        async with aiokafka_admin(bootstrap) as admin:
            offsets = await admin.list_consumer_group_offsets(
                group, partitions=[TopicPartition(topic, 0), TopicPartition(topic, 1)]
            )
        # A partition asked for by name with no commit comes back as offset -1, empty metadata.
        assert {tp.partition: (om.offset, om.metadata) for tp, om in offsets.items()} == {0: (-1, ""), 1: (2, "aio")}

    run(scenario)


def test_two_members_split_partitions_and_admin_sees_them(bootstrap, rdkafka_logger):
    topic, group = unique("aio-split"), unique("g")
    create_topic(bootstrap, topic, 4, logger=rdkafka_logger)

    async def scenario() -> None:
        a = Member(bootstrap, topic, group, client_id="aio-member-a")
        b = Member(bootstrap, topic, group, client_id="aio-member-b")
        async with started(a, b), aiokafka_admin(bootstrap) as admin:
            await until(
                lambda: (
                    bool(a.partitions())
                    and bool(b.partitions())
                    and is_disjoint_cover([a.partitions(), b.partitions()], 4)
                ),
                "2 aiokafka members to split 4 partitions",
                poll_all(a, b),
                timeout=20,
                state=lambda: (a.partitions(), b.partitions()),
            )
            assert sorted(len(m.partitions()) for m in (a, b)) == [2, 2]  # round robin: 2 each

            sent = await produce(bootstrap, topic, range(4), 5, "m")
            await until(
                lambda: len(a.messages) + len(b.messages) >= len(sent),
                "all 20 records",
                poll_all(a, b),
                state=lambda: (a.messages, b.messages),
            )
            assert sorted((p, v) for m in (a, b) for p, _, v in m.messages) == sorted(sent)
            for member in (a, b):
                assert {p for p, _, _ in member.messages} == member.partitions()
                await member.consumer.commit()

            listed = await admin.list_consumer_groups()
            assert (group, "consumer") in [tuple(g)[:2] for g in listed]
            (response,) = await admin.describe_consumer_groups([group])
            ((error_code, group_id, state, protocol_type, protocol, members, *_),) = response.groups
            assert (error_code, group_id, state, protocol_type, protocol) == (
                0,
                group,
                "Stable",
                "consumer",
                "roundrobin",
            )
            # (member_id, [group_instance_id from v4], client_id, client_host, metadata, assignment)
            assert sorted(m[-4] for m in members) == ["aio-member-a", "aio-member-b"]
            offsets = await admin.list_consumer_group_offsets(group)
            assert {tp: om.offset for tp, om in offsets.items()} == {TopicPartition(topic, p): 5 for p in range(4)}

    run(scenario)


def test_static_member_restart_keeps_its_partitions(bootstrap, rdkafka_logger):
    """aiokafka with group_instance_id: a restarted static member gets its partitions back."""
    topic, group = unique("aio-static"), unique("g")
    create_topic(bootstrap, topic, 4, logger=rdkafka_logger)

    async def scenario() -> None:
        a = Member(bootstrap, topic, group, group_instance_id="aio-a")
        b = Member(bootstrap, topic, group, group_instance_id="aio-b")
        async with started(b):
            async with started(a):
                await until(
                    lambda: (
                        bool(a.partitions())
                        and bool(b.partitions())
                        and is_disjoint_cover([a.partitions(), b.partitions()], 4)
                    ),
                    "2 static members to split 4 partitions",
                    poll_all(a, b),
                    timeout=20,
                )
                a_partitions, b_partitions = a.partitions(), b.partitions()
                b_events = len(b.assigned), len(b.revoked)
            # stop() sends no LeaveGroup for a static member; the new instance takes the same slot.
            a2 = Member(bootstrap, topic, group, group_instance_id="aio-a")
            async with started(a2):
                await until(
                    lambda: bool(a2.partitions()),
                    "the restarted static member's assignment",
                    poll_all(a2, b),
                    state=lambda: (a2.partitions(), b.partitions()),
                )
                assert a2.partitions() == a_partitions

                # Watch b for several heartbeat intervals: a rebalance would reach it through one.
                async def b_keeps_its_assignment() -> None:
                    await poll_all(a2, b)()
                    assert (len(b.assigned), len(b.revoked)) == b_events, "the other static member was rebalanced"

                await throughout_async(b_keeps_its_assignment, 2.0)
                assert b.partitions() == b_partitions

    run(scenario)
