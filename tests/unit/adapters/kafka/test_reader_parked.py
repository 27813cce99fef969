"""A parked Fetch through the connection's real code (`Reader._serve` -> `_park`, the append's notify ->
`_Answer`): what it keeps while parked and what is left once answered (ADR 134), without the collector."""

from __future__ import annotations

import gc
import socket
import uuid
import weakref

import trio
import trio.lowlevel

from tests.batches import make_batch
from trafka.adapters.kafka.connection import reader as reader_module
from trafka.adapters.kafka.connection.limits import ServerLimits
from trafka.adapters.kafka.connection.outbox import Outbox
from trafka.adapters.kafka.connection.pipeline import Pipeline
from trafka.adapters.kafka.connection.reader import Reader
from trafka.adapters.kafka.connection.transport import SocketTransport
from trafka.adapters.kafka.runtime.purgatory import Operation
from trafka.adapters.kafka.wire.codec import decode_request
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.listeners import Listener, SecurityProtocol
from trafka.domain.security.principal import ANONYMOUS
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import FetchRequest

TP = TopicPartition("a", 0)


def fetch_frame(correlation_id: int, offset: int, topic_id: uuid.UUID) -> bytes:
    """librdkafka's Fetch at the log end: v16, sessionless, one partition."""
    Topic = FetchRequest.FetchTopic
    partition = Topic.FetchPartition(version=16, partition=0, fetch_offset=offset, partition_max_bytes=1 << 20)
    request = FetchRequest(
        version=16,
        max_wait_ms=500,
        min_bytes=1,
        max_bytes=50 << 20,
        isolation_level=1,
        session_id=0,
        session_epoch=-1,
        topics=[Topic(version=16, topic_id=topic_id, partitions=[partition])],
        forgotten_topics_data=[],
        rack_id="",
    )
    request.with_header(correlation_id=correlation_id, client_id="rdkafka")
    return bytes(request.encode(header=True))


def alive(kind: type) -> int:
    return sum(1 for thing in gc.get_objects() if type(thing) is kind)


async def test_a_parked_fetch_keeps_no_decoded_request_and_leaves_nothing_once_answered():
    settings = load_settings(overrides={"storage": {"kind": "memory"}})
    ctx = bootstrap(settings, default_adapters(settings))
    ctx.services.catalog.create("a", 1, 1)
    topic_id = ctx.services.catalog.get("a").topic_id
    replicas, appends = ctx.services.replicas, ctx.services.appends
    ours, theirs = socket.socketpair()
    theirs.setblocking(False)
    limits = ServerLimits()
    transport = SocketTransport(trio.SocketStream(trio.socket.from_stdlib_socket(ours)))
    outbox = Outbox(transport, limits.max_inflight_requests, limits.max_queued_response_bytes)
    listener = Listener("PLAINTEXT", SecurityProtocol.PLAINTEXT, "127.0.0.1", 9092, "127.0.0.1", 9092)
    pipeline = Pipeline(ctx.registry, ctx.services.authorization, ctx.faults, ctx.services.cluster)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(appends.run)
        await trio.lowlevel.checkpoint()
        reader = Reader(ctx, pipeline, limits, transport, outbox, nursery, listener, "127.0.0.1:1", ANONYMOUS)
        gc.collect()
        gc.disable()
        try:
            for i in range(3):
                request = decode_request(fetch_frame(i, replicas.watermarks(TP)[1], topic_id), ctx.registry)
                body = weakref.ref(request.body)
                reader._serve(request)
                del request
                assert len(reader.parked) == 1 and outbox.pending
                assert body() is None  # the parked answer keeps what it needs of the request, not the request
                replicas.produce_many([(TP, make_batch([(1000, None, b"v" * 100)]), None, 3)], 1000)
                appends.notify([TP])
                replicas.forget_appended()
                assert not reader.parked and not outbox.pending
                frame = theirs.recv(1 << 16)
                assert int.from_bytes(frame[4:8], "big") == i and len(frame) > 100
                # answered: its operation and `_Answer` freed by reference counting, no cycle left
                assert alive(reader_module._Answer) == 0 and alive(FetchRequest) == 0
                # the answered ones wait in the timer's heap for their deadline (ADR 130), holding nothing
                assert all(op.finished for op in gc.get_objects() if type(op) is Operation)
        finally:
            gc.enable()
        nursery.cancel_scope.cancel()


async def test_a_parked_answer_that_cannot_be_encoded_ends_the_connection(monkeypatch, caplog):
    """`_Answer` encodes in place of `waiting.encode` (ADR 134): an answer that cannot be encoded is logged
    and its slot ends the connection (`ConnectionAborted` from the flush), as before."""
    from trafka.adapters.kafka.connection.outbox import ConnectionAborted
    from trafka.adapters.kafka.wire.fast_fetch import FetchAnswer

    settings = load_settings(overrides={"storage": {"kind": "memory"}})
    ctx = bootstrap(settings, default_adapters(settings))
    ctx.services.catalog.create("a", 1, 1)
    topic_id = ctx.services.catalog.get("a").topic_id
    replicas, appends = ctx.services.replicas, ctx.services.appends
    ours, theirs = socket.socketpair()
    limits = ServerLimits()
    transport = SocketTransport(trio.SocketStream(trio.socket.from_stdlib_socket(ours)))
    outbox = Outbox(transport, limits.max_inflight_requests, limits.max_queued_response_bytes)
    listener = Listener("PLAINTEXT", SecurityProtocol.PLAINTEXT, "127.0.0.1", 9092, "127.0.0.1", 9092)
    pipeline = Pipeline(ctx.registry, ctx.services.authorization, ctx.faults, ctx.services.cluster)

    def cannot(self, version, correlation_id):
        raise ValueError("no")

    aborted = False
    try:
        async with trio.open_nursery() as nursery:
            reader = Reader(ctx, pipeline, limits, transport, outbox, nursery, listener, "127.0.0.1:1", ANONYMOUS)
            reader._serve(decode_request(fetch_frame(1, 0, topic_id), ctx.registry))
            monkeypatch.setattr(FetchAnswer, "encode_pieces", cannot)
            replicas.produce_many([(TP, make_batch([(1000, None, b"v" * 100)]), None, 3)], 1000)
            appends.notify([TP])
            assert not reader.parked and "cannot encode Fetch v16 response for 127.0.0.1:1" in caplog.text
            await trio.sleep_forever()  # ended by the flush task's ConnectionAborted
    except* ConnectionAborted:
        aborted = True
    assert aborted
