"""A member's state in the CurrentMemberAssignment records as Kafka 4.2 writes it (its MemberState enums'
byte values, read from the 4.2.2 jars with javap): a data directory moved between trafka and Kafka keeps
its members stable, not revoking or waiting for partitions or tasks."""

from __future__ import annotations

from trafka.domain.groups.modern import records as consumer_records
from trafka.domain.groups.modern.reconciliation import MemberState
from trafka.domain.groups.streams import records as streams_records
from trafka.domain.groups.streams.tasks import MemberState as StreamsMemberState


def test_consumer_and_share_members_states_are_kafkas_modern_member_state_values():
    assert consumer_records.STATE_CODES == {
        MemberState.STABLE: 0,
        MemberState.UNREVOKED_PARTITIONS: 1,
        MemberState.UNRELEASED_PARTITIONS: 2,
        MemberState.UNKNOWN: 127,
    }
    assert consumer_records.STATES_BY_CODE[0] is MemberState.STABLE  # what Kafka writes of a stable member


def test_streams_members_states_are_kafkas_streams_member_state_values():
    assert streams_records.STATE_CODES == {
        StreamsMemberState.STABLE: 1,
        StreamsMemberState.UNREVOKED_TASKS: 2,
        StreamsMemberState.UNRELEASED_TASKS: 3,
    }


def test_a_stable_member_a_data_dir_from_before_holds_as_unreleased_is_stable_again_at_its_next_heartbeat():
    """trafka wrote a stable consumer member's state as 2 before session 18, which is Kafka's
    UNRELEASED_PARTITIONS: loaded, such a member owns what its target gives it, so its next heartbeat makes
    it STABLE again, with no new epoch and nothing taken from it."""
    import attrs

    from tests.unit.domain.groups.consumer_harness import Client, Harness

    harness = Harness()
    client = Client("m1")
    harness.settle([client])
    member = harness.group.members["m1"]
    assert member.state is MemberState.STABLE
    epoch, owned = harness.group.group_epoch, dict(client.owned)
    records = [
        attrs.evolve(r, value=attrs.evolve(r.value, state=2))
        if r.kind is consumer_records.RecordKind.CURRENT_ASSIGNMENT and r.value is not None
        else r
        for r in harness.coordinator.take_records()
    ]
    assert any(r.kind is consumer_records.RecordKind.CURRENT_ASSIGNMENT for r in records)
    again = Harness(fake_topics=harness.topics)
    again.coordinator.load(records, 0)
    assert again.group.members["m1"].state is MemberState.UNRELEASED_PARTITIONS
    answer = again.heartbeat(client)
    assert again.group.members["m1"].state is MemberState.STABLE
    assert (answer.member_epoch, again.group.group_epoch, client.owned) == (epoch, epoch, owned)
