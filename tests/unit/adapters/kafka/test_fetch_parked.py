"""A parked Fetch answered from the appending task (ADR 58): the append that brings enough records
writes the answer through the connection's delivery at once, before the notify returns; one that
brings too little leaves it parked; `max_wait_ms` still answers it from its own task; a failing read
is raised in the Fetch's own task; a layer's wrapped Deferred is never offered early delivery."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from tests.batches import make_batch
from trafka.adapters.kafka.api import DELIVERED, EarlyDeferred
from trafka.adapters.kafka.apis.fetch import handle_fetch
from trafka.adapters.kafka.context import ClientInfo
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import FetchRequest

CLIENT = ClientInfo("test", "127.0.0.1")
TP = TopicPartition("a", 0)


@pytest.fixture
def autojump_clock():
    return trio.testing.MockClock(autojump_threshold=0)


@pytest.fixture
def ctx():
    settings = load_settings(overrides={"storage": {"kind": "memory"}})
    ctx = bootstrap(settings, default_adapters(settings))
    ctx.catalog.create("a", 1, 1)
    return ctx


def request(min_bytes=1, max_wait_ms=5_000):
    Topic = FetchRequest.FetchTopic
    return FetchRequest[12](
        replica_id=-1,
        max_wait_ms=max_wait_ms,
        min_bytes=min_bytes,
        max_bytes=1 << 20,
        isolation_level=0,
        session_id=0,
        session_epoch=-1,
        topics=[
            Topic(
                topic="a", partitions=[Topic.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1 << 20)]
            )
        ],
        forgotten_topics_data=[],
        rack_id="",
    )


def append(ctx, n=1):
    ctx.replicas.produce(TP, make_batch([(1000, None, b"v" * 50)] * n), ctx.clock_ms())
    ctx.appends.notify([TP])


def records(answer) -> int:
    return sum(len(p[7] or b"") for _, _, partitions in answer.topics for p in partitions)


async def parked(ctx, fetch, delivered, result):
    outcome = handle_fetch(ctx, fetch, 12, CLIENT)
    assert type(outcome) is EarlyDeferred
    outcome.delivery.deliver = delivered.append

    async def run():
        try:
            result.append(await outcome.wait())
        except Exception as exc:
            result.append(exc)

    return run


async def test_the_append_that_satisfies_a_parked_fetch_answers_it_before_notify_returns(ctx):
    delivered, result = [], []
    run = await parked(ctx, request(), delivered, result)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(run)
        await trio.testing.wait_all_tasks_blocked()
        append(ctx)
        assert len(delivered) == 1 and records(delivered[0]) > 0  # already written, no task ran
    assert result == [DELIVERED]
    assert ctx.appends._waiters == {}


async def test_too_little_leaves_it_parked_until_enough_has_come(ctx):
    delivered, result = [], []
    run = await parked(ctx, request(min_bytes=200), delivered, result)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(run)
        await trio.testing.wait_all_tasks_blocked()
        append(ctx)  # one batch of ~120 bytes
        assert delivered == []
        append(ctx)
        assert len(delivered) == 1 and records(delivered[0]) >= 200
    assert result == [DELIVERED]


async def test_max_wait_answers_it_from_its_own_task(ctx, autojump_clock):
    delivered, result = [], []
    run = await parked(ctx, request(max_wait_ms=100), delivered, result)
    await run()
    assert delivered == [] and records(result[0]) == 0
    append(ctx)  # a late append finds nothing parked
    assert delivered == [] and ctx.appends._waiters == {}


async def test_a_failing_read_is_raised_in_the_fetchs_own_task(ctx, monkeypatch):
    delivered, result = [], []
    run = await parked(ctx, request(), delivered, result)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(run)
        await trio.testing.wait_all_tasks_blocked()
        monkeypatch.setattr(ctx.replicas, "fetch", lambda *a, **k: 1 / 0)
        append(ctx)  # the appending task is not hurt
    assert delivered == [] and isinstance(result[0], ZeroDivisionError)


async def test_without_a_delivery_it_waits_in_its_task_as_before(ctx):
    outcome = handle_fetch(ctx, request(), 12, CLIENT)  # a layer wrapped it: nobody set `deliver`
    result = []

    async def run():
        result.append(await outcome.wait())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(run)
        await trio.testing.wait_all_tasks_blocked()
        append(ctx)
        assert result == []  # the task answers, in a later pass
    assert records(result[0]) > 0
