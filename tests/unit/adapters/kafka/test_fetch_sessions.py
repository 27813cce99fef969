"""Fetch sessions through the Fetch room (in-memory broker): the answer carries the session id, a
steady-state request names no partition and is answered with only what changed, by name (v12) and
by topic id (v13+), session errors come back top level, a session's partitions the principal may no
longer read are refused, and a simulated cluster serves without sessions."""

from __future__ import annotations

import pytest

from tests.batches import make_batch
from trafka.adapters.kafka.api import Deferred
from trafka.adapters.kafka.apis.fetch import Uses, handle_fetch
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.errors import ErrorCode
from trafka.domain.security import KafkaPrincipal
from trafka.domain.security.acls import AclBinding, AclPermissionType, PatternType
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import FetchRequest

CLIENT = ClientInfo("test", "127.0.0.1")
Topic = FetchRequest.FetchTopic
Partition = Topic.FetchPartition
Forgotten = FetchRequest.ForgottenTopic


def broker(**security):
    overrides: dict = {"storage": {"kind": "memory"}}
    if security:
        overrides["security"] = security
    settings = load_settings(overrides=overrides)
    ctx = bootstrap(settings, default_adapters(settings))
    ctx.services.catalog.create("a", 2, 1)
    ctx.services.catalog.create("b", 1, 1)
    return ctx


def produce(ctx, topic, partition, n=1):
    ctx.services.replicas.produce(
        TopicPartition(topic, partition), make_batch([(1000, None, b"v")] * n), ctx.services.clock_ms()
    )


def topic_entry(ctx, version, name, partitions):
    parts = [Partition(partition=p, fetch_offset=o, partition_max_bytes=1 << 20) for p, o in partitions]
    if version >= 13:
        return Topic(topic_id=ctx.services.catalog.get(name).topic_id, partitions=parts)
    return Topic(topic=name, partitions=parts)


def fetch(ctx, version, session_id, epoch, topics=(), forgotten=(), client=CLIENT):
    request = FetchRequest[version](
        replica_id=-1,
        max_wait_ms=0,
        min_bytes=0,
        max_bytes=1 << 24,
        isolation_level=0,
        session_id=session_id,
        session_epoch=epoch,
        topics=[topic_entry(ctx, version, name, parts) for name, parts in topics],
        forgotten_topics_data=[
            Forgotten(topic_id=ctx.services.catalog.get(n).topic_id, partitions=p)
            if version >= 13
            else Forgotten(topic=n, partitions=p)
            for n, p in forgotten
        ],
        rack_id="",
    )
    answer = handle_fetch(ctx.view(Uses), request, version, client)
    assert not isinstance(answer, Deferred)
    return answer


def answered(ctx, answer, version):
    """[(topic name, partition, error, high watermark, record bytes)]"""
    out = []
    for name, topic_id, partitions in answer.topics:
        topic = ctx.services.catalog.by_id(topic_id).name if version >= 13 else name
        for index, error, hw, _, _, _, _, records in partitions:
            out.append((topic, index, error, hw, len(records or b"")))
    return out


@pytest.mark.parametrize("version", [7, 12, 13, 17])
def test_a_steady_state_fetch_names_nothing_and_is_answered_with_what_changed(version):
    ctx = broker()
    produce(ctx, "a", 0, 2)
    full = fetch(ctx, version, 0, 0, [("a", [(0, 0), (1, 0)]), ("b", [(0, 0)])])
    assert full.session_id != 0 and full.error_code == ErrorCode.NONE
    assert [(t, p, hw) for t, p, _, hw, _ in answered(ctx, full, version)] == [("a", 0, 2), ("a", 1, 0), ("b", 0, 0)]
    # the consumer moves past a-0's records: it names only that partition
    moved = fetch(ctx, version, full.session_id, 1, [("a", [(0, 2)])])
    assert moved.session_id == full.session_id and answered(ctx, moved, version) == []
    idle = fetch(ctx, version, full.session_id, 2)
    assert answered(ctx, idle, version) == []
    produce(ctx, "b", 0, 3)
    (fresh,) = answered(ctx, fetch(ctx, version, full.session_id, 3), version)
    assert fresh[:4] == ("b", 0, ErrorCode.NONE, 3) and fresh[4] > 0
    # forgetting b-0 leaves a: nothing changed there
    assert answered(ctx, fetch(ctx, version, full.session_id, 4, forgotten=[("b", [0])]), version) == []
    produce(ctx, "b", 0)
    assert answered(ctx, fetch(ctx, version, full.session_id, 5), version) == []


def test_session_errors_are_top_level_with_no_partitions():
    ctx = broker()
    unknown = fetch(ctx, 12, 12345, 1)
    assert (unknown.error_code, unknown.session_id, unknown.topics) == (ErrorCode.FETCH_SESSION_ID_NOT_FOUND, 0, [])
    session = fetch(ctx, 12, 0, 0, [("a", [(0, 0)])]).session_id
    stale = fetch(ctx, 12, session, 5)
    assert stale.error_code == ErrorCode.INVALID_FETCH_SESSION_EPOCH
    by_id = fetch(ctx, 13, session, 1)
    assert by_id.error_code == ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR


def test_final_epoch_closes_the_session_and_answers_sessionless():
    ctx = broker()
    session = fetch(ctx, 12, 0, 0, [("a", [(0, 0)])]).session_id
    closing = fetch(ctx, 12, session, -1, [("a", [(0, 0)])])
    assert closing.session_id == 0 and len(answered(ctx, closing, 12)) == 1
    assert fetch(ctx, 12, session, 1).error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND


def test_a_deleted_topic_in_a_session_is_answered_unknown_topic_id():
    ctx = broker()
    session = fetch(ctx, 13, 0, 0, [("a", [(0, 0)]), ("b", [(0, 0)])]).session_id
    b_id = ctx.services.catalog.get("b").topic_id
    ctx.services.catalog.delete("b")
    answer = fetch(ctx, 13, session, 1)
    assert [(topic_id, p[0][1]) for _, topic_id, p in answer.topics] == [(b_id, ErrorCode.UNKNOWN_TOPIC_ID)]


def test_a_session_partition_the_principal_may_no_longer_read_is_refused():
    ctx = broker(
        authorizer_class_name="org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        allow_everyone_if_no_acl_found=True,
    )
    session = fetch(ctx, 12, 0, 0, [("a", [(0, 0)]), ("b", [(0, 0)])]).session_id
    assert answered(ctx, fetch(ctx, 12, session, 1), 12) == []
    ctx.services.authorization.authorizer.create(
        [AclBinding(Res.TOPIC, "b", PatternType.LITERAL, "User:ANONYMOUS", "*", Op.READ, AclPermissionType.DENY)]
    )
    produce(ctx, "b", 0)
    refused = answered(ctx, fetch(ctx, 12, session, 2), 12)
    assert refused == [("b", 0, ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1, 0)]


def test_max_incremental_fetch_session_cache_slots():
    settings = load_settings(
        overrides={"storage": {"kind": "memory"}, "broker": {"max_incremental_fetch_session_cache_slots": 0}}
    )
    ctx = bootstrap(settings, default_adapters(settings))
    ctx.services.catalog.create("a", 1, 1)
    answer = fetch(ctx, 12, 0, 0, [("a", [(0, 0)])])
    assert answer.session_id == 0 and len(answered(ctx, answer, 12)) == 1


def test_a_refused_partition_cannot_be_read_through_a_session_id_of_another_client():
    """Sessions are the broker's, as in Kafka: what decides what is read is the session's partitions,
    checked against the principal of the request that reads them."""
    ctx = broker(
        authorizer_class_name="org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        allow_everyone_if_no_acl_found=True,
    )
    produce(ctx, "b", 0)
    session = fetch(ctx, 12, 0, 0, [("b", [(0, 0)])]).session_id
    ctx.services.authorization.authorizer.create(
        [AclBinding(Res.TOPIC, "b", PatternType.LITERAL, "User:mallory", "*", Op.READ, AclPermissionType.DENY)]
    )
    mallory = ClientInfo("m", "127.0.0.1", principal=KafkaPrincipal.user("mallory"))
    (entry,) = answered(ctx, fetch(ctx, 12, session, 1, client=mallory), 12)
    assert entry[2] == ErrorCode.TOPIC_AUTHORIZATION_FAILED and entry[4] == 0
