"""Recovery time of one partition after an unclean shutdown, and the `.txnindex` rebuild's share.

    python bench/recovery.py [--batches 100000] [--batch-bytes 1000] [--every 100]

Writes a partition through the filesystem store (no broker, no network): `--batches` batches of about
`--batch-bytes`, every `--every`-th batch a transactional one of its own producer followed by an
abort marker (so each segment has aborted transactions to index). Then opens it as after a kill -9
(no recovery point: every segment is scanned, CRCs checked, indexes and `.txnindex` rebuilt) and
prints the log size, the open time, and the time a separate `.txnindex` rebuild pass takes (the one
used after a clean shutdown for damaged segments; after an unclean one the rebuild rides along the
recovery scan). Run it twice and take the second figures: the first run
also measures the page cache filling.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import uuid

import crc32c
from kafka.record.default_records import DefaultRecordBatchBuilder

from trafka.adapters.filesystem import FileLogStore, LogDir
from trafka.adapters.filesystem.txn_recovery import rebuild_transaction_indexes
from trafka.domain.batch import assign_offsets, validate_batches
from trafka.domain.control import AbortedTxn, marker_batch
from trafka.domain.topics import Topic, TopicPartition

TP = TopicPartition("recovered", 0)


def _batch(size: int, producer_id: int = -1) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0,
        is_transactional=producer_id >= 0,
        producer_id=producer_id,
        producer_epoch=0 if producer_id >= 0 else -1,
        base_sequence=0 if producer_id >= 0 else -1,
        batch_size=1 << 24,
    )
    builder.append(0, timestamp=1_700_000_000_000, key=None, value=b"x" * size, headers=[])
    return bytes(builder.build())


def _append(log, raw: bytes) -> int:
    validated = validate_batches(bytearray(raw), crc32c.crc32c, len(raw))
    headers = assign_offsets(validated, log.log_end_offset, 0, crc32c.crc32c)
    log.append(validated.buffer, headers)
    return headers[0].base_offset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=100_000)
    parser.add_argument("--batch-bytes", type=int, default=1000)
    parser.add_argument("--every", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "logs")
        logdir = LogDir.open(path, 1, uuid.UUID(int=1), uuid.UUID(int=2))
        store = FileLogStore(logdir, crc32c.crc32c, lambda: 1_700_000_000_000)
        log = store.create(TP, Topic(TP.topic, uuid.UUID(int=3), 1, {}))
        plain = _batch(args.batch_bytes)
        aborts = 0
        for n in range(args.batches):
            if n % args.every == 0:
                producer_id = 1_000 + n
                first = _append(log, _batch(args.batch_bytes, producer_id))
                marker = _append(log, marker_batch(producer_id, 0, False, 1_700_000_000_000, crc32c.crc32c))
                log.record_aborted_transaction(AbortedTxn(producer_id, first, marker, marker + 1))
                aborts += 1
            else:
                _append(log, plain)
        store.close()  # no clean-shutdown marker is written: the next open recovers everything
        logdir.unlock()
        size = sum(
            os.path.getsize(os.path.join(path, "recovered-0", f)) for f in os.listdir(os.path.join(path, "recovered-0"))
        )

        logdir = LogDir.open(path, 1, uuid.UUID(int=1), uuid.UUID(int=2))
        assert not logdir.clean_shutdown
        store = FileLogStore(logdir, crc32c.crc32c, lambda: 1_700_000_000_000)
        started = time.perf_counter()
        log = store.open(TP, Topic(TP.topic, uuid.UUID(int=3), 1, {}))
        opened = time.perf_counter() - started
        segments = log.segments
        started = time.perf_counter()
        rebuild_transaction_indexes(segments, [True] * len(segments))
        rebuilt = time.perf_counter() - started
        assert len(log.aborted_transactions(0, 1 << 62)) == aborts
        store.close()
        logdir.unlock()
    print(
        f"partition: {args.batches + aborts} batches + {aborts} markers, {size / 1e6:.1f} MB in {len(segments)} segments"
    )
    print(f"unclean open (scan, CRC, indexes, txnindex): {opened:.2f} s")
    print(f"a separate .txnindex rebuild pass over every segment: {rebuilt:.2f} s")


if __name__ == "__main__":
    main()
