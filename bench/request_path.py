"""CPU per Produce request inside the broker, without sockets: decode, handle, encode.

    python bench/request_path.py [--requests 50000] [--version 9] [--store memory|filesystem] [--metrics]
                                 [--records 1] [--topic-config | --schema-validation]
    python bench/request_path.py --lane 8 ...                    # the one-partition lane, 8 requests at a time
    python bench/request_path.py --wire [--connections 4] [--pipeline] ...   # through the real server and sockets
    python bench/request_path.py --wire --quota-elsewhere ...    # ... with a client quota set on another client

Builds one-record batches as a producer with `batch.num.messages=1` sends them (kafka-python's
record builder, CRC32C included), frames them as ProduceRequests for 8 partitions, then times
`decode_request` -> the Produce handler -> `encode_response` over all of them with
`time.process_time`. A repeatable view of the per-request Python cost that `bench/fanin.py` measures
end to end (which adds Trio's socket and scheduling work and the clients sharing the machine).
`--lane N` takes the way the server answers pipelined one-partition requests instead (ADR 29):
`decode_one_partition`, then `answer_one_partition` for N requests at a time (one log write per
partition per group).

`--wire` runs the same frames through the real server instead (`trafka.Broker`, its own thread and
Trio loop) from raw sockets in a child process, each with one request in flight as a producer with
acks=all and one record per request has, and reads the broker thread's own CPU clock: the cost of
the connection loop included, the clients' cost left out. With `--pipeline` every connection sends
its requests without waiting for the responses, as librdkafka does with many in flight.

`--schema-validation` creates the topic with `confluent.value.schema.validation=true` and writes
values in Confluent's wire format with an id registered under `bench-value`: the cost of broker-side
schema validation, per record (`--records` per batch). `--topic-config` sets an unrelated topic
config instead (`retention.ms`): the cost validation adds to topics that do not turn it on.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import struct
import tempfile
import threading
import time

from kafka.protocol.producer import ProduceRequest
from kafka.record.memory_records import MemoryRecordsBuilder

from trafka.adapters.kafka.apis.produce import Uses, answer_one_partition
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.adapters.kafka.wire.codec import decode_request, encode_response
from trafka.adapters.kafka.wire.fast_produce import decode_one_partition
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.app.wiring.http import schema_registry
from trafka.domain.schema_registry import Schema


def frames(count: int, version: int, partitions: int, records: int = 1, value: bytes = b"x" * 100) -> list[bytes]:
    out = []
    data = ProduceRequest.TopicProduceData
    for n in range(count):
        builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
        for _ in range(records):
            builder.append(timestamp=1_700_000_000_000 + n, key=None, value=value, headers=[])
        builder.close()
        request = ProduceRequest[version](
            transactional_id=None,
            acks=-1,
            timeout_ms=30000,
            topic_data=[
                data(
                    name="bench",
                    partition_data=[data.PartitionProduceData(index=n % partitions, records=builder.buffer())],
                )
            ],
        )
        request.with_header(correlation_id=n, client_id="rdkafka")
        out.append(bytes(request.encode(header=True, framed=False)))
    return out


def _receive_exactly(sock: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("the broker closed the connection")
        data += chunk
    return bytes(data)


def _client(
    address: tuple[str, int], requests: list[bytes], connections: int, ready, go, pipeline: bool = False
) -> None:
    sockets = [socket.create_connection(address) for _ in range(connections)]
    for sock in sockets:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    ready.set()
    go.wait()
    if pipeline:
        _pipelined(sockets, requests)
        return
    for base in range(0, len(requests), connections):
        batch = requests[base : base + connections]
        for sock, frame in zip(sockets, batch):
            sock.sendall(frame)
        for sock, _ in zip(sockets, batch):
            (size,) = struct.unpack(">i", _receive_exactly(sock, 4))
            _receive_exactly(sock, size)
    for sock in sockets:
        sock.close()


def _pipelined(sockets: list[socket.socket], requests: list[bytes]) -> None:
    """Every connection sends its share without waiting for responses (as librdkafka does with many
    requests in flight) while a thread per connection reads the responses back."""

    def send(sock: socket.socket, frames: list[bytes]) -> None:
        for base in range(0, len(frames), 64):
            sock.sendall(b"".join(frames[base : base + 64]))

    def receive(sock: socket.socket, count: int) -> None:
        pending = bytearray()
        while count:
            chunk = sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("the broker closed the connection")
            pending += chunk
            pos = 0
            while len(pending) - pos >= 4:
                (size,) = struct.unpack_from(">i", pending, pos)
                if len(pending) - pos < 4 + size:
                    break
                pos += 4 + size
                count -= 1
            del pending[:pos]

    shares = [requests[i :: len(sockets)] for i in range(len(sockets))]
    threads = [
        threading.Thread(target=f, args=(sock, share if f is send else len(share)))
        for sock, share in zip(sockets, shares)
        for f in (send, receive)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for sock in sockets:
        sock.close()


def _quota_elsewhere(bootstrap: str) -> None:
    """A producer_byte_rate quota on another client id: the quota layer runs for every request (ADR 46),
    and the bench's own client (`rdkafka`) has none."""
    from kafka import KafkaAdminClient
    from kafka.protocol.admin import AlterClientQuotasRequest

    Entry = AlterClientQuotasRequest.EntryData
    request = AlterClientQuotasRequest(
        entries=[
            Entry(
                entity=[Entry.EntityData(entity_type="client-id", entity_name="someone-else")],
                ops=[Entry.OpData(key="producer_byte_rate", value=1024.0, remove=False)],
            )
        ],
        validate_only=False,
    )
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        (result,) = admin._manager.run(admin._send_request_to_controller, request).entries
        assert result.error_code == 0, result
    finally:
        admin.close()


def wire(args: argparse.Namespace) -> list[float]:
    """Broker-thread CPU per request over real sockets, one request in flight per connection.

    The clients run in another process, so the broker's thread has the interpreter to itself."""
    import multiprocessing

    import trafka

    data_dir = tempfile.mkdtemp() if args.store == "filesystem" else None
    samples = []
    with trafka.Broker(topics={"bench": args.partitions}, data_dir=data_dir) as broker:
        # the loop thread every broker of the process runs on (ADR 126)
        loop = next(t for t in threading.enumerate() if t.name == "trafka-brokers")
        clock = time.pthread_getcpuclockid(loop.ident)
        host, port = broker.bootstrap_servers.split(",")[0].rsplit(":", 1)
        if args.quota_elsewhere:
            _quota_elsewhere(broker.bootstrap_servers)
        for _ in range(args.runs):
            requests = [struct.pack(">i", len(f)) + f for f in frames(args.requests, args.version, args.partitions)]
            ready, go = multiprocessing.Event(), multiprocessing.Event()
            client = multiprocessing.Process(
                target=_client, args=((host, int(port)), requests, args.connections, ready, go, args.pipeline)
            )
            client.start()
            ready.wait()
            began = time.clock_gettime(clock)
            go.set()
            client.join()
            samples.append((time.clock_gettime(clock) - began) / len(requests) * 1e6)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50000)
    parser.add_argument("--version", type=int, default=9)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--store", choices=["memory", "filesystem"], default="memory")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--metrics", action="store_true", help="count Prometheus metrics, as with --http-port")
    parser.add_argument("--wire", action="store_true", help="through the real server and sockets")
    parser.add_argument("--connections", type=int, default=4, help="with --wire: client connections")
    parser.add_argument(
        "--pipeline",
        action="store_true",
        help="with --wire: send every request without waiting for responses (many in flight)",
    )
    parser.add_argument("--records", type=int, default=1, help="records per batch")
    parser.add_argument(
        "--quota-elsewhere",
        action="store_true",
        help="with --wire: a client quota set on another client id (the quota layer on, this client unlimited)",
    )
    parser.add_argument(
        "--lane",
        type=int,
        default=0,
        metavar="N",
        help="through the one-partition Produce lane, N requests answered together (the server's way)",
    )
    validation = parser.add_mutually_exclusive_group()
    validation.add_argument("--schema-validation", action="store_true", help="confluent.value.schema.validation=true")
    validation.add_argument("--topic-config", action="store_true", help="an unrelated topic config (retention.ms)")
    args = parser.parse_args()
    if args.wire:
        samples = wire(args)
        inflight = "pipelined" if args.pipeline else "one request in flight each"
        print(
            f"Produce v{args.version} over {args.connections} connections ({inflight}), 1 record per request, {args.store} store: "
            f"{statistics.median(samples):.1f} us of broker-thread CPU per request (median of {args.runs}; "
            f"runs {', '.join(f'{s:.1f}' for s in samples)})"
        )
        return
    storage = {"kind": "memory"} if args.store == "memory" else {"kind": "filesystem", "data_dir": tempfile.mkdtemp()}
    # --metrics: the observer the HTTP listener's metrics are, as with --http-port
    settings = load_settings(overrides={"storage": storage, **({"http": {"port": 0}} if args.metrics else {})})
    adapters = default_adapters(settings)
    ctx = bootstrap(settings, adapters)
    value = b"x" * 100
    configs = {}
    if args.topic_config:
        configs = {"retention.ms": "604800000"}
    if args.schema_validation:
        configs = {"confluent.value.schema.validation": "true"}
        registered = schema_registry(ctx).change(lambda registry: registry.register("bench-value", Schema('"bytes"')))
        value = b"\x00" + registered.schema_id.to_bytes(4, "big") + b"x" * 95
    ctx.services.catalog.create("bench", args.partitions, 1, configs)
    client = ClientInfo("rdkafka", "127.0.0.1")
    samples = []
    for _ in range(args.runs):
        requests = frames(args.requests, args.version, args.partitions, args.records, value)
        began = time.process_time()
        if args.lane:  # what the server does with pipelined one-partition requests (ADR 29)
            for base in range(0, len(requests), args.lane):
                group = [decode_one_partition(frame) for frame in requests[base : base + args.lane]]
                answer_one_partition(ctx.view(Uses), group)
                for one in group:
                    ctx.services.observer.request_completed("Produce", one.version, 0.0003)
        else:
            for frame in requests:
                decoded = decode_request(frame, ctx.registry)
                outcome = decoded.handler.handle(ctx, decoded.body, decoded.api_version, client)
                encode_response(outcome, decoded.api_version, decoded.correlation_id)
                ctx.services.observer.request_completed(decoded.handler.name, decoded.api_version, 0.0003)
        samples.append((time.process_time() - began) / args.requests * 1e6)
    appended = sum(
        ctx.services.replicas.watermarks(tp)[1] for tp in ctx.services.catalog.get("bench").topic_partitions()
    )
    assert appended == args.runs * args.requests * args.records, f"only {appended} records were appended"
    adapters.stop()
    topic = ", schema validation on" if args.schema_validation else ", a topic config set" if args.topic_config else ""
    topic += f", the lane in groups of {args.lane}" if args.lane else ", the general path"
    print(
        f"Produce v{args.version}, {args.records} record(s) per request, {args.store} store"
        f"{', metrics counted' if args.metrics else ''}{topic}: "
        f"{statistics.median(samples):.1f} us of CPU per request (median of {args.runs}; runs {', '.join(f'{s:.1f}' for s in samples)})"
    )


if __name__ == "__main__":
    main()
