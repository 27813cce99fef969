"""The KIP-848 consumer group coordinator, call by call, as Kafka's GroupMetadataManager answers."""

from __future__ import annotations

import pytest

from tests.unit.domain.groups.consumer_harness import Client, G, Harness
from trafka.domain.errors import ErrorCode
from trafka.domain.groups import JoinRequest, Protocol
from trafka.domain.groups.modern import ConsumerGroupSettings, ConsumerHeartbeat, MemberState, ModernGroupState
from trafka.domain.groups.modern.assignors import AssignmentMember, range_, uniform
from trafka.domain.groups.modern.consumer import REGEX_REFRESH_MS


def owned_by(clients):
    return {c.member_id: sorted(p for ps in c.owned.values() for p in ps) for c in clients}


def test_first_member_gets_every_partition_and_epoch_one():
    h = Harness()
    a = Client("a")
    answer = h.heartbeat(a)
    assert answer.error is ErrorCode.NONE
    assert (answer.member_id, answer.member_epoch, answer.heartbeat_interval_ms) == ("a", 1, 5000)
    assert answer.assignment == {"t": frozenset(range(6))}
    assert h.group.state is ModernGroupState.STABLE
    assert (h.group.group_epoch, h.group.assignment_epoch) == (1, 1)


def test_second_member_gets_partitions_only_after_the_first_revoked_them():
    h = Harness()
    a, b = Client("a"), Client("b")
    h.heartbeat(a)
    answer = h.heartbeat(b)
    assert answer.member_epoch == 2 and answer.assignment == {}  # what it should get is still a's
    assert h.group.members["b"].state is MemberState.UNRELEASED_PARTITIONS
    answer = h.heartbeat(a)  # a is told to give up three partitions, at its old epoch
    assert answer.member_epoch == 1 and len(answer.assignment["t"]) == 3
    assert h.group.members["a"].state is MemberState.UNREVOKED_PARTITIONS
    assert h.group.state is ModernGroupState.RECONCILING
    answer = h.heartbeat(a)  # it reports it revoked them: next epoch
    assert answer.member_epoch == 2
    answer = h.heartbeat(b)
    assert len(answer.assignment["t"]) == 3
    assert set(a.owned["t"]).isdisjoint(b.owned["t"])
    assert h.group.state is ModernGroupState.STABLE


def test_three_members_on_six_partitions_are_balanced_and_a_leave_moves_only_the_leavers():
    h = Harness()
    clients = [Client(m) for m in "abc"]
    h.settle(clients)
    assert sorted(len(v) for v in owned_by(clients).values()) == [2, 2, 2]
    before = owned_by(clients)
    leaving = clients.pop()
    answer = h.coordinator.heartbeat(ConsumerHeartbeat(G, leaving.member_id, -1), h.now)
    assert (answer.error, answer.member_epoch) == (ErrorCode.NONE, -1)
    h.settle(clients)
    after = owned_by(clients)
    for c in clients:
        assert set(before[c.member_id]) <= set(after[c.member_id])  # sticky
    assert sorted(p for v in after.values() for p in v) == list(range(6))


def test_broker_makes_the_member_id_at_v0():
    h = Harness()
    answer = h.coordinator.heartbeat(
        ConsumerHeartbeat(
            G, "", 0, rebalance_timeout_ms=1000, subscribed_topic_names=("t",), owned={}, member_id_from_client=False
        ),
        0,
    )
    assert answer.member_id == "broker-0"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"group_id": ""}, "GroupId can't be empty."),
        ({"member_id": ""}, "MemberId can't be empty."),
        ({"rebalance_timeout_ms": -1}, "RebalanceTimeoutMs must be provided in first request."),
        ({"owned": None}, "TopicPartitions must be empty when (re-)joining."),
        ({"owned": {"t": frozenset({0})}}, "TopicPartitions must be empty when (re-)joining."),
        ({"subscribed_topic_names": None}, "Either SubscribedTopicNames or SubscribedTopicRegex"),
        ({"member_epoch": -3}, "MemberEpoch is invalid."),
        ({"instance_id": ""}, "InstanceId can't be empty."),
        ({"rack_id": ""}, "RackId can't be empty."),
        ({"member_epoch": -2}, "InstanceId can't be null."),
    ],
)
def test_bad_heartbeats_are_invalid_requests(changes, message):
    h = Harness()
    fields = {
        "group_id": G,
        "member_id": "a",
        "member_epoch": 0,
        "rebalance_timeout_ms": 1000,
        "subscribed_topic_names": ("t",),
        "owned": {},
    }
    fields.update(changes)
    answer = h.coordinator.heartbeat(ConsumerHeartbeat(**fields), 0)
    assert answer.error is ErrorCode.INVALID_REQUEST
    assert answer.message.startswith(message)


def test_unknown_assignor():
    h = Harness()
    base = {"group_id": G, "member_id": "a", "member_epoch": 0, "rebalance_timeout_ms": 1000, "owned": {}}
    answer = h.coordinator.heartbeat(ConsumerHeartbeat(**base, subscribed_topic_names=("t",), server_assignor="x"), 0)
    assert answer.error is ErrorCode.UNSUPPORTED_ASSIGNOR
    assert "Supported assignors: uniform, range." in answer.message


def test_group_max_size():
    h = Harness(ConsumerGroupSettings(max_size=1))
    h.heartbeat(Client("a"))
    assert h.heartbeat(Client("b")).error is ErrorCode.GROUP_MAX_SIZE_REACHED
    assert h.heartbeat(Client("a", epoch=1)).error is ErrorCode.NONE


def test_epochs_fence_and_unknown_members():
    h = Harness()
    a = Client("a")
    h.heartbeat(a)
    assert h.heartbeat(Client("a", epoch=5)).error is ErrorCode.FENCED_MEMBER_EPOCH
    assert h.heartbeat(Client("zz", epoch=1)).error is ErrorCode.UNKNOWN_MEMBER_ID
    assert h.coordinator.heartbeat(ConsumerHeartbeat("other", "a", 3), 0).error is ErrorCode.UNKNOWN_MEMBER_ID
    assert h.coordinator.heartbeat(ConsumerHeartbeat(G, "zz", -1), 0).error is ErrorCode.UNKNOWN_MEMBER_ID


def test_previous_epoch_with_a_subset_is_accepted():
    h = Harness()
    a, b = Client("a"), Client("b")
    h.heartbeat(a)
    h.heartbeat(b)
    h.heartbeat(a)
    h.heartbeat(a)  # a moves to epoch 2 (its previous is 1)
    assert a.epoch == 2
    stale = Client("a", epoch=1, owned=dict(a.owned))
    assert h.heartbeat(stale).error is ErrorCode.NONE  # the answer with epoch 2 may have been lost
    stale = Client("a", epoch=1, owned={"t": frozenset(range(6))})
    assert h.heartbeat(stale).error is ErrorCode.FENCED_MEMBER_EPOCH


def test_session_expiry_fences_and_the_others_take_over():
    h = Harness()
    a, b = Client("a"), Client("b")
    h.settle([a, b])
    assert h.coordinator.next_deadline() == 45_000
    h.now = 40_000
    h.heartbeat(a)
    h.now = 45_000
    assert h.coordinator.tick(h.now) == [(G, "b")]
    h.settle([a])
    assert a.owned == {"t": frozenset(range(6))}


def test_rebalance_timeout_fences_a_member_that_does_not_revoke():
    h = Harness()
    a, b = Client("a"), Client("b")
    h.heartbeat(a)
    h.heartbeat(b)
    h.now = 10
    h.heartbeat(a)  # told to revoke; it never does
    assert h.group.members["a"].rebalance_deadline_ms == 60_010
    h.now = 60_010
    h.coordinator.heartbeat(ConsumerHeartbeat(G, "b", b.epoch), 50_000)  # b alive
    fenced = h.coordinator.tick(h.now)
    assert (G, "a") in fenced


def test_static_member_leaves_and_comes_back_with_its_partitions():
    h = Harness()
    a, b = Client("a", instance_id="ia"), Client("b", instance_id="ib")
    h.settle([a, b])
    mine = dict(b.owned)
    epoch = h.group.group_epoch
    answer = h.coordinator.heartbeat(ConsumerHeartbeat(G, "b", -2, instance_id="ib"), h.now)
    assert answer.member_epoch == -2
    # another instance may not take the id while b is in the group
    other = Client("x", instance_id="ia")
    assert h.heartbeat(other).error is ErrorCode.UNRELEASED_INSTANCE_ID
    back = Client("b2", instance_id="ib")
    answer = h.heartbeat(back)
    assert answer.error is ErrorCode.NONE and answer.assignment == mine
    assert h.group.group_epoch == epoch  # no rebalance
    assert h.heartbeat(Client("b", epoch=3, instance_id="ib")).error is ErrorCode.FENCED_INSTANCE_ID


def test_new_partitions_and_regex_topics_start_a_new_epoch():
    h = Harness(t=2)
    a = Client("a", topics=())
    answer = h.coordinator.heartbeat(
        ConsumerHeartbeat(G, "a", 0, rebalance_timeout_ms=1000, subscribed_topic_regex="t.*", owned={}), 0
    )
    assert answer.assignment == {}  # resolved off the request path (ADR 68): nothing until then
    a.epoch = answer.member_epoch
    h.resolve_regexes()
    assert h.coordinator.take_regex_work() is None
    h.heartbeat(a)
    assert a.owned == {"t": frozenset({0, 1})}
    h.topics.grow("t", 3)
    h.heartbeat(a)
    assert a.owned == {"t": frozenset({0, 1, 2})}
    h.topics.create("tx", 1)
    h.topics.create("other", 1)
    h.heartbeat(a)  # a topic created since: the regex is resolved again
    h.resolve_regexes()
    h.heartbeat(a)
    assert a.owned == {"t": frozenset({0, 1, 2}), "tx": frozenset({0})}


def test_regexes_are_resolved_again_after_the_refresh_interval_and_forgotten_when_unused():
    h = Harness(t=1)
    a = Client("a", topics=())
    h.heartbeat(a, subscribed_topic_regex="t.*")
    h.resolve_regexes()
    h.heartbeat(a)
    assert a.owned == {"t": frozenset({0})}
    assert h.coordinator.take_regex_work() is None
    h.now += REGEX_REFRESH_MS
    h.heartbeat(a)
    assert h.coordinator.take_regex_work() == (frozenset({"t.*"}), ("t",))
    h.heartbeat(a, subscribed_topic_regex="u.*")
    h.resolve_regexes()
    assert set(h.coordinator.subscriptions._regex_matches) == {"u.*"}


def test_classic_and_consumer_groups_share_ids():
    h = Harness()
    join = JoinRequest(G, "", "consumer", (Protocol("range", b""),), 10_000, 10_000, require_known_member_id=False)
    h.classic.join(join, 0, "token")
    assert h.heartbeat(Client("a")).error is ErrorCode.GROUP_ID_NOT_FOUND
    h.classic.ensure_group("empty")
    answer = h.coordinator.heartbeat(
        ConsumerHeartbeat("empty", "a", 0, rebalance_timeout_ms=1, subscribed_topic_names=("t",), owned={}), 0
    )
    assert answer.error is ErrorCode.NONE
    assert not h.classic.is_classic_group("empty")


def test_offset_commit_and_fetch_checks():
    h = Harness()
    a = Client("a")
    h.heartbeat(a)
    c = h.coordinator
    assert c.validate_offset_commit(G, "a", 1, 9) is ErrorCode.NONE
    assert c.validate_offset_commit(G, "a", 0, 9) is ErrorCode.STALE_MEMBER_EPOCH
    assert c.validate_offset_commit(G, "b", 1, 9) is ErrorCode.UNKNOWN_MEMBER_ID
    assert c.validate_offset_commit(G, "a", 1, 8) is ErrorCode.UNSUPPORTED_VERSION
    assert c.validate_offset_fetch(G, None, -1) is ErrorCode.NONE
    assert c.validate_offset_fetch(G, "a", 2) is ErrorCode.STALE_MEMBER_EPOCH
    assert c.delete(G) is ErrorCode.NON_EMPTY_GROUP
    c.heartbeat(ConsumerHeartbeat(G, "a", -1), 0)
    assert c.validate_offset_commit(G, "", -1, 9) is ErrorCode.NONE
    assert c.delete(G) is ErrorCode.NONE


def test_uniform_is_sticky_and_range_is_ranges():
    members = [AssignmentMember(m, frozenset({"t"}), {}) for m in "abc"]
    first = uniform(members, {"t": 7})
    assert sorted(len(a["t"]) for a in first.values()) == [2, 2, 3]
    members = [AssignmentMember(m, frozenset({"t"}), first[m]) for m in "ab"]
    second = uniform(members, {"t": 7})
    for m in "ab":
        assert first[m]["t"] <= second[m]["t"]
    ranges = range_([AssignmentMember(m, frozenset({"t", "u"}), {}) for m in "ba"], {"t": 3, "u": 3})
    assert ranges["a"] == {"t": frozenset({0, 1}), "u": frozenset({0, 1})}
    assert ranges["b"] == {"t": frozenset({2}), "u": frozenset({2})}


def test_the_group_uses_the_assignor_most_members_ask_for():
    h = Harness()
    a = Client("a")
    h.heartbeat(a, server_assignor="range")
    assert h.group.assignor == "range"


def test_records_restore_a_group_after_a_restart_and_deletion_writes_tombstones():
    h = Harness()
    a, b = Client("a", instance_id="ia"), Client("b")
    h.settle([a, b])
    log = h.coordinator.take_records()
    assert h.coordinator.take_records() == []  # nothing changed, nothing written
    h.heartbeat(a)
    assert h.coordinator.take_records() == []  # a heartbeat that changes nothing writes nothing
    back = Harness()
    back.topics = h.topics
    back.coordinator._topics = h.topics
    back.coordinator.load(log, 1_000)
    group = back.coordinator.groups[G]
    assert (group.group_epoch, group.assignment_epoch) == (h.group.group_epoch, h.group.assignment_epoch)
    assert group.members["a"].assigned == a.owned and group.members["b"].assigned == b.owned
    assert group.static_members == {"ia": "a"}
    assert group.members["a"].session_deadline_ms == 46_000  # sessions start again at load
    assert (
        back.coordinator.heartbeat(ConsumerHeartbeat(G, "a", a.epoch, instance_id="ia"), 1_000).error is ErrorCode.NONE
    )
    for client in (a, b):
        h.coordinator.heartbeat(ConsumerHeartbeat(G, client.member_id, -1, instance_id=client.instance_id), 0)
    assert h.coordinator.delete(G) is ErrorCode.NONE
    log += h.coordinator.take_records()
    assert log[-1].value is None
    again = Harness()
    again.coordinator.load(log, 0)
    assert again.coordinator.groups == {}


def test_tombstones_come_in_kafkas_order_assignment_before_the_member():
    """Kafka's replay refuses a member metadata tombstone before the member's current assignment
    tombstone (found by tests/kafka/test_logdir_round_trip.py): assignment, target, then the member;
    a deleted group's target assignment epoch before its group epoch."""
    h = Harness()
    a, b = Client("a"), Client("b")
    h.settle([a, b])
    h.coordinator.take_records()
    h.coordinator.heartbeat(ConsumerHeartbeat(G, "a", -1), 0)
    kinds = [r.kind.name for r in h.coordinator.take_records() if r.value is None]
    assert kinds == ["CURRENT_ASSIGNMENT", "TARGET_ASSIGNMENT_MEMBER", "MEMBER_METADATA"]
    h.coordinator.heartbeat(ConsumerHeartbeat(G, "b", -1), 0)
    h.coordinator.take_records()
    assert h.coordinator.delete(G) is ErrorCode.NONE
    assert [r.kind.name for r in h.coordinator.take_records()] == ["TARGET_ASSIGNMENT_EPOCH", "GROUP_EPOCH"]


def test_a_regex_matches_only_the_topics_the_member_may_describe():
    h = Harness(t=2, tx=1, ty=1)
    answer = h.coordinator.heartbeat(
        ConsumerHeartbeat(
            G,
            "a",
            0,
            rebalance_timeout_ms=1000,
            subscribed_topic_regex="t.*",
            owned={},
            may_describe=lambda topic: topic != "tx",
        ),
        0,
    )
    h.resolve_regexes()
    answer = h.coordinator.heartbeat(ConsumerHeartbeat(G, answer.member_id, answer.member_epoch, owned={}), 0)
    assert answer.assignment == {"t": frozenset({0, 1}), "ty": frozenset({0})}


def test_a_consumer_group_with_members_hosts_classic_joins_and_an_empty_one_gives_way():
    h = Harness()
    a = Client("a")
    h.heartbeat(a)
    assert h.coordinator.hosts_classic_join(G)  # the classic member joins the consumer group (ADR 50)
    assert h.coordinator.give_way_to_classic(G) is ErrorCode.NONE and G in h.coordinator.groups
    h.coordinator.heartbeat(ConsumerHeartbeat(G, "a", -1), 0)
    assert not h.coordinator.hosts_classic_join(G)
    assert h.coordinator.give_way_to_classic(G) is ErrorCode.NONE
    assert G not in h.coordinator.groups
    assert h.coordinator.give_way_to_classic("unknown") is ErrorCode.NONE
