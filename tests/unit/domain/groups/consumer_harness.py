"""A consumer-group coordinator with fake topics and a client model that revokes as it is told."""

from __future__ import annotations

import itertools
import re
import uuid

import attrs

from trafka.adapters.kafka.wire.consumer_protocol import KafkaPythonConsumerProtocol
from trafka.domain.errors import ErrorCode
from trafka.domain.groups import GroupCoordinator, GroupSettings
from trafka.domain.groups.metadata_hash import MetadataHasher
from trafka.domain.groups.modern import ConsumerGroupCoordinator, ConsumerGroupSettings, ConsumerHeartbeat
from trafka.domain.topics import Topic

G = "g"


class FakeTopics:
    def __init__(self, **counts: int) -> None:
        self._topics = {name: Topic(name, uuid.uuid4(), n) for name, n in counts.items()}
        self.changes = 0

    def get(self, name: str) -> Topic | None:
        return self._topics.get(name)

    def by_id(self, topic_id: uuid.UUID) -> Topic | None:
        return next((t for t in self._topics.values() if t.topic_id == topic_id), None)

    def topics(self) -> list[Topic]:
        return list(self._topics.values())

    def create(self, name: str, count: int) -> None:
        self._topics[name] = Topic(name, uuid.uuid4(), count)
        self.changes += 1

    def grow(self, name: str, count: int) -> None:
        self._topics[name] = attrs.evolve(self._topics[name], partition_count=count)
        self.changes += 1

    def delete(self, name: str) -> None:
        del self._topics[name]
        self.changes += 1


@attrs.define
class Client:
    """What a KIP-848 consumer keeps: its id, epoch and the partitions it owns."""

    member_id: str
    epoch: int = 0
    owned: dict[str, frozenset[int]] = attrs.field(factory=dict)
    assigned: dict[str, frozenset[int]] = attrs.field(factory=dict)  # what the coordinator said last
    topics: tuple[str, ...] = ("t",)
    instance_id: str | None = None


class Harness:
    def __init__(
        self,
        settings: ConsumerGroupSettings | None = None,
        fake_topics: FakeTopics | None = None,
        hasher: MetadataHasher | None = None,
        **topics: int,
    ) -> None:
        self.topics = fake_topics or FakeTopics(**(topics or {"t": 6}))
        self.classic = GroupCoordinator(GroupSettings(), lambda client: f"{client}-classic")
        ids = itertools.count()
        self.coordinator = ConsumerGroupCoordinator(
            settings or ConsumerGroupSettings(),
            self.topics,
            self.classic,
            lambda: f"broker-{next(ids)}",
            KafkaPythonConsumerProtocol(),
            hasher,
        )
        self.now = 0

    def heartbeat(self, client: Client, full: bool = False, **changes):
        joining = client.epoch == 0
        request = ConsumerHeartbeat(
            group_id=G,
            member_id=client.member_id,
            member_epoch=client.epoch,
            instance_id=client.instance_id,
            rebalance_timeout_ms=60_000 if joining or full else -1,
            subscribed_topic_names=client.topics if joining or full else None,
            owned={} if joining else dict(client.owned),
            **changes,
        )
        answer = self.coordinator.heartbeat(request, self.now)
        if answer.error is ErrorCode.NONE:
            if answer.member_id:
                client.member_id = answer.member_id
            client.epoch = answer.member_epoch
            if answer.assignment is not None:
                client.assigned = dict(answer.assignment)
            client.owned = dict(client.assigned)  # the client revokes and takes at once
        elif answer.error in (ErrorCode.FENCED_MEMBER_EPOCH, ErrorCode.UNKNOWN_MEMBER_ID):
            client.epoch, client.owned, client.assigned = 0, {}, {}
        return answer

    def resolve_regexes(self) -> None:
        """What the runtime does off the loop with RE2 (ADR 68); the standard library's `re` is enough here."""
        work = self.coordinator.take_regex_work()
        if work is not None:
            patterns, names = work
            matches = {p: frozenset(n for n in names if re.fullmatch(p, n)) for p in patterns}
            self.coordinator.regexes_resolved(matches, self.now)

    def settle(self, clients: list[Client], rounds: int = 6) -> None:
        for _ in range(rounds):
            for c in clients:
                self.heartbeat(c)

    @property
    def group(self):
        return self.coordinator.groups[G]
