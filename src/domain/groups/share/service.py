"""Share groups as the broker serves them: membership (`coordinator`), a share-partition per group and
topic partition (`partition`), and the share sessions of ShareFetch and ShareAcknowledge (`sessions`:
a request adds its partitions to its session and drops the forgotten ones; closing it releases what
the member holds there).

A share-partition is created on a group's first fetch of that partition, its start offset chosen by
the group's `share.auto.offset.reset` (`latest` by default: the high watermark; `earliest`: the log
start offset). A fetch reads the stored batches from the first offset it could acquire, then acquires
only offsets within those bytes, so a member is never handed records it was not sent.

Beside it, by concern (issue 40): the share sessions (`sessions.py`), what a fetch answers from the
bytes it read (`fetched_records.py`), and the ShareGroupStatePartitionMetadata records
(`state_partitions.py`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable

import attrs

from ...batch import iter_batches
from ...errors import ErrorCode
from ...ports import StateBatch
from ...replica_manager import ReplicaManager
from ...topics import TopicPartition
from . import configs as group_configs
from .coordinator import ShareGroupCoordinator
from .fetched_records import PartitionFetch, archive_aborted, trim
from .partition import Archived, RecordState, SharePartition, ShareSettings, coalesce
from .records import ShareGroupRecord
from .sessions import FINAL_EPOCH as FINAL_EPOCH  # re-exported: the share rooms name the epochs here
from .sessions import INITIAL_EPOCH as INITIAL_EPOCH
from .sessions import MAX_SHARE_SESSIONS, SessionConnections, ShareSession, session_at
from .state_partitions import StatePartitions

READ_FLOOR_BYTES = 64 * 1024
# ShareFetch v2's ShareAcquireMode (KIP-1206); a v1 request is batch-optimized, as Kafka 4.1 acquired
BATCH_OPTIMIZED = 0  # MaxRecords is a soft limit: the log batch holding the last record is acquired whole
RECORD_LIMIT = 1  # MaxRecords is strict: acquisition may stop inside a log batch
ACQUIRE_MODES = (BATCH_OPTIMIZED, RECORD_LIMIT)
AUTO_OFFSET_RESET = group_configs.AUTO_OFFSET_RESET
ISOLATION_LEVEL = group_configs.ISOLATION_LEVEL
SHARE_GROUP_CONFIGS = group_configs.DEFAULTS


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
        self._connections = SessionConnections()  # the connection each session was opened on
        self.configs: dict[str, dict[str, str]] = {}  # the GROUP resource's share.* overrides
        self.dirty: set[tuple[str, TopicPartition]] = set()  # to persist
        self.released: set[TopicPartition] = set()  # records became available: wake waiting fetches
        # ShareGroupStatePartitionMetadata: groups whose set of share-partitions changed, last written
        self._state_partitions = StatePartitions()

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
        error, session = session_at(self.sessions, key, epoch, self.max_sessions)
        if epoch == INITIAL_EPOCH and session is not None:
            self._connections.bind(key, connection)
        return error, session

    def connection_closed(self, connection: object) -> int:
        """The client's connection closed: the share sessions opened on it close, and what their
        members hold is released (Kafka's SharePartitionManager on a disconnect). How many closed."""
        keys = self._connections.closed(connection)
        for group_id, member_id in sorted(keys):
            self.close_session(group_id, member_id)
        return len(keys)

    def close_session(self, group_id: str, member_id: str) -> None:
        session = self.sessions.pop((group_id, member_id), None)
        self._connections.unbind((group_id, member_id))
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

        def written_since(ago_ms: int) -> int | None:
            found = self._replicas.list_offset(tp, max(now - ago_ms, 0))
            return found.offset if found.error is ErrorCode.NONE and found.offset >= 0 else None

        start = group_configs.start_offset(self.config(group_id, AUTO_OFFSET_RESET), *marks, written_since)
        sp = self.partitions[(group_id, tp)] = SharePartition(start, self.settings_of(group_id))
        self.topic_ids[(group_id, tp)] = topic_id
        self.dirty.add((group_id, tp))
        self._state_partitions.changed.add(group_id)
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
            acquired = archive_aborted(sp, member_id, acquired, result.records, result.aborted, now)
            self._touched(group_id, tp, released=False)
            if not acquired:
                return PartitionFetch()
        return PartitionFetch(
            records=trim(result.records, acquired[0].first, acquired[-1].last), acquired=tuple(acquired)
        )

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
            self._connections.unbind((group_id, member_id))
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
        self._state_partitions.changed.add(group_id)

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
        self._state_partitions.changed.add(key[0])

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
        error = self.coordinator.check_empty(group_id, create=True)
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
        self._state_partitions.changed.add(group_id)
        return ErrorCode.NONE

    def delete_offsets(self, group_id: str, topics: Iterable[str]) -> ErrorCode:
        """DeleteShareGroupOffsets: forget the share-partitions of `topics` (an empty share group only)."""
        error = self.coordinator.check_empty(group_id, create=False)
        if error is not ErrorCode.NONE:
            return error
        names = set(topics)
        for key in [k for k in self.partitions if k[0] == group_id and k[1].topic in names]:
            self._forget(key)
        self._state_partitions.changed.add(group_id)
        return ErrorCode.NONE

    def group_partitions(self, group_id: str) -> dict[TopicPartition, SharePartition]:
        return {tp: sp for (g, tp), sp in self.partitions.items() if g == group_id}

    def delete(self, group_id: str) -> ErrorCode:
        error = self.coordinator.delete(group_id)
        if error is ErrorCode.NONE:
            for key in [k for k in self.partitions if k[0] == group_id]:
                self._forget(key)
            self._state_partitions.changed.add(group_id)
        return error

    # -- the group's records in __consumer_offsets -------------------------------------------------

    def take_records(self, topic_id: Callable[[str], uuid.UUID | None]) -> list[ShareGroupRecord]:
        """What changed since the last call, to write to `__consumer_offsets`: the coordinator's
        records, then each changed group's ShareGroupStatePartitionMetadata (the topic partitions
        with share-group state; a tombstone once the group is gone)."""
        if not self._state_partitions.changed and not self.coordinator.has_changes:
            return []  # the common case: a fetch or an acknowledgement changes no group record
        records = self.coordinator.take_records()
        return records + self._state_partitions.take_records(self.coordinator.groups, self.partitions, topic_id)

    def load_records(self, records: Iterable[ShareGroupRecord], now: int) -> None:
        """The share groups as `__consumer_offsets` kept them (before share-partitions are restored)."""
        records = list(records)
        self.coordinator.load(records, now)
        self._state_partitions.load(records)
