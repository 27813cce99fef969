"""Share groups (KIP-932) against a consumer group on the same data: records/s and broker CPU per record.

    python bench/share.py [--records 1000000] [--consumers 4] [--size 100] [--runs 1]
                          [--max-record-locks 2000] [--group-fetch-queue-backoff-ms 1000] [--json]

1. spawns a fresh trafka (`--memory`), creates a one-partition topic and a four-partition topic
   (`--consumers` partitions) and fills both with `--records` (1,000,000) records of `--size` (100) bytes;
2. **share**: `--consumers` (4) processes, each a confluent-kafka `ShareConsumer` of one share group
   (`share.auto.offset.reset=earliest` through the GROUP config resource), explicit acknowledgement:
   every record is acknowledged ACCEPT and committed with the next poll (piggybacked on ShareFetch).
   The clock runs from the first record read until the records delivered number `--records` in all
   (joining the group is not measured);
3. **consumer group**: the same number of classic `Consumer` processes in one group on the
   four-partition topic, until everything is read. Each member pauses its partitions when they are
   assigned and resumes them when every partition is assigned: otherwise librdkafka prefetches up to
   `queued.max.messages.kbytes` (64 MB a member) while the group forms, and the phase times the drain
   of the clients' own queues (what the first version of this bench did: 3.2 M records/s for 200,000
   records). With librdkafka's defaults a member whose queue holds `queued.min.messages` (100,000)
   stops fetching for `fetch.queue.backoff.ms` (1 s), however fast it drains: the same against any
   broker. `--group-fetch-queue-backoff-ms 10` shows what the broker serves without that pause.

Per phase it prints records/s and the broker's CPU microseconds per record (user + system, from
`/proc/PID/stat`), and the ratio share / consumer group (the issue's goal: at least 0.5, and at most
15 us of broker CPU per record). With a 2-core machine shared with other work, the figures are noisy.

The topics are filled in batches of the Java producer's default `batch.size` (16 KB). librdkafka's
ShareFetch is batch-optimized (Kafka's default acquire mode): a member is given whole log batches, so
the batch size decides how finely the records are shared. What bounds the share phase is the
share-partition's in-flight window, `group.share.partition.max.record.locks` (`--max-record-locks`,
Kafka's default 2000, at most 10000): records past the start offset plus 2000 are not handed out
until the oldest in-flight records are acknowledged.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import time
from pathlib import Path

from confluent_kafka import AcknowledgeType, Consumer, Producer, ShareConsumer
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic, ResourceType
from throughput import machine_line, spawn_trafka

TIMEOUT = 180.0
BATCH_BYTES = 16384  # the Java producer's default batch.size (librdkafka's is 1 MB)


def _fill(bootstrap: str, topic: str, partitions: int, records: int, size: int) -> None:
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 20,
            "batch.size": BATCH_BYTES,
            "queue.buffering.max.messages": records + 10,
        }
    )
    payload = b"x" * size
    for n in range(records):
        while True:
            try:
                producer.produce(topic, payload, partition=n % partitions)
                break
            except BufferError:
                producer.poll(0.01)
    if producer.flush(TIMEOUT):
        raise SystemExit("produce did not finish")


def _share_member(bootstrap: str, topic: str, group: str, start, done, counter) -> None:
    consumer = ShareConsumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "share.acknowledgement.mode": "explicit",
            "log_level": 0,
        }
    )
    consumer.subscribe([topic])
    start.wait()
    while not done.is_set():
        messages = consumer.poll(0.2) or []
        n = 0
        for m in messages:
            if not m.error():
                consumer.acknowledge(m, AcknowledgeType.ACCEPT)
                n += 1
        if n:
            with counter.get_lock():
                counter.value += n
    consumer.commit_sync()
    consumer.close()


def _group_member(
    bootstrap: str, topic: str, group: str, start, done, counter, assigned, slot: int, queue_backoff_ms: int
) -> None:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "fetch.queue.backoff.ms": queue_backoff_ms,
            "log_level": 0,
        }
    )

    # Paused from the assignment until the clock's start: otherwise librdkafka prefetches up to
    # queued.max.messages.kbytes (64 MB a consumer) while the group forms, and the phase measured the
    # drain of the clients' own queues (3.2 M records/s for 200,000 records) instead of the broker.
    def on_assign(c, partitions):
        c.assign(partitions)
        if not start.is_set():  # a rebalance after the start (a member joining late) must not pause
            c.pause(partitions)
        assigned[slot] = len(partitions)

    def on_revoke(c, partitions):
        assigned[slot] = 0

    consumer.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
    while not start.is_set():
        consumer.poll(0.05)  # serves the rebalance; nothing is fetched while paused
    consumer.resume(consumer.assignment())
    while not done.is_set():
        messages = consumer.consume(1000, 0.2)
        n = sum(1 for m in messages if not m.error())
        if n:
            with counter.get_lock():
                counter.value += n
    consumer.close()


def _cpu_seconds(pid: int) -> float:
    """User+system CPU of a process so far, all its threads (librdkafka's too)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _phase(
    target, bootstrap: str, topic: str, group: str, consumers: int, records: int, broker, queue_backoff_ms: int = 0
) -> tuple[float, float, float]:
    """(records/s, broker CPU seconds per record, the members' CPU seconds per record) from the first
    record read to the last."""
    ctx = multiprocessing.get_context("spawn")
    done = ctx.Event()
    start = ctx.Event()
    counter = ctx.Value("q", 0)
    assigned = ctx.Array("i", consumers)
    extra = [(assigned, i, queue_backoff_ms) if target is _group_member else () for i in range(consumers)]
    procs = [
        ctx.Process(target=target, args=(bootstrap, topic, group, start, done, counter, *extra[i]))
        for i in range(consumers)
    ]
    for p in procs:
        p.start()
    deadline = time.monotonic() + TIMEOUT
    if target is _group_member:  # every partition assigned (and paused) before the clock
        # every member holding one: a generation formed before the last member joined also assigns every
        # partition (one member holding two), and the late member's rebalance then paused them for good
        while min(assigned) == 0 or sum(assigned) != consumers:
            if time.monotonic() > deadline:
                raise SystemExit(f"{group}: not every partition assigned after {TIMEOUT} s")
            time.sleep(0.01)
    else:  # a share member fetches only when it polls: nothing is read before the start
        time.sleep(3.0)
    start.set()
    while counter.value == 0:  # the clock starts at the first record: joining is not measured
        if time.monotonic() > deadline:
            raise SystemExit(f"{group}: nothing read after {TIMEOUT} s")
        time.sleep(0.001)
    cpu_before = broker.cpu_seconds()
    members_before = sum(_cpu_seconds(p.pid) for p in procs)
    t0 = time.perf_counter()
    first = counter.value
    while counter.value < records:
        if time.monotonic() > deadline:
            raise SystemExit(f"{group}: {counter.value} of {records} records after {TIMEOUT} s")
        time.sleep(0.005)
    elapsed = time.perf_counter() - t0
    cpu = broker.cpu_seconds() - cpu_before
    members = sum(_cpu_seconds(p.pid) for p in procs) - members_before
    done.set()
    for p in procs:
        p.join(30)
    return (records - first) / elapsed, cpu / (records - first), members / (records - first)


def run_once(args) -> dict:
    # the broker's in-flight window per share-partition (Kafka's default 2000, at most 10000)
    os.environ["TRAFKA_GROUPS_SHARE_PARTITION_MAX_RECORD_LOCKS"] = str(args.max_record_locks)
    broker = spawn_trafka(None, 30, None)
    try:
        bootstrap = broker.bootstrap
        admin = AdminClient({"bootstrap.servers": bootstrap})
        for f in admin.create_topics(
            [NewTopic("share-bench", 1, 1), NewTopic("group-bench", args.consumers, 1)]
        ).values():
            f.result(30)
        resource = ConfigResource(
            ResourceType.GROUP,
            "share-bench-group",
            incremental_configs=[
                ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)
            ],
        )
        for f in admin.incremental_alter_configs([resource]).values():
            f.result(30)
        _fill(bootstrap, "share-bench", 1, args.records, args.size)
        _fill(bootstrap, "group-bench", args.consumers, args.records, args.size)
        share_rate, share_cpu, share_members = _phase(
            _share_member, bootstrap, "share-bench", "share-bench-group", args.consumers, args.records, broker
        )
        group_rate, group_cpu, group_members = _phase(
            _group_member,
            bootstrap,
            "group-bench",
            "group-bench-group",
            args.consumers,
            args.records,
            broker,
            args.group_fetch_queue_backoff_ms,
        )
    finally:
        broker.stop()
    return {
        "share_records_per_s": share_rate,
        "share_cpu_us_per_record": share_cpu * 1e6,
        "share_members_cpu_us_per_record": share_members * 1e6,
        "group_records_per_s": group_rate,
        "group_cpu_us_per_record": group_cpu * 1e6,
        "group_members_cpu_us_per_record": group_members * 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--consumers", type=int, default=4)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument(
        "--max-record-locks", type=int, default=2000, help="group.share.partition.max.record.locks (Kafka: 2000)"
    )
    parser.add_argument(
        "--group-fetch-queue-backoff-ms",
        type=int,
        default=1000,
        help="the consumer group members' fetch.queue.backoff.ms (librdkafka's default 1000)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = [run_once(args) for _ in range(args.runs)]
    median = {k: statistics.median(r[k] for r in results) for k in results[0]}
    median["ratio"] = median["share_records_per_s"] / median["group_records_per_s"]
    if args.json:
        print(json.dumps({"median": median, "runs": results, "machine": machine_line()}))
        return
    print(
        f"share groups : {median['share_records_per_s']:,.0f} records/s, broker CPU {median['share_cpu_us_per_record']:.2f} us/record,"
        f" members' CPU {median['share_members_cpu_us_per_record']:.2f} us/record"
    )
    print(
        f"consumer grp : {median['group_records_per_s']:,.0f} records/s, broker CPU {median['group_cpu_us_per_record']:.2f} us/record,"
        f" members' CPU {median['group_members_cpu_us_per_record']:.2f} us/record"
    )
    print(
        f"share / group: {median['ratio']:.2f} (group.share.partition.max.record.locks={args.max_record_locks},"
        f" group members' fetch.queue.backoff.ms={args.group_fetch_queue_backoff_ms})"
    )
    print(machine_line())


if __name__ == "__main__":
    main()
