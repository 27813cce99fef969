"""Wiring of share groups (KIP-932): the domain's ShareGroups from the `group.share.*` settings, driven
by the Kafka adapter's ShareRuntime. Group ids are shared with classic and consumer groups: a share
group cannot take an id either of them holds."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Protocol

from trafka.adapters.kafka.runtime.share_dead_letters import dead_letter_writer
from trafka.adapters.kafka.runtime.share_runtime import ShareRuntime, ShareWrites
from trafka.adapters.kafka.runtime.unit_of_work import UnitOfWork
from trafka.adapters.kafka.services import AppendNotifier
from trafka.domain.catalog import TopicCatalog
from trafka.domain.groups import GroupCoordinator
from trafka.domain.groups.group_ids import ClassicOrShareGroupIds as ClassicOrShareGroupIds  # bootstrap names it here
from trafka.domain.groups.share import ShareGroupCoordinator, ShareGroups, ShareGroupSettings, ShareSettings
from trafka.domain.ports import OffsetStore, ShareSnapshot, ShareStateStore
from trafka.domain.replica_manager import ReplicaManager
from trafka.domain.topics import TopicPartition

from ..config.settings import Settings
from .clock import Clock
from .groups import metadata_hasher


class ShareAdapters(Protocol):
    """What share groups take of the broker's adapters (`bootstrap.Adapters`, named by what it offers so
    this module does not import the composition root that imports it)."""

    @property
    def offset_store(self) -> OffsetStore: ...

    @property
    def share_state_store(self) -> ShareStateStore: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def clock_ms(self) -> Callable[[], int]: ...


def share_groups_from(
    settings: Settings,
    catalog: TopicCatalog,
    replicas: ReplicaManager,
    classic: GroupCoordinator,
    is_consumer_group: Callable[[str], bool],
    adapters: ShareAdapters,
    appends: AppendNotifier,
    unit_of_work: UnitOfWork,
    group_ids: ClassicOrShareGroupIds | None = None,
) -> ShareRuntime | None:
    groups = settings.groups
    if not groups.share_enable:
        return None

    def other_group(group_id: str) -> bool:
        return classic.is_classic_group(group_id) or is_consumer_group(group_id)

    coordinator = ShareGroupCoordinator(
        ShareGroupSettings(
            session_timeout_ms=groups.share_session_timeout_ms,
            heartbeat_interval_ms=groups.share_heartbeat_interval_ms,
            max_size=groups.share_max_size,
            # Kafka's group.share.min/max.* defaults, widened to hold the broker's own values
            min_session_timeout_ms=min(45_000, groups.share_session_timeout_ms),
            max_session_timeout_ms=max(60_000, groups.share_session_timeout_ms),
            min_heartbeat_interval_ms=min(5_000, groups.share_heartbeat_interval_ms),
            max_heartbeat_interval_ms=max(15_000, groups.share_heartbeat_interval_ms),
        ),
        catalog,
        other_group,
        metadata_hasher(),
    )
    if group_ids is not None:
        group_ids.share = coordinator
    record_settings = ShareSettings(
        record_lock_duration_ms=groups.share_record_lock_duration_ms,
        delivery_count_limit=groups.share_delivery_count_limit,
        partition_max_record_locks=groups.share_partition_max_record_locks,
        min_record_lock_duration_ms=groups.share_min_record_lock_duration_ms,
        max_record_lock_duration_ms=groups.share_max_record_lock_duration_ms,
    )
    share = ShareGroups(coordinator, record_settings, replicas)
    offsets = adapters.offset_store
    share.load_records(offsets.share_group_records(), adapters.clock_ms())
    store = adapters.share_state_store
    for snapshot in store.load():
        topic = catalog.by_id(snapshot.topic_id)
        if topic is not None and snapshot.partition < topic.partition_count:
            share.restore(
                snapshot.group_id,
                TopicPartition(topic.name, snapshot.partition),
                snapshot.topic_id,
                snapshot.start_offset,
                snapshot.batches,
            )
    topic_id = _topic_id(catalog)

    def appended(partitions: list[TopicPartition]) -> None:
        appends.notify(partitions)  # a Fetch parked on a dead-letter partition wakes, as after a Produce
        replicas.forget_appended()

    prefix = groups.share_dead_letter_topic_prefix
    writes = ShareWrites(
        records=lambda groups: offsets.store_share_group_records(groups.take_records(topic_id)),
        state=lambda groups: persist(groups, store),
        dead_letters=dead_letter_writer(
            catalog,
            replicas,
            share.config,
            adapters.clock_ms,
            prefix,
            groups.share_dead_letter_auto_create_topics_enable,
            appended,
        ),
        dead_letter_prefix=prefix,
    )
    runtime = ShareRuntime(share, adapters.clock_ms, appends, unit_of_work, writes, adapters.clock.seconds_until)
    adapters.clock.listen(runtime.touched)
    return runtime


def _topic_id(catalog: TopicCatalog) -> Callable[[str], uuid.UUID | None]:
    def topic_id(name: str) -> uuid.UUID | None:
        topic = catalog.get(name)
        return topic.topic_id if topic is not None else None

    return topic_id


def persist(groups: ShareGroups, store: ShareStateStore) -> None:
    """Write the changed share-partitions' snapshots (and tombstones for the deleted) in one write."""
    changed, gone = groups.take_dirty()
    snapshots = [
        ShareSnapshot(group_id, topic_id, tp.partition, sp.start_offset, tuple(sp.state_batches()))
        for group_id, tp, topic_id, sp in changed
    ]
    if snapshots or gone:
        store.write(snapshots, gone)
