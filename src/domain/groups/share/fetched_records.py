"""What a share fetch answers from the log bytes it read, found from batch headers and the aborted
transaction index, never by reading records: under read_committed the records of aborted
transactions archived rather than delivered (`archive_aborted`), and the bytes trimmed to the batches
that hold what was acquired (`trim`), as a partition's answer (`PartitionFetch`)."""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from ...batch import iter_batches
from ...control import ABORT, AbortedTxn, control_type
from ...errors import ErrorCode
from .partition import AckType, Acquired, SharePartition


@attrs.frozen
class PartitionFetch:
    error: ErrorCode = ErrorCode.NONE
    records: bytes = b""
    acquired: tuple[Acquired, ...] = ()


def archive_aborted(
    sp: SharePartition,
    member_id: str,
    acquired: list[Acquired],
    records: bytes,
    aborted: Iterable[AbortedTxn],
    now: int,
) -> list[Acquired]:
    """Under read_committed, records of aborted transactions are archived, not delivered (as
    Kafka's SharePartition.fetchAbortedTransactionRecordBatches, the consumer's rule): walking the
    batches in order, a producer is in an aborted transaction from the first offset of one in the
    aborted transaction index up to its abort marker, and its transactional batches in that range
    are archived; its committed transactions before or after are delivered. What is left to deliver."""
    pending = sorted(aborted, key=lambda txn: txn.first_offset)
    next_txn = 0
    in_aborted: set[int] = set()
    skip: list[tuple[int, int]] = []
    for pos, header in iter_batches(records):
        last = header.base_offset + header.last_offset_delta
        while next_txn < len(pending) and pending[next_txn].first_offset <= last:
            in_aborted.add(pending[next_txn].producer_id)
            next_txn += 1
        if not header.is_transactional or header.producer_id not in in_aborted:
            continue
        if header.is_control:
            if control_type(records[pos : pos + header.size]) == ABORT:
                in_aborted.discard(header.producer_id)
            continue
        skip.append((header.base_offset, last))
    kept: list[Acquired] = []
    for a in acquired:
        cuts = [(max(f, a.first), min(last, a.last)) for f, last in skip if f <= a.last and last >= a.first]
        if cuts:
            sp.acknowledge(member_id, [(f, last, [AckType.GAP]) for f, last in cuts], now)
        offset = a.first
        for f, last in sorted(cuts):
            if f > offset:
                kept.append(Acquired(offset, f - 1, a.delivery_count))
            offset = last + 1
        if offset <= a.last:
            kept.append(Acquired(offset, a.last, a.delivery_count))
    return kept


def trim(records: bytes, first: int, last: int) -> bytes:
    """The batches of `records` that hold any offset of first..last (headers only are read)."""
    start = end = None
    for pos, header in iter_batches(records):
        if header.base_offset + header.last_offset_delta < first:
            continue
        if header.base_offset > last:
            break
        if start is None:
            start = pos
        end = pos + header.size
    if start is None or end is None:
        return b""
    if start == 0 and end == len(records):
        return records
    return records[start:end]
