"""Kafka's internal topics as its Metadata shows them (issue 41).

Kafka creates `__consumer_offsets` when a group coordinator is first looked for (FindCoordinator for
a group, or a Metadata request naming it that may auto-create), `__transaction_state` likewise for
a transactional id; from then on Metadata lists them, `is_internal`, with their partitions. trafka
keeps them outside its topic catalog (one partition each, ADR 64); this says which of them a
client has caused to exist, and their ids (the log dir's, on the filesystem store).

`VisibleTopics` is what Kafka's metadata image holds: the catalog's topics and the internal topics
that exist. The KIP-848 coordinator resolves regular expressions and subscriptions against it, as
Kafka's GroupMetadataManager matches every topic of the image, internal ones included (ADR 107).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping

import attrs

from trafka.domain.catalog import TopicCatalog
from trafka.domain.topics import Topic, kafka_random_uuid

OFFSETS = "__consumer_offsets"
TRANSACTIONS = "__transaction_state"
SHARE_STATE = "__share_group_state"
# Kafka's Topic.INTERNAL_TOPICS: what Metadata marks `is_internal`, existing or not
NAMES = (OFFSETS, TRANSACTIONS, SHARE_STATE)


@attrs.define
class InternalTopics:
    ids: dict[str, uuid.UUID] = attrs.field(factory=dict)  # the log dir's ids; others made here
    created: set[str] = attrs.field(factory=set)
    changes: int = 0  # moves when one comes to exist (the KIP-848 coordinator resolves regexes again)

    def __attrs_post_init__(self) -> None:
        self.ids = {name: self.ids.get(name) or kafka_random_uuid(uuid.uuid4) for name in NAMES}

    @classmethod
    def with_ids(cls, ids: Mapping[str, uuid.UUID]) -> InternalTopics:
        return cls(dict(ids))

    @staticmethod
    def is_internal(name: str | None) -> bool:
        return name in NAMES

    def create(self, name: str) -> None:
        """The topic exists from now on (as Kafka creates it on first use)."""
        if name in NAMES and name not in self.created:
            self.created.add(name)
            self.changes += 1

    def get(self, name: str) -> Topic | None:
        """The internal topic named `name` if it exists."""
        return self._topic(name) if name in self.created else None

    def by_id(self, topic_id: uuid.UUID) -> Topic | None:
        return next((t for t in self.existing() if t.topic_id == topic_id), None)

    def existing(self) -> list[Topic]:
        return [self._topic(name) for name in NAMES if name in self.created]

    def _topic(self, name: str) -> Topic:
        return Topic(name, self.ids[name], 1)


class VisibleTopics:
    """The catalog's topics and the internal topics that exist: the KIP-848 coordinator's `TopicLookup`."""

    def __init__(self, catalog: TopicCatalog, internal: InternalTopics) -> None:
        self._catalog = catalog
        self._internal = internal

    def get(self, name: str) -> Topic | None:
        return self._catalog.get(name) or self._internal.get(name)

    def by_id(self, topic_id: uuid.UUID) -> Topic | None:
        return self._catalog.by_id(topic_id) or self._internal.by_id(topic_id)

    @property
    def changes(self) -> int:
        return self._catalog.changes + self._internal.changes

    def topics(self) -> list[Topic]:
        return sorted(self._catalog.topics() + self._internal.existing(), key=lambda t: t.name)
