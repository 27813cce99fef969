"""ListOffsets' special timestamps and its search of a log by timestamp.

The search reads whole batches from where the log's time index points (`batches_from_timestamp`) and
each record's timestamp (`record_timestamps`): the one place a partition's records are looked inside
on a read, and only for ListOffsets, never for Produce or Fetch.
"""

from __future__ import annotations

import attrs

from .batch_records import Decompress, record_timestamps
from .errors import ErrorCode, KafkaError
from .ports import PartitionLog

EARLIEST_TIMESTAMP = -2
LATEST_TIMESTAMP = -1
MAX_TIMESTAMP = -3
EARLIEST_LOCAL_TIMESTAMP = -4
LATEST_TIERED_TIMESTAMP = -5
EARLIEST_PENDING_UPLOAD_TIMESTAMP = -6


@attrs.frozen
class OffsetResult:
    error: ErrorCode = ErrorCode.NONE
    offset: int = -1
    timestamp: int = -1


def offset_for_timestamp(log: PartitionLog, timestamp: int, limit: int, decompress: Decompress) -> OffsetResult:
    """The first record below `limit` with a timestamp of `timestamp` or later, or with MAX_TIMESTAMP
    the record with the largest timestamp (the first of them); an empty result when there is none."""
    try:
        if timestamp == MAX_TIMESTAMP:
            batch = log.batch_with_max_timestamp()
            if batch is None:
                return OffsetResult()
            best = (-1, -1)
            for offset, ts in record_timestamps(batch, decompress):
                if ts > best[1] and offset < limit:
                    best = (offset, ts)
            return OffsetResult(offset=best[0], timestamp=best[1])
        for batch in log.batches_from_timestamp(timestamp):
            for offset, ts in record_timestamps(batch, decompress):
                if offset >= limit:
                    return OffsetResult()
                if ts >= timestamp and offset >= log.log_start_offset:
                    return OffsetResult(offset=offset, timestamp=ts)
    except KafkaError as error:  # a batch that cannot be read back: a partition error, not a crash
        return OffsetResult(error.code)
    return OffsetResult()
