"""The broker's instructions for one ProduceRequest arriving alone on a connection (the latency bench's
producer: linger 0, acks=1, one record per request, the next sent after the answer), through the
connection's real code on a socket pair: the readable socket, `Reader.read_requests`, the frame cut,
the Produce lane (`SharedLane.answer_now`, `answer_one_partition`, `ReplicaManager.produce_many`, the
segment append), the outbox's flush and its `writev`, the empty read and Trio's wait for the next.

    python bench/produce_alone.py [--requests N] [--warmup W] [--store filesystem|memory] [--version 9]
                                  [--in-flight K]

The client is a task of the same Trio loop: it sends a frame, waits for its socket to be readable and
reads the answer, then sends the next (`--in-flight K`: K frames in one write, then their K answers: the
pipelined shape, answered as one lane group). Meant for valgrind, where the count does not depend on the
machine's load (wall time on a shared machine means nothing):

    valgrind --tool=callgrind --callgrind-out-file=/tmp/c0 python bench/produce_alone.py --requests 0
    valgrind --tool=callgrind --callgrind-out-file=/tmp/c1 python bench/produce_alone.py --requests 4000

(total of the second - total of the first) / 4000 is the instructions per request, the client's share
included (the same code in every tree compared: put another tree first with `PYTHONPATH=DIR`, where
`DIR/trafka` is its `src/`).
"""

from __future__ import annotations

import argparse
import socket
import tempfile

import trio
import trio.lowlevel
from kafka.protocol.producer import ProduceRequest
from kafka.record.memory_records import MemoryRecordsBuilder

from trafka.adapters.kafka.connection.limits import ServerLimits
from trafka.adapters.kafka.connection.outbox import Outbox
from trafka.adapters.kafka.connection.pipeline import Pipeline
from trafka.adapters.kafka.connection.reader import Reader
from trafka.adapters.kafka.connection.session import shared_lane
from trafka.adapters.kafka.connection.transport import SocketTransport
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.listeners import Listener, SecurityProtocol
from trafka.domain.security.principal import ANONYMOUS
from trafka.domain.topics import TopicPartition


def produce_frame(version: int) -> bytes:
    """A framed one-record ProduceRequest to partition 0 of `a`, acks=1, as librdkafka sends it."""
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
    builder.append(timestamp=1_700_000_000_000, key=None, value=b"v" * 100, headers=[])
    builder.close()
    data = ProduceRequest.TopicProduceData
    request = ProduceRequest[version](
        transactional_id=None,
        acks=1,
        timeout_ms=30000,
        topic_data=[data(name="a", partition_data=[data.PartitionProduceData(index=0, records=builder.buffer())])],
    )
    request.with_header(correlation_id=0, client_id="rdkafka")
    return bytes(request.encode(header=True, framed=True))


async def run(args: argparse.Namespace) -> None:
    storage = {"kind": "memory"} if args.store == "memory" else {"kind": "filesystem", "data_dir": tempfile.mkdtemp()}
    settings = load_settings(overrides={"storage": storage})
    ctx = bootstrap(settings, default_adapters(settings))
    ctx.services.catalog.create("a", 1, 1)
    total = args.warmup + args.requests
    template = produce_frame(args.version)  # built once: the client's cost per request stays small
    frames = [template[:8] + n.to_bytes(4, "big") + template[12:] for n in range(total)]  # correlation ids
    ours, theirs = socket.socketpair()
    theirs.setblocking(False)
    stream = trio.SocketStream(trio.socket.from_stdlib_socket(ours))
    limits = ServerLimits()
    transport = SocketTransport(stream)
    outbox = Outbox(transport, limits.max_inflight_requests, limits.max_queued_response_bytes)
    listener = Listener("PLAINTEXT", SecurityProtocol.PLAINTEXT, "127.0.0.1", 9092, "127.0.0.1", 9092)
    pipeline = Pipeline(ctx.registry, ctx.services.authorization, ctx.faults, ctx.services.cluster)
    lane = shared_lane(ctx)
    assert lane is not None
    async with trio.open_nursery() as nursery:
        nursery.start_soon(ctx.services.appends.run)
        reader = Reader(ctx, pipeline, limits, transport, outbox, nursery, listener, "127.0.0.1:1", ANONYMOUS, lane)
        nursery.start_soon(reader.read_requests)
        await trio.lowlevel.checkpoint()
        for first in range(0, total, args.in_flight):
            sent = frames[first : first + args.in_flight]
            theirs.send(b"".join(sent))
            answers, count = b"", 0
            while count < len(sent):
                await trio.lowlevel.wait_readable(theirs)
                answers += theirs.recv(1 << 16)
                while len(answers) >= 4 and len(answers) >= 4 + (size := int.from_bytes(answers[:4], "big")):
                    answers, count = answers[4 + size :], count + 1
        theirs.close()
        nursery.cancel_scope.cancel()
    watermarks = ctx.services.replicas.watermarks(TopicPartition("a", 0))
    assert watermarks is not None and watermarks[1] == total, (watermarks, total)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--warmup", type=int, default=500)
    parser.add_argument("--store", choices=["filesystem", "memory"], default="filesystem")
    parser.add_argument("--version", type=int, default=9)
    parser.add_argument("--in-flight", type=int, default=1, help="requests sent in one write, then their answers read")
    trio.run(run, parser.parse_args())


if __name__ == "__main__":
    main()
