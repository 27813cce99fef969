"""Where a streams group's members serve from (KIP-1071's `PartitionsByUserEndpoint`): for each member
with a user endpoint, the source topic partitions of its active and standby tasks, so Kafka Streams'
interactive queries find the instance holding a key."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .model import EndpointPartitions, StreamsGroup


def partitions_by_endpoint(group: StreamsGroup) -> tuple[EndpointPartitions, ...] | None:
    if group.topology is None or not any(m.user_endpoint for m in group.members.values()):
        return None
    sources = {s.subtopology_id: s.all_source_topics() for s in group.topology.subtopologies}
    answer = []
    for m in sorted(group.members.values(), key=lambda m: m.member_id):
        if m.user_endpoint is None:
            continue
        answer.append(
            EndpointPartitions(
                m.user_endpoint,
                _topic_partitions(m.assigned.active, sources),
                _topic_partitions(m.assigned.standby, sources),
            )
        )
    return tuple(answer)


def _topic_partitions(
    tasks: Mapping[str, frozenset[int]], sources: Mapping[str, Iterable[str]]
) -> dict[str, tuple[int, ...]]:
    by_topic: dict[str, set[int]] = {}
    for sid, ps in tasks.items():
        for topic in sources.get(sid, ()):
            by_topic.setdefault(topic, set()).update(ps)
    return {t: tuple(sorted(ps)) for t, ps in sorted(by_topic.items())}
