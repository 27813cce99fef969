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
