"""Log compaction: how fast the cleaner cleans, and what it does to produce latency.

    python bench/compaction.py [--records 1000000] [--keys 10000] [--size 100] [--skip-latency]
                               [--skip-rate] [--python-scan] [--dedupe-buffer BYTES]

1. **Cleaning rate** (in process, no network): writes `--records` records of `--size`-byte values
   over `--keys` keys (batches of 100 records, uncompressed) through the filesystem store into
   64 MiB segments, rolls the active segment, and times one cleaning of the whole dirty log by the
   domain's Cleaner (key map, recopy, swap of each cleaned segment): dirty MB (10^6 bytes) per
   second, and the recopied bytes. The page cache is warm (the log was just written). Also the
   process's peak RSS growth during the cleaning, against `--dedupe-buffer` (give `--keys` equal to
   `--records` to fill the map). `--python-scan`: the domain's key scan instead of aiokafka's.
2. **Produce p99 with and without the cleaner** (a spawned `trafka serve` on the filesystem store,
   librdkafka producer, acks=1, linger.ms=0): the same compacted topic (8 MiB segments,
   min.cleanable.dirty.ratio 0.01, min.compaction.lag.ms one day so nothing is cleaned while it
   loads) is loaded with the same records; the lag is lifted (IncrementalAlterConfigs), then 20,000
   records are sent at 2,000 per second and each one's delivery latency is taken from its delivery
   report. Once with `log.cleaner.enable=false`, once with the cleaner on
   (`log.cleaner.backoff.ms=100`), which then cleans the loaded log while the latency is measured.
   p50/p99/max are printed, the p99 of the records sent while the cleaner worked (from the lift to
   the end of its cleanings, read from the broker's log), and the peak RSS of the broker and of its
   cleaner process.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import crc32c
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic, ResourceType
from kafka.record.default_records import DefaultRecordBatchBuilder

sys.path.insert(0, str(Path(__file__).parent))
from throughput import machine_line, spawn_trafka

from trafka.adapters.compression import compress, decompress
from trafka.adapters.compression.keys import scan_keys
from trafka.adapters.filesystem import FileLogStore, LogDir
from trafka.domain.batch import assign_offsets, validate_batches
from trafka.domain.compaction import Cleaner, CompactionConfig, cleanable_offsets, log_to_clean
from trafka.domain.compaction.records import decode_keys
from trafka.domain.topics import Topic, TopicPartition

TP = TopicPartition("compacted", 0)
BATCH = 100


def batches(records: int, keys: int, size: int):
    value = b"v" * size
    for start in range(0, records, BATCH):
        builder = DefaultRecordBatchBuilder(
            magic=2,
            compression_type=0,
            is_transactional=False,
            producer_id=-1,
            producer_epoch=-1,
            base_sequence=-1,
            batch_size=1 << 24,
        )
        for i in range(start, min(start + BATCH, records)):
            builder.append(
                i - start, timestamp=1_700_000_000_000, key=b"key-%05d" % (i % keys), value=value, headers=[]
            )
        yield bytes(builder.build())


def _proc_status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def cleaning_rate(
    records: int, keys: int, size: int, python_scan: bool = False, dedupe_buffer: int = 128 << 20
) -> dict:
    folder = tempfile.mkdtemp(prefix="bench-compaction-")
    logdir = LogDir.open(folder, 1, uuid.uuid4(), uuid.uuid4())
    store = FileLogStore(logdir, crc32c.crc32c, lambda: 1_700_000_000_000)
    topic = Topic(TP.topic, uuid.uuid4(), 1, {"segment.bytes": str(64 << 20), "cleanup.policy": "compact"})
    log = store.open(TP, topic)
    for raw in batches(records, keys, size):
        validated = validate_batches(bytearray(raw), crc32c.crc32c, len(raw))
        log.append(validated.buffer, assign_offsets(validated, log.log_end_offset, 0, crc32c.crc32c))
    log.roll()
    segments = log.segment_infos()
    dirty = sum(s.size for s in segments)
    first, uncleanable, _ = cleanable_offsets(segments, 0, log.log_end_offset, None, log.log_end_offset, 0, 0)
    cleaner = Cleaner(
        crc32c.crc32c, decompress, compress, dedupe_buffer, scan_keys=decode_keys if python_scan else scan_keys
    )
    rss_before = _proc_status_kb("VmRSS")
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")  # the peak (VmHWM) restarts from here
    started = time.perf_counter()
    end, stats = cleaner.clean(
        log,
        log_to_clean(TP, segments, first, uncleanable),
        CompactionConfig(segment_bytes=64 << 20),
        {},
        1_700_000_000_000,
        log.replace_segments,
    )
    seconds = time.perf_counter() - started
    peak_growth = _proc_status_kb("VmHWM") - rss_before
    after = sum(s.size for s in log.segment_infos())
    store.close()
    return {
        "dirty_mb": dirty / 1e6,
        "seconds": seconds,
        "mb_per_s": dirty / 1e6 / seconds,
        "after_mb": after / 1e6,
        "records_kept": stats.messages_written,
        "clean_end": end,
        "rss_growth_mb": peak_growth * 1024 / 1e6,
        "buffer_utilization": stats.buffer_utilization,
    }


def _broker_status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _cleaner_processes(parent: int) -> list[int]:
    """The broker's cleaner processes (`python -m trafka.app.cleaner.process`)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if b"trafka.app.cleaner.process" in cmdline and ppid == parent:
            found.append(int(entry.name))
    return found


def produce_latency(cleaner_on: bool, records: int, keys: int, size: int) -> dict:
    folder = Path(tempfile.mkdtemp(prefix="bench-compaction-broker-"))
    config = folder / "server.properties"
    config.write_text(f"log.cleaner.enable={'true' if cleaner_on else 'false'}\nlog.cleaner.backoff.ms=100\n")
    broker = spawn_trafka(None, 60, None, ("--data-dir", str(folder / "logs"), "--config", str(config)))
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        # Nothing is cleanable while loading (min.compaction.lag.ms one day); the lag is lifted just before
        # the measurement, so the cleaner (when on) cleans the whole loaded log while latency is taken.
        configs = {
            "cleanup.policy": "compact",
            "segment.bytes": str(8 << 20),
            "min.cleanable.dirty.ratio": "0.01",
            "min.compaction.lag.ms": "86400000",
        }
        admin.create_topics([NewTopic("changelog", 1, 1, config=configs)])["changelog"].result(30)
        loader = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 20, "batch.size": 1 << 20})
        value = b"v" * size
        for i in range(records):
            while True:
                try:
                    loader.produce("changelog", key=b"key-%05d" % (i % keys), value=value)
                    break
                except BufferError:
                    loader.poll(0.05)
        assert loader.flush(120) == 0
        lift = ConfigResource(
            ResourceType.TOPIC,
            "changelog",
            incremental_configs=[
                ConfigEntry("min.compaction.lag.ms", "0", incremental_operation=AlterConfigOpType.SET)
            ],
        )
        admin.incremental_alter_configs([lift])[lift].result(30)
        lifted = time.perf_counter()
        cpu_before = broker.cpu_seconds()
        latencies: list[float] = []
        during: list[float] = []
        producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0, "acks": 1})

        def delivered(error, message, sent: float) -> None:
            # librdkafka's own measure, from produce() to the broker's answer on its broker thread. The
            # bench waits for the next send inside poll() (as an application does) instead of spinning
            # on a core: on 2 cores the spinning client was what the producer's thread waited for.
            latency = message.latency()
            if error is None and latency is not None:
                latencies.append(latency)
                during.append((sent, latency))

        started = time.perf_counter()
        for n in range(20_000):
            while (pause := started + n / 2000 - time.perf_counter()) > 0:
                producer.poll(max(pause, 0.001))  # librdkafka's timeout is in whole milliseconds
            sent = time.perf_counter()
            producer.produce(
                "changelog",
                key=b"key-%05d" % (n % keys),
                value=value,
                on_delivery=lambda error, msg, sent=sent: delivered(error, msg, sent),
            )
            producer.poll(0)
        assert producer.flush(60) == 0
        cpu = broker.cpu_seconds()
        peak_rss = _broker_status_kb(broker.proc.pid, "VmHWM")
        cleaner_rss = sum(_broker_status_kb(pid, "VmHWM") for pid in _cleaner_processes(broker.proc.pid))
        broker.log.flush()
        cleanings = [
            float(m.group(1))
            for m in re.finditer(
                r"cleaned changelog-0 up to offset \d+: .* in ([0-9.]+) s", Path(broker.log.name).read_text()
            )
        ]
        # the records sent while the cleaner worked: from the lift to the end of its cleanings (+ the backoff)
        window = lifted + 0.1 + sum(cleanings)
        while_cleaning = sorted(latency for sent, latency in during if sent <= window)
        latencies.sort()
        return {
            "cleaner": "on" if cleaner_on else "off",
            "clean_s": sum(cleanings),
            "during_n": len(while_cleaning),
            "during_p99_ms": 1000 * while_cleaning[int(len(while_cleaning) * 0.99)] if while_cleaning else None,
            "peak_rss_mb": peak_rss * 1024 / 1e6,
            "cleaner_rss_mb": cleaner_rss * 1024 / 1e6,
            "p50_ms": 1000 * statistics.median(latencies),
            "p99_ms": 1000 * latencies[int(len(latencies) * 0.99)],
            "max_ms": 1000 * latencies[-1],
            "broker_cpu_s": None if cpu is None or cpu_before is None else cpu - cpu_before,
        }
    finally:
        broker.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--skip-latency", action="store_true")
    parser.add_argument("--dedupe-buffer", type=int, default=128 << 20, help="log.cleaner.dedupe.buffer.size")
    parser.add_argument("--skip-rate", action="store_true")
    parser.add_argument(
        "--python-scan", action="store_true", help="the domain's pure-Python key scan, not aiokafka's compiled one"
    )
    args = parser.parse_args()
    print(machine_line())
    if not args.skip_rate:
        rate = cleaning_rate(args.records, args.keys, args.size, args.python_scan, args.dedupe_buffer)
        print(
            f"cleaning: {rate['dirty_mb']:.1f} MB dirty in {rate['seconds']:.2f} s = {rate['mb_per_s']:.1f} MB/s; "
            f"{rate['after_mb']:.2f} MB and {rate['records_kept']} records left (cleaned up to offset "
            f"{rate['clean_end']}); peak RSS growth {rate['rss_growth_mb']:.1f} MB with a "
            f"{args.dedupe_buffer / 2**20:.0f} MiB dedupe buffer ({100 * rate['buffer_utilization']:.0f}% used)"
        )
    if not args.skip_latency:
        for on in (False, True):
            r = produce_latency(on, args.records, args.keys, args.size)
            print(
                f"produce with the cleaner {r['cleaner']}: p50 {r['p50_ms']:.2f} ms, p99 {r['p99_ms']:.2f} ms, "
                f"max {r['max_ms']:.2f} ms, broker CPU {r['broker_cpu_s']:.1f} s, broker peak RSS "
                f"{r['peak_rss_mb']:.0f} MB (its cleaner process: {r['cleaner_rss_mb']:.0f} MB)"
            )
            if r["clean_s"]:
                print(
                    f"  cleaning took {r['clean_s']:.2f} s; the {r['during_n']} records sent meanwhile: "
                    f"p99 {r['during_p99_ms']:.2f} ms"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
