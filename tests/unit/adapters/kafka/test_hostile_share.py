"""Hostile share-group clients (issue 42), through the real rooms on the in-memory adapter.

- 2: ShareFetch authorizes READ on every partition of the share session on every request (Kafka's
  handleShareFetchRequest), not only on the partitions the request names.
"""

from __future__ import annotations

import time
from functools import partial

import pytest

from trafka.adapters.kafka.apis import share_fetch, share_group_describe, share_group_heartbeat
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.adapters.kafka.runtime.share_dead_letters import dead_letter_refusal
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.errors import ErrorCode
from trafka.domain.groups.share.configs import DELETE, SET
from trafka.domain.security import KafkaPrincipal
from trafka.domain.security.acls import AclBinding, AclPermissionType, PatternType
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import ShareFetchRequest, ShareGroupDescribeRequest, ShareGroupHeartbeatRequest

from .test_share_group_rooms import acknowledge, acquired, ctx, fetch, produce  # noqa: F401 (ctx: a fixture)

ALICE = ClientInfo("alice", "127.0.0.1", principal=KafkaPrincipal.user("alice"), connection="alice-connection")
BOB = ClientInfo("bob", "127.0.0.1", principal=KafkaPrincipal.user("bob"), connection="bob-connection")


def acl(principal: str, res: Res, name: str, op: Op, permission=AclPermissionType.ALLOW) -> AclBinding:
    return AclBinding(res, name, PatternType.LITERAL, f"User:{principal}", "*", op, permission)


@pytest.fixture
def secured():
    settings = load_settings(
        overrides={
            "storage": {"kind": "memory"},
            "security": {"authorizer_class_name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer"},
        }
    )
    ctx = bootstrap(settings, default_adapters(settings))
    ctx.services.catalog.create("t", 1, 1)
    ctx.services.share.groups.configs["g"] = {"share.auto.offset.reset": "earliest"}
    ctx.services.authorization.authorizer.create(
        [
            acl("alice", Res.GROUP, "g", Op.READ),
            acl("alice", Res.TOPIC, "t", Op.READ),
            acl("bob", Res.GROUP, "g", Op.READ),
        ]
    )
    return ctx


def join(ctx, client: ClientInfo = ALICE) -> str:
    request = ShareGroupHeartbeatRequest[1](group_id="g", member_id="m1", member_epoch=0, subscribed_topic_names=["t"])
    answer = share_group_heartbeat.API.handle(ctx, request, 1, client)
    assert answer.error_code == ErrorCode.NONE
    return answer.member_id


ACCEPT, REJECT = 1, 3


def plain_join(ctx) -> str:
    request = ShareGroupHeartbeatRequest[1](group_id="g", member_id="m1", member_epoch=0, subscribed_topic_names=["t"])
    return share_group_heartbeat.API.handle(ctx, request, 1, ClientInfo("c", "127.0.0.1")).member_id


def acknowledge_types(ctx, member: str, first: int, last: int, types: list[int]) -> ErrorCode:
    """The domain's acknowledgement, as the ShareAcknowledge room calls it."""
    tp = TopicPartition("t", 0)
    return ctx.services.share.groups.acknowledge("g", member, tp, [(first, last, types)], 0, False)


def empty_fetch(ctx, member: str, epoch: int, client: ClientInfo):
    """A fetch in an open session that names no partition: it reads the session's."""
    request = ShareFetchRequest[1](
        group_id="g",
        member_id=member,
        share_session_epoch=epoch,
        max_wait_ms=0,
        min_bytes=1,
        max_bytes=1 << 20,
        max_records=10,
        batch_size=10,
        topics=[],
        forgotten_topics_data=[],
    )
    return share_fetch.API.handle(ctx, request, 1, client)


def partition_errors(response) -> list[int]:
    return [p.error_code for t in response.responses for p in t.partitions]


def test_a_member_whose_read_is_revoked_reads_nothing_more_from_its_session(secured):
    produce(secured, 4)
    member = join(secured)
    assert acquired(fetch(secured, member=member, max_records=2, client=ALICE)) == [(0, 1, 1)]
    secured.services.authorization.authorizer.create([acl("alice", Res.TOPIC, "t", Op.READ, AclPermissionType.DENY)])
    response = empty_fetch(secured, member, 1, ALICE)
    assert acquired(response) == []
    assert partition_errors(response) == [ErrorCode.TOPIC_AUTHORIZATION_FAILED]


def test_another_principal_cannot_read_through_someone_elses_session(secured):
    produce(secured, 4)
    member = join(secured)
    assert acquired(fetch(secured, member=member, max_records=1, client=ALICE)) == [(0, 0, 1)]
    for epoch in range(1, 4):  # bob tries epochs on alice's session
        response = empty_fetch(secured, member, epoch, BOB)
        assert acquired(response) == []
    assert ErrorCode.TOPIC_AUTHORIZATION_FAILED in [
        e for epoch in range(1, 5) for e in partition_errors(empty_fetch(secured, member, epoch, BOB))
    ]


def test_a_dead_letter_topic_needs_the_prefix_and_write_on_it():
    """KIP-1191 (#3): setting a group's dead-letter topic refuses a name without the broker's prefix
    (INVALID_CONFIG) and a topic its setter may not write (TOPIC_AUTHORIZATION_FAILED)."""
    writable = {"dlq.mine"}
    refusal = partial(dead_letter_refusal, "dlq.", writable.__contains__)
    name = "errors.deadletterqueue.topic.name"
    assert refusal([(name, SET, "ledger")])[0] is ErrorCode.INVALID_CONFIG
    assert refusal([(name, SET, "dlq.theirs")])[0] is ErrorCode.TOPIC_AUTHORIZATION_FAILED
    assert refusal([(name, SET, "dlq.mine"), ("share.isolation.level", SET, "x")]) is None
    assert refusal([(name, SET, ""), (name, DELETE, None)]) is None


def test_describing_a_group_that_uses_a_topic_one_may_not_describe_shows_no_members(secured):
    """#7: Kafka answers such a group TOPIC_AUTHORIZATION_FAILED, with no member data."""
    join(secured)
    describe = secured.services.authorization.layer(share_group_describe.API)
    request = ShareGroupDescribeRequest[1](group_ids=["g"], include_authorized_operations=False)
    (seen,) = describe(secured, request, 1, ALICE).groups
    assert seen.error_code == ErrorCode.NONE and seen.members
    (hidden,) = describe(secured, request, 1, BOB).groups
    assert hidden.error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED and hidden.members == []


def test_overlapping_acknowledgement_batches_are_an_invalid_request_and_change_nothing(ctx):
    """#10: Kafka refuses overlapping or unordered batches (INVALID_REQUEST); before, they were applied
    one after another and accepted records ended archived."""
    produce(ctx, 4)
    member = plain_join(ctx)
    assert acquired(fetch(ctx, member=member, max_records=4)) == [(0, 3, 1)]
    overlapping = ((0, 3, ACCEPT), (2, 3, REJECT))
    assert acknowledge(ctx, member=member, acks=overlapping).responses[0].partitions[0].error_code == (
        ErrorCode.INVALID_REQUEST
    )
    unordered = ((2, 3, ACCEPT), (0, 1, ACCEPT))
    assert acknowledge(ctx, member=member, epoch=2, acks=unordered).responses[0].partitions[0].error_code == (
        ErrorCode.INVALID_REQUEST
    )
    assert acknowledge(ctx, member=member, epoch=3, acks=((0, 3, ACCEPT),)).responses[0].partitions[0].error_code == 0


def test_millions_of_per_offset_types_for_records_not_held_are_refused_before_per_offset_work(ctx):
    """#9: ownership is checked on the range first; the per-offset types are not walked."""
    produce(ctx, 2)
    member = plain_join(ctx)
    assert acquired(fetch(ctx, member=member, max_records=2)) == [(0, 1, 1)]
    huge = 2_000_000
    started = time.process_time()
    answer = acknowledge_types(ctx, member, 0, huge - 1, [ACCEPT] * huge)
    assert answer == ErrorCode.INVALID_RECORD_STATE
    assert time.process_time() - started < 0.5
