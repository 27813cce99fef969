"""The server-side assignors of the modern group protocols: `uniform` (Kafka's default) and `range`.

An assignor maps the group's members (their subscribed topics and their current target assignment)
and the partition counts of the subscribed topics to a new target assignment. Both are pure and
deterministic (members are taken in member id order), so a test can predict their answer.

- `uniform` (Kafka's UniformAssignor): sticky and balanced. Every partition a member had in its
  target and may still have stays with it; the others go, one by one, to the subscribed member with
  the fewest partitions; then partitions move from the most to the least loaded members that can
  take them until no two members that could trade differ by more than one. A member joining or
  leaving therefore moves only the partitions that must move.
- `range` (Kafka's RangeAssignor for the new protocol): per topic, the subscribed members in member
  id order take consecutive ranges, the first `partitions % members` one partition more, so members
  subscribed to co-partitioned topics get the same partition numbers of each.

Share groups (KIP-932) use `simple` (SHARE_ASSIGNORS): Kafka's SimpleAssignor, each partition shared by
ceil(members / partitions) members, each member given an equal share.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

Assignment = Mapping[str, frozenset[int]]  # topic name -> partitions


@attrs.frozen
class AssignmentMember:
    member_id: str
    topics: frozenset[str]
    current: Assignment  # its target assignment before this one (stickiness)


def uniform(
    members: list[AssignmentMember], partition_counts: Mapping[str, int]
) -> dict[str, dict[str, frozenset[int]]]:
    ordered = sorted(members, key=lambda m: m.member_id)
    owned: dict[str, set[tuple[str, int]]] = {m.member_id: set() for m in ordered}
    subscribers: dict[str, list[str]] = {}
    for m in ordered:
        for topic in m.topics:
            if topic in partition_counts:
                subscribers.setdefault(topic, []).append(m.member_id)
    taken: set[tuple[str, int]] = set()
    for m in ordered:  # stickiness: keep what may be kept
        for topic, partitions in m.current.items():
            if topic not in m.topics or topic not in partition_counts:
                continue
            for p in partitions:
                tp = (topic, p)
                if p < partition_counts[topic] and tp not in taken:
                    taken.add(tp)
                    owned[m.member_id].add(tp)
    for topic in sorted(subscribers):
        for p in range(partition_counts[topic]):
            if (topic, p) not in taken:
                target = min(subscribers[topic], key=lambda mid: (len(owned[mid]), mid))
                owned[target].add((topic, p))
    _balance(owned, subscribers, {m.member_id: m.topics for m in ordered})
    return {mid: _by_topic(tps) for mid, tps in owned.items()}


def _balance(
    owned: dict[str, set[tuple[str, int]]], subscribers: Mapping[str, list[str]], topics: Mapping[str, frozenset[str]]
) -> None:
    """Move partitions from the most to the least loaded members until no move helps."""
    if not owned:
        return
    for _ in range(sum(len(v) for v in owned.values()) + 1):
        moved = False
        for giver in sorted(owned, key=lambda mid: (-len(owned[mid]), mid)):
            for tp in sorted(owned[giver], reverse=True):
                candidates = [mid for mid in subscribers.get(tp[0], ()) if len(owned[mid]) + 1 < len(owned[giver])]
                if candidates:
                    taker = min(candidates, key=lambda mid: (len(owned[mid]), mid))
                    owned[giver].discard(tp)
                    owned[taker].add(tp)
                    moved = True
                    break
            if moved:
                break
        if not moved:
            return


def range_(
    members: list[AssignmentMember], partition_counts: Mapping[str, int]
) -> dict[str, dict[str, frozenset[int]]]:
    result: dict[str, dict[str, frozenset[int]]] = {m.member_id: {} for m in members}
    ordered = sorted(members, key=lambda m: m.member_id)
    for topic in sorted({t for m in members for t in m.topics if t in partition_counts}):
        subscribed = [m.member_id for m in ordered if topic in m.topics]
        count = partition_counts[topic]
        base, extra = divmod(count, len(subscribed))
        start = 0
        for i, mid in enumerate(subscribed):
            size = base + (1 if i < extra else 0)
            if size:
                result[mid][topic] = frozenset(range(start, start + size))
            start += size
    return result


def _by_topic(tps: set[tuple[str, int]]) -> dict[str, frozenset[int]]:
    grouped: dict[str, set[int]] = {}
    for topic, p in tps:
        grouped.setdefault(topic, set()).add(p)
    return {topic: frozenset(ps) for topic, ps in grouped.items()}


def simple(
    members: list[AssignmentMember], partition_counts: Mapping[str, int]
) -> dict[str, dict[str, frozenset[int]]]:
    """Share groups' assignor, Kafka 4.2's SimpleAssignor. Each partition goes to
    ceil(members / partitions) members, and members get equal shares of those assignments (one apart
    at most): 2 members on 4 partitions get 2 partitions each, none shared; 3 members on 2 partitions
    share each partition between two of them. When every member subscribes to the same topics, their
    partitions are balanced together (SimpleHomogeneousAssignmentBuilder), otherwise topic by topic
    among the topic's subscribers (SimpleHeterogeneousAssignmentBuilder). Sticky: a member keeps what
    it had while that stays within its share."""
    ordered = sorted(members, key=lambda m: m.member_id)
    current = {m.member_id: {(t, p) for t, ps in m.current.items() for p in ps} for m in ordered}
    owned: dict[str, set[tuple[str, int]]] = {m.member_id: set() for m in ordered}
    subscribed = [t for t in sorted(set().union(*(m.topics for m in ordered))) if t in partition_counts]
    if len({m.topics & set(subscribed) for m in ordered}) == 1:
        shares = [([m.member_id for m in ordered], [(t, p) for t in subscribed for p in range(partition_counts[t])])]
    else:
        shares = [
            ([m.member_id for m in ordered if t in m.topics], [(t, p) for p in range(partition_counts[t])])
            for t in subscribed
        ]
    for member_ids, partitions in shares:
        for mid, tps in _share_out(member_ids, partitions, current).items():
            owned[mid] |= tps
    return {mid: _by_topic(tps) for mid, tps in owned.items()}


def _share_out(
    member_ids: list[str], partitions: list[tuple[str, int]], current: Mapping[str, set[tuple[str, int]]]
) -> dict[str, set[tuple[str, int]]]:
    """One SimpleAssignor build over `partitions` and the members that may have them (in order)."""
    if not member_ids or not partitions:
        return {}
    sharing = -(-len(member_ids) // len(partitions))  # members per partition
    total = sharing * len(partitions)
    # member i's share: ceil(total * (i + 1) / M) - ceil(total * i / M), as Kafka's desiredAssignmentCount
    desired = {
        mid: -(-total * (i + 1) // len(member_ids)) - -(-total * i // len(member_ids))
        for i, mid in enumerate(member_ids)
    }
    targets = set(partitions)
    holders: dict[tuple[str, int], list[str]] = {tp: [] for tp in partitions}
    owned: dict[str, set[tuple[str, int]]] = {}
    for mid in member_ids:  # keep what it had, within its share and the partition's sharing
        kept = owned[mid] = set()
        for tp in sorted(current.get(mid, set()) & targets):
            if len(kept) < desired[mid] and len(holders[tp]) < sharing:
                kept.add(tp)
                holders[tp].append(mid)
    for tp in partitions:  # then every partition short of members, to the least filled that lack it
        while len(holders[tp]) < sharing:
            takers = [mid for mid in member_ids if len(owned[mid]) < desired[mid] and mid not in holders[tp]]
            if not takers:
                break  # as Kafka: tolerate the slight imbalance
            taker = min(takers, key=lambda mid: len(owned[mid]))
            owned[taker].add(tp)
            holders[tp].append(taker)
    return owned


ASSIGNORS = {"uniform": uniform, "range": range_}
SHARE_ASSIGNORS = {"simple": simple}


# Kafka's class names for its assignors, as `group.consumer.assignors` may give them.
_CLASS_NAMES = {
    "org.apache.kafka.coordinator.group.assignor.UniformAssignor": "uniform",
    "org.apache.kafka.coordinator.group.assignor.RangeAssignor": "range",
}


def assignor_names(value: str) -> tuple[str, ...]:
    """`group.consumer.assignors`: names or Kafka's class names, comma-separated; the first is the default."""
    names = tuple(_CLASS_NAMES.get(n.strip(), n.strip()) for n in value.split(",") if n.strip())
    unknown = [n for n in names if n not in ASSIGNORS]
    if unknown or not names:
        raise ValueError(f"group.consumer.assignors: unknown assignor(s) {', '.join(unknown) or '(none)'}")
    return names
