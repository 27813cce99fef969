"""Stored record batches built by hand for the Spark suite: any codec (snappy raw or xerial-framed),
control batches, LogAppendTime, placed at any offset, with a valid CRC."""

from __future__ import annotations

import struct

import cramjam
import crc32c
from kafka.record.default_records import DefaultRecordBatchBuilder

Record = tuple  # (timestamp ms, key, value, headers)

SNAPPY_RAW = "snappy-raw"
CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4, SNAPPY_RAW: 2}


def build_batch(
    base_offset: int,
    records: list[Record],
    codec: str = "none",
    control: bool = False,
    log_append_time: int | None = None,
) -> bytes:
    """A v2 batch of `records` at `base_offset` (kafka-python encodes; snappy it frames the xerial way)."""
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0 if codec == SNAPPY_RAW else CODECS[codec],
        is_transactional=control,
        producer_id=7 if control else -1,
        producer_epoch=0 if control else -1,
        base_sequence=0 if control else -1,
        batch_size=1 << 24,
    )
    for delta, (timestamp, key, value, headers) in enumerate(records):
        builder.append(delta, timestamp=timestamp, key=key, value=value, headers=list(headers))
    raw = bytearray(builder.build())
    if codec == SNAPPY_RAW:  # as librdkafka writes it: one raw snappy block, no framing
        raw = raw[:61] + bytearray(bytes(cramjam.snappy.compress_raw(bytes(raw[61:]))))
        struct.pack_into(">i", raw, 8, len(raw) - 12)
        struct.pack_into(">h", raw, 21, struct.unpack_from(">h", raw, 21)[0] | 2)
    struct.pack_into(">q", raw, 0, base_offset)
    attributes = struct.unpack_from(">h", raw, 21)[0]
    if control:
        attributes |= 0x20
    if log_append_time is not None:
        attributes |= 0x08
        struct.pack_into(">q", raw, 35, log_append_time)
    struct.pack_into(">h", raw, 21, attributes)
    struct.pack_into(">I", raw, 17, crc32c.crc32c(bytes(raw[21:])))
    return bytes(raw)


def commit_marker(base_offset: int, timestamp: int) -> bytes:
    """A transaction's COMMIT control batch: key (version 0, type 1), value (version 0, epoch 0)."""
    return build_batch(base_offset, [(timestamp, struct.pack(">hh", 0, 1), struct.pack(">hi", 0, 0), [])], control=True)
