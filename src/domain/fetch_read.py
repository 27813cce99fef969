"""Fetch's read of one partition log: the stored batches from an offset, and for read_committed the
cut at the last stable offset with the aborted transactions the range overlaps.

No batch header is read here (ADR 90): the log cuts where it knows the last stable offset's batch
starts, and the aborted transactions come from its transaction index. The bytes are the log's, as
stored; nothing here looks inside a batch.

A Fetch parked at the log end and completed by the append that notified it (ADR 58, 80) is answered
from the bytes that append wrote (`Appended`, ADR 127) when they are exactly what the read would
return; anything else reads the log.
"""

from __future__ import annotations

from typing import NamedTuple

from .control import AbortedTxn
from .errors import ErrorCode
from .ports import PartitionLog


class FetchResult(NamedTuple):
    """One partition's read. A named tuple (ADR 130): built twice per record on the latency path (the
    parked Fetch's completion, the next Fetch's read at the log end), in `read` without a Python-level
    constructor, where a frozen attrs class cost a `__setattr__` per field."""

    error: ErrorCode
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    records: bytes = b""
    aborted: tuple[AbortedTxn, ...] | None = None  # read_committed only


class Appended(NamedTuple):
    """What a Produce's append wrote to a partition log: whole batches of data (never a control batch,
    which clients may not produce; markers are written elsewhere), offsets `base_offset` up to
    `end_offset`, the log's end right after the append. `data` is the append's own buffer, patched in
    place (a bytearray for one batch)."""

    log: PartitionLog
    base_offset: int
    end_offset: int
    data: bytes | bytearray
    single: bool  # one batch


_new = tuple.__new__  # a FetchResult built without its Python-level __new__
_NONE = ErrorCode.NONE


def read(
    log: PartitionLog,
    offset: int,
    max_bytes: int,
    min_one_batch: bool,
    read_committed: bool,
    stable: int,
    appended: Appended | None = None,
) -> FetchResult:
    """Stored batches from `offset` (OFFSET_OUT_OF_RANGE outside the log); read_committed stops at
    `stable`, the last stable offset, and lists the aborted transactions in the range, so the consumer
    can drop their records.

    `appended`, the log's last append: when it is still the log's tail (same log, same end) and
    `offset` is where it starts, its bytes are the read's answer without reading, if the read would
    return them whole (`_appended_records`) and read_committed would not cut them: the last stable
    offset at the log end (no transaction open) means no cut, and no aborted transaction overlaps the
    range (each ends with a marker, and every marker is below these data batches)."""
    end = log.log_end_offset
    start = log.log_start_offset
    if offset < start or offset > end:
        return FetchResult(ErrorCode.OFFSET_OUT_OF_RANGE, end, stable, start)
    if (
        appended is not None
        and offset == appended.base_offset
        and end == appended.end_offset
        and appended.log is log
        and (not read_committed or stable == end)
    ):
        records = _appended_records(appended, max_bytes, min_one_batch)
        if records is not None:
            return _new(FetchResult, (_NONE, end, stable, start, records, () if read_committed else None))
    if not read_committed:
        records = log.read(offset, max_bytes, min_one_batch) if offset < end else b""
        return _new(FetchResult, (_NONE, end, stable, start, records, None))
    # The batches below the last stable offset (the first offset of the oldest open transaction, from
    # the producer state), cut by the log where it knows that offset's batch starts, and the aborted
    # transactions they overlap (from the transaction index).
    if offset >= stable:
        return _new(FetchResult, (_NONE, end, stable, start, b"", ()))
    records, last = log.read_below(offset, max_bytes, min_one_batch, stable)
    aborted = tuple(log.aborted_transactions(offset, last)) if records else ()
    return FetchResult(ErrorCode.NONE, end, stable, start, records, aborted)


def _appended_records(appended: Appended, max_bytes: int, min_one_batch: bool) -> bytes | None:
    """What `read(base_offset, max_bytes, min_one_batch)` returns of a log whose tail is `appended`
    (one segment: a log rolls before an append, never inside one): all of it when it fits in
    `max_bytes`, the one batch alone with `min_one_batch`; None where the read would cut between the
    appended batches (the log finds where)."""
    data = appended.data
    if len(data) <= max_bytes or (min_one_batch and appended.single):
        return data if type(data) is bytes else bytes(data)
    return None
