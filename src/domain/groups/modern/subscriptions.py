"""What a consumer group subscribes to: its members' topic names and what their regular expressions
matched, and the subscribed topics' ids and partition counts (the group's subscription metadata, whose
change starts a new group epoch). Split from the coordinator (issue 40, item 6).

Regex subscriptions are resolved outside, as Kafka resolves them off the request path (ADR 68): this
says which patterns need resolving (`take_regex_work`), the runtime matches them with RE2 in a worker
thread, and `resolved` applies the matches. Until its pattern is resolved a member's regex contributes
no topic; the DESCRIBE filter is applied here, to what matched. A group's topics are cached and
computed again when a subscription or the members change, topics are created or deleted, or every
REGEX_REFRESH_MS.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Protocol

from ...topics import Topic
from ..metadata_hash import MetadataHasher
from .model import ConsumerGroup, ConsumerMember

REGEX_REFRESH_MS = 10_000  # regexes are also resolved again when topics change (`topics_changed`)


class TopicLookup(Protocol):
    def get(self, name: str) -> Topic | None: ...

    def by_id(self, topic_id: uuid.UUID) -> Topic | None: ...

    @property
    def changes(self) -> int:
        """A counter that moves whenever a topic is created, grown or deleted."""
        ...

    def topics(self) -> list[Topic]: ...


class Subscriptions:
    def __init__(
        self, topics: TopicLookup, groups: Callable[[], Iterable[ConsumerGroup]], hasher: MetadataHasher
    ) -> None:
        """`groups`: the coordinator's groups, for the patterns in use; `hasher`: their metadata hashes."""
        self._topics = topics
        self._hasher = hasher
        self._groups = groups
        self._topic_changes = topics.changes
        # group id -> (the topics its members subscribe to, names and resolved regexes; when the
        # regexes are resolved again)
        self._subscribed: dict[str, tuple[frozenset[str], int]] = {}
        self._may_describe: dict[tuple[str, str], Callable[[str], bool]] = {}  # (group, member): its ACLs
        # pattern -> the topic names it matched when last resolved, only for
        # patterns some member subscribes with; and the patterns that need resolving (again).
        self._regex_matches: dict[str, frozenset[str]] = {}
        self._regex_wanted: set[str] = set()

    def changed(self, group_id: str) -> None:
        """A subscription or the members of the group changed: its topics are computed again."""
        self._subscribed.pop(group_id, None)

    def describable(self, group_id: str, member: ConsumerMember, may_describe: Callable[[str], bool]) -> None:
        """What the member's principal may DESCRIBE (its regex matches only those), from its first heartbeat."""
        if (group_id, member.member_id) in self._may_describe:
            return
        self._may_describe[(group_id, member.member_id)] = may_describe
        if member.subscribed_topic_regex is not None:
            self.changed(group_id)

    def member_gone(self, group_id: str, member_id: str) -> None:
        self._may_describe.pop((group_id, member_id), None)

    def group_gone(self, group_id: str) -> None:
        self.changed(group_id)
        for key in [k for k in self._may_describe if k[0] == group_id]:
            del self._may_describe[key]

    def member_topics(self, group_id: str, member: ConsumerMember) -> set[str]:
        """Its topic names, and the topics its regex matches that its principal may DESCRIBE (as Kafka)."""
        topics = set(member.subscribed_topic_names)
        pattern = member.subscribed_topic_regex
        if pattern is not None:
            matched = self._regex_matches.get(pattern)
            if matched is None:
                self._regex_wanted.add(pattern)  # no topic until resolved, as Kafka
                return topics
            may_describe = self._may_describe.get((group_id, member.member_id))
            topics |= {t for t in matched if may_describe is None or may_describe(t)}
        return topics

    def refresh_metadata(self, group: ConsumerGroup, now: int | None) -> bool:
        """The subscribed topics' ids and partition counts, and their hash (KIP-1101); True when they
        changed (a new group epoch)."""
        metadata: dict[str, tuple[str, int]] = {}
        for name in self._group_topics(group, now):
            topic = self._topics.get(name)
            if topic is not None:
                metadata[name] = (str(topic.topic_id), topic.partition_count)
        if metadata == group.subscription_metadata:
            return False
        group.subscription_metadata = metadata
        group.metadata_hash = self._hasher.group_hash(metadata)
        return True

    def _group_topics(self, group: ConsumerGroup, now: int | None) -> frozenset[str]:
        if self._topics.changes != self._topic_changes:
            self._topic_changes = self._topics.changes
            self.topics_changed()
        cached = self._subscribed.get(group.group_id)
        if cached is not None and (now is None or now < cached[1]):
            return cached[0]
        if cached is not None:
            self._regex_wanted |= _patterns_in_use((group,))  # resolved again every REGEX_REFRESH_MS
        names = frozenset(t for m in group.members.values() for t in self.member_topics(group.group_id, m))
        self._subscribed[group.group_id] = (names, (now or 0) + REGEX_REFRESH_MS)
        return names

    def topics_changed(self) -> None:
        """Topics were created or deleted: every regular expression in use is resolved again."""
        self._subscribed.clear()
        self._regex_wanted |= _patterns_in_use(self._groups())

    def take_regex_work(self) -> tuple[frozenset[str], tuple[str, ...]] | None:
        """The patterns to resolve and the topic names to match them against: every topic the lookup
        knows, internal ones included, as Kafka's refreshRegularExpressions matches every topic of the
        metadata image; None when there is nothing to do. Each pattern is handed out once per request."""
        if not self._regex_wanted:
            return None
        patterns, self._regex_wanted = frozenset(self._regex_wanted), set()
        return patterns, tuple(t.name for t in self._topics.topics())

    def resolved(self, matches: Mapping[str, frozenset[str]], now: int) -> list[ConsumerGroup]:
        """Apply resolved patterns (Kafka's handleRegularExpressionsResult): the groups whose topics they
        changed, for a new epoch."""
        in_use = _patterns_in_use(self._groups())
        self._regex_matches = {p: m for p, m in {**self._regex_matches, **matches}.items() if p in in_use}
        changed = []
        for group in self._groups():
            if not _patterns_in_use((group,)) & matches.keys():
                continue
            self.changed(group.group_id)
            if self.refresh_metadata(group, now):
                changed.append(group)
        return changed


def _patterns_in_use(groups: Iterable[ConsumerGroup]) -> set[str]:
    return {m.subscribed_topic_regex for g in groups for m in g.members.values() if m.subscribed_topic_regex}
