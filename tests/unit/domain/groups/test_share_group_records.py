"""A share group's records in `__consumer_offsets` (Kafka 4.2's ShareGroup* coordinator records): what
the coordinator writes after each change, and the groups rebuilt from them on restart."""

from __future__ import annotations

from tests.unit.domain.groups.consumer_harness import FakeTopics
from trafka.domain.errors import ErrorCode
from trafka.domain.groups.modern.records import GroupEpoch, TargetAssignmentEpoch, TargetAssignmentMember
from trafka.domain.groups.share import ShareGroupCoordinator, ShareGroupSettings, ShareHeartbeat
from trafka.domain.groups.share.records import (
    ShareCurrentAssignment,
    ShareGroupRecord,
    ShareMemberMetadata,
    ShareRecordKind,
)

K = ShareRecordKind


def coordinator(topics: FakeTopics) -> ShareGroupCoordinator:
    return ShareGroupCoordinator(ShareGroupSettings(), topics, lambda g: False)


def join(c: ShareGroupCoordinator, member: str, now: int = 0):
    return c.heartbeat(ShareHeartbeat("g", member, 0, subscribed_topic_names=("t",), client_id="cli"), now)


def test_a_join_writes_the_group_epoch_the_member_and_its_assignment_and_nothing_when_unchanged():
    topics = FakeTopics(t=2)
    c = coordinator(topics)
    join(c, "a")
    records = c.take_records()
    by_key = {(r.kind, r.member_id): r.value for r in records}
    tid = topics.get("t").topic_id
    assert by_key == {
        (K.GROUP_EPOCH, None): GroupEpoch(1),
        (K.TARGET_ASSIGNMENT_EPOCH, None): TargetAssignmentEpoch(1),
        (K.MEMBER_METADATA, "a"): ShareMemberMetadata(None, "cli", "", ("t",)),
        (K.TARGET_ASSIGNMENT_MEMBER, "a"): TargetAssignmentMember(((tid, (0, 1)),)),
        (K.CURRENT_ASSIGNMENT, "a"): ShareCurrentAssignment(1, 0, 0, ((tid, (0, 1)),)),  # 0: Kafka's STABLE
    }
    c.heartbeat(ShareHeartbeat("g", "a", 1, client_id="cli"), 10)
    assert c.take_records() == []  # a heartbeat that changes nothing writes nothing


def test_a_leave_writes_tombstones_for_the_member_and_a_new_group_epoch():
    c = coordinator(FakeTopics(t=1))
    join(c, "a")
    join(c, "b")
    c.take_records()
    c.heartbeat(ShareHeartbeat("g", "a", -1), 5)
    records = c.take_records()
    assert ShareGroupRecord(K.GROUP_EPOCH, "g", None, GroupEpoch(3)) in records
    tombstones = {(r.kind, r.member_id) for r in records if r.value is None}
    assert tombstones == {(K.MEMBER_METADATA, "a"), (K.TARGET_ASSIGNMENT_MEMBER, "a"), (K.CURRENT_ASSIGNMENT, "a")}


def test_a_deleted_group_leaves_only_tombstones():
    c = coordinator(FakeTopics(t=1))
    join(c, "a")
    c.heartbeat(ShareHeartbeat("g", "a", -1), 5)
    c.take_records()
    assert c.delete("g") is ErrorCode.NONE
    records = c.take_records()
    assert {r.kind for r in records} == {K.GROUP_EPOCH, K.TARGET_ASSIGNMENT_EPOCH}
    assert all(r.value is None for r in records)


def test_a_restart_keeps_the_group_epoch_and_members_epochs():
    topics = FakeTopics(t=2)
    before = coordinator(topics)
    join(before, "a")
    join(before, "b")
    assert before.heartbeat(ShareHeartbeat("g", "a", 1, client_id="cli"), 1).member_epoch == 2
    after = coordinator(topics)
    after.load(before.take_records(), now=1000)
    group = after.groups["g"]
    assert (group.group_epoch, group.assignment_epoch) == (2, 2)
    assert {m: (x.member_epoch, x.assigned) for m, x in group.members.items()} == {
        "a": (2, {"t": frozenset({0})}),  # the simple assignor: two members, two partitions, one each
        "b": (2, {"t": frozenset({1})}),
    }
    # a member heartbeating with the epoch it had carries on, nothing is bumped or rewritten
    answer = after.heartbeat(ShareHeartbeat("g", "a", 2, client_id="cli"), 1001)
    assert (answer.error, answer.member_epoch) == (ErrorCode.NONE, 2)
    assert after.take_records() == []
    # one that does not come back is fenced after its session timeout, counted from the load
    assert after.tick(1000 + 45_000) == [("g", "b")]


def test_tombstones_come_in_kafkas_order_assignment_before_the_member():
    """Kafka's replay refuses a member metadata tombstone before the member's current assignment
    tombstone (found by tests/kafka/test_logdir_round_trip.py): assignment, target, then member; a
    deleted group's epoch tombstone after its target assignment epoch's."""
    c = coordinator(FakeTopics(t=1))
    join(c, "a")
    join(c, "b")
    c.take_records()
    c.heartbeat(ShareHeartbeat("g", "a", -1), 5)
    kinds = [r.kind for r in c.take_records() if r.value is None]
    assert kinds == [K.CURRENT_ASSIGNMENT, K.TARGET_ASSIGNMENT_MEMBER, K.MEMBER_METADATA]
    c.heartbeat(ShareHeartbeat("g", "b", -1), 6)
    c.take_records()
    assert c.delete("g") is ErrorCode.NONE
    assert [r.kind for r in c.take_records()] == [K.TARGET_ASSIGNMENT_EPOCH, K.GROUP_EPOCH]
