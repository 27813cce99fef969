"""What each console page shows, read from the domain services: plain values the templates lay out.

Nothing here writes; the actions (create, delete, reset offsets) are in `actions.py`.
"""

from __future__ import annotations

import attrs

from trafka.domain.configs import TOPIC_CONFIG_DEFAULTS, ConfigEntry, ConfigSource, describe_topic_configs
from trafka.domain.groups.state import GroupState
from trafka.domain.quotas import CLIENT_ID, DEFAULT_NAME, IP, USER
from trafka.domain.topics import Topic, TopicPartition
from trafka.schema_codec.messages import ConsumerProtocolAssignment

from .lag import PartitionLag, group_lag
from .view import BrokerView


@attrs.frozen
class PartitionRow:
    partition: int
    log_start_offset: int
    log_end_offset: int
    size: int
    segments: int
    last_write_ms: int  # the largest record timestamp of the newest segment holding records, or -1
    clean_bytes: int = 0  # below the log cleaner's first dirty offset (Kafka's LogToClean.cleanBytes)

    @property
    def messages(self) -> int:
        return self.log_end_offset - self.log_start_offset

    @property
    def dirty_bytes(self) -> int:
        return self.size - self.clean_bytes


@attrs.frozen
class TopicRow:
    name: str
    internal: bool
    partitions: tuple[PartitionRow, ...]
    retention_ms: int
    compacted: bool = False  # cleanup.policy has compact: the page shows clean and dirty bytes

    @property
    def messages(self) -> int:
        return sum(p.messages for p in self.partitions)

    @property
    def size(self) -> int:
        return sum(p.size for p in self.partitions)

    @property
    def last_write_ms(self) -> int:
        return max((p.last_write_ms for p in self.partitions), default=-1)


def partition_row(view: BrokerView, tp: TopicPartition) -> PartitionRow | None:
    marks = view.replicas.watermarks(tp)
    infos = view.replicas.segment_infos(tp)
    if marks is None or infos is None:
        return None
    written = [s.max_timestamp for s in infos if s.size > 0]
    first_dirty = view.first_dirty_offset(tp)
    clean = 0 if first_dirty is None else sum(s.size for s in infos if s.base_offset < first_dirty)
    return PartitionRow(
        tp.partition, marks[0], marks[1], sum(s.size for s in infos), len(infos), max(written, default=-1), clean
    )


def topic_row(view: BrokerView, topic: Topic) -> TopicRow:
    rows = tuple(r for tp in topic.topic_partitions() if (r := partition_row(view, tp)) is not None)
    retention = int(topic.configs.get("retention.ms", TOPIC_CONFIG_DEFAULTS["retention.ms"][0]))
    compacted = "compact" in view.replicas.cleanup_policy(topic).split(",")
    return TopicRow(topic.name, topic.is_internal, rows, retention, compacted)


def topic_rows(view: BrokerView) -> list[TopicRow]:
    return [topic_row(view, topic) for topic in view.catalog.topics()]


def topic_configs(topic: Topic) -> list[ConfigEntry]:
    """Every topic config with its value; overrides first, as a person looks for them first."""
    entries = describe_topic_configs(topic.configs, None)
    return sorted(entries, key=lambda e: (e.source is not ConfigSource.DYNAMIC_TOPIC_CONFIG, e.name))


@attrs.frozen
class MemberRow:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    assignment: tuple[TopicPartition, ...]
    tasks: tuple[str, ...] = ()  # a streams group member's tasks: "active 0_1", "standby 1_0", ...
    process_id: str | None = None  # a streams group member's Kafka Streams instance


@attrs.frozen
class SharePartitionRow:
    """A share group's share-partition, as the metrics show it: its start offset, the records in flight
    (start to end offset), those acquired under a lock now, those archived since it was loaded, and the
    lag (records from the start offset to the high watermark not yet accepted or archived)."""

    tp: TopicPartition
    start_offset: int
    in_flight: int
    acquired: int
    archived: int
    lag: int


@attrs.frozen
class GroupRow:
    """`group_type` is Kafka's GroupType (ListGroups v5, `kafka-consumer-groups.sh --list --type`):
    classic, consumer (KIP-848), share or streams (KIP-1071); `protocol_type` the embedded protocol of a classic group
    ("consumer" for Kafka's consumers, "" for one that only commits offsets)."""

    group_id: str
    group_type: str
    state: str
    protocol_type: str
    protocol_name: str
    members: tuple[MemberRow, ...]
    lag: tuple[PartitionLag, ...]
    share: tuple[SharePartitionRow, ...] = ()  # a share group's share-partitions

    @property
    def total_lag(self) -> int:
        return sum(row.lag for row in self.lag) + sum(row.lag for row in self.share)

    @property
    def empty(self) -> bool:
        return self.state == GroupState.EMPTY.name


def decode_assignment(data: bytes) -> tuple[TopicPartition, ...]:
    """A consumer group member's ConsumerProtocolAssignment; () for other protocols or bad bytes."""
    if len(data) < 2:
        return ()
    try:
        if int.from_bytes(data[:2], "big", signed=True) < 0:
            return ()
        decoded = ConsumerProtocolAssignment.decode(data, header=True)
        return tuple(sorted(TopicPartition(t.topic, p) for t in decoded.assigned_partitions for p in t.partitions))
    except Exception:  # another protocol's assignment is opaque bytes: shown as none
        return ()


def consumer_group_row(view: BrokerView, group_id: str) -> GroupRow | None:
    """A KIP-848 consumer group: its state, assignor and each member's current partitions."""
    group = view.consumer_groups.groups.get(group_id) if view.consumer_groups is not None else None
    if group is None:
        return None
    members = tuple(
        MemberRow(
            m.member_id,
            m.instance_id,
            m.client_id,
            m.client_host,
            tuple(sorted(TopicPartition(t, p) for t, ps in m.assigned.items() for p in ps)),
        )
        for m in group.members.values()
    )
    return GroupRow(
        group_id, "consumer", group.state.name, "consumer", group.assignor, members, tuple(group_lag(view, group_id))
    )


def share_group_row(view: BrokerView, group_id: str) -> GroupRow | None:
    """A share group (KIP-932): its members and their partitions, and each share-partition's state."""
    share = view.share
    group = share.coordinator.groups.get(group_id) if share is not None else None
    if share is None or group is None:
        return None
    members = tuple(
        MemberRow(
            m.member_id,
            None,
            m.client_id,
            m.client_host,
            tuple(sorted(TopicPartition(t, p) for t, ps in m.assigned.items() for p in ps)),
        )
        for m in group.members.values()
    )
    partitions = []
    for tp, sp in sorted(share.group_partitions(group_id).items()):
        start, lag = share.start_and_lag(group_id, tp)
        partitions.append(
            SharePartitionRow(tp, start, sp.in_flight_count(), sp.acquired_count(), sp.archived_total, max(lag, 0))
        )
    state = share.coordinator.state(group_id).name
    return GroupRow(group_id, "share", state, "share", group.assignor, members, (), tuple(partitions))


def streams_group_row(view: BrokerView, group_id: str) -> GroupRow | None:
    """A streams group (KIP-1071): each member's active tasks, shown as the source-topic partitions they
    read (task `1_2` reads partition 2 of subtopology 1's source topics), its tasks by role, and the lag
    of the group's committed offsets."""
    streams = view.streams_groups
    group = streams.groups.get(group_id) if streams is not None else None
    if streams is None or group is None:
        return None
    sources = {s.subtopology_id: s.all_source_topics() for s in group.topology.subtopologies} if group.topology else {}
    members = tuple(
        MemberRow(
            m.member_id,
            m.instance_id,
            m.client_id,
            m.client_host,
            tuple(
                sorted(
                    TopicPartition(topic, p)
                    for sid, ps in m.assigned.active.items()
                    for topic in sources.get(sid, ())
                    for p in ps
                )
            ),
            tasks=tuple(f"{role} {sid}_{p}" for role, sid, p in m.assigned.roles()),
            process_id=m.process_id,
        )
        for m in sorted(group.members.values(), key=lambda m: m.member_id)
    )
    state = streams.state(group_id).name
    return GroupRow(group_id, "streams", state, "streams", "sticky", members, tuple(group_lag(view, group_id)))


def group_row(view: BrokerView, group_id: str) -> GroupRow | None:
    if view.coordinator.group(group_id) is None:
        return (
            consumer_group_row(view, group_id) or share_group_row(view, group_id) or streams_group_row(view, group_id)
        )
    described = view.coordinator.describe(group_id)
    members = tuple(
        MemberRow(
            m.member_id,
            m.group_instance_id,
            m.client_id,
            m.client_host,
            decode_assignment(m.assignment) if described.protocol_type == "consumer" else (),
        )
        for m in described.members
    )
    return GroupRow(
        group_id,
        "classic",
        described.state.name,
        described.protocol_type,
        described.protocol_name,
        members,
        tuple(group_lag(view, group_id)),
    )


def group_rows(view: BrokerView) -> list[GroupRow]:
    rows = [row for listing in view.coordinator.list_groups() if (row := group_row(view, listing.group_id))]
    if view.consumer_groups is not None:
        rows += [row for gid in sorted(view.consumer_groups.groups) if (row := consumer_group_row(view, gid))]
    if view.share is not None:
        rows += [row for gid in sorted(view.share.coordinator.groups) if (row := share_group_row(view, gid))]
    if view.streams_groups is not None:
        rows += [row for gid in sorted(view.streams_groups.groups) if (row := streams_group_row(view, gid))]
    return sorted(rows, key=lambda row: row.group_id)


def quota_rows(view: BrokerView) -> list[dict[str, object]]:
    """The client quotas set, one row per entity and key (`<default>` for a default entity)."""
    if view.quotas is None:
        return []
    rows: list[dict[str, object]] = []
    for entity, values in view.quotas.quotas.all().items():
        parts = {kind: DEFAULT_NAME if name is None else name for kind, name in entity.parts}
        for key, value in sorted(values.items()):
            rows.append(
                {
                    "user": parts.get(USER, ""),
                    "client_id": parts.get(CLIENT_ID, ""),
                    "ip": parts.get(IP, ""),
                    "key": key,
                    "value": int(value) if value.is_integer() else value,
                }
            )
    return sorted(rows, key=lambda r: (str(r["user"]), str(r["client_id"]), str(r["ip"]), str(r["key"])))


def quota_usage_rows(view: BrokerView) -> list[dict[str, object]]:
    """Each quota id's rate now against its bound, and the throttles it was given."""
    if view.quotas is None:
        return []
    return [
        {
            "type": s.quota_type.metric_group,
            "user": s.user,
            "client_id": s.client_id,
            "rate": round(s.rate, 1),
            "bound": s.bound,
            "throttles": s.throttles,
            "throttle_avg_ms": round(s.throttle_time_avg_ms),
        }
        for s in sorted(
            view.quotas.statistics(view.clock_ms()), key=lambda s: (s.quota_type.metric_group, s.user, s.client_id)
        )
    ]
