"""A streams group's GROUP configs (`streams.*`, Kafka 4.2's GroupConfig) as the coordinator applies them:
bounds checked against the broker's `group.streams.*` with Kafka's messages, the per-group session
timeout, heartbeat interval and standby replicas, a changed standby count as a new assignment, and the
initial rebalance delay; and Kafka 4.4's task offsets and topology descriptions in the coordinator."""

from __future__ import annotations

import pytest

from tests.unit.domain.groups.test_streams_group_state_machine import WORD_COUNT, Topics
from trafka.domain.configs import ConfigSource
from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.groups.streams import (
    EMPTY,
    StreamsGroupCoordinator,
    StreamsGroupSettings,
    StreamsHeartbeat,
    StreamsStatus,
)
from trafka.domain.groups.streams.description import (
    DescribedSubtopology,
    DescriptionStatus,
    Node,
    NodeType,
    TopologyDescription,
)

SET, DELETE = 0, 1


def coordinator(**settings) -> StreamsGroupCoordinator:
    topics = Topics()
    topics.counts.update({"app-counts-repartition": 3, "app-counts-changelog": 3})
    return StreamsGroupCoordinator(StreamsGroupSettings(**settings), topics)


def join(member: str = "m1", process: str = "p1", **fields) -> StreamsHeartbeat:
    return StreamsHeartbeat(
        "app", member, 0, rebalance_timeout_ms=30_000, topology=WORD_COUNT, owned=EMPTY, process_id=process, **fields
    )


def beat(member: str, epoch: int, owned=EMPTY, **fields) -> StreamsHeartbeat:
    return StreamsHeartbeat("app", member, epoch, owned=owned, **fields)


def refused(c: StreamsGroupCoordinator, changes: dict) -> str | None:
    with pytest.raises(KafkaError) as raised:
        c.alter_group_configs("app", changes, validate_only=False)
    assert raised.value.code == ErrorCode.INVALID_CONFIG
    return raised.value.message


def test_the_bounds_are_the_brokers_with_kafkas_messages():
    c = coordinator()
    assert refused(c, {"streams.session.timeout.ms": (SET, "30000")}) == (
        "streams.session.timeout.ms must be greater than or equal to group.streams.min.session.timeout.ms"
    )
    assert refused(c, {"streams.session.timeout.ms": (SET, "70000")}) == (
        "streams.session.timeout.ms must be less than or equal to group.streams.max.session.timeout.ms"
    )
    assert refused(c, {"streams.heartbeat.interval.ms": (SET, "4000")}) == (
        "streams.heartbeat.interval.ms must be greater than or equal to group.streams.min.heartbeat.interval.ms"
    )
    assert refused(c, {"streams.num.standby.replicas": (SET, "3")}) == (
        "streams.num.standby.replicas must be less than or equal to group.streams.max.standby.replicas"
    )
    assert "Value must be at least 0" in (refused(c, {"streams.initial.rebalance.delay.ms": (SET, "-1")}) or "")
    assert "Not a number of type INT" in (refused(c, {"streams.num.standby.replicas": (SET, "two")}) or "")
    assert refused(c, {"streams.warp.factor": (SET, "9")}) == "Unknown group config name: streams.warp.factor"
    assert c.configs.overrides == {}  # nothing refused was kept


def test_session_timeout_must_exceed_the_heartbeat_interval():
    c = coordinator(max_heartbeat_interval_ms=60_000)
    assert refused(c, {"streams.heartbeat.interval.ms": (SET, "45000")}) == (
        "streams.session.timeout.ms must be greater than streams.heartbeat.interval.ms"
    )


def test_a_groups_overrides_are_described_and_applied_to_its_members():
    c = coordinator()
    c.alter_group_configs(
        "app", {"streams.session.timeout.ms": (SET, "50000"), "streams.heartbeat.interval.ms": (SET, "6000")}, False
    )
    entries = {e.name: e for e in c.describe_group_configs("app", None)}
    assert sorted(entries) == [
        "streams.heartbeat.interval.ms",
        "streams.initial.rebalance.delay.ms",
        "streams.num.standby.replicas",
        "streams.session.timeout.ms",
    ]
    assert (entries["streams.session.timeout.ms"].value, entries["streams.session.timeout.ms"].source) == (
        "50000",
        ConfigSource.GROUP_CONFIG,
    )
    assert entries["streams.num.standby.replicas"].source == ConfigSource.DEFAULT_CONFIG
    answer = c.heartbeat(join(), now=1000)
    assert answer.heartbeat_interval_ms == 6000
    assert c.groups["app"].members["m1"].session_deadline_ms == 51_000
    other = c.heartbeat(
        StreamsHeartbeat("other", "x", 0, rebalance_timeout_ms=1, topology=WORD_COUNT, owned=EMPTY, process_id="p"), 0
    )
    assert other.heartbeat_interval_ms == 5000  # another group keeps the broker's
    c.alter_group_configs("app", {"streams.heartbeat.interval.ms": (DELETE, None)}, False)
    assert c.heartbeat(beat("m1", answer.member_epoch), now=2000).heartbeat_interval_ms == 5000


def test_a_new_standby_count_is_a_new_assignment_with_standbys():
    c = coordinator()
    first = c.heartbeat(join("m1", "p1"), 0)
    second = c.heartbeat(join("m2", "p2"), 0)
    c.heartbeat(beat("m1", first.member_epoch), 0)
    group = c.groups["app"]
    assert not any(t.standby for t in group.target.values())
    epoch = group.group_epoch
    c.alter_group_configs("app", {"streams.num.standby.replicas": (SET, "1")}, False)
    c.heartbeat(beat("m2", second.member_epoch), 0)
    assert group.group_epoch == epoch + 1  # Kafka compares LastAssignmentConfigs on every heartbeat
    assert group.last_assignment_configs == (("num.standby.replicas", "1"),)
    standbys = sum(len(ps) for t in group.target.values() for ps in t.standby.values())
    assert standbys == 6  # every task has one standby, on the other process


def test_the_initial_rebalance_delay_assigns_nothing_until_it_ends():
    c = coordinator(initial_rebalance_delay_ms=3000)
    first = c.heartbeat(join("m1", "p1"), 0)
    group = c.groups["app"]
    assert (first.error, first.member_epoch, first.assignment) == (ErrorCode.NONE, 1, EMPTY)
    assert [s.code for s in first.statuses] == [StreamsStatus.ASSIGNMENT_DELAYED]
    assert (group.group_epoch, group.assignment_epoch) == (2, 0)  # Kafka 4.2: a new group starts at 2
    assert c.next_deadline() == 3000
    second = c.heartbeat(join("m2", "p2"), 1000)
    assert (second.member_epoch, second.assignment) == (1, EMPTY)
    assert c.next_deadline() == 3000  # scheduled once, when the group was empty
    c.tick(2999)
    assert c.heartbeat(beat("m1", 1), 2999).assignment is None  # still nothing
    c.tick(3000)
    assert group.initial_delay_deadline_ms is None and group.assignment_epoch == group.group_epoch == 3
    one = c.heartbeat(beat("m1", 1), 3000)
    two = c.heartbeat(beat("m2", 1), 3000)
    assert one.statuses == () and (one.member_epoch, two.member_epoch) == (3, 3)
    tasks = [sum(len(ps) for ps in a.assignment.active.values()) for a in (one, two) if a.assignment is not None]
    assert tasks == [3, 3]  # spread over both: neither got everything first


def test_the_delay_starts_again_whenever_the_group_was_empty():
    c = coordinator(initial_rebalance_delay_ms=3000)
    first = c.heartbeat(join(), 0)
    c.tick(3000)
    c.heartbeat(StreamsHeartbeat("app", "m1", -1), 3000)  # leaves: the group is empty
    again = c.heartbeat(join("m9", "p9"), 5000)
    assert first.error == again.error == ErrorCode.NONE
    assert [s.code for s in again.statuses] == [StreamsStatus.ASSIGNMENT_DELAYED] and c.next_deadline() == 8000


def test_a_groups_delay_override_applies_and_zero_turns_it_off():
    c = coordinator(initial_rebalance_delay_ms=3000)
    c.alter_group_configs("app", {"streams.initial.rebalance.delay.ms": (SET, "0")}, False)
    first = c.heartbeat(join(), 0)
    assert first.statuses == () and first.assignment is not None
    assert sum(len(ps) for ps in first.assignment.active.values()) == 6  # at once


def test_task_offsets_are_the_last_reported():
    c = coordinator()
    first = c.heartbeat(join(task_offsets={("0", 0): 5}, task_end_offsets={("0", 0): 9}), 0)
    member = c.groups["app"].members["m1"]
    assert (member.task_offsets, member.task_end_offsets) == ({("0", 0): 5}, {("0", 0): 9})
    c.heartbeat(beat("m1", first.member_epoch), 0)  # null: unchanged
    assert member.task_offsets == {("0", 0): 5}
    c.heartbeat(beat("m1", first.member_epoch, task_offsets={("0", 0): 7, ("1", 2): 1}), 0)
    assert member.task_offsets == {("0", 0): 7, ("1", 2): 1} and member.task_end_offsets == {("0", 0): 9}


DESCRIPTION = TopologyDescription(
    (
        DescribedSubtopology(
            "0",
            (
                Node(
                    "KSTREAM-SOURCE-0000000000",
                    NodeType.SOURCE,
                    source_topics=("lines",),
                    successors=("KSTREAM-SINK-1",),
                ),
                Node("KSTREAM-SINK-1", NodeType.SINK, sink_topic="app-counts-repartition"),
            ),
        ),
    )
)


def test_a_description_is_asked_for_kept_and_served_for_its_epoch():
    c = coordinator()
    c.describes_topologies = True
    first = c.heartbeat(join(asks_description=True), 0)
    assert first.topology_description_required
    assert c.topology_description("app") == (DescriptionStatus.NOT_STORED, None)
    c.update_topology_description("app", "m1", 1, lambda: DESCRIPTION)
    assert not c.heartbeat(beat("m1", first.member_epoch, asks_description=True), 0).topology_description_required
    assert c.topology_description("app") == (DescriptionStatus.AVAILABLE, DESCRIPTION)
    with pytest.raises(KafkaError) as raised:  # of another epoch than the group's
        c.update_topology_description("app", "m1", 0, lambda: DESCRIPTION)
    assert (raised.value.code, raised.value.message) == (
        ErrorCode.INVALID_REQUEST,
        "Topology epoch 0 does not match the group's current topology epoch 1.",
    )


def test_a_push_is_asked_for_once_per_back_off():
    c = coordinator()
    c.describes_topologies = True
    first = c.heartbeat(join(asks_description=True), 0)
    second = c.heartbeat(join("m2", "p2", asks_description=True), 1000)
    assert first.topology_description_required and not second.topology_description_required  # one member asked
    e1, e2 = first.member_epoch, second.member_epoch
    assert not c.heartbeat(beat("m1", e1, asks_description=True), 29_999).topology_description_required
    assert c.heartbeat(beat("m2", e2, asks_description=True), 30_000).topology_description_required
    assert not c.heartbeat(beat("m1", e1, asks_description=True), 89_999).topology_description_required
    assert c.heartbeat(beat("m1", e1, asks_description=True), 90_000).topology_description_required  # 60 s


def test_a_v0_member_is_never_asked_and_does_not_hold_the_back_off():
    c = coordinator()
    c.describes_topologies = True
    first = c.heartbeat(join(), 0)  # v0: cannot be asked
    assert not first.topology_description_required
    assert c.heartbeat(join("m2", "p2", asks_description=True), 0).topology_description_required


def test_without_a_plugin_no_description_is_asked_for():
    c = coordinator()
    assert not c.heartbeat(join(), 0).topology_description_required


def test_a_push_for_an_unknown_group_or_member_is_refused():
    c = coordinator()
    c.describes_topologies = True
    with pytest.raises(KafkaError) as raised:
        c.update_topology_description("app", "m1", 1, lambda: DESCRIPTION)
    assert (raised.value.code, raised.value.message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group app not found.")
    c.heartbeat(join(), 0)
    with pytest.raises(KafkaError) as raised:
        c.update_topology_description("app", "ghost", 1, lambda: DESCRIPTION)
    assert raised.value.code == ErrorCode.UNKNOWN_MEMBER_ID
