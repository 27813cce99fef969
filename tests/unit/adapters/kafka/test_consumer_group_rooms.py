"""ConsumerGroupHeartbeat, ConsumerGroupDescribe and the rooms that see consumer groups beside classic
ones (ListGroups, DescribeGroups, DeleteGroups, OffsetCommit, OffsetFetch), on a memory-store broker."""

from __future__ import annotations

import uuid

import attrs
import pytest
import trio
from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription  # the client's side

from trafka.adapters.kafka.api import Parked
from trafka.adapters.kafka.apis import (
    consumer_group_describe,
    consumer_group_heartbeat,
    delete_groups,
    describe_configs,
    describe_groups,
    incremental_alter_configs,
    list_groups,
    offset_commit,
    offset_fetch,
)
from trafka.adapters.kafka.apis import txn_offset_commit as txn_offset_commit_room
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.adapters.kafka.runtime.group_runtime import GroupAnswer
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.errors import ErrorCode
from trafka.domain.groups import JoinRequest, Protocol, SyncRequest
from trafka.domain.security.acls import AclBinding, AclPermissionType, PatternType
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.schema_codec.messages import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupHeartbeatRequest,
    DeleteGroupsRequest,
    DescribeConfigsRequest,
    DescribeGroupsRequest,
    IncrementalAlterConfigsRequest,
    ListGroupsRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    TxnOffsetCommitRequest,
)

CLIENT = ClientInfo("client-1", "127.0.0.1")


@pytest.fixture
def ctx():
    settings = load_settings(overrides={"storage": {"kind": "memory"}})
    ctx = bootstrap(settings, default_adapters(settings))
    ctx.services.catalog.create("t", 4, 1)
    return ctx


def heartbeat(ctx, member_id="m1", epoch=0, version=1, owned=(), **fields):
    topic_id = ctx.services.catalog.get("t").topic_id
    Tp = ConsumerGroupHeartbeatRequest.TopicPartitions
    request = ConsumerGroupHeartbeatRequest[version](
        group_id="g",
        member_id=member_id,
        member_epoch=epoch,
        rebalance_timeout_ms=30_000 if epoch == 0 else -1,
        subscribed_topic_names=["t"] if epoch == 0 else None,
        topic_partitions=[Tp(topic_id=topic_id, partitions=list(owned))] if epoch == 0 or owned else None,
        **fields,
    )
    return consumer_group_heartbeat.API.handle(ctx, request, version, CLIENT)


def test_a_member_joins_and_gets_the_partitions_by_topic_id(ctx):
    response = heartbeat(ctx)
    assert (response.error_code, response.member_id, response.member_epoch) == (ErrorCode.NONE, "m1", 1)
    assert response.heartbeat_interval_ms == 5000
    (tp,) = response.assignment.topic_partitions
    assert (tp.topic_id, tp.partitions) == (ctx.services.catalog.get("t").topic_id, [0, 1, 2, 3])
    again = heartbeat(ctx, epoch=1, owned=[0, 1, 2, 3])
    assert again.error_code == ErrorCode.NONE and again.assignment is None  # nothing changed


def test_v0_gets_its_member_id_from_the_broker_and_v1_must_bring_one(ctx):
    response = heartbeat(ctx, member_id="", version=0)
    assert response.error_code == ErrorCode.NONE and uuid.UUID(response.member_id)
    response = heartbeat(ctx, member_id="", version=1)
    assert (response.error_code, response.error_message) == (ErrorCode.INVALID_REQUEST, "MemberId can't be empty.")


def test_owned_partitions_of_unknown_topic_ids_are_ignored(ctx):
    heartbeat(ctx)
    Tp = ConsumerGroupHeartbeatRequest.TopicPartitions
    request = ConsumerGroupHeartbeatRequest[1](
        group_id="g", member_id="m1", member_epoch=1, topic_partitions=[Tp(topic_id=uuid.uuid4(), partitions=[0])]
    )
    assert consumer_group_heartbeat.API.handle(ctx, request, 1, CLIENT).error_code == ErrorCode.NONE


def test_describe_lists_and_delete_see_the_consumer_group(ctx):
    heartbeat(ctx)
    described = consumer_group_describe.API.handle(
        ctx, ConsumerGroupDescribeRequest[1](group_ids=["g", "nope"], include_authorized_operations=True), 1, CLIENT
    )
    g, nope = described.groups
    assert (g.error_code, g.group_state, g.group_epoch, g.assignment_epoch, g.assignor_name) == (
        ErrorCode.NONE,
        "Stable",
        1,
        1,
        "uniform",
    )
    (member,) = g.members
    assert (member.member_id, member.member_epoch, member.client_id, member.member_type) == ("m1", 1, "client-1", 1)
    assert member.client_host == "/127.0.0.1"  # Kafka's InetAddress.toString() of the client's address
    assert member.subscribed_topic_names == ["t"]
    assert member.assignment.topic_partitions[0].topic_name == "t"
    assert member.target_assignment.topic_partitions[0].partitions == [0, 1, 2, 3]
    assert (nope.error_code, nope.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group nope not found.")
    listed = list_groups.API.handle(ctx, ListGroupsRequest[5](states_filter=[], types_filter=["consumer"]), 5, CLIENT)
    assert [(x.group_id, x.group_type, x.group_state, x.protocol_type) for x in listed.groups] == [
        ("g", "consumer", "Stable", "consumer")
    ]
    listed = list_groups.API.handle(ctx, ListGroupsRequest[5](states_filter=[], types_filter=["classic"]), 5, CLIENT)
    assert listed.groups == []
    # DescribeGroups (the classic API) knows no consumer group: Dead, as Kafka's classicGroup() lookup
    (dg,) = describe_groups.API.handle(ctx, DescribeGroupsRequest[5](groups=["g"]), 5, CLIENT).groups
    assert (dg.group_state, dg.members) == ("Dead", [])
    deleted = delete_groups.API.handle(ctx, DeleteGroupsRequest[2](groups_names=["g"]), 2, CLIENT)
    assert deleted.results[0].error_code == ErrorCode.NON_EMPTY_GROUP
    heartbeat(ctx, epoch=-1)
    deleted = delete_groups.API.handle(ctx, DeleteGroupsRequest[2](groups_names=["g"]), 2, CLIENT)
    assert deleted.results[0].error_code == ErrorCode.NONE
    assert "g" not in ctx.services.groups.consumer.groups


def _commit(ctx, member_id, epoch, version=9):
    Topic = OffsetCommitRequest.OffsetCommitRequestTopic
    request = OffsetCommitRequest[version](
        group_id="g",
        generation_id_or_member_epoch=epoch,
        member_id=member_id,
        topics=[
            Topic(name="t", partitions=[Topic.OffsetCommitRequestPartition(partition_index=0, committed_offset=5)])
        ],
    )
    response = offset_commit.API.handle(ctx, request, version, CLIENT)
    return response.topics[0].partitions[0].error_code


def test_offset_commit_and_fetch_are_checked_against_the_member_epoch(ctx):
    heartbeat(ctx)
    assert _commit(ctx, "m1", 0) == ErrorCode.STALE_MEMBER_EPOCH
    assert _commit(ctx, "zz", 1) == ErrorCode.UNKNOWN_MEMBER_ID
    assert _commit(ctx, "m1", 1, version=8) == ErrorCode.UNSUPPORTED_VERSION
    assert _commit(ctx, "m1", 1) == ErrorCode.NONE
    Group = OffsetFetchRequest.OffsetFetchRequestGroup

    def fetch(member_id, epoch):
        request = OffsetFetchRequest[9](
            groups=[Group(group_id="g", member_id=member_id, member_epoch=epoch, topics=None)], require_stable=False
        )
        return offset_fetch.API.handle(ctx, request, 9, CLIENT).groups[0]

    assert fetch("m1", 3).error_code == ErrorCode.STALE_MEMBER_EPOCH
    assert fetch("zz", 1).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    ok = fetch("m1", 1)
    assert ok.error_code == ErrorCode.NONE and ok.topics[0].partitions[0].committed_offset == 5
    assert fetch(None, -1).error_code == ErrorCode.NONE  # an admin's fetch


def test_the_consumer_protocol_can_be_turned_off(ctx):
    settings = load_settings(overrides={"storage": {"kind": "memory"}, "groups": {"rebalance_protocols": "classic"}})
    off = bootstrap(settings, default_adapters(settings))
    off.services.catalog.create("t", 1, 1)
    assert heartbeat(off).error_code == ErrorCode.UNSUPPORTED_VERSION


def test_the_group_config_resource_sets_a_groups_session_timeout_and_heartbeat_interval(ctx):
    Resource = IncrementalAlterConfigsRequest.AlterConfigsResource
    Config = Resource.AlterableConfig

    def alter(*configs, validate_only=False):
        request = IncrementalAlterConfigsRequest[1](
            resources=[Resource(resource_type=32, resource_name="g", configs=list(configs))],
            validate_only=validate_only,
        )
        (result,) = incremental_alter_configs.API.handle(ctx, request, 1, CLIENT).responses
        return result.error_code, result.error_message

    def describe():
        Describe = DescribeConfigsRequest.DescribeConfigsResource
        request = DescribeConfigsRequest[4](
            resources=[Describe(resource_type=32, resource_name="g", configuration_keys=None)],
            include_synonyms=False,
            include_documentation=False,
        )
        (result,) = describe_configs.API.handle(ctx, request, 4, CLIENT).results
        return {c.name: (c.value, c.config_source) for c in result.configs}

    described = describe()  # every group config, as Kafka's GroupConfig: share groups' share.* too
    assert {k: v for k, v in described.items() if k.startswith("consumer.")} == {
        "consumer.heartbeat.interval.ms": ("5000", 5),
        "consumer.session.timeout.ms": ("45000", 5),
    }
    assert described["share.auto.offset.reset"] == ("latest", 5)
    assert alter(Config(name="consumer.heartbeat.interval.ms", config_operation=0, value="6000")) == (
        ErrorCode.NONE,
        None,
    )
    assert describe()["consumer.heartbeat.interval.ms"] == ("6000", 8)  # GROUP_CONFIG
    assert heartbeat(ctx).heartbeat_interval_ms == 6000
    error, message = alter(Config(name="consumer.session.timeout.ms", config_operation=0, value="1000"))
    assert error == ErrorCode.INVALID_CONFIG and "between 45000 and 60000" in message
    assert alter(Config(name="nope", config_operation=0, value="1"))[0] == ErrorCode.INVALID_CONFIG
    assert alter(Config(name="consumer.heartbeat.interval.ms", config_operation=1, value=None))[0] == ErrorCode.NONE
    assert describe()["consumer.heartbeat.interval.ms"] == ("5000", 5)


def test_a_regex_subscription_leaves_out_topics_the_principal_may_not_describe():
    settings = load_settings(
        overrides={
            "storage": {"kind": "memory"},
            "security": {
                "authorizer_class_name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                "allow_everyone_if_no_acl_found": True,
            },
        }
    )
    secured = bootstrap(settings, default_adapters(settings))
    secured.services.catalog.create("t", 1, 1)
    secured.services.catalog.create("t-secret", 1, 1)
    secured.services.authorization.authorizer.create(
        [
            AclBinding(
                Res.TOPIC, "t-secret", PatternType.LITERAL, "User:ANONYMOUS", "*", Op.DESCRIBE, AclPermissionType.DENY
            )
        ]
    )
    request = ConsumerGroupHeartbeatRequest[1](
        group_id="g",
        member_id="m1",
        member_epoch=0,
        rebalance_timeout_ms=30_000,
        subscribed_topic_regex="t.*",
        topic_partitions=[],
    )

    async def join_and_resolve():
        deferred = consumer_group_heartbeat.API.handle(secured, request, 1, CLIENT)  # RE2 compiles off the loop
        first = await deferred.wait()
        assert first.error_code == ErrorCode.NONE and first.assignment.topic_partitions == []
        groups = secured.services.groups
        await groups.regexes.resolve(*groups.consumer.take_regex_work())  # compiled and cached; matched
        work = groups.consumer.take_regex_work()
        assert work is None
        groups.consumer.regexes_resolved(await groups.regexes.resolve({"t.*"}, ("t", "t-secret", "u")), 0)
        again = ConsumerGroupHeartbeatRequest[1](group_id="g", member_id="m1", member_epoch=first.member_epoch)
        return consumer_group_heartbeat.API.handle(secured, again, 1, CLIENT)

    response = trio.run(join_and_resolve)
    assert response.error_code == ErrorCode.NONE
    assert [tp.topic_id for tp in response.assignment.topic_partitions] == [secured.services.catalog.get("t").topic_id]


def test_a_pattern_re2_cannot_express_is_invalid_regular_expression_and_never_reaches_the_coordinator(ctx):
    async def send(pattern):
        request = ConsumerGroupHeartbeatRequest[1](
            group_id="g",
            member_id="m1",
            member_epoch=0,
            rebalance_timeout_ms=30_000,
            subscribed_topic_regex=pattern,
            topic_partitions=[],
        )
        return await consumer_group_heartbeat.API.handle(ctx, request, 1, CLIENT).wait()

    for pattern in ["(?=t)", r"(t)\1", "(", "a" * 1_600_000]:
        response = trio.run(send, pattern)
        assert response.error_code == ErrorCode.INVALID_REGULAR_EXPRESSION, pattern[:10]
        assert "is not a valid regular expression" in response.error_message
        assert len(response.error_message) < 400
    assert "g" not in ctx.services.groups.consumer.groups


def test_a_heartbeat_naming_a_topic_the_principal_may_not_describe_is_refused():
    settings = load_settings(
        overrides={
            "storage": {"kind": "memory"},
            "security": {
                "authorizer_class_name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                "allow_everyone_if_no_acl_found": True,
            },
        }
    )
    secured = bootstrap(settings, default_adapters(settings))
    secured.services.catalog.create("t", 1, 1)
    secured.services.catalog.create("t-secret", 1, 1)
    secured.services.authorization.authorizer.create(
        [
            AclBinding(
                Res.TOPIC, "t-secret", PatternType.LITERAL, "User:ANONYMOUS", "*", Op.DESCRIBE, AclPermissionType.DENY
            )
        ]
    )
    request = ConsumerGroupHeartbeatRequest[1](
        group_id="g",
        member_id="m1",
        member_epoch=0,
        rebalance_timeout_ms=30_000,
        subscribed_topic_names=["t", "t-secret"],
        topic_partitions=[],
    )
    response = consumer_group_heartbeat.API.handle(secured, request, 1, CLIENT)
    assert response.error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED  # KAFKA-18813
    assert response.assignment is None and "g" not in secured.services.groups.consumer.groups


def test_classic_requests_for_a_consumer_group_with_members_are_served_by_it(ctx):
    heartbeat(ctx)
    other = JoinRequest("g", "", "connect", (Protocol("default", b""),), 10_000, 10_000, require_known_member_id=False)
    assert ctx.services.groups.join(other).error == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    metadata = ConsumerProtocolSubscription(version=0, topics=["t"], user_data=None).encode(version=0)
    join = JoinRequest(
        "g", "", "consumer", (Protocol("range", metadata),), 10_000, 10_000, require_known_member_id=False
    )
    joined = ctx.services.groups.join(join)  # a classic member inside the consumer group (ADR 50), answered at once
    assert joined.error == ErrorCode.NONE and joined.member_id in ctx.services.groups.consumer.groups["g"].members
    sync = ctx.services.groups.sync(SyncRequest("g", joined.member_id, joined.generation_id))
    assert sync.error == ErrorCode.NONE
    assert ctx.services.groups.heartbeat("g", joined.member_id, joined.generation_id, None) == ErrorCode.NONE
    heartbeat(ctx, epoch=-1)  # the last consumer-protocol member leaves: the group turns classic
    assert "g" not in ctx.services.groups.consumer.groups and ctx.services.groups.coordinator.group("g") is not None
    assert ctx.services.groups.leave("g", [(joined.member_id, None)]) == [ErrorCode.NONE]
    ctx.services.groups.join(join)  # an empty group of either protocol gives way to the other
    assert "g" not in ctx.services.groups.consumer.groups and ctx.services.groups.coordinator.group("g") is not None


def test_an_upgrade_answers_the_classic_groups_waiting_join_and_writes_both_groups_records(ctx):
    metadata = ConsumerProtocolSubscription(version=0, topics=["t"], user_data=None).encode(version=0)
    join = JoinRequest(
        "g", "", "consumer", (Protocol("range", metadata),), 10_000, 10_000, require_known_member_id=False
    )

    waiting = ctx.services.groups.join(join)  # the initial rebalance delay holds the first JoinGroup
    assert isinstance(waiting, GroupAnswer)
    answered = []
    ctx.services.appends.park(Parked((waiting,), None, lambda expired: waiting.result), answered.append)
    assert heartbeat(ctx, member_id="c1").error_code == ErrorCode.NONE  # upgrades the classic group
    (result,) = answered  # answered by the heartbeat's commit, from its task
    assert result.error == ErrorCode.REBALANCE_IN_PROGRESS  # its member joins again, inside the consumer group
    rejoined = ctx.services.groups.join(attrs.evolve(join, member_id=result.member_id))
    assert rejoined.error == ErrorCode.NONE and rejoined.protocol_name == "range"
    group = ctx.services.groups.consumer.groups["g"]
    assert set(group.members) == {"c1", rejoined_id(group)}
    assert ctx.services.groups.coordinator.group("g") is None
    assert "g" not in ctx.services.groups.offsets._store.group_metadata()  # the classic group's tombstone


def rejoined_id(group) -> str:
    (classic,) = [m for m in group.members.values() if m.classic is not None]
    return classic.member_id


def test_a_topic_created_again_under_its_name_is_a_new_assignment_by_topic_id(ctx):
    """Kafka keys a consumer group member's assignment by topic id: when a subscribed topic is deleted
    and created again with as many partitions, the next heartbeat carries the assignment with the new id
    (by name it looks unchanged, and the client would keep fetching the old id)."""
    joined = heartbeat(ctx)
    old_id = ctx.services.catalog.get("t").topic_id
    stable = heartbeat(ctx, epoch=joined.member_epoch, owned=[0, 1, 2, 3])
    assert stable.assignment is None
    ctx.services.catalog.delete("t")
    ctx.services.catalog.create("t", 4, 1)
    new_id = ctx.services.catalog.get("t").topic_id
    Tp = ConsumerGroupHeartbeatRequest.TopicPartitions
    request = ConsumerGroupHeartbeatRequest[1](
        group_id="g",
        member_id="m1",
        member_epoch=joined.member_epoch,
        topic_partitions=[Tp(topic_id=old_id, partitions=[0, 1, 2, 3])],
    )
    answer = consumer_group_heartbeat.API.handle(ctx, request, 1, CLIENT)
    assert answer.error_code == ErrorCode.NONE and answer.member_epoch > joined.member_epoch
    assert answer.assignment is not None
    assert [(t.topic_id, t.partitions) for t in answer.assignment.topic_partitions] == [(new_id, [0, 1, 2, 3])]
    assert heartbeat(ctx, epoch=answer.member_epoch, owned=[0, 1, 2, 3]).assignment is None


def txn_offset_commit(ctx, pid, epoch, member_id, member_epoch, instance_id=None):
    Topic = TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic
    Partition = Topic.TxnOffsetCommitRequestPartition
    request = TxnOffsetCommitRequest[4](
        transactional_id="tid",
        group_id="g",
        producer_id=pid,
        producer_epoch=epoch,
        generation_id=member_epoch,
        member_id=member_id,
        group_instance_id=instance_id,
        topics=[
            Topic(
                name="t",
                partitions=[
                    Partition(partition_index=0, committed_offset=5, committed_leader_epoch=-1, committed_metadata="")
                ],
            )
        ],
    )
    answer = txn_offset_commit_room.API.handle(ctx, request, 4, CLIENT)
    return answer.topics[0].partitions[0].error_code


def test_a_consumer_group_members_txn_offset_commit_is_checked_against_its_member_epoch(ctx):
    """franz-go's TestTxnEtl with KIP-848 groups: a GroupTransactSession commits with TxnOffsetCommit
    carrying its member id and member epoch. Kafka checks them against the consumer group (its
    validateOffsetCommit); trafka checked them against the classic groups, which answered
    ILLEGAL_GENERATION, so every transaction aborted and the test circled forever."""
    joined = heartbeat(ctx)
    txn = ctx.services.transactions.init_producer_id("tid", 60_000, ctx.services.clock_ms())
    pid, epoch = txn.producer_id, txn.producer_epoch
    assert ctx.services.transactions.add_offsets("tid", pid, epoch, "g", ctx.services.clock_ms()) is ErrorCode.NONE
    assert txn_offset_commit(ctx, pid, epoch, "m1", joined.member_epoch) == ErrorCode.NONE
    assert txn_offset_commit(ctx, pid, epoch, "m1", joined.member_epoch + 1) == ErrorCode.STALE_MEMBER_EPOCH
    assert txn_offset_commit(ctx, pid, epoch, "nobody", joined.member_epoch) == ErrorCode.UNKNOWN_MEMBER_ID
    assert txn_offset_commit(ctx, pid, epoch, "", -1) == ErrorCode.NONE  # a producer outside the group


def test_a_regex_matches_consumer_offsets_once_it_exists_and_assigns_it_by_its_id(ctx):
    """Kafka resolves a member's regex against every topic of its metadata image, internal ones
    included (GroupMetadataManager.refreshRegularExpressions): franz-go's Test848RegexBrokerResolves
    waits for `__consumer_offsets` to be assigned. It exists from the first FindCoordinator (ADR 89)."""
    pattern = ".*(?:(?:t)|(?:__consumer_offsets)).*"  # what franz-go sends for two quoted names
    groups = ctx.services.groups
    Owned = ConsumerGroupHeartbeatRequest.TopicPartitions
    member = {"epoch": 0, "owned": {}}

    def beat(**fields):
        request = ConsumerGroupHeartbeatRequest[1](
            group_id="g",
            member_id="m1",
            member_epoch=member["epoch"],
            topic_partitions=[Owned(topic_id=t, partitions=ps) for t, ps in member["owned"].items()],
            **fields,
        )
        answer = consumer_group_heartbeat.API.handle(ctx, request, 1, CLIENT)
        return answer

    def settle(answer):
        assert answer.error_code == ErrorCode.NONE, answer
        member["epoch"] = answer.member_epoch
        if answer.assignment is not None:
            member["owned"] = {tp.topic_id: sorted(tp.partitions) for tp in answer.assignment.topic_partitions}

    async def resolve(expect_offsets: bool):
        patterns, names = groups.consumer.take_regex_work()
        assert ("__consumer_offsets" in names) is expect_offsets
        groups.consumer.regexes_resolved(await groups.regexes.resolve(patterns, names), 0)

    async def scenario():
        settle(await beat(rebalance_timeout_ms=30_000, subscribed_topic_regex=pattern).wait())
        await resolve(expect_offsets=False)  # nobody looked for a group coordinator yet
        for _ in range(3):
            settle(beat())
        ctx.services.internal_topics.create("__consumer_offsets")  # what FindCoordinator for a group does
        settle(beat())  # the coordinator sees a new topic: the regex is resolved again
        await resolve(expect_offsets=True)
        for _ in range(3):
            settle(beat())

    trio.run(scenario)
    offsets_id = ctx.services.internal_topics.get("__consumer_offsets").topic_id
    assert member["owned"] == {ctx.services.catalog.get("t").topic_id: [0, 1, 2, 3], offsets_id: [0]}
    assert groups.consumer.groups["g"].members["m1"].assigned == {
        "t": frozenset(range(4)),
        "__consumer_offsets": frozenset({0}),
    }


def test_offset_commit_to_an_internal_topic_that_exists_is_stored_as_kafka_stores_it(ctx):
    """Kafka's KafkaApis commits to any partition its metadata holds, `__consumer_offsets` included (a
    KIP-848 member a regex assigned it commits its position there, ADR 107); a partition it does not
    have, or the topic before it exists, is UNKNOWN_TOPIC_OR_PARTITION."""
    Topic = OffsetCommitRequest.OffsetCommitRequestTopic

    def commit(partition):
        request = OffsetCommitRequest[8](
            group_id="reader",
            generation_id_or_member_epoch=-1,
            member_id="",
            topics=[
                Topic(
                    name="__consumer_offsets",
                    partitions=[Topic.OffsetCommitRequestPartition(partition_index=partition, committed_offset=2)],
                )
            ],
        )
        return offset_commit.API.handle(ctx, request, 8, CLIENT).topics[0].partitions[0].error_code

    assert commit(0) == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION  # nobody looked for a coordinator yet
    ctx.services.internal_topics.create("__consumer_offsets")
    assert commit(0) == ErrorCode.NONE
    assert commit(1) == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION  # trafka's has one partition (ADR 64)
    Group = OffsetFetchRequest.OffsetFetchRequestGroup
    request = OffsetFetchRequest[9](groups=[Group(group_id="reader", topics=None)], require_stable=False)
    (group,) = offset_fetch.API.handle(ctx, request, 9, CLIENT).groups
    assert [(t.name, p.partition_index, p.committed_offset) for t in group.topics for p in t.partitions] == [
        ("__consumer_offsets", 0, 2)
    ]


def test_a_classic_members_client_host_is_kafkas_rendering_of_its_address(ctx):
    """JoinGroup records the member's host as Kafka's `InetAddress.toString()`: `/127.0.0.1`, and an IPv6
    peer's eight groups uncompressed (what DescribeGroups and `kafka-consumer-groups --members` show)."""
    from trafka.adapters.kafka.apis import classic_group
    from trafka.schema_codec.messages import JoinGroupRequest

    for group, host, shown in (("c4", "127.0.0.1", "/127.0.0.1"), ("c6", "::1", "/0:0:0:0:0:0:0:1")):
        Protocol_ = JoinGroupRequest.JoinGroupRequestProtocol
        request = JoinGroupRequest[3](
            group_id=group,
            session_timeout_ms=10_000,
            rebalance_timeout_ms=10_000,
            member_id="",
            protocol_type="consumer",
            protocols=[Protocol_(name="range", metadata=b"")],
        )
        classic_group.JOIN_GROUP.handle(ctx, request, 3, ClientInfo("client-1", host))
        (member,) = ctx.services.groups.coordinator.group(group).members.values()
        assert member.client_host == shown
