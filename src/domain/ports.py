"""What the domain needs from the outside world, as typing.Protocol classes.

Adapters implement these: `trafka.adapters.memory` for tests and `--memory`, the filesystem adapter for
Kafka's on-disk format. The same contract tests run against every implementation. `AclStore` and
`ScramCredentialStore` are declared in `trafka.domain.security` (see below) and named here.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

import attrs

from .batch import BatchHeader
from .control import AbortedTxn
from .log_dirs import LogDirUsage
from .producers import ProducerSnapshotEntry
from .quotas.client_quotas import ClientQuotaStore as ClientQuotaStore  # declared beside ClientQuotas
from .retention import SegmentInfo

# The security package declares its two ports beside the services that use them and the values they
# store (AclStore with the Authorizer and AclBinding, ScramCredentialStore with UserScramCredentials),
# so it needs nothing from this module; they are the domain's ports all the same, named here too.
from .security.acls import AclStore as AclStore
from .security.credentials import ScramCredentialStore as ScramCredentialStore
from .topics import Topic, TopicPartition

if TYPE_CHECKING:
    from .compaction.cleaner import CleanedSegment
    from .errors import ErrorCode
    from .groups.group_metadata import CommittedOffset, GroupMetadata
    from .groups.modern.records import ConsumerGroupRecord
    from .groups.share.records import ShareGroupRecord
    from .groups.streams.records import StreamsGroupRecord
    from .transactions.coordinator import TxnMetadata


class PartitionLog(Protocol):
    """One partition's log: record batches in offset order, each stored as the producer's bytes.

    On a single node every appended batch is committed at once, so the high watermark is the log
    end offset.
    """

    @property
    def log_start_offset(self) -> int: ...

    @property
    def log_end_offset(self) -> int: ...

    def append(self, batches: bytes | bytearray, headers: Sequence[BatchHeader]) -> None:
        """Store batches whose offsets the domain has assigned (headers[0].base_offset == log end)."""

    def read(self, offset: int, max_bytes: int, min_one_batch: bool) -> bytes:
        """Whole batches from the one containing `offset`, up to `max_bytes`.

        With `min_one_batch`, the first batch is returned even if it alone exceeds `max_bytes`.
        `offset` is between log start and log end; at log end the result is empty.
        """

    def read_below(self, offset: int, max_bytes: int, min_one_batch: bool, stop_offset: int) -> tuple[bytes, int]:
        """`read`, less the batches from the first whose base offset is `stop_offset` or more (the last
        stable offset, for read_committed); and the last offset of the last batch returned (-1 if none).

        Found without walking the batches read (ADR 90): the fetch path does no per-batch work."""

    def batches_from_timestamp(self, timestamp: int) -> Iterator[bytes]:
        """Batches in offset order, starting at the first whose max timestamp is >= `timestamp`."""

    def batch_with_max_timestamp(self) -> bytes | None:
        """The first batch holding the largest timestamp in the log, or None for an empty log."""

    def batch_headers(self, from_offset: int = 0) -> Iterator[BatchHeader]:
        """Batch headers from the batch holding `from_offset` (or the log start, if later), in offset
        order: producer state is rebuilt from them, after a snapshot."""

    def write_producer_snapshot(self, offset: int, entries: list[ProducerSnapshotEntry]) -> None:
        """Producer state as of `offset` (every batch below it), in `<offset>.snapshot`."""

    def latest_producer_snapshot(self) -> tuple[int, list[ProducerSnapshotEntry]] | None:
        """The newest usable snapshot: (offset, entries)."""

    def record_aborted_transaction(self, aborted: AbortedTxn) -> None:
        """Add to the aborted transaction index (`.txnindex`)."""

    def aborted_transactions(self, start_offset: int, end_offset: int) -> list[AbortedTxn]:
        """Aborted transactions overlapping [start_offset, end_offset], in the order they ended."""

    def roll(self) -> None:
        """Start a new active segment (the observer `LogStore.observe_rolls` set is told)."""

    def segment_infos(self) -> list[SegmentInfo]:
        """The segments, oldest first; the last is the active one."""

    def delete_segments_before(self, base_offset: int) -> None:
        """Delete whole segments that end at or before `base_offset`; the log start moves up."""

    def segment_batches(self, base_offset: int) -> Iterator[tuple[BatchHeader, bytes]]:
        """The cleaner's read: every batch of the closed segment starting at `base_offset`."""

    def first_batch_timestamps(self) -> list[int]:
        """Each segment's first batch's max timestamp, -1 if it has none (max.compaction.lag.ms)."""

    def cleaned_segment(self, base_offset: int) -> CleanedSegment:
        """A new segment for the cleaner to write (`.cleaned` on the filesystem)."""

    def replace_segments(
        self, cleaned: CleanedSegment, old_bases: list[int], deferred: list[Callable[[], None]] | None = None
    ) -> None:
        """Swap a cleaned segment in for the closed segments it replaces (the swap protocol);
        ValueError if they are no longer the log's. Work that may follow later (a directory flush,
        removing the old files) goes to `deferred` when given."""

    def advance_log_start_offset(self, offset: int) -> None:
        """DeleteRecords: records before `offset` are gone (whole segments below it are deleted)."""

    def leader_epoch_entries(self) -> list[tuple[int, int]]:
        """The leader epochs as (epoch, start offset), oldest first (Kafka's `leader-epoch-checkpoint`)."""

    def record_leader_epoch_entries(self, entries: Sequence[tuple[int, int]]) -> None:
        """Replace the leader epochs; durable before it returns."""


class LogStore(Protocol):
    """Where partition logs live."""

    def create(self, tp: TopicPartition, topic: Topic) -> PartitionLog:
        """A new, empty partition log."""

    def open(self, tp: TopicPartition, topic: Topic) -> PartitionLog:
        """The partition's existing log (recovered if need be), or a new one: used at startup."""

    def get(self, tp: TopicPartition) -> PartitionLog | None: ...

    def reconfigure(self, tp: TopicPartition, topic: Topic) -> None:
        """The topic's configs changed (segment size, flush policy)."""

    def set_topic_defaults(self, defaults: Mapping[str, str]) -> None:
        """The broker's defaults for topic configs (by topic config name) changed: a log whose topic has
        no override of its own follows them from its next `reconfigure` (dynamic broker configs)."""

    def delete(self, tp: TopicPartition) -> None: ...

    def observe_rolls(self, observer: Callable[[TopicPartition, PartitionLog, int], None]) -> None:
        """From now on, each time one of the store's logs (every one, now and later, internal topics'
        too) starts a new segment, by an append or `roll`: `observer(tp, log, base offset of the new
        segment)`, once the new segment is there and before anything is appended to it. Kafka's
        UnifiedLog.roll takes its producer snapshot at that moment."""

    def log_dir(self) -> LogDirUsage:
        """The one log dir every partition lives in, with its volume's total and usable bytes now."""


class CatalogStore(Protocol):
    """Where the topic catalog is recorded, so it survives a restart (a KRaft metadata log on disk)."""

    def load(self) -> Iterable[Topic]: ...

    def topic_created(self, topic: Topic) -> None: ...

    def partitions_added(self, topic: Topic, first_new_partition: int) -> None: ...

    def topic_deleted(self, topic: Topic) -> None: ...

    def configs_changed(self, topic: Topic, changes: Mapping[str, str | None]) -> None:
        """Topic config overrides set (a value) or removed (None)."""

    def broker_configs(self) -> Mapping[str, Mapping[str, str]]:
        """The dynamic broker configs by resource name: "" the cluster-wide default, else a node id."""

    def broker_configs_changed(self, resource_name: str, changes: Mapping[str, str | None]) -> None:
        """Dynamic broker configs of the resource set (a value) or removed (None)."""

    def feature_levels(self) -> Mapping[str, int]:
        """The finalized feature levels recorded (FeatureLevelRecords), by feature name; 0 kept (a feature
        turned off stays off rather than falling back to its bootstrap level)."""

    def feature_levels_changed(self, levels: Mapping[str, int]) -> None:
        """Finalized feature levels set (0: no longer finalized); durable before it returns."""

    def next_producer_id(self) -> int:
        """The first producer id not yet reserved (0 on a new cluster)."""

    def producer_ids_reserved(self, next_producer_id: int) -> None:
        """Ids below `next_producer_id` are handed out; durable before it returns."""


class TransactionStore(Protocol):
    """Transaction coordinator state by transactional id (Kafka's `__transaction_state` log)."""

    def load(self) -> Iterable[TxnMetadata]: ...

    def record(self, txn: TxnMetadata) -> None:
        """The transaction's new state; durable before it returns."""

    def remove(self, transactional_id: str) -> None:
        """The transactional id expired: forgotten (a tombstone in the transaction log)."""


class OffsetStore(Protocol):
    """Committed consumer offsets and group metadata by group (an internal `__consumer_offsets` log on disk)."""

    def commit(self, group_id: str, offsets: Mapping[TopicPartition, CommittedOffset]) -> None: ...

    def fetch(self, group_id: str) -> Mapping[TopicPartition, CommittedOffset]: ...

    def delete(self, group_id: str, partitions: Iterable[TopicPartition]) -> None: ...

    def delete_group(self, group_id: str) -> None:
        """The group is gone: its offsets and its metadata (a tombstone for each)."""

    def groups(self) -> Iterable[str]:
        """The groups with committed offsets."""

    def store_group(self, group_id: str, metadata: GroupMetadata | None) -> None:
        """The group's metadata as of its latest generation (GroupMetadataKey/Value); None writes a
        tombstone for it alone (the group became a consumer group; its offsets stay)."""

    def group_metadata(self) -> Mapping[str, GroupMetadata]:
        """The last stored metadata of every group not deleted since."""

    def store_consumer_group_records(self, records: Iterable[ConsumerGroupRecord]) -> None:
        """KIP-848 consumer group records (tombstones when the value is None), in order."""

    def consumer_group_records(self) -> Sequence[ConsumerGroupRecord]:
        """The last record of every consumer group key not deleted since."""

    def store_streams_group_records(self, records: Iterable[StreamsGroupRecord]) -> None:
        """KIP-1071 streams group records (tombstones when the value is None), in order."""

    def streams_group_records(self) -> Sequence[StreamsGroupRecord]:
        """The last record of every streams group key not deleted since."""

    def store_share_group_records(self, records: Iterable[ShareGroupRecord]) -> None:
        """KIP-932 share group records (tombstones when the value is None), in order."""

    def share_group_records(self) -> Sequence[ShareGroupRecord]:
        """The last record of every share group key not deleted since."""

    def stage_transactional(
        self, producer_id: int, producer_epoch: int, group_id: str, offsets: Mapping[TopicPartition, CommittedOffset]
    ) -> None:
        """TxnOffsetCommit: offsets that become committed only when the producer's transaction commits."""

    def end_transactional(self, producer_id: int, producer_epoch: int, commit: bool) -> None:
        """The producer's transaction ended: its staged offsets are committed or dropped."""

    def has_pending(self, group_id: str, tp: TopicPartition | None = None) -> bool:
        """Whether a transaction has staged, still undecided, offsets for this group and partition
        (any partition when `tp` is None)."""


class BrokerObserver(Protocol):
    """What the Kafka listener reports as it serves, for metrics: per connection, per request and per
    partition of a request, never per record (record counts come from batch headers)."""

    def connection_opened(self, listener: str) -> None: ...

    def connection_closed(self, listener: str) -> None: ...

    def request_completed(self, api: str, version: int, seconds: float) -> None:
        """A request's response is ready (or, for acks=0, the request is handled)."""

    def partition_produced(self, topic: str, error: ErrorCode, records: int, size: int) -> None:
        """One partition of a Produce request: its error code and, when appended, records and bytes."""

    def partition_fetched(self, topic: str, error: ErrorCode, size: int) -> None:
        """One partition of a Fetch response: its error code and the record bytes returned."""


class SchemaIdLookup(Protocol):
    """The schema registry as broker-side schema validation sees it (the app wires the registry)."""

    def schema_ids(self, subject: str) -> Collection[int]:
        """The ids of the subject's versions that are not deleted; empty for an unknown subject."""


StateBatch = tuple[int, int, int, int]  # first offset, last offset, delivery state, delivery count


@attrs.frozen
class ShareSnapshot:
    """What is kept of a share-partition across restarts (Kafka's share coordinator state): its start
    offset and the delivery state of its in-flight records. Acquisitions are not kept: after a
    restart those records are available again, as Kafka."""

    group_id: str
    topic_id: uuid.UUID
    partition: int
    start_offset: int
    batches: tuple[StateBatch, ...] = ()
    state_epoch: int = 0


class ShareStateStore(Protocol):
    """Share-partition state by (group, topic id, partition): Kafka's `__share_group_state` log on disk."""

    def load(self) -> Iterable[ShareSnapshot]:
        """The last snapshot of every share-partition not deleted since."""

    def write(self, snapshots: Sequence[ShareSnapshot], deleted: Sequence[tuple[str, uuid.UUID, int]]) -> None:
        """New snapshots and deleted share-partitions (tombstones), in one durable write."""


class GroupConfigStore(Protocol):
    """The GROUP config resource's overrides (consumer.*, share.* ...) by group id, kept as Kafka's
    controller keeps them: ConfigRecords of resource type GROUP in the KRaft metadata log. They are the
    group id's, not the group's: they may be set before a group exists and outlive its deletion."""

    def load(self) -> Mapping[str, Mapping[str, str]]:
        """The overrides of every group id that has any."""

    def group_configs_changed(self, group_id: str, changes: Mapping[str, str | None]) -> None:
        """Overrides of the group set (a value) or removed (None); durable before it returns."""
