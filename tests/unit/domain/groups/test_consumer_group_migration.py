"""The online migration between the classic and the consumer protocols (ADR 50), on the domain's two
coordinators: upgrade on a consumer heartbeat, classic members inside a consumer group (JoinGroup,
SyncGroup, Heartbeat, LeaveGroup), downgrade when the last consumer-protocol member goes, the records
of both conversions, and `group.consumer.migration.policy`."""

from __future__ import annotations

import attrs
import pytest
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription

from trafka.domain.errors import ErrorCode
from trafka.domain.groups import GroupState, JoinRequest, Protocol, SyncRequest
from trafka.domain.groups.modern import ConsumerGroupSettings, ConsumerHeartbeat, MemberState
from trafka.domain.groups.modern.migration import MigrationPolicy
from trafka.domain.groups.modern.records import MemberMetadata, RecordKind, restore

from .consumer_harness import Client, G, Harness

SESSION = 10_000
REBALANCE = 30_000


def subscription(topics=("t",), owned=None, version=1) -> bytes:
    owned_partitions = [
        ConsumerProtocolSubscription.TopicPartition(version=version, topic=t, partitions=sorted(ps))
        for t, ps in (owned or {}).items()
    ]
    return bytes(
        ConsumerProtocolSubscription(
            version=version, topics=list(topics), user_data=None, owned_partitions=owned_partitions
        ).encode(version=version)
    )


def assignment(partitions: dict[str, set[int]], version=1) -> bytes:
    cls = ConsumerProtocolAssignment
    tps = [cls.TopicPartition(version=version, topic=t, partitions=sorted(ps)) for t, ps in partitions.items()]
    return bytes(cls(version=version, assigned_partitions=tps, user_data=None).encode(version=version))


def decoded(data: bytes) -> dict[str, set[int]]:
    version = int.from_bytes(data[:2], "big")
    a = ConsumerProtocolAssignment.decode(data, version=version)
    return {tp.topic: set(tp.partitions) for tp in a.assigned_partitions if tp.partitions}


def join_request(
    member_id="", owned=None, protocol_type="consumer", name="range", instance_id=None, client_id="classic"
) -> JoinRequest:
    return JoinRequest(
        G,
        member_id,
        protocol_type,
        (Protocol(name, subscription(owned=owned)),),
        SESSION,
        REBALANCE,
        group_instance_id=instance_id,
        client_id=client_id,
        require_known_member_id=False,
    )


def stable_classic_group(h: Harness) -> tuple[str, str]:
    """Two classic members, a with t-0..2 and b with t-3..5, Stable at generation 1."""
    h.classic._settings = attrs.evolve(h.classic._settings, initial_rebalance_delay_ms=0)
    h.classic.join(join_request(client_id="a"), 0, "ja")  # a alone completes generation 1
    a_id = h.classic.group(G).leader_id
    h.classic.join(join_request(client_id="b"), 0, "jb")  # b starts generation 2, a must rejoin
    b_id = next(m for m in h.classic.group(G).members if m != a_id)
    h.classic.join(join_request(a_id), 0, "ja2")
    group = h.classic.group(G)
    assert group.state is GroupState.COMPLETING_REBALANCE
    gen = group.generation_id
    h.classic.sync(
        SyncRequest(
            G, group.leader_id, gen, ((a_id, assignment({"t": {0, 1, 2}})), (b_id, assignment({"t": {3, 4, 5}})))
        ),
        0,
        "sa",
    )
    h.classic.sync(SyncRequest(G, b_id if group.leader_id == a_id else a_id, gen), 0, "sb")
    assert h.classic.group(G).state is GroupState.STABLE
    h.classic.take_metadata_records()
    return a_id, b_id


def consumer(h: Harness, name="c") -> Client:
    c = Client(name)
    assert h.heartbeat(c).error is ErrorCode.NONE
    return c


def test_a_consumer_heartbeat_upgrades_a_classic_group_member_by_member():
    h = Harness()
    a, b = stable_classic_group(h)
    generation = h.classic.group(G).generation_id
    c = consumer(h)
    assert not h.classic.is_classic_group(G)
    group = h.group
    assert group.group_epoch == generation + 1  # c's subscription bumped the converted group's epoch
    assert {m: group.members[m].member_epoch for m in (a, b)} == {a: generation, b: generation}
    assert group.members[a].assigned == {"t": frozenset({0, 1, 2})}
    assert group.members[a].classic is not None and group.members[a].classic.session_timeout_ms == SESSION
    assert c.assigned == {}  # every partition is still owned by a classic member
    # the classic group's metadata gets a tombstone, the consumer group is written whole
    assert [(r.group_id, r.metadata) for r in h.classic.take_metadata_records()] == [(G, None)]
    records = h.coordinator.take_records()
    metadata = {r.member_id: r.value for r in records if r.kind is RecordKind.MEMBER_METADATA}
    assert isinstance(metadata[a], MemberMetadata) and metadata[a].classic is not None
    assert metadata["c"].classic is None

    # a classic member hears it must rejoin; its join revokes what c takes and its sync hands it the rest
    assert h.coordinator.classic_members.heartbeat(G, a, generation, 0) is ErrorCode.REBALANCE_IN_PROGRESS
    joined = h.coordinator.classic_members.join(join_request(a, owned={"t": {0, 1, 2}}), 0)
    assert (joined.error, joined.generation_id, joined.protocol_name, joined.leader) == (
        ErrorCode.NONE,
        generation,
        "range",
        "",
    )
    assert group.members[a].state is MemberState.UNREVOKED_PARTITIONS
    synced = h.coordinator.classic_members.sync(SyncRequest(G, a, generation, (), None, "consumer", "range"), 0)
    kept = decoded(synced.assignment)["t"]
    assert synced.error is ErrorCode.NONE and kept < {0, 1, 2}
    # it revoked: the next join moves it to the group's epoch
    joined = h.coordinator.classic_members.join(join_request(a, owned={"t": kept}), 0)
    assert joined.generation_id == group.group_epoch and group.members[a].state is MemberState.STABLE
    for member_id in (b,):
        h.coordinator.classic_members.join(join_request(member_id, owned={"t": {3, 4, 5}}), 0)
        synced = h.coordinator.classic_members.sync(SyncRequest(G, member_id, group.members[member_id].member_epoch), 0)
        h.coordinator.classic_members.join(join_request(member_id, owned=decoded(synced.assignment)), 0)
    h.heartbeat(c)
    owned = [set().union(*group.members[m].assigned.values()) for m in (a, b, "c")]
    assert sorted(len(o) for o in owned) == [2, 2, 2] and set().union(*owned) == set(range(6))
    assert h.coordinator.classic_members.heartbeat(G, a, group.group_epoch, 0) is ErrorCode.NONE


def test_the_last_consumer_member_leaving_downgrades_the_group_to_classic():
    h = Harness()
    a, b = stable_classic_group(h)
    c = consumer(h)
    epoch = h.group.group_epoch
    h.coordinator.take_records()
    h.classic.take_metadata_records()
    h.coordinator.heartbeat(ConsumerHeartbeat(G, c.member_id, -1), 5)
    assert G not in h.coordinator.groups
    classic = h.classic.group(G)
    assert classic is not None and set(classic.members) == {a, b}
    assert classic.generation_id == epoch and classic.protocol_type == "consumer"
    assert classic.state is GroupState.PREPARING_REBALANCE  # the members rejoin
    # every consumer group key gets a tombstone; the classic group is stored with the targets
    records = h.coordinator.take_records()
    assert records and all(r.value is None for r in records)
    (stored,) = h.classic.take_metadata_records()
    assigned = {m.member_id: decoded(m.assignment) for m in stored.metadata.members}
    assert set().union(*(ps["t"] for ps in assigned.values() if ps)) <= set(range(6))
    assert stored.metadata.generation_id == epoch
    # the classic members go on with the classic protocol: heartbeat, rejoin
    assert h.classic.heartbeat(G, a, epoch, 5) is ErrorCode.REBALANCE_IN_PROGRESS


def test_an_expired_consumer_member_downgrades_the_group_too():
    h = Harness()
    stable_classic_group(h)
    consumer(h)
    for member in h.group.members.values():
        if member.classic is not None:
            member.session_deadline_ms = 10**9
    h.coordinator.tick(h.coordinator.settings.session_timeout_ms + 1)
    assert G not in h.coordinator.groups and h.classic.group(G) is not None
    assert h.coordinator.take_completions() == []  # nobody was waiting


@pytest.mark.parametrize("policy", [MigrationPolicy.DISABLED, MigrationPolicy.DOWNGRADE])
def test_upgrade_refused_unless_the_policy_allows_it(policy):
    h = Harness(ConsumerGroupSettings(migration_policy=policy))
    stable_classic_group(h)
    answer = h.heartbeat(Client("c"))
    assert answer.error is ErrorCode.GROUP_ID_NOT_FOUND
    assert h.classic.group(G).state is GroupState.STABLE


@pytest.mark.parametrize("policy", [MigrationPolicy.DISABLED, MigrationPolicy.UPGRADE])
def test_downgrade_refused_unless_the_policy_allows_it(policy):
    h = Harness(ConsumerGroupSettings(migration_policy=policy))
    c = consumer(h)
    joined = h.coordinator.classic_members.join(join_request(), 0)  # classic members join consumer groups anyway
    assert joined.error is ErrorCode.NONE
    h.coordinator.heartbeat(ConsumerHeartbeat(G, c.member_id, -1), 0)
    assert G in h.coordinator.groups and not h.classic.is_classic_group(G)
    assert [m.classic is not None for m in h.group.members.values()] == [True]


def test_policy_names_are_kafkas():
    assert MigrationPolicy.parse("BiDirectional") is MigrationPolicy.BIDIRECTIONAL
    with pytest.raises(ValueError, match="bidirectional"):
        MigrationPolicy.parse("sideways")


def test_a_classic_group_of_another_protocol_type_is_not_upgraded():
    h = Harness()
    h.classic._settings = attrs.evolve(h.classic._settings, initial_rebalance_delay_ms=0)
    h.classic.join(join_request(protocol_type="connect", name="sessioned"), 0, "j")
    assert h.heartbeat(Client("c")).error is ErrorCode.GROUP_ID_NOT_FOUND


def test_classic_joins_to_a_consumer_group_are_checked_as_kafka():
    h = Harness()
    consumer(h)
    assert h.coordinator.classic_members.join(join_request(protocol_type="connect"), 0).error is (
        ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    )
    required = h.coordinator.classic_members.join(attrs.evolve(join_request(), require_known_member_id=True), 0)
    assert required.error is ErrorCode.MEMBER_ID_REQUIRED and required.member_id
    joined = h.coordinator.classic_members.join(join_request(required.member_id), 0)
    assert joined.error is ErrorCode.NONE and joined.member_id == required.member_id
    # a second classic member must share a protocol with the first
    assert h.coordinator.classic_members.join(join_request(name="roundrobin"), 0).error is (
        ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    )
    bad = attrs.evolve(join_request(), protocols=(Protocol("range", b"\x00"),))
    assert h.coordinator.classic_members.join(bad, 0).error is ErrorCode.UNKNOWN_SERVER_ERROR
    short = attrs.evolve(join_request(), session_timeout_ms=1)
    assert h.coordinator.classic_members.join(short, 0).error is ErrorCode.INVALID_SESSION_TIMEOUT
    # sync and heartbeat: generation, protocol, membership
    epoch = h.group.members[joined.member_id].member_epoch
    sync = h.coordinator.classic_members.sync
    assert sync(SyncRequest(G, joined.member_id, epoch + 1), 0).error is ErrorCode.ILLEGAL_GENERATION
    assert sync(SyncRequest(G, joined.member_id, epoch, (), None, "consumer", "other"), 0).error is (
        ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    )
    assert sync(SyncRequest(G, "c", 1), 0).error is ErrorCode.UNKNOWN_MEMBER_ID  # c speaks the consumer protocol
    assert h.coordinator.classic_members.heartbeat(G, "nobody", 1, 0) is ErrorCode.UNKNOWN_MEMBER_ID
    assert h.coordinator.classic_members.heartbeat(G, joined.member_id, epoch + 5, 0) is ErrorCode.ILLEGAL_GENERATION
    # leave: only classic members, by id or instance id
    errors = h.coordinator.classic_members.leave(G, [("c", None), (joined.member_id, None), ("x", "nope")], 0)
    assert errors == [ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID]
    assert set(h.group.members) == {"c"}


def test_a_classic_member_that_does_not_sync_or_rejoin_in_time_is_fenced():
    h = Harness()
    c = consumer(h)
    joined = h.coordinator.classic_members.join(join_request(), 0)
    member = h.group.members[joined.member_id]
    assert member.sync_deadline_ms == REBALANCE and member.rebalance_deadline_ms is None
    h.coordinator.classic_members.sync(SyncRequest(G, joined.member_id, member.member_epoch), 1)
    assert member.sync_deadline_ms is None
    c.topics = ("t", "u")
    h.heartbeat(c, full=True)  # a new subscription, a new epoch: the classic member must rejoin
    assert h.coordinator.classic_members.heartbeat(G, joined.member_id, member.member_epoch, 2) is (
        ErrorCode.REBALANCE_IN_PROGRESS
    )
    assert member.join_deadline_ms == 2 + REBALANCE
    h.heartbeat(c)
    assert h.coordinator.tick(2 + REBALANCE) == [(G, joined.member_id)]
    assert set(h.group.members) == {c.member_id}


def test_offsets_of_classic_members_are_checked_by_generation():
    h = Harness()
    consumer(h)
    joined = h.coordinator.classic_members.join(join_request(), 0)
    epoch = h.group.members[joined.member_id].member_epoch
    check = h.coordinator.validate_offset_commit
    assert check(G, joined.member_id, epoch, 8) is ErrorCode.NONE  # classic members commit below v9
    assert check(G, joined.member_id, epoch + 1, 8) is ErrorCode.ILLEGAL_GENERATION
    assert h.coordinator.validate_offset_fetch(G, joined.member_id, epoch + 1) is ErrorCode.ILLEGAL_GENERATION


def test_the_records_of_a_classic_member_restore_it():
    h = Harness()
    stable_classic_group(h)
    consumer(h)
    records = h.coordinator.take_records()
    restored = restore(records, lambda topic_id: h.topics.by_id(topic_id).name)[G]
    assert {m: r.classic for m, r in restored.members.items()} == {m: r.classic for m, r in h.group.members.items()}
    assert restored.group_epoch == h.group.group_epoch


def test_a_classic_static_member_replacing_the_last_consumer_one_downgrades_without_a_rebalance():
    h = Harness()
    c = Client("c", instance_id="i-c")
    h.heartbeat(c)
    b = h.coordinator.classic_members.join(join_request(client_id="b"), 0)
    h.settle([c])
    target_of_c = h.group.target[c.member_id]
    # c restarts as a classic consumer with the same group.instance.id
    joined = h.coordinator.classic_members.join(join_request(instance_id="i-c", client_id="c2"), 1)
    assert joined.error is ErrorCode.NONE and G not in h.coordinator.groups
    classic = h.classic.group(G)
    assert classic.state is GroupState.STABLE and set(classic.members) == {b.member_id, joined.member_id}
    assert classic.static_members == {"i-c": joined.member_id}
    assert decoded(classic.members[joined.member_id].assignment) == {t: set(ps) for t, ps in target_of_c.items()}


def test_a_consumer_static_member_replaces_a_classic_one_of_its_instance_at_once():
    h = Harness()
    consumer(h)
    classic = h.coordinator.classic_members.join(join_request(instance_id="i-a", client_id="a"), 0)
    assert classic.error is ErrorCode.NONE
    h.settle([Client("c")])
    replacement = Client("a2", instance_id="i-a")
    assert h.heartbeat(replacement).error is ErrorCode.NONE  # Kafka: no UNRELEASED_INSTANCE_ID for it
    assert classic.member_id not in h.group.members
    assert h.group.static_members == {"i-a": "a2"} and h.group.members["a2"].classic is None
    # two consumer-protocol members of one instance: the second must wait for a leave (-2)
    assert h.heartbeat(Client("a3", instance_id="i-a")).error is ErrorCode.UNRELEASED_INSTANCE_ID
