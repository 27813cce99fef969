"""In-process CPU of the broker's part of the latency bench's record path after the append, through the
connection's real code: the consumer's Fetch frame decoded, served and parked (`Reader._serve`: the
request a consumer sends once it has its answer), then the append's notify answering it (the purgatory,
`complete()`, the answer's encoding, the slot, the `writev` to a socket pair, the bookkeeping after).

    python bench/parked_path.py [--store filesystem|memory] [--isolation 0|1] [--version 4-18] [--records N]
                                [--compare]

Medians of each stretch timed with `perf_counter_ns`, the first tenth dropped; the produce itself
(`produce_many`) is not timed. CPU in one process on a warm interpreter, not latency: compare two trees
run back to back (another tree first on the path: `PYTHONPATH=DIR` where `DIR/trafka` is its `src/`), or
`--compare`: blocks of 50 records alternating, in the same process, between the code as it is and with
ADR 130's changes switched off (the timer moved at each answer, the general completion and encoder, the
answer through the outbox's queue).
"""

from __future__ import annotations

import argparse
import heapq
import math
import socket
import statistics
import tempfile
import time
import uuid

import trio
import trio.lowlevel

from trafka.adapters.kafka.apis import fetch as fetch_room
from trafka.adapters.kafka.connection.limits import ServerLimits
from trafka.adapters.kafka.connection.outbox import Outbox, Slot
from trafka.adapters.kafka.connection.pipeline import Pipeline
from trafka.adapters.kafka.connection.reader import Reader
from trafka.adapters.kafka.connection.transport import SocketTransport
from trafka.adapters.kafka.runtime.purgatory import Operation, Purgatory
from trafka.adapters.kafka.wire import fast_fetch
from trafka.adapters.kafka.wire.codec import decode_request
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.listeners import Listener, SecurityProtocol
from trafka.domain.security.principal import ANONYMOUS
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import FetchRequest
from trafka.schema_codec.records import NewRecord, build_batch

TP = TopicPartition("a", 0)


def fetch_frame(version: int, correlation_id: int, offset: int, isolation: int, topic_id: uuid.UUID) -> bytes:
    """A consumer's Fetch as librdkafka sends it: sessionless (epoch -1), one partition."""
    Topic = FetchRequest.FetchTopic
    key = {"topic_id": topic_id} if version >= 13 else {"topic": "a"}
    fields = {
        "max_wait_ms": 500,
        "min_bytes": 1,
        "max_bytes": 50 << 20,
        "isolation_level": isolation,
        "topics": [
            Topic(
                version=version,
                partitions=[
                    Topic.FetchPartition(version=version, partition=0, fetch_offset=offset, partition_max_bytes=1 << 20)
                ],
                **key,
            )
        ],
    }
    if version < 15:
        fields["replica_id"] = -1
    if version >= 7:
        fields.update(session_id=0, session_epoch=-1, forgotten_topics_data=[])
    if version >= 11:
        fields["rack_id"] = ""
    request = FetchRequest(version=version, **fields)
    request.with_header(correlation_id=correlation_id, client_id="rdkafka")
    return bytes(request.encode(header=True))


BLOCK = 50  # records per mode with --compare


def _eager_finish(self: Purgatory, op: Operation) -> None:
    """The purgatory's `_finish` before ADR 130: the timer moved off an answered operation at once."""
    op.finished = True
    self._unwatch(op, op.parked.keys)
    if op.parked.max_wait_ms is not None:
        self._timed -= 1
    deadlines = self._deadlines
    if deadlines and deadlines[0][2] is op:
        while deadlines and deadlines[0][2].finished:
            heapq.heappop(deadlines)
        if self._timer is not None:
            self._timer.deadline = deadlines[0][0] if deadlines else math.inf


_LAZY_FINISH = Purgatory._finish
_ONE_PARTITION = fetch_room.one_partition_completion
_ONE_ENCODER = fast_fetch._one_partition
_ANSWER_NOWAIT = Outbox.answer_nowait


def _fill_and_flush(self: Outbox, slot: Slot, data: list[bytes] | None) -> None:
    slot.fill(data)
    self.flush_nowait()


def _switch(on: bool) -> None:
    """ADR 130's three changes on (as committed) or off (the code before them, in the same process)."""
    Purgatory._finish = _LAZY_FINISH if on else _eager_finish  # type: ignore[method-assign]
    fetch_room.one_partition_completion = (  # type: ignore[assignment]
        _ONE_PARTITION
        if on
        else lambda ctx, request, target, by_id, tp=None: fetch_room.completion(
            ctx, request, [target], None, None, by_id
        )
    )
    fast_fetch._one_partition = _ONE_ENCODER if on else (lambda *args: None)  # type: ignore[assignment]
    Outbox.answer_nowait = _ANSWER_NOWAIT if on else _fill_and_flush  # type: ignore[method-assign]


async def run(args: argparse.Namespace) -> dict[str, float]:
    storage = {"kind": "memory"} if args.store == "memory" else {"kind": "filesystem", "data_dir": tempfile.mkdtemp()}
    settings = load_settings(overrides={"storage": storage})
    ctx = bootstrap(settings, default_adapters(settings))
    ctx.services.catalog.create("a", 1, 1)
    topic_id = ctx.services.catalog.get("a").topic_id
    replicas, appends, clock = ctx.services.replicas, ctx.services.appends, ctx.services.clock_ms
    batch = build_batch([NewRecord(1000, None, b"v" * 100)], replicas.checksum)
    ours, theirs = socket.socketpair()
    theirs.setblocking(False)
    stream = trio.SocketStream(trio.socket.from_stdlib_socket(ours))
    limits = ServerLimits()
    transport = SocketTransport(stream)
    outbox = Outbox(transport, limits.max_inflight_requests, limits.max_queued_response_bytes)
    listener = Listener("PLAINTEXT", SecurityProtocol.PLAINTEXT, "127.0.0.1", 9092, "127.0.0.1", 9092)
    pipeline = Pipeline(ctx.registry, ctx.services.authorization, ctx.faults, ctx.services.cluster)
    times: dict[str, list[int]] = {}
    async with trio.open_nursery() as nursery:
        nursery.start_soon(appends.run)
        await trio.lowlevel.checkpoint()
        reader = Reader(ctx, pipeline, limits, transport, outbox, nursery, listener, "127.0.0.1:1", ANONYMOUS)
        mode = "as is"
        for i in range(args.records):
            if args.compare and i % BLOCK == 0:
                mode = "ADR 130 off" if i // BLOCK % 2 else "as is"
                _switch(mode == "as is")
            frame = fetch_frame(args.version, i, replicas.watermarks(TP)[1], args.isolation, topic_id)
            start = time.perf_counter_ns()
            request = decode_request(frame, ctx.registry)
            reader._serve(request)
            parked = time.perf_counter_ns()
            replicas.produce_many([(TP, bytearray(batch), None, 3)], clock())
            notify = time.perf_counter_ns()
            try:
                appends.notify([TP])
            finally:
                replicas.forget_appended()
            done = time.perf_counter_ns()
            assert not outbox.pending and len(theirs.recv(1 << 16)) > 100
            if i >= args.records // 10 and i % BLOCK:  # a block's first park follows the other mode's answer
                times.setdefault(f"{mode}: next Fetch decoded, served, parked", []).append(parked - start)
                times.setdefault(f"{mode}: notify, answered and written", []).append(done - notify)
            if i % 64 == 0:
                await trio.lowlevel.checkpoint()
        nursery.cancel_scope.cancel()
    return {name: statistics.median(taken) / 1000 for name, taken in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", choices=["filesystem", "memory"], default="filesystem")
    parser.add_argument("--isolation", type=int, choices=[0, 1], default=1)
    parser.add_argument("--version", type=int, default=16)
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--compare", action="store_true", help="alternate blocks with ADR 130's changes off")
    args = parser.parse_args()
    for name, median in trio.run(run, args).items():
        print(f"{args.store} isolation {args.isolation} v{args.version}, {name}: median {median:.2f} µs")


if __name__ == "__main__":
    main()
