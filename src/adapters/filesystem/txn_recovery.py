"""Rebuilding the `.txnindex` of recovered segments from their control records, as Kafka's
LogSegment.recover does.

Kafka resets a recovered segment's transaction index and, replaying every batch into the producer
state, appends an entry for each ABORT marker that closes a transaction with data: the producer id,
the transaction's first offset, the marker's offset and the last stable offset once it is closed (the
first offset of the oldest transaction still open, else the marker's offset + 1). The producer state
a segment starts with comes from the batches before it, so the replay starts at the first segment;
the result is the index the broker wrote when it appended the markers (ReplicaManager.write_marker,
with the same `PartitionProducerState`).

Which segments are rebuilt is Kafka's rule too: all of them after an unclean shutdown (trafka then
recovers the whole log, and the replay rides along that scan), and after a clean one those whose
indexes were missing or failed the sanity checks (an entry ending before the segment's base), in a
pass of its own. A `.txnindex` missing beside intact offset and time indexes after a clean shutdown
is an empty one, for Kafka as here: the file only exists for segments with aborted transactions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from trafka.domain.batch import BatchHeader
from trafka.domain.control import ABORT, AbortedTxn
from trafka.domain.producers import PartitionProducerState

from .segment import Segment


class TransactionIndexRebuild:
    """Batches replayed in log order; the aborted transactions each segment's markers close."""

    def __init__(self) -> None:
        self._state = PartitionProducerState()
        self._aborted: list[AbortedTxn] = []

    def replay(self, header: BatchHeader, marker_type: Callable[[], int]) -> None:
        """One batch; `marker_type` reads a control batch's type (ABORT or COMMIT) when needed."""
        if header.producer_id < 0:
            return
        if not header.is_control:
            self._state.record(header)
            return
        first = self._state.end_transaction(header.producer_id, header.producer_epoch, header.max_timestamp)
        if first is not None and marker_type() == ABORT:
            stable = self._state.first_unstable_offset()
            self._aborted.append(
                AbortedTxn(
                    header.producer_id,
                    first,
                    header.base_offset,
                    header.last_offset + 1 if stable is None else stable,
                )
            )

    def segment_done(self) -> list[AbortedTxn]:
        """The entries of the segment just replayed."""
        aborted, self._aborted = self._aborted, []
        return aborted


def rebuild_transaction_indexes(segments: Sequence[Segment], rebuilt: Sequence[bool]) -> None:
    """Rewrite the `.txnindex` of every segment marked in `rebuilt` (both in log order)."""
    if not any(rebuilt):
        return
    last = max(i for i, flag in enumerate(rebuilt) if flag)
    replay = TransactionIndexRebuild()
    for segment, rebuild in zip(segments[: last + 1], rebuilt):
        for pos, header in segment.headers():
            replay.replay(header, lambda: segment.control_type_at(pos, header))
        aborted = replay.segment_done()
        if rebuild:
            segment.replace_aborted(aborted)
