"""Share-group membership (ShareGroupHeartbeat), share sessions and the group's share.* configs, with
the in-memory log adapter underneath the share-partitions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.domain.groups.consumer_harness import FakeTopics
from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.groups.modern import ModernGroupState
from trafka.domain.groups.share import (
    AckType,
    ShareGroupCoordinator,
    ShareGroups,
    ShareGroupSettings,
    ShareHeartbeat,
    ShareSettings,
)
from trafka.domain.groups.share.configs import duration_ms


def coordinator(other=frozenset(), **settings) -> ShareGroupCoordinator:
    return ShareGroupCoordinator(ShareGroupSettings(**settings), FakeTopics(t=3, u=1), lambda g: g in other)


def join(c: ShareGroupCoordinator, member: str, topics=("t",), now: int = 0, group: str = "g"):
    return c.heartbeat(ShareHeartbeat(group, member, 0, subscribed_topic_names=topics), now)


def test_the_simple_assignor_spreads_partitions_over_members_as_kafkas():
    """Kafka 4.2's SimpleAssignor: each partition to ceil(members / partitions) members, equal shares;
    sticky; topics balanced apart when members subscribe to different ones."""
    c = coordinator()
    a = join(c, "a")
    assert (a.error, a.member_epoch, a.assignment) == (ErrorCode.NONE, 1, {"t": frozenset({0, 1, 2})})
    b = join(c, "b", ("t", "u"))
    assert b.member_epoch == 2
    again = c.heartbeat(ShareHeartbeat("g", "a", 1), 10)
    assert again.member_epoch == 2
    target = c.groups["g"].target
    assert target["b"]["u"] == frozenset({0})  # b alone takes u
    assert target["a"]["t"] | target["b"]["t"] == frozenset({0, 1, 2}) and not target["a"]["t"] & target["b"]["t"]
    assert sorted(len(target[m]["t"]) for m in "ab") == [1, 2]
    assert set(target["a"]["t"]) <= {0, 1, 2} and 0 in target["a"]["t"]  # a keeps what it can of its own
    assert c.heartbeat(ShareHeartbeat("g", "a", 2), 20).assignment is None  # unchanged: not repeated
    assert c.state("g") is ModernGroupState.STABLE


@pytest.mark.parametrize(
    ("members", "partitions", "shares", "sharing"),
    [
        (2, 4, [2, 2], 1),  # librdkafka's 0172: two members on four partitions, none shared
        (4, 4, [1, 1, 1, 1], 1),
        (3, 2, [2, 1, 1], 2),  # more members than partitions: each partition shared by two
        (5, 2, [2, 1, 1, 1, 1], 3),
        (1, 3, [3], 1),
    ],
)
def test_simple_assignor_shares(members, partitions, shares, sharing):
    from trafka.domain.groups.modern.assignors import AssignmentMember, simple

    group = [AssignmentMember(f"m{i}", frozenset({"t"}), {}) for i in range(members)]
    target = simple(group, {"t": partitions})
    assert [len(target[f"m{i}"].get("t", ())) for i in range(members)] == shares
    for p in range(partitions):
        assert sum(p in target[f"m{i}"].get("t", ()) for i in range(members)) == sharing


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (ShareHeartbeat("", "a", 0, subscribed_topic_names=("t",)), "GroupId can't be empty."),
        (ShareHeartbeat("g", "", 0, subscribed_topic_names=("t",)), "MemberId can't be empty."),
        (ShareHeartbeat("g", "a", 0), "SubscribedTopicNames must be set in first request."),
        (ShareHeartbeat("g", "a", -2), "MemberEpoch is invalid."),
        (ShareHeartbeat("g", "a", 0, rack_id="", subscribed_topic_names=("t",)), "RackId can't be empty."),
    ],
)
def test_malformed_heartbeats_are_invalid_requests(request_, message):
    answer = coordinator().heartbeat(request_, 0)
    assert (answer.error, answer.message) == (ErrorCode.INVALID_REQUEST, message)


def test_unknown_members_wrong_epochs_full_groups_and_other_groups_ids():
    c = coordinator(other={"classic"}, max_size=1)
    assert c.heartbeat(ShareHeartbeat("g", "x", 3), 0).error is ErrorCode.UNKNOWN_MEMBER_ID
    join(c, "a")
    assert c.heartbeat(ShareHeartbeat("g", "a", 7), 0).error is ErrorCode.FENCED_MEMBER_EPOCH
    assert join(c, "b").error is ErrorCode.GROUP_MAX_SIZE_REACHED
    assert join(c, "a", group="classic").error is ErrorCode.GROUP_ID_NOT_FOUND


def test_leave_and_session_expiry_report_departures():
    c = coordinator(session_timeout_ms=100)
    join(c, "a")
    join(c, "b")
    left = c.heartbeat(ShareHeartbeat("g", "a", -1), 0)
    assert (left.error, left.member_epoch) == (ErrorCode.NONE, -1)
    assert c.next_deadline() == 100
    assert c.tick(100) == [("g", "b")]
    assert c.departed == [("g", "a", False), ("g", "b", True)]
    assert c.state("g") is ModernGroupState.EMPTY
    assert c.delete("g") is ErrorCode.NONE
    assert c.state("g") is ModernGroupState.DEAD


def test_share_session_epochs():
    groups = ShareGroups(coordinator(), ShareSettings(), replicas=None)  # type: ignore[arg-type]
    assert groups.open_session("g", "a", 1)[0] is ErrorCode.SHARE_SESSION_NOT_FOUND
    error, session = groups.open_session("g", "a", 0)
    assert (error, session.epoch) == (ErrorCode.NONE, 1)
    assert groups.open_session("g", "a", 2)[0] is ErrorCode.INVALID_SHARE_SESSION_EPOCH
    assert groups.open_session("g", "a", 1)[1].epoch == 2
    assert groups.open_session("g", "a", -1)[0] is ErrorCode.NONE
    groups.close_session("g", "a")
    assert groups.open_session("g", "a", -1)[0] is ErrorCode.SHARE_SESSION_NOT_FOUND


def test_group_configs_validate_and_describe():
    groups = ShareGroups(coordinator(), ShareSettings(), replicas=None)  # type: ignore[arg-type]
    groups.alter_configs(
        "g", {"share.auto.offset.reset": (0, "earliest"), "share.session.timeout.ms": (0, "50000")}, False
    )
    assert groups.config("g", "share.auto.offset.reset") == "earliest"
    assert groups.coordinator.session_timeout_ms("g") == 50000
    described = {name: (value, default) for name, value, default in groups.describe_configs("g")}
    assert described["share.auto.offset.reset"] == ("earliest", False)
    assert described["share.isolation.level"] == ("read_uncommitted", True)
    for bad in [
        ("share.auto.offset.reset", "soon"),
        ("share.isolation.level", "x"),
        ("nope", "1"),
        ("share.session.timeout.ms", "0"),
        ("share.session.timeout.ms", "44999"),  # Kafka's GroupConfig: group.share.min/max.* (issue 42 #11)
        ("share.session.timeout.ms", "60001"),
        ("share.heartbeat.interval.ms", "1"),
        ("share.heartbeat.interval.ms", "15001"),
    ]:
        with pytest.raises(KafkaError) as raised:
            groups.alter_configs("g", {bad[0]: (0, bad[1])}, False)
        assert raised.value.code is ErrorCode.INVALID_CONFIG
    groups.alter_configs("g", {"share.auto.offset.reset": (1, None)}, False)
    assert groups.config("g", "share.auto.offset.reset") == "latest"
    groups.alter_configs("g", {"share.auto.offset.reset": (0, "by_duration:PT1H")}, True)
    assert groups.config("g", "share.auto.offset.reset") == "latest"  # validate_only


def test_iso_durations():
    assert duration_ms("PT1H") == 3_600_000
    assert duration_ms("P1DT0.5S") == 86_400_500
    assert duration_ms("PT") is None
    assert duration_ms("1H") is None


def test_ack_types_are_kafkas():
    assert [int(t) for t in AckType] == [0, 1, 2, 3, 4]


def test_share_sessions_are_bounded():
    groups = ShareGroups(coordinator(), ShareSettings(), replicas=None, max_sessions=2)  # type: ignore[arg-type]
    assert groups.open_session("g", "a", 0)[0] is ErrorCode.NONE
    assert groups.open_session("g", "b", 0)[0] is ErrorCode.NONE
    assert groups.open_session("g", "c", 0)[0] is ErrorCode.SHARE_SESSION_LIMIT_REACHED
    assert groups.open_session("g", "a", 0)[0] is ErrorCode.NONE  # reopening one's own session
    groups.close_session("g", "b")
    assert groups.open_session("g", "c", 0)[0] is ErrorCode.NONE


@settings(max_examples=200, deadline=None)
@given(
    members=st.integers(1, 8),
    partitions=st.integers(1, 8),
    previous=st.lists(st.sets(st.integers(0, 9), max_size=6), max_size=8),
)
def test_simple_assignor_balances_whatever_the_previous_assignment(members, partitions, previous):
    """Every partition has a member and at most ceil(members / partitions), member shares are one
    apart at most; from no previous assignment every partition has exactly that many. As Kafka's
    builder, a previous assignment can leave a partition short when every member with room already
    holds it ("a slight imbalance" Kafka tolerates)."""
    from trafka.domain.groups.modern.assignors import AssignmentMember, simple

    group = [
        AssignmentMember(f"m{i}", frozenset({"t"}), {"t": frozenset(previous[i])} if i < len(previous) else {})
        for i in range(members)
    ]
    target = simple(group, {"t": partitions})
    sharing = -(-members // partitions)
    counts = [len(target[f"m{i}"].get("t", ())) for i in range(members)]
    assert max(counts) - min(counts) <= 1
    holders = [sum(p in target[f"m{i}"].get("t", ()) for i in range(members)) for p in range(partitions)]
    assert all(1 <= h <= sharing for h in holders)
    if not previous:
        assert holders == [sharing] * partitions
