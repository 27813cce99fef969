"""Committed offsets: OffsetCommit, OffsetFetch, OffsetDelete and their rules.

Who may commit is the coordinator's decision (generation fencing, simple consumers with generation
-1); where offsets live is the `OffsetStore` port, which also keeps the groups' metadata: loaded into
the coordinator here at startup, written by `store_group_metadata`. Metadata is stored and returned
exactly as committed.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from ..catalog import TopicCatalog
from ..errors import ErrorCode
from ..ports import OffsetStore
from ..topics import TopicPartition
from .coordinator import GroupCoordinator
from .group_metadata import CommittedOffset, GroupMetadataRecord
from .state import GroupState

if TYPE_CHECKING:
    from .modern.records import ConsumerGroupRecord  # the KIP-848 records load with the coordinator (ADR 124)
    from .streams.records import StreamsGroupRecord  # the streams package loads with its first group

OFFSET_METADATA_MAX_BYTES = 4096
CONSUMER_PROTOCOL = "consumer"


@attrs.frozen
class CommitRequest:
    group_id: str
    member_id: str
    generation_id: int
    group_instance_id: str | None
    offsets: tuple[tuple[TopicPartition, CommittedOffset], ...]
    # Its partitions of internal topics that exist (`__consumer_offsets`...): not in the catalog (ADR
    # 64), but committed to as Kafka commits to any partition its metadata holds (ADR 108).
    internal: frozenset[TopicPartition] = frozenset()


class OffsetManager:
    def __init__(self, coordinator: GroupCoordinator, store: OffsetStore, catalog: TopicCatalog, now: int) -> None:
        """Loads the stored groups into the coordinator, as of `now`."""
        self._coordinator = coordinator
        self._store = store
        self._catalog = catalog
        # Whether a group of another protocol (a KIP-848 consumer group) has members: its offsets stay.
        self.has_members_elsewhere: Callable[[str], bool] = lambda group_id: False
        coordinator.load(store.group_metadata(), now)
        for group_id in store.groups():
            coordinator.ensure_group(group_id)

    def store_group_metadata(self, records: Iterable[GroupMetadataRecord]) -> None:
        """Write the group metadata the coordinator queued (`take_metadata_records`)."""
        for record in records:
            self._store.store_group(record.group_id, record.metadata)

    def store_consumer_group_records(self, records: Iterable[ConsumerGroupRecord]) -> None:
        """Write what the KIP-848 coordinator queued (`take_records`)."""
        self._store.store_consumer_group_records(records)

    def consumer_group_records(self) -> Sequence[ConsumerGroupRecord]:
        return self._store.consumer_group_records()

    def store_streams_group_records(self, records: Iterable[StreamsGroupRecord]) -> None:
        """Write what the KIP-1071 coordinator queued (`take_records`)."""
        self._store.store_streams_group_records(records)

    def streams_group_records(self) -> Sequence[StreamsGroupRecord]:
        return self._store.streams_group_records()

    def commit(
        self, request: CommitRequest, now: int, fenced: ErrorCode | None = None
    ) -> dict[TopicPartition, ErrorCode]:
        """`fenced`: a consumer group's (KIP-848) answer, decided by its coordinator; else the classic one's."""
        if fenced is None:
            fenced = self._coordinator.validate_offset_commit(
                request.group_id, request.member_id, request.generation_id, now, request.group_instance_id
            )
        results: dict[TopicPartition, ErrorCode] = {}
        accepted: dict[TopicPartition, CommittedOffset] = {}
        for tp, committed in request.offsets:
            if tp not in request.internal and not self._catalog.has_partition(tp):  # KafkaApis answers these
                results[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif fenced is not ErrorCode.NONE:
                results[tp] = fenced
            elif committed.metadata is not None and len(committed.metadata.encode()) > OFFSET_METADATA_MAX_BYTES:
                results[tp] = ErrorCode.OFFSET_METADATA_TOO_LARGE
            else:
                results[tp] = ErrorCode.NONE
                accepted[tp] = attrs.evolve(committed, commit_timestamp_ms=now)
        if accepted:
            self._store.commit(request.group_id, accepted)
        return results

    def stage_transactional(
        self,
        producer_id: int,
        producer_epoch: int,
        group_id: str,
        offsets: Mapping[TopicPartition, CommittedOffset],
        now: int,
    ) -> None:
        """TxnOffsetCommit: stored now, visible when the producer's transaction commits."""
        self._coordinator.ensure_group(group_id)
        stamped = {tp: attrs.evolve(c, commit_timestamp_ms=now) for tp, c in offsets.items()}
        self._store.stage_transactional(producer_id, producer_epoch, group_id, stamped)

    def end_transactional(self, producer_id: int, producer_epoch: int, commit: bool) -> None:
        self._store.end_transactional(producer_id, producer_epoch, commit)

    def has_pending(self, group_id: str, tp: TopicPartition) -> bool:
        return self._store.has_pending(group_id, tp)

    def fetch(
        self, group_id: str, partitions: Iterable[TopicPartition] | None
    ) -> dict[TopicPartition, CommittedOffset | None]:
        """Committed offsets by partition; None where nothing is committed. None asks for all."""
        committed = self._store.fetch(group_id)
        if partitions is None:
            return dict(committed)
        return {tp: committed.get(tp) for tp in partitions}

    def delete(
        self, group_id: str, partitions: Iterable[TopicPartition]
    ) -> tuple[ErrorCode, dict[TopicPartition, ErrorCode]]:
        """OffsetDelete: refused per partition while an active group subscribes to its topic."""
        group = self._coordinator.group(group_id)
        if group is None:
            return ErrorCode.GROUP_ID_NOT_FOUND, {}
        subscribed: set[str] = set()
        if group.state is not GroupState.EMPTY:
            if group.protocol_type != CONSUMER_PROTOCOL:
                return ErrorCode.NON_EMPTY_GROUP, {}
            for member in group.members.values():
                subscribed |= subscribed_topics(member.metadata_for(group.protocol_name))
        results = {}
        deletable = []
        for tp in partitions:
            if tp.topic in subscribed:
                results[tp] = ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC
            else:
                results[tp] = ErrorCode.NONE
                deletable.append(tp)
        self._store.delete(group_id, deletable)
        return ErrorCode.NONE, results

    def expire(self, now: int, retention_ms: int) -> int:
        """offsets.retention.minutes, as Kafka's group coordinator applies it: an Empty group's offsets
        expire `retention_ms` after it became Empty (its state timestamp; each offset's commit time when
        that is unknown); a group with no protocol (standalone consumers committing with generation -1)
        loses each offset `retention_ms` after its commit. An Empty group left with no offsets is
        deleted, with its metadata. Returns how many offsets were removed."""
        removed = 0
        known = {listing.group_id for listing in self._coordinator.list_groups()}
        for group_id in sorted(known | set(self._store.groups())):
            group = self._coordinator.group(group_id)
            if group is not None and group.state is not GroupState.EMPTY:
                continue
            if self.has_members_elsewhere(group_id):
                continue
            committed = self._store.fetch(group_id)
            since = group.state_timestamp_ms if group is not None and group.protocol_type else None
            expired = [
                tp
                for tp, c in committed.items()
                if now - (c.commit_timestamp_ms if since is None else since) >= retention_ms
                and not self._store.has_pending(group_id, tp)
            ]
            if expired:
                self._store.delete(group_id, expired)
                removed += len(expired)
            if len(expired) == len(committed) and not self._store.has_pending(group_id):
                if self._coordinator.delete(group_id) is ErrorCode.NONE:  # Kafka keeps groups in a transaction
                    self._store.delete_group(group_id)
        return removed

    def forget_topic(self, topic: str) -> None:
        """A deleted topic's committed offsets go with it, as in Kafka."""
        for group_id in list(self._store.groups()):
            gone = [tp for tp in self._store.fetch(group_id) if tp.topic == topic]
            if gone:
                self._store.delete(group_id, gone)

    def forget_group(self, group_id: str) -> None:
        """A deleted consumer group's (KIP-848) offsets and metadata go with it."""
        self._store.delete_group(group_id)

    def delete_group(self, group_id: str) -> ErrorCode:
        error = self._coordinator.delete(group_id)
        if error is ErrorCode.NONE:
            self._store.delete_group(group_id)
        return error


def subscribed_topics(metadata: bytes) -> set[str]:
    """Topics named in a ConsumerProtocolSubscription (version int16, then an array of strings)."""
    topics: set[str] = set()
    try:
        (count,) = struct.unpack_from(">i", metadata, 2)
        pos = 6
        for _ in range(max(count, 0)):
            (length,) = struct.unpack_from(">h", metadata, pos)
            pos += 2
            topics.add(metadata[pos : pos + length].decode())
            pos += length
    except (struct.error, UnicodeDecodeError):
        return topics
    return topics
