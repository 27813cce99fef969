"""A Kafka Streams application's topology as a member sends it on join, and how the coordinator
configures it against the topics that exist (Kafka's InternalTopicManager.configureTopics).

A topology is subtopologies; each reads source topics (user topics, which must exist) and
repartition source topics (internal, created by the broker), writes repartition sink topics, and
keeps state in changelog topics (internal). Configuring it decides every internal topic's partition
count, in Kafka's order:
1. a repartition source topic without a fixed count gets the largest partition count among the
   source topics of the subtopologies that write to it (repeated until every count is known);
2. each copartition group's topics must have one partition count: fixed topics (user topics and
   repartition topics with a count) must agree, else INCORRECTLY_PARTITIONED_TOPICS; the flexible
   repartition topics of the group take that count (the largest of the group when all are flexible);
3. a changelog topic gets its subtopology's task count: the largest count among its source topics.
The topology is ready when every internal topic exists with its count; the topics that do not exist
yet are returned for the broker to create, and until they exist the group is NOT_READY with
MISSING_INTERNAL_TOPICS. A missing source topic is MISSING_SOURCE_TOPICS.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping

import attrs


class StreamsStatus(enum.IntEnum):
    """StreamsGroupHeartbeatResponse's status codes (Kafka's StreamsGroupHeartbeatResponse.Status)."""

    STALE_TOPOLOGY = 0
    MISSING_SOURCE_TOPICS = 1
    INCORRECTLY_PARTITIONED_TOPICS = 2
    MISSING_INTERNAL_TOPICS = 3
    SHUTDOWN_APPLICATION = 4
    ASSIGNMENT_DELAYED = 5


@attrs.frozen
class Status:
    code: StreamsStatus
    detail: str


@attrs.frozen
class TopicInfo:
    """An internal topic: its partition count (0: the coordinator decides), replication factor (0: the
    broker's default) and topic configs."""

    name: str
    partitions: int = 0
    replication_factor: int = 0
    configs: tuple[tuple[str, str], ...] = ()


@attrs.frozen
class Subtopology:
    subtopology_id: str
    source_topics: tuple[str, ...] = ()
    repartition_sink_topics: tuple[str, ...] = ()
    state_changelog_topics: tuple[TopicInfo, ...] = ()
    repartition_source_topics: tuple[TopicInfo, ...] = ()
    copartition_groups: tuple[frozenset[str], ...] = ()  # topic names (the wire sends indexes)

    def all_source_topics(self) -> tuple[str, ...]:
        return self.source_topics + tuple(t.name for t in self.repartition_source_topics)


@attrs.frozen
class Topology:
    epoch: int
    subtopologies: tuple[Subtopology, ...]

    def subtopology_ids(self) -> tuple[str, ...]:
        return tuple(s.subtopology_id for s in self.subtopologies)

    def internal_topics(self) -> dict[str, TopicInfo]:
        topics: dict[str, TopicInfo] = {}
        for s in self.subtopologies:
            for info in s.repartition_source_topics + s.state_changelog_topics:
                topics[info.name] = info
        return topics

    def required_topics(self) -> frozenset[str]:
        """Every topic the topology reads or keeps state in (whose metadata changes its configuration)."""
        names = {t for s in self.subtopologies for t in s.source_topics}
        return frozenset(names | set(self.internal_topics()))


def invalid_topology(topology: Topology) -> str | None:
    """Why Kafka refuses this topology (STREAMS_INVALID_TOPOLOGY), or None."""
    if not topology.subtopologies:
        return "The topology has no subtopologies."
    ids = topology.subtopology_ids()
    if len(set(ids)) != len(ids):
        return "The topology has duplicate subtopology ids."
    sinks = {t for s in topology.subtopologies for t in s.repartition_sink_topics}
    for s in topology.subtopologies:
        if not s.all_source_topics():
            return f"Subtopology {s.subtopology_id} has no source topics."
        for info in s.repartition_source_topics + s.state_changelog_topics:
            if not _valid_topic_name(info.name):
                return f"Internal topic name {info.name!r} is invalid."
            if info.partitions < 0:
                return f"Internal topic {info.name} has a negative partition count."
        for info in s.repartition_source_topics:
            if info.name not in sinks:
                return f"Repartition source topic {info.name} is not written by any subtopology."
    return None


def _valid_topic_name(name: str) -> bool:
    return (
        0 < len(name) <= 249
        and name not in (".", "..")
        and all(c.isascii() and (c.isalnum() or c in "._-") for c in name)
    )


@attrs.frozen
class ConfiguredTopology:
    """The topology against the topics that exist: each subtopology's task count when the partition
    counts could be decided, the internal topics still to create, and what keeps it from being ready."""

    epoch: int
    task_counts: Mapping[str, int] | None
    to_create: tuple[TopicInfo, ...] = ()
    problem: Status | None = None

    @property
    def ready(self) -> bool:
        return self.problem is None


class _NotConfigurable(Exception):
    def __init__(self, status: Status) -> None:
        super().__init__(status.detail)
        self.status = status


def configure(topology: Topology, partition_count: Callable[[str], int | None]) -> ConfiguredTopology:
    """Decide the internal topics' partition counts; `partition_count` gives an existing topic's."""
    try:
        missing = sorted({t for s in topology.subtopologies for t in s.source_topics if partition_count(t) is None})
        if missing:
            raise _NotConfigurable(
                Status(StreamsStatus.MISSING_SOURCE_TOPICS, f"Source topics {_summary(missing)} are missing.")
            )
        decided = _decide_partition_counts(topology, partition_count)

        def count(topic: str) -> int:
            existing = partition_count(topic)
            if existing is not None and topic not in decided:
                return existing
            return decided[topic]

        task_counts = {s.subtopology_id: max(count(t) for t in s.all_source_topics()) for s in topology.subtopologies}
        to_create = []
        for name, info in sorted(topology.internal_topics().items()):
            expected = decided[name]
            found = partition_count(name)
            if found is None:
                to_create.append(attrs.evolve(info, partitions=expected))
            elif found != expected:
                raise _NotConfigurable(
                    Status(
                        StreamsStatus.INCORRECTLY_PARTITIONED_TOPICS,
                        f"Existing topic {name} has different number of partitions: expected {expected}, found {found}",
                    )
                )
    except _NotConfigurable as problem:
        return ConfiguredTopology(topology.epoch, None, (), problem.status)
    if to_create:
        names = _summary(t.name for t in to_create)
        status = Status(StreamsStatus.MISSING_INTERNAL_TOPICS, f"Internal topics are missing: {names}")
        return ConfiguredTopology(topology.epoch, task_counts, tuple(to_create), status)
    return ConfiguredTopology(topology.epoch, task_counts)


def _decide_partition_counts(topology: Topology, partition_count: Callable[[str], int | None]) -> dict[str, int]:
    """Every internal topic's partition count (Kafka's RepartitionTopics, CopartitionedTopicsEnforcer,
    ChangelogTopics, in that order)."""
    decided: dict[str, int] = {}
    flexible: set[str] = set()
    for s in topology.subtopologies:
        for info in s.repartition_source_topics:
            if info.partitions > 0:
                decided[info.name] = info.partitions
            else:
                flexible.add(info.name)

    def known(topic: str) -> int | None:
        if topic in decided:
            return decided[topic]
        if topic in flexible:
            return None
        return partition_count(topic)

    pending = set(flexible)
    while pending:
        progress = False
        for topic in sorted(pending):
            candidates = [
                known(source)
                for s in topology.subtopologies
                if topic in s.repartition_sink_topics
                for source in s.all_source_topics()
            ]
            counts = [c for c in candidates if c is not None]
            if counts:
                decided[topic] = max(counts)
                pending.discard(topic)
                progress = True
        if not progress:
            raise _NotConfigurable(
                Status(
                    StreamsStatus.MISSING_SOURCE_TOPICS,
                    "Failed to compute number of partitions for all repartition topics, make sure all user input"
                    " topics are created.",
                )
            )
    for s in topology.subtopologies:
        for group in s.copartition_groups:
            _enforce_copartitioning(group, flexible, decided, partition_count)
    for s in topology.subtopologies:
        tasks = max((known(t) or 0) for t in s.all_source_topics())
        for info in s.state_changelog_topics:
            decided[info.name] = tasks
    return decided


def _enforce_copartitioning(
    group: frozenset[str], flexible: set[str], decided: dict[str, int], partition_count: Callable[[str], int | None]
) -> None:
    fixed = {t: decided[t] if t in decided and t not in flexible else partition_count(t) for t in group - flexible}
    if fixed:
        counts = set(fixed.values())
        if len(counts) > 1 or None in counts:
            described = ", ".join(f"{t}={n}" for t, n in sorted(fixed.items(), key=lambda kv: kv[0]))
            raise _NotConfigurable(
                Status(
                    StreamsStatus.INCORRECTLY_PARTITIONED_TOPICS,
                    f"Following topics do not have the same number of partitions: [{described}]",
                )
            )
        target = counts.pop()
    else:
        target = max(decided[t] for t in group)
    for topic in group & flexible:
        decided[topic] = target  # type: ignore[assignment]


def _summary(topics: Iterable[str]) -> str:
    return ", ".join(sorted(topics))


def task_ids(task_counts: Mapping[str, int]) -> list[tuple[str, int]]:
    return [(sid, p) for sid in sorted(task_counts) for p in range(task_counts[sid])]
