"""Record batches built by an independent encoder (kafka-python's `kafka.record`), for tests."""

from __future__ import annotations

from collections.abc import Sequence

from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

Record = tuple[int, bytes | None, bytes | None]  # (timestamp, key, value)


def make_batch(
    records: Sequence[Record],
    compression: int = 0,
    headers: Sequence[tuple[str, bytes]] = (),
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    transactional: bool = False,
) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=compression,
        is_transactional=transactional,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        batch_size=1 << 24,
    )
    for delta, (timestamp, key, value) in enumerate(records):
        builder.append(delta, timestamp=timestamp, key=key, value=value, headers=list(headers))
    return bytes(builder.build())


def read_batches(data: bytes) -> list[DefaultRecordBatch]:
    """Split stored bytes into batches with kafka-python's reader, checking each CRC."""
    out = []
    pos = 0
    while pos < len(data):
        length = int.from_bytes(data[pos + 8 : pos + 12], "big", signed=True)
        batch = DefaultRecordBatch(data[pos : pos + 12 + length])
        assert batch.validate_crc(), f"CRC mismatch in batch at byte {pos}"
        out.append(batch)
        pos += 12 + length
    return out
