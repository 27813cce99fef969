"""Each partition's idempotent and transactional producers, as its log's batch headers say.

A partition's state is rebuilt from its newest producer snapshot and the batch headers after it the
first time it is needed, then kept as the replica manager appends; a log that starts empty has none
to rebuild. The coordinators' internal logs, which their stores append to directly, are caught up
from where they were last read, and never snapshotted from here. A segment roll writes the state as
of the new segment's base offset (`rolled`), as Kafka's UnifiedLog.roll takes its snapshot.
"""

from __future__ import annotations

from .ports import LogStore, PartitionLog
from .producers import PartitionProducerState
from .topics import TopicPartition


def replay(log: PartitionLog, state: PartitionProducerState, from_offset: int) -> None:
    """Apply the batch headers from `from_offset` on to a partition's producer state."""
    for header in log.batch_headers(from_offset):
        if header.producer_id < 0 or header.base_offset < from_offset:
            continue
        if header.is_control:
            state.end_transaction(header.producer_id, header.producer_epoch, header.max_timestamp)
        else:
            state.record(header)


class ProducerStates:
    def __init__(self) -> None:
        self._states: dict[TopicPartition, tuple[PartitionLog, PartitionProducerState]] = {}
        # Internal logs: their producer state and the offset it is read up to (never snapshotted here).
        self._internal: dict[TopicPartition, tuple[PartitionLog, PartitionProducerState, int]] = {}

    def of(self, tp: TopicPartition, log: PartitionLog) -> PartitionProducerState:
        """The partition's idempotent producers, rebuilt from batch headers the first time."""
        internal = self._internal.get(tp)
        if internal is not None and internal[0] is log:
            return internal[1]
        cached = self._states.get(tp)
        if cached is not None and cached[0] is log:
            return cached[1]
        state = self.replayed(log)
        self._states[tp] = (log, state)
        return state

    @staticmethod
    def replayed(log: PartitionLog) -> PartitionProducerState:
        """The producer state of a log: its newest snapshot, then the batch headers after it."""
        state = PartitionProducerState()
        snapshot = log.latest_producer_snapshot()
        replay_from = 0
        if snapshot is not None:
            replay_from, entries = snapshot
            state.restore(entries)
        replay(log, state, replay_from)
        return state

    def starts_empty(self, tp: TopicPartition, log: PartitionLog) -> None:
        """A log nothing was ever written to has no producers: remember that, so the first fetch
        (which asks for the last stable offset) need not scan every batch header appended since."""
        cached = self._states.get(tp)
        if cached is None or cached[0] is not log:
            self._states[tp] = (log, PartitionProducerState())

    def catch_up_internal(self, tp: TopicPartition, log: PartitionLog) -> None:
        """An internal log read through the replica manager: its producer state replayed from where it
        was last read (the last stable offset of `__consumer_offsets` follows TxnOffsetCommit's open
        transactions)."""
        known = self._internal.get(tp)
        state, replayed = (known[1], known[2]) if known is not None and known[0] is log else (None, 0)
        if state is None:
            state = PartitionProducerState()
        if replayed < log.log_end_offset:
            replay(log, state, replayed)
        self._internal[tp] = (log, state, log.log_end_offset)

    def rolled(self, tp: TopicPartition, log: PartitionLog, base_offset: int) -> None:
        """A log started a new segment: its producer state as of the segment's base offset (every batch
        below it) goes to `<base offset>.snapshot`, as Kafka's UnifiedLog.roll takes its snapshot, so
        that a log dir has the snapshot files Kafka's would, and recovery replays one segment at most.
        The coordinators' topics (`__*`) are written by their stores, not through the replica manager:
        their state is replayed from the previous snapshot each time, never kept."""
        if tp.topic.startswith("__"):
            state = self.replayed(log)
        else:
            state = self.of(tp, log)
        log.write_producer_snapshot(base_offset, state.snapshot())

    def expire(self, now_ms: int, expiration_ms: int) -> int:
        """producer.id.expiration.ms: forget idle producers in every partition; how many went."""
        return sum(state.expire(now_ms, expiration_ms) for _, state in self._states.values())

    def snapshot_all(self, logs: LogStore) -> None:
        """Write each partition's producer state as of its log end (at shutdown, as Kafka's
        UnifiedLog.close; the others are taken when a segment rolls, `rolled`)."""
        for tp, (log, state) in list(self._states.items()):
            if logs.get(tp) is log:  # an empty snapshot too: the next start need not scan
                log.write_producer_snapshot(log.log_end_offset, state.snapshot())
