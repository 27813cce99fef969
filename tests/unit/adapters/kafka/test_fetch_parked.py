"""A parked Fetch answered from the appending task (ADR 58, ADR 80): the append that brings enough
records writes the answer through the connection's delivery at once, before the notify returns; one
that brings too little leaves it parked; `max_wait_ms` answers it from the purgatory's timer; a failing
read fails the Fetch, not the appending task; a layer's change keeps it parked and answered early."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from tests.batches import make_batch
from trafka.adapters.kafka.api import Parked
from trafka.adapters.kafka.apis.fetch import Uses, handle_fetch
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.adapters.kafka.runtime.purgatory import Failed
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
    ctx.services.catalog.create("a", 1, 1)
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
    ctx.services.replicas.produce(TP, make_batch([(1000, None, b"v" * 50)] * n), ctx.services.clock_ms())
    ctx.services.appends.notify([TP])


def records(answer) -> int:
    return sum(len(p[7] or b"") for _, _, partitions in answer.topics for p in partitions)


def parked(ctx, fetch, delivered):
    outcome = handle_fetch(ctx.view(Uses), fetch, 12, CLIENT)
    assert type(outcome) is Parked
    return ctx.services.appends.park(outcome, delivered.append)


async def test_the_append_that_satisfies_a_parked_fetch_answers_it_before_notify_returns(ctx):
    delivered = []
    parked(ctx, request(), delivered)
    append(ctx)
    assert len(delivered) == 1 and records(delivered[0]) > 0  # already written, no task ran
    assert ctx.services.appends._waiters == {}


async def test_too_little_leaves_it_parked_until_enough_has_come(ctx):
    delivered = []
    parked(ctx, request(min_bytes=200), delivered)
    append(ctx)  # one batch of ~120 bytes
    assert delivered == []
    append(ctx)
    assert len(delivered) == 1 and records(delivered[0]) >= 200


async def test_max_wait_answers_it_from_the_purgatorys_timer(ctx, autojump_clock):
    delivered = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(ctx.services.appends.run)
        parked(ctx, request(max_wait_ms=100), delivered)
        await trio.sleep(0.099)
        assert delivered == []
        await trio.sleep(0.002)
        assert len(delivered) == 1 and records(delivered[0]) == 0
        append(ctx)  # a late append finds nothing parked
        assert len(delivered) == 1 and ctx.services.appends._waiters == {}
        nursery.cancel_scope.cancel()


async def test_a_failing_read_fails_the_fetch_not_the_appending_task(ctx, monkeypatch):
    delivered = []
    parked(ctx, request(), delivered)
    monkeypatch.setattr(ctx.services.replicas, "fetch", lambda *a, **k: 1 / 0)
    append(ctx)  # the appending task is not hurt
    assert len(delivered) == 1 and type(delivered[0]) is Failed and isinstance(delivered[0].error, ZeroDivisionError)
    assert ctx.services.appends._waiters == {}


async def test_a_layer_that_changes_the_answer_keeps_it_parked_and_answered_by_the_append(ctx):
    outcome = handle_fetch(ctx.view(Uses), request(), 12, CLIENT).then(lambda answer: ("changed", answer))
    delivered = []
    ctx.services.appends.park(outcome, delivered.append)
    append(ctx)
    assert len(delivered) == 1 and delivered[0][0] == "changed" and records(delivered[0][1]) > 0


async def test_a_forgotten_fetch_is_never_answered(ctx, autojump_clock):
    delivered = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(ctx.services.appends.run)
        ctx.services.appends.forget(parked(ctx, request(max_wait_ms=100), delivered))  # its connection closed
        append(ctx)
        await trio.sleep(1)
        assert delivered == [] and ctx.services.appends._waiters == {}
        nursery.cancel_scope.cancel()


async def test_shutdown_answers_every_parked_fetch(ctx):
    delivered = []
    parked(ctx, request(), delivered)
    ctx.shutting_down.set()
    ctx.services.appends.notify_all()
    assert len(delivered) == 1 and records(delivered[0]) == 0
