"""ShutdownApplication (KIP-1071), as Kafka 4.2's GroupMetadataManager serves it: one member's heartbeat
(or its leave heartbeat) with `ShutdownApplication` makes every member's following heartbeats carry
the SHUTDOWN_APPLICATION status naming the first member that asked, until the group is empty."""

from __future__ import annotations

import uuid

from trafka.domain.groups.streams import (
    EMPTY,
    StreamsGroupCoordinator,
    StreamsGroupSettings,
    StreamsHeartbeat,
    StreamsStatus,
    Subtopology,
    Topology,
)
from trafka.domain.topics import Topic

G = "app"
STATELESS = Topology(epoch=1, subtopologies=(Subtopology("0", source_topics=("lines",)),))


class Topics:
    def get(self, name: str) -> Topic | None:
        return Topic(name, uuid.uuid5(uuid.NAMESPACE_DNS, name), 2) if name == "lines" else None


def join(coordinator: StreamsGroupCoordinator, member: str, now: int = 0) -> int:
    answer = coordinator.heartbeat(
        StreamsHeartbeat(G, member, 0, rebalance_timeout_ms=30_000, topology=STATELESS, owned=EMPTY, process_id=member),
        now,
    )
    return answer.member_epoch


def shutdown_statuses(answer) -> list[str]:
    return [s.detail for s in answer.statuses if s.code is StreamsStatus.SHUTDOWN_APPLICATION]


MESSAGE = "Streams group member {} encountered a fatal error and requested a shutdown for the entire application."


def test_one_member_asking_stops_every_member_until_the_group_is_empty():
    coordinator = StreamsGroupCoordinator(StreamsGroupSettings(), Topics())
    e1, e2 = join(coordinator, "m1"), join(coordinator, "m2")
    asked = coordinator.heartbeat(StreamsHeartbeat(G, "m1", e1, shutdown_application=True), 1)
    assert shutdown_statuses(asked) == [MESSAGE.format("m1")]
    other = coordinator.heartbeat(StreamsHeartbeat(G, "m2", e2), 2)
    assert shutdown_statuses(other) == [MESSAGE.format("m1")]
    # a second request does not change who is named
    again = coordinator.heartbeat(StreamsHeartbeat(G, "m2", other.member_epoch, shutdown_application=True), 3)
    assert shutdown_statuses(again) == [MESSAGE.format("m1")]
    for member in ("m1", "m2"):
        coordinator.heartbeat(StreamsHeartbeat(G, member, -1), 4)
    assert coordinator.state(G).value == "Empty"
    epoch = join(coordinator, "m3", 5)  # the application starts again: no shutdown pending
    assert shutdown_statuses(coordinator.heartbeat(StreamsHeartbeat(G, "m3", epoch), 6)) == []


def test_a_member_can_ask_as_it_leaves():
    """Kafka's streamsGroupLeave takes ShutdownApplication too: Kafka Streams' fatal-error handler
    closes the member with it set."""
    coordinator = StreamsGroupCoordinator(StreamsGroupSettings(), Topics())
    join(coordinator, "m1")
    e2 = join(coordinator, "m2")
    coordinator.heartbeat(StreamsHeartbeat(G, "m1", -1, shutdown_application=True), 1)
    assert shutdown_statuses(coordinator.heartbeat(StreamsHeartbeat(G, "m2", e2), 2)) == [MESSAGE.format("m1")]


def test_the_last_member_leaving_with_the_request_leaves_nothing_pending():
    coordinator = StreamsGroupCoordinator(StreamsGroupSettings(), Topics())
    join(coordinator, "m1")
    coordinator.heartbeat(StreamsHeartbeat(G, "m1", -1, shutdown_application=True), 1)
    epoch = join(coordinator, "m2", 2)
    assert shutdown_statuses(coordinator.heartbeat(StreamsHeartbeat(G, "m2", epoch), 3)) == []
