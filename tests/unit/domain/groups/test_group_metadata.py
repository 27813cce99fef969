"""Group metadata as Kafka writes it to `__consumer_offsets`: the moments the coordinator queues it,
and the group a stored record brings back at startup (state, generation, members, static members)."""

from __future__ import annotations

from tests.unit.domain.groups.test_group_coordinator import REBALANCE, SESSION, G, Harness
from trafka.adapters.memory.offset_store import MemoryOffsetStore
from trafka.domain.errors import ErrorCode
from trafka.domain.groups import GroupCoordinator, GroupSettings, GroupState, JoinRequest, OffsetManager, Protocol
from trafka.domain.groups.group_metadata import GroupMetadata, MemberMetadata, snapshot


def _stable_pair(h: Harness) -> tuple[str, str]:
    a = h.join_new(client="ca")
    h.join(a, client="ca")
    h.sync(a, 1, [(a, b"A")])
    tb = h.join(client="cb", instance="static-b")  # a static member joins without MEMBER_ID_REQUIRED
    h.join(a, client="ca")
    assert h.answers[tb].generation_id == 2
    b = h.answers[tb].member_id
    h.sync(b, 2, instance="static-b")
    h.sync(a, 2, [(a, b"A2"), (b, b"B2")])
    assert h.state is GroupState.STABLE
    return a, b


def test_the_leaders_sync_stores_the_generation_with_every_assignment():
    h = Harness()
    h.now = 500
    a, b = _stable_pair(h)
    records = h.coordinator.take_metadata_records()
    # the group as its JoinGroup created it, then one per completed generation
    assert [r.metadata.generation_id for r in records] == [0, 1, 2]
    stored = records[-1].metadata
    assert (stored.protocol_type, stored.protocol_name, stored.leader_id) == ("consumer", "range", a)
    assert stored.current_state_timestamp_ms == 500
    assert [
        (m.member_id, m.group_instance_id, m.client_id, m.client_host, m.assignment, m.subscription)
        for m in stored.members
    ] == [(a, None, "ca", "host", b"A2", b"m"), (b, "static-b", "cb", "host", b"B2", b"m")]
    assert {(m.session_timeout_ms, m.rebalance_timeout_ms) for m in stored.members} == {(SESSION, REBALANCE)}
    assert h.coordinator.take_metadata_records() == []


def test_a_group_a_join_creates_is_stored_empty_at_generation_0_as_kafka_writes_it():
    """Kafka's classicGroupJoinToClassicGroup: the group a JoinGroup created is written at once with
    newEmptyGroupMetadataRecord when the join wrote nothing else; its protocol type is the group's (none
    yet for a member told MEMBER_ID_REQUIRED, the member's own when it joins without)."""
    h = Harness()
    h.now = 1_234
    h.join_new()
    [record] = h.coordinator.take_metadata_records()
    assert record.metadata == GroupMetadata("", 0, None, None, 1_234, ())
    old_protocol = Harness()
    old_protocol.now = 99
    old_protocol.join(known=False)  # JoinGroup v0-3: no MEMBER_ID_REQUIRED, the join waits for the rebalance
    [record] = old_protocol.coordinator.take_metadata_records()
    assert record.metadata == GroupMetadata("consumer", 0, None, None, 99, ())
    refused = Harness()
    refused.join(member_id="someone")  # an unknown member: no group is created, nothing is written
    assert refused.coordinator.take_metadata_records() == [] and refused.coordinator.group(G) is None


def test_joins_heartbeats_and_a_pending_rebalance_store_nothing_after_the_groups_creation():
    h = Harness()
    a = h.join_new()
    assert [r.metadata.generation_id for r in h.coordinator.take_metadata_records()] == [0]
    h.join(a)
    assert h.coordinator.heartbeat(G, a, 1, h.now) is ErrorCode.NONE
    assert h.coordinator.take_metadata_records() == []


def test_a_rebalance_that_leaves_the_group_empty_stores_the_empty_generation():
    h = Harness()
    a, b = _stable_pair(h)
    h.coordinator.take_metadata_records()
    h.now = 7_000
    errors, _ = h.coordinator.leave(G, [(a, None), (b, "static-b")], h.now)
    assert errors == [ErrorCode.NONE, ErrorCode.NONE]
    [record] = h.coordinator.take_metadata_records()
    assert record.metadata == GroupMetadata("consumer", 3, None, None, 7_000, ())


def test_a_static_member_rejoining_a_stable_group_with_a_new_id_is_stored_without_a_rebalance():
    h = Harness()
    a, b = _stable_pair(h)
    h.coordinator.take_metadata_records()
    rejoined = h.answers[h.join("", instance="static-b", client="cb")]
    assert rejoined.error is ErrorCode.NONE and rejoined.generation_id == 2 and rejoined.member_id != b
    assert h.state is GroupState.STABLE
    [record] = h.coordinator.take_metadata_records()
    assert [m.member_id for m in record.metadata.members] == [a, rejoined.member_id]
    assert record.metadata.members[1].assignment == b"B2"


def _loaded(metadata: dict[str, GroupMetadata], now: int) -> GroupCoordinator:
    coordinator = GroupCoordinator(GroupSettings(initial_rebalance_delay_ms=0), lambda client: f"{client}-new")
    coordinator.load(metadata, now)
    return coordinator


def test_a_loaded_group_with_members_is_stable_and_its_members_carry_on_with_their_generation():
    h = Harness()
    a, b = _stable_pair(h)
    stored = h.coordinator.take_metadata_records()[-1].metadata
    coordinator = _loaded({G: stored}, now=1_000_000)
    described = coordinator.describe(G)
    assert (described.state, described.protocol_type, described.protocol_name) == (
        GroupState.STABLE,
        "consumer",
        "range",
    )
    assert [(m.member_id, m.assignment, m.metadata) for m in described.members] == [(a, b"A2", b"m"), (b, b"B2", b"m")]
    assert coordinator.heartbeat(G, a, 2, 1_000_001) is ErrorCode.NONE
    assert coordinator.validate_offset_commit(G, a, 2, 1_000_001) is ErrorCode.NONE
    assert coordinator.validate_offset_commit(G, a, 1, 1_000_001) is ErrorCode.ILLEGAL_GENERATION
    assert coordinator.group(G).static_members == {"static-b": b}


def test_loaded_members_that_do_not_heartbeat_within_their_session_are_removed():
    h = Harness()
    a, b = _stable_pair(h)
    coordinator = _loaded({G: h.coordinator.take_metadata_records()[-1].metadata}, now=1_000_000)
    assert coordinator.next_deadline() == 1_000_000 + SESSION
    coordinator.tick(1_000_000 + SESSION - 1)
    assert coordinator.heartbeat(G, a, 2, 1_000_000 + SESSION - 1) is ErrorCode.NONE
    coordinator.tick(1_000_000 + SESSION)  # b never came back
    group = coordinator.group(G)
    assert list(group.members) == [a] and group.state is GroupState.PREPARING_REBALANCE
    assert group.static_members == {}


def test_a_static_member_rejoining_a_loaded_group_keeps_its_slot_without_a_rebalance():
    h = Harness()
    a, b = _stable_pair(h)
    coordinator = _loaded({G: h.coordinator.take_metadata_records()[-1].metadata}, now=0)
    [answer] = coordinator.join(
        JoinRequest(G, "", "consumer", (Protocol("range", b"m"),), SESSION, REBALANCE, "static-b", "cb", "host"), 1, "t"
    )
    assert answer.result.error is ErrorCode.NONE and answer.result.generation_id == 2
    assert coordinator.group(G).state is GroupState.STABLE


def test_a_static_member_rejoining_with_more_protocols_than_were_stored_does_not_rebalance():
    """A stored member keeps only the selected protocol; librdkafka rejoins offering range and roundrobin.
    Kafka rebalances only when the protocol the group would select changes."""
    h = Harness()
    a, b = _stable_pair(h)
    coordinator = _loaded({G: h.coordinator.take_metadata_records()[-1].metadata}, now=0)

    def rejoin(protocols):
        return coordinator.join(
            JoinRequest(
                G,
                "",
                "consumer",
                tuple(Protocol(n, b"m") for n in protocols),
                SESSION,
                REBALANCE,
                "static-b",
                "cb",
                "host",
            ),
            1,
            object(),
        )

    [answer] = rejoin(["range", "roundrobin"])
    assert answer.result.error is ErrorCode.NONE and coordinator.group(G).state is GroupState.STABLE
    assert rejoin(["roundrobin", "range"])[-1].result.error is ErrorCode.NONE  # a still votes range
    assert coordinator.group(G).state is GroupState.STABLE
    assert [r.metadata.generation_id for r in coordinator.take_metadata_records()] == [2, 2]


def test_a_static_member_whose_rejoin_changes_the_selected_protocol_triggers_a_rebalance():
    h = Harness()
    a = h.join_new()
    h.join(a)
    h.sync(a, 1, [(a, b"A")])
    t = h.join(instance="s", protocols=(("range", b"m"),))
    h.join(a)
    h.sync(h.answers[t].member_id, 2, instance="s")
    h.sync(a, 2, [(a, b"A")])
    coordinator = _loaded({G: h.coordinator.take_metadata_records()[-1].metadata}, now=0)
    coordinator.group(G).members[a].protocols = (Protocol("sticky", b"m"), Protocol("range", b"m"))
    sticky_first = (Protocol("sticky", b"m"), Protocol("range", b"m"))
    coordinator.join(JoinRequest(G, "", "consumer", sticky_first, SESSION, REBALANCE, "s"), 1, object())
    assert coordinator.group(G).state is GroupState.PREPARING_REBALANCE


def test_an_empty_loaded_group_is_empty_with_its_generation_and_old_values_default_like_kafka():
    member = MemberMetadata("m", None, "c", "h", -1, 6_000, b"s", b"a")  # value v0: no rebalance timeout
    coordinator = _loaded(
        {
            "empty": GroupMetadata("consumer", 9, None, None, -1, ()),
            "old": GroupMetadata("consumer", 4, "range", "m", -1, (member,)),
        },
        now=0,
    )
    empty = coordinator.group("empty")
    assert (empty.state, empty.generation_id, empty.state_timestamp_ms) == (GroupState.EMPTY, 9, None)
    assert coordinator.group("old").members["m"].rebalance_timeout_ms == 6_000


def test_the_offset_manager_loads_the_stores_groups_and_writes_what_the_coordinator_queued():
    h = Harness()
    _stable_pair(h)
    store = MemoryOffsetStore()
    offsets = OffsetManager(h.coordinator, store, catalog=None, now=0)  # type: ignore[arg-type]
    offsets.store_group_metadata(h.coordinator.take_metadata_records())
    assert store.group_metadata()[G] == snapshot(h.coordinator.group(G))
    again = GroupCoordinator(GroupSettings(), str)
    OffsetManager(again, store, catalog=None, now=0)  # type: ignore[arg-type]
    assert again.describe(G).state is GroupState.STABLE
