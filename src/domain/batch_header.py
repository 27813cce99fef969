"""A Kafka record batch's 61-byte header (magic v2): its fields and what they say. The one header the
broker and the operator commands share (ADR 112): `trafka.domain.batch` reads and patches headers on
the hot paths, `trafka.schema_codec.records` reads whole batches for the operator commands and the
few readers of every record. A leaf: it imports the standard library and Kafka's errors only.

Layout of the 61-byte header (offsets in bytes):

    0 base_offset int64      8 batch_length int32     12 partition_leader_epoch int32
   16 magic int8            17 crc uint32 (CRC-32C of bytes 21..end)
   21 attributes int16      23 last_offset_delta int32 27 base_timestamp int64
   35 max_timestamp int64   43 producer_id int64      51 producer_epoch int16
   53 base_sequence int32   57 records_count int32    61 records...
"""

from __future__ import annotations

import enum
import struct
from typing import NamedTuple

from .errors import ErrorCode, KafkaError

HEADER_SIZE = 61
LOG_OVERHEAD = 12  # base_offset + batch_length: the part of a batch that batch_length does not count
CRC_START = 21
LOG_APPEND_TIME_FLAG = 0x08
TRANSACTIONAL_FLAG = 0x10
CONTROL_FLAG = 0x20

HEADER_STRUCT = struct.Struct(">qiibIhiqqqhii")  # the fields in order, big-endian


class TimestampType(enum.IntEnum):
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1


class BatchHeader(NamedTuple):
    """A batch header's fields. A named tuple rather than an attrs class: the produce path builds two
    per request, and a tuple is several times cheaper to build than a frozen attrs instance."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @classmethod
    def parse(cls, buf: bytes | bytearray | memoryview, pos: int = 0) -> BatchHeader:
        """Read the header at `pos`; CORRUPT_MESSAGE if fewer than 61 bytes remain."""
        if len(buf) - pos < HEADER_SIZE:
            raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "record batch header is truncated")
        return tuple.__new__(cls, HEADER_STRUCT.unpack_from(buf, pos))

    def placed(self, base_offset: int, partition_leader_epoch: int) -> BatchHeader:
        """This header as it reads after offset assignment."""
        return tuple.__new__(BatchHeader, (base_offset, self[1], partition_leader_epoch, *self[3:]))

    @property
    def size(self) -> int:
        """Bytes the whole batch occupies in a log."""
        return LOG_OVERHEAD + self.batch_length

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def compression(self) -> int:
        return self.attributes & 0x07

    @property
    def timestamp_type(self) -> TimestampType:
        return TimestampType((self.attributes >> 3) & 1)

    @property
    def is_log_append_time(self) -> bool:
        return bool(self.attributes & LOG_APPEND_TIME_FLAG)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_FLAG)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_FLAG)
