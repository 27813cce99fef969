"""In-process CPU of a parked Fetch's completion after a one-record append (ADR 127), interleaved:
`read` forgets the kept append first, so the log is read as before; `appended` answers from it.

    python bench/parked_fetch.py [--store filesystem|memory] [--isolation 0|1] [--completions N]

Medians of `complete(False)` timed with `perf_counter_ns`, the first tenth dropped. CPU in one process,
not latency: read the two figures of one run against each other.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from trafka.adapters.kafka.api import Parked
from trafka.adapters.kafka.apis.fetch import Uses, handle_fetch
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import FetchRequest
from trafka.schema_codec.records import NewRecord, build_batch

TP = TopicPartition("a", 0)
CLIENT = ClientInfo("bench", "127.0.0.1")


def request(offset: int, isolation: int) -> FetchRequest:
    Topic = FetchRequest.FetchTopic
    partition = Topic.FetchPartition(partition=0, fetch_offset=offset, partition_max_bytes=1 << 20)
    return FetchRequest[12](
        replica_id=-1,
        max_wait_ms=500,
        min_bytes=1,
        max_bytes=50 << 20,
        isolation_level=isolation,
        session_id=0,
        session_epoch=-1,
        topics=[Topic(topic="a", partitions=[partition])],
        forgotten_topics_data=[],
        rack_id="",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", choices=["filesystem", "memory"], default="filesystem")
    parser.add_argument("--isolation", type=int, choices=[0, 1], default=1)
    parser.add_argument("--completions", type=int, default=20_000)
    args = parser.parse_args()
    storage = {"kind": "memory"} if args.store == "memory" else {"kind": "filesystem", "data_dir": tempfile.mkdtemp()}
    settings = load_settings(overrides={"storage": storage})
    ctx = bootstrap(settings, default_adapters(settings))
    ctx.services.catalog.create("a", 1, 1)
    replicas, view, clock = ctx.services.replicas, ctx.view(Uses), ctx.services.clock_ms
    batch = build_batch([NewRecord(1000, None, b"v" * 100)], replicas.checksum)
    times: dict[str, list[int]] = {"read": [], "appended": []}
    for i in range(args.completions):
        way = "appended" if i % 2 else "read"
        parked = handle_fetch(view, request(replicas.watermarks(TP)[1], args.isolation), 12, CLIENT)
        assert type(parked) is Parked
        replicas.produce_many([(TP, batch, None, 3)], clock())
        if way == "read":
            replicas.forget_appended()
        start = time.perf_counter_ns()
        answer = parked.complete(False)
        took = time.perf_counter_ns() - start
        replicas.forget_appended()
        assert answer is not None and answer.topics[0][2][0][7]
        if i >= args.completions // 10:
            times[way].append(took)
    for way, taken in times.items():
        print(
            f"{args.store} isolation {args.isolation}, {way}: complete() median {statistics.median(taken) / 1000:.2f} µs"
        )


if __name__ == "__main__":
    main()
