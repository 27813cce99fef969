"""Share groups as the broker serves them: membership (`coordinator`), a share-partition per group and
topic partition (`partition`), and the share sessions of ShareFetch and ShareAcknowledge.

A share session (Kafka's ShareSessionCache) is keyed by (group, member): epoch 0 opens it with the
partitions of the request, each later request must carry the next epoch (1, 2, ... wrapping to 1) and
adds its partitions and drops the forgotten ones, -1 closes it and releases what the member holds
there. A wrong epoch is INVALID_SHARE_SESSION_EPOCH, a missing session SHARE_SESSION_NOT_FOUND.

A share-partition is created on a group's first fetch of that partition, its start offset chosen by
the group's `share.auto.offset.reset` (`latest` by default: the high watermark; `earliest`: the log
start offset). A fetch reads the stored batches from the first offset it could acquire, then acquires
only offsets within those bytes, so a member is never handed records it was not sent.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable

import attrs

from ...batch import iter_batches
from ...control import ABORT, AbortedTxn, control_type
from ...errors import ErrorCode
from ...ports import StateBatch
from ...replica_manager import ReplicaManager
from ...topics import TopicPartition
from . import configs as group_configs
from . import records as share_records
from .coordinator import ShareGroupCoordinator
from .partition import AckType, Acquired, Archived, RecordState, SharePartition, ShareSettings, coalesce
from .records import ShareGroupRecord, ShareRecordKind, StatePartitionMetadata

FINAL_EPOCH = -1
MAX_SHARE_SESSIONS = 2000  # Kafka's group.share.max.share.sessions: a bound on what clients make us keep
READ_FLOOR_BYTES = 64 * 1024
INITIAL_EPOCH = 0
# ShareFetch v2's ShareAcquireMode (KIP-1206); a v1 request is batch-optimized, as Kafka 4.1 acquired
BATCH_OPTIMIZED = 0  # MaxRecords is a soft limit: the log batch holding the last record is acquired whole
RECORD_LIMIT = 1  # MaxRecords is strict: acquisition may stop inside a log batch
ACQUIRE_MODES = (BATCH_OPTIMIZED, RECORD_LIMIT)
AUTO_OFFSET_RESET = group_configs.AUTO_OFFSET_RESET
ISOLATION_LEVEL = group_configs.ISOLATION_LEVEL
SHARE_GROUP_CONFIGS = group_configs.DEFAULTS


@attrs.define
class ShareSession:
    """A share session's epoch and partitions, keyed by (topic id, partition) as Kafka's
    CachedSharePartition: a topic deleted and created again under its name is another entry, so
    records of the new topic are only answered to a client that asked for them under the new id."""

    epoch: int  # the epoch the next request must carry
    partitions: dict[tuple[uuid.UUID, int], TopicPartition] = attrs.field(factory=dict)  # in the order added

    def bump(self) -> None:
        self.epoch = 1 if self.epoch >= 2**31 - 1 else self.epoch + 1

    def add(self, topic_id: uuid.UUID, tp: TopicPartition) -> None:
        self.partitions[(topic_id, tp.partition)] = tp

    def forget(self, topic_id: uuid.UUID, partition: int) -> None:
        self.partitions.pop((topic_id, partition), None)


@attrs.frozen
class PartitionFetch:
    error: ErrorCode = ErrorCode.NONE
    records: bytes = b""
    acquired: tuple[Acquired, ...] = ()


class ShareGroups:
    def __init__(
        self,
        coordinator: ShareGroupCoordinator,
        settings: ShareSettings,
        replicas: ReplicaManager,
        max_sessions: int = MAX_SHARE_SESSIONS,
    ) -> None:
        self.coordinator = coordinator
        self.max_sessions = max_sessions
        self.settings = settings
        self._replicas = replicas
        self.partitions: dict[tuple[str, TopicPartition], SharePartition] = {}
        # The topic id each share-partition belongs to: its state is the topic's, not the name's (a topic
        # deleted and created again under the same name starts afresh), as Kafka keys it by topic id.
        self.topic_ids: dict[tuple[str, TopicPartition], uuid.UUID] = {}
        self._gone: dict[tuple[str, TopicPartition], uuid.UUID] = {}  # deleted, its tombstone to write
        self.sessions: dict[tuple[str, str], ShareSession] = {}
        # the connection each session was opened on (an opaque key from the adapter), and the reverse
        self._session_connection: dict[tuple[str, str], object] = {}
        self._connection_sessions: dict[object, set[tuple[str, str]]] = {}
        self.configs: dict[str, dict[str, str]] = {}  # the GROUP resource's share.* overrides
        self.dirty: set[tuple[str, TopicPartition]] = set()  # to persist
        self.released: set[TopicPartition] = set()  # records became available: wake waiting fetches
        # ShareGroupStatePartitionMetadata: groups whose set of share-partitions changed, last written
        self._state_partitions_changed: set[str] = set()
        self._state_partitions_written: dict[str, StatePartitionMetadata] = {}

    # -- configs -----------------------------------------------------------------------------------

    def config(self, group_id: str, name: str) -> str:
        return self.configs.get(group_id, {}).get(name, SHARE_GROUP_CONFIGS[name])

    def alter_configs(self, group_id: str, changes: dict[str, tuple[int, str | None]], validate_only: bool) -> None:
        """IncrementalAlterConfigs on the GROUP resource; KafkaError (INVALID_CONFIG) if any change is bad."""
        s = self.coordinator.settings
        bounds = {
            group_configs.SESSION_TIMEOUT: (s.min_session_timeout_ms, s.max_session_timeout_ms),
            group_configs.HEARTBEAT_INTERVAL: (s.min_heartbeat_interval_ms, s.max_heartbeat_interval_ms),
            group_configs.RECORD_LOCK_DURATION: (
                self.settings.min_record_lock_duration_ms,
                self.settings.max_record_lock_duration_ms,
            ),
        }
        altered = group_configs.alter(self.configs.get(group_id, {}), changes, bounds)
        if validate_only:
            return
        self.configs[group_id] = altered
        ints = {k: int(v) for k, v in altered.items() if k in group_configs.INT_KEYS}
        self.coordinator.group_configs[group_id] = ints
        settings = self.settings_of(group_id)
        for (group, _), sp in self.partitions.items():
            if group == group_id:
                sp.settings = settings

    def record_lock_duration_ms(self, group_id: str) -> int:
        """The group's share.record.lock.duration.ms, else the broker's group.share.record.lock.duration.ms."""
        value = self.configs.get(group_id, {}).get(group_configs.RECORD_LOCK_DURATION)
        return self.settings.record_lock_duration_ms if value is None else int(value)

    def settings_of(self, group_id: str) -> ShareSettings:
        """The record settings the group's share-partitions work with: its own lock duration."""
        lock_ms = self.record_lock_duration_ms(group_id)
        if lock_ms == self.settings.record_lock_duration_ms:
            return self.settings
        return attrs.evolve(self.settings, record_lock_duration_ms=lock_ms)

    def describe_configs(self, group_id: str) -> list[tuple[str, str, bool]]:
        settings = self.coordinator.settings
        broker = {
            group_configs.SESSION_TIMEOUT: settings.session_timeout_ms,
            group_configs.HEARTBEAT_INTERVAL: settings.heartbeat_interval_ms,
            group_configs.RECORD_LOCK_DURATION: self.settings.record_lock_duration_ms,
        }
        return group_configs.describe(self.configs.get(group_id, {}), broker)

    # -- sessions ----------------------------------------------------------------------------------

    def open_session(
        self, group_id: str, member_id: str, epoch: int, connection: object = None
    ) -> tuple[ErrorCode, ShareSession | None]:
        """The session a request at `epoch` works in (before its partitions are added), or the error.
        A session opened (epoch 0) on a connection is closed when that connection closes
        (`connection_closed`), as Kafka's ShareSessionCache does."""
        key = (group_id, member_id)
        if epoch == INITIAL_EPOCH:
            if key not in self.sessions and len(self.sessions) >= self.max_sessions:
                return ErrorCode.SHARE_SESSION_LIMIT_REACHED, None
            self.sessions[key] = ShareSession(1)
            self._bind(key, connection)
            return ErrorCode.NONE, self.sessions[key]
        session = self.sessions.get(key)
        if session is None:
            return ErrorCode.SHARE_SESSION_NOT_FOUND, None
        if epoch == FINAL_EPOCH:
            return ErrorCode.NONE, session
        if epoch != session.epoch:
            return ErrorCode.INVALID_SHARE_SESSION_EPOCH, None
        session.bump()
        return ErrorCode.NONE, session

    def _bind(self, key: tuple[str, str], connection: object) -> None:
        self._unbind(key)
        if connection is not None:
            self._session_connection[key] = connection
            self._connection_sessions.setdefault(connection, set()).add(key)

    def _unbind(self, key: tuple[str, str]) -> None:
        connection = self._session_connection.pop(key, None)
        if connection is not None:
            keys = self._connection_sessions.get(connection)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._connection_sessions[connection]

    def connection_closed(self, connection: object) -> int:
        """The client's connection closed: the share sessions opened on it close, and what their
        members hold is released (Kafka's SharePartitionManager on a disconnect). How many closed."""
        keys = self._connection_sessions.pop(connection, set())
        for group_id, member_id in sorted(keys):
            self._session_connection.pop((group_id, member_id), None)
            self.close_session(group_id, member_id)
        return len(keys)

    def close_session(self, group_id: str, member_id: str) -> None:
        session = self.sessions.pop((group_id, member_id), None)
        self._unbind((group_id, member_id))
        if session is None:
            return
        for tp in session.partitions.values():
            sp = self.partitions.get((group_id, tp))
            if sp is not None and sp.release_member(member_id):
                self._touched(group_id, tp, released=True)

    def live_partitions(self, session: ShareSession) -> tuple[list[TopicPartition], list[tuple[uuid.UUID, int]]]:
        """The session's partitions whose topic is still the one the client named by id, in order,
        and (topic id, partition) of those whose topic is gone or was created again under a new id:
        UNKNOWN_TOPIC_ID until the client forgets them (Kafka answers a cached partition whose topic
        id no longer resolves so)."""
        live: list[TopicPartition] = []
        stale: list[tuple[uuid.UUID, int]] = []
        for (topic_id, partition), tp in session.partitions.items():
            if self.coordinator.topic_id(tp.topic) == topic_id:
                live.append(tp)
            else:
                stale.append((topic_id, partition))
        return live, stale

    # -- fetch and acknowledge ---------------------------------------------------------------------

    def initialize(self, group_id: str, tp: TopicPartition, now: int) -> bool:
        """Create the group's share-partition of `tp` if it has none (its start offset from
        share.auto.offset.reset, now); whether it was created."""
        if (group_id, tp) in self.partitions:
            return False
        return self._partition(group_id, tp, now) is not None

    def _partition(self, group_id: str, tp: TopicPartition, now: int) -> SharePartition | None:
        sp = self.partitions.get((group_id, tp))
        topic_id = self.coordinator.topic_id(tp.topic)
        if sp is not None and self.topic_ids.get((group_id, tp)) == topic_id:
            return sp
        if sp is not None:  # the topic was deleted and created again: the old state goes with the old topic
            self._forget((group_id, tp))
        marks = self._replicas.watermarks(tp)
        if marks is None or topic_id is None:
            return None
        log_start, high_watermark = marks
        reset = self.config(group_id, AUTO_OFFSET_RESET)
        start = high_watermark
        if reset == "earliest":
            start = log_start
        elif reset.startswith("by_duration:"):
            ago = group_configs.duration_ms(reset.removeprefix("by_duration:")) or 0
            found = self._replicas.list_offset(tp, max(now - ago, 0))
            start = found.offset if found.error is ErrorCode.NONE and found.offset >= 0 else high_watermark
        sp = self.partitions[(group_id, tp)] = SharePartition(start, self.settings_of(group_id))
        self.topic_ids[(group_id, tp)] = topic_id
        self.dirty.add((group_id, tp))
        self._state_partitions_changed.add(group_id)
        return sp

    def fetch(
        self,
        group_id: str,
        member_id: str,
        tp: TopicPartition,
        max_records: int,
        max_bytes: int,
        now: int,
        mode: int = BATCH_OPTIMIZED,
    ) -> PartitionFetch:
        sp = self._partition(group_id, tp, now)
        if sp is None:
            return PartitionFetch(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        marks = self._replicas.watermarks(tp)
        if marks is None:
            return PartitionFetch(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        if marks[0] > sp.start_offset:
            sp.move_start(marks[0])
            self.dirty.add((group_id, tp))
        offset = sp.first_acquirable()
        if offset is None or max_records <= 0:
            return PartitionFetch()
        read_committed = self.config(group_id, ISOLATION_LEVEL) == "read_committed"
        # Read about what `max_records` records need, not the whole MaxBytes (clients ask for 50 MB):
        # only acquired records are answered, the rest would be read for nothing.
        # (twice the bytes per record the last read found: 100-byte records are not read 1 KB apiece)
        budget = min(max_bytes, max(READ_FLOOR_BYTES, max_records * sp.read_bytes_per_record))
        result = self._replicas.fetch(tp, offset, budget, min_one_batch=True, read_committed=read_committed)
        if result.error is not ErrorCode.NONE or not result.records:
            return PartitionFetch(result.error)
        headers = [header for _, header in iter_batches(result.records)]
        batch_ends = [header.base_offset + header.last_offset_delta for header in headers]
        if headers:
            span = batch_ends[-1] + 1 - headers[0].base_offset
            sp.read_bytes_per_record = max(16, 2 * len(result.records) // max(span, 1))
        data_end = batch_ends[-1] + 1 if batch_ends else offset
        fetch_end = min(data_end, result.last_stable_offset if read_committed else result.high_watermark)
        acquired = sp.acquire(member_id, fetch_end, max_records, now)
        if not acquired:
            return PartitionFetch()
        if mode == BATCH_OPTIMIZED:  # the rest of the log batch the last record is in, as Kafka
            last = acquired[-1].last
            batch_end = next((end for end in batch_ends if end >= last), last)
            if batch_end > last:
                acquired = coalesce(
                    acquired + sp.acquire(member_id, min(batch_end + 1, fetch_end), batch_end - last, now)
                )
        if read_committed and result.aborted:
            acquired = self._archive_aborted(sp, member_id, acquired, result.records, result.aborted, now)
            self._touched(group_id, tp, released=False)
            if not acquired:
                return PartitionFetch()
        return PartitionFetch(
            records=_trim(result.records, acquired[0].first, acquired[-1].last), acquired=tuple(acquired)
        )

    @staticmethod
    def _archive_aborted(
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
        are archived; its committed transactions before or after are delivered. Found from batch
        headers and the index, never by reading records."""
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

    def acknowledge(
        self,
        group_id: str,
        member_id: str,
        tp: TopicPartition,
        batches: Iterable[tuple[int, int, list[int]]],
        now: int,
        allow_renew: bool,
    ) -> ErrorCode:
        batches = list(batches)
        if not allow_renew and any(4 in types for _, _, types in batches):
            return ErrorCode.INVALID_REQUEST
        sp = self.partitions.get((group_id, tp))
        if sp is None:
            return ErrorCode.INVALID_RECORD_STATE
        start = sp.start_offset
        error = sp.acknowledge(member_id, batches, now)
        if error is ErrorCode.NONE:
            # released records, or room freed by the start offset moving on (the in-flight bound):
            # parked fetches can acquire again, as Kafka completes its delayed share fetches
            freed = sp.start_offset != start or any(2 in types for _, _, types in batches)
            self._touched(group_id, tp, released=freed)
        return error

    def _touched(self, group_id: str, tp: TopicPartition, released: bool) -> None:
        self.dirty.add((group_id, tp))
        if released:
            self.released.add(tp)

    # -- time and departures -----------------------------------------------------------------------

    def settle_departures(self) -> None:
        """Release what members that left or were fenced held, and drop their sessions. A member that
        left while its share session is open keeps it: a client leaves the group and closes its
        session (with its last acknowledgements) at the same time, and the session's close or the
        records' locks release what it still holds."""
        departed, self.coordinator.departed = self.coordinator.departed, []
        for group_id, member_id, fenced in departed:
            if not fenced and (group_id, member_id) in self.sessions:
                continue
            self.sessions.pop((group_id, member_id), None)
            self._unbind((group_id, member_id))
            for (g, tp), sp in self.partitions.items():
                if g == group_id and sp.release_member(member_id):
                    self._touched(g, tp, released=True)

    def tick(self, now: int) -> int:
        """Fence expired members, release expired locks; the number of records released."""
        self.coordinator.tick(now)
        self.settle_departures()
        released = 0
        for (group_id, tp), sp in self.partitions.items():
            n = sp.expire(now)
            if n:
                released += n
                self._touched(group_id, tp, released=True)
        return released

    def take_released(self) -> set[TopicPartition]:
        released, self.released = self.released, set()
        return released

    def next_deadline(self) -> int | None:
        deadlines = [d for d in (sp.next_deadline() for sp in self.partitions.values()) if d is not None]
        member = self.coordinator.next_deadline()
        if member is not None:
            deadlines.append(member)
        return min(deadlines, default=None)

    def take_archived(self) -> list[tuple[str, TopicPartition, Archived]]:
        return [(g, tp, a) for (g, tp), sp in self.partitions.items() for a in sp.take_archived()]

    # -- durability --------------------------------------------------------------------------------

    @property
    def unpersisted(self) -> bool:
        """Whether `take_dirty` has something to persist (changed or deleted share-partitions)."""
        return bool(self.dirty or self._gone)

    def take_dirty(
        self,
    ) -> tuple[list[tuple[str, TopicPartition, uuid.UUID, SharePartition]], list[tuple[str, uuid.UUID, int]]]:
        """The share-partitions changed since the last call (group, partition, topic id, state), and
        those deleted (group, topic id, partition), to persist."""
        dirty, self.dirty = self.dirty, set()
        changed = [
            (g, tp, self.topic_ids[(g, tp)], self.partitions[(g, tp)])
            for g, tp in sorted(dirty)
            if (g, tp) in self.partitions and (g, tp) in self.topic_ids
        ]
        deleted = [(g, topic_id, tp.partition) for (g, tp), topic_id in sorted(self._gone.items())]
        self._gone = {}
        return changed, deleted

    def restore(
        self, group_id: str, tp: TopicPartition, topic_id: uuid.UUID, start_offset: int, batches: Iterable[StateBatch]
    ) -> None:
        """A share-partition as persisted: what was acknowledged or archived stays so, in-flight
        acquisitions are available again."""
        self.partitions[(group_id, tp)] = SharePartition.restore(
            start_offset, list(batches), self.settings_of(group_id)
        )
        self.topic_ids[(group_id, tp)] = topic_id
        self._state_partitions_changed.add(group_id)

    def topic_deleted(self, topic_id: uuid.UUID) -> int:
        """The topic is gone: every group's share-partitions of it go too, their state with them (Kafka
        deletes a deleted topic's share-group state). How many went."""
        doomed = [key for key, owner in self.topic_ids.items() if owner == topic_id]
        for key in doomed:
            self._forget(key)
        return len(doomed)

    def _forget(self, key: tuple[str, TopicPartition]) -> None:
        """Drop a share-partition and its state; its tombstone is written with the next persist."""
        self.partitions.pop(key, None)
        topic_id = self.topic_ids.pop(key, None)
        if topic_id is not None:
            self._gone[key] = topic_id
        self.dirty.discard(key)
        self._state_partitions_changed.add(key[0])

    # -- admin -------------------------------------------------------------------------------------

    def start_and_lag(self, group_id: str, tp: TopicPartition) -> tuple[int, int]:
        """DescribeShareGroupOffsets: the start offset and the lag (records from the start offset to
        the high watermark not yet acknowledged or archived); -1, -1 without state."""
        sp = self.partitions.get((group_id, tp))
        marks = self._replicas.watermarks(tp)
        if sp is None or marks is None:
            return -1, -1
        done = sum(r.last - r.first + 1 for r in sp.runs if r.state in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED))
        return sp.start_offset, max(0, marks[1] - sp.start_offset - done)

    def alter_offsets(self, group_id: str, offsets: dict[TopicPartition, int]) -> ErrorCode:
        """AlterShareGroupOffsets: the share-partitions start at the given offsets (an empty or new
        share group only: NON_EMPTY_GROUP while it has members)."""
        error = self._admin_check(group_id, create=True)
        if error is not ErrorCode.NONE:
            return error
        for tp, offset in offsets.items():  # the state is reset: nothing in flight from there
            topic_id = self.coordinator.topic_id(tp.topic)
            if topic_id is None:
                continue
            if self.topic_ids.get((group_id, tp), topic_id) != topic_id:
                self._forget((group_id, tp))
            self.partitions[(group_id, tp)] = SharePartition(offset, self.settings_of(group_id))
            self.topic_ids[(group_id, tp)] = topic_id
            self.dirty.add((group_id, tp))
        self._state_partitions_changed.add(group_id)
        return ErrorCode.NONE

    def delete_offsets(self, group_id: str, topics: Iterable[str]) -> ErrorCode:
        """DeleteShareGroupOffsets: forget the share-partitions of `topics` (an empty share group only)."""
        error = self._admin_check(group_id, create=False)
        if error is not ErrorCode.NONE:
            return error
        names = set(topics)
        for key in [k for k in self.partitions if k[0] == group_id and k[1].topic in names]:
            self._forget(key)
        self._state_partitions_changed.add(group_id)
        return ErrorCode.NONE

    def _admin_check(self, group_id: str, create: bool) -> ErrorCode:
        coordinator = self.coordinator
        group = coordinator.groups.get(group_id)
        if group is None:
            if not create or coordinator.is_other_group(group_id):
                return ErrorCode.GROUP_ID_NOT_FOUND
            coordinator.create_empty(group_id)
            return ErrorCode.NONE
        return ErrorCode.NON_EMPTY_GROUP if group.members else ErrorCode.NONE

    def group_partitions(self, group_id: str) -> dict[TopicPartition, SharePartition]:
        return {tp: sp for (g, tp), sp in self.partitions.items() if g == group_id}

    def delete(self, group_id: str) -> ErrorCode:
        error = self.coordinator.delete(group_id)
        if error is ErrorCode.NONE:
            for key in [k for k in self.partitions if k[0] == group_id]:
                self._forget(key)
            self._state_partitions_changed.add(group_id)
        return error

    # -- the group's records in __consumer_offsets -------------------------------------------------

    def take_records(self, topic_id: Callable[[str], uuid.UUID | None]) -> list[ShareGroupRecord]:
        """What changed since the last call, to write to `__consumer_offsets`: the coordinator's
        records, then each changed group's ShareGroupStatePartitionMetadata (the topic partitions
        with share-group state; a tombstone once the group is gone)."""
        if not self._state_partitions_changed and not self.coordinator.has_changes:
            return []  # the common case: a fetch or an acknowledgement changes no group record
        records = self.coordinator.take_records()
        changed, self._state_partitions_changed = self._state_partitions_changed, set()
        for group_id in sorted(changed):
            if group_id not in self.coordinator.groups:
                if self._state_partitions_written.pop(group_id, None) is not None:
                    records.append(ShareGroupRecord(ShareRecordKind.STATE_PARTITION_METADATA, group_id, None, None))
                continue
            by_topic: dict[str, list[int]] = {}
            for g, tp in self.partitions:
                if g == group_id:
                    by_topic.setdefault(tp.topic, []).append(tp.partition)
            value = share_records.state_partitions(by_topic, topic_id)
            if self._state_partitions_written.get(group_id) != value:
                self._state_partitions_written[group_id] = value
                records.append(ShareGroupRecord(ShareRecordKind.STATE_PARTITION_METADATA, group_id, None, value))
        return records

    def load_records(self, records: Iterable[ShareGroupRecord], now: int) -> None:
        """The share groups as `__consumer_offsets` kept them (before share-partitions are restored)."""
        records = list(records)
        self.coordinator.load(records, now)
        for (kind, group_id, _), value in share_records.latest(records).items():
            if kind is ShareRecordKind.STATE_PARTITION_METADATA and isinstance(value, StatePartitionMetadata):
                self._state_partitions_written[group_id] = value


def _trim(records: bytes, first: int, last: int) -> bytes:
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
