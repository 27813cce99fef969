"""Fetch's read of one partition log: the stored batches from an offset, and for read_committed the
cut at the last stable offset with the aborted transactions the range overlaps.

No batch header is read here (ADR 90): the log cuts where it knows the last stable offset's batch
starts, and the aborted transactions come from its transaction index. The bytes are the log's, as
stored; nothing here looks inside a batch.
"""

from __future__ import annotations

import attrs

from .control import AbortedTxn
from .errors import ErrorCode
from .ports import PartitionLog


@attrs.frozen
class FetchResult:
    error: ErrorCode
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    records: bytes = b""
    aborted: tuple[AbortedTxn, ...] | None = None  # read_committed only


def read(
    log: PartitionLog, offset: int, max_bytes: int, min_one_batch: bool, read_committed: bool, stable: int
) -> FetchResult:
    """Stored batches from `offset` (OFFSET_OUT_OF_RANGE outside the log); read_committed stops at
    `stable`, the last stable offset, and lists the aborted transactions in the range, so the consumer
    can drop their records."""
    end = log.log_end_offset
    start = log.log_start_offset
    if offset < start or offset > end:
        return FetchResult(ErrorCode.OFFSET_OUT_OF_RANGE, end, stable, start)
    if not read_committed:
        records = log.read(offset, max_bytes, min_one_batch) if offset < end else b""
        return FetchResult(ErrorCode.NONE, end, stable, start, records)
    # The batches below the last stable offset (the first offset of the oldest open transaction, from
    # the producer state), cut by the log where it knows that offset's batch starts, and the aborted
    # transactions they overlap (from the transaction index).
    if offset >= stable:
        return FetchResult(ErrorCode.NONE, end, stable, start, b"", ())
    records, last = log.read_below(offset, max_bytes, min_one_batch, stable)
    aborted = tuple(log.aborted_transactions(offset, last)) if records else ()
    return FetchResult(ErrorCode.NONE, end, stable, start, records, aborted)
