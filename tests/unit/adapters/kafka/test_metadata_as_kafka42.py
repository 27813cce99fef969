"""Metadata as Apache Kafka 4.2.2 answers it where the client libraries' suites found trafka differing
(issue 41), on a memory-store broker: the internal topics listed (`is_internal`) once a client has
caused them to exist, and the request that auto-creates a topic answered UNKNOWN_TOPIC_OR_PARTITION
(the next one lists it). Kafka's answers were read from the reference broker (tests/kafka)."""

from __future__ import annotations

import pytest
from kafka.protocol.metadata import FindCoordinatorRequest, MetadataRequest

from trafka.adapters.kafka.apis import find_coordinator, metadata
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.errors import ErrorCode
from trafka.domain.topics import ZERO_UUID

CLIENT = ClientInfo("client-1", "127.0.0.1")
UNKNOWN = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


@pytest.fixture
def ctx():
    settings = load_settings(overrides={"storage": {"kind": "memory"}})
    ctx = bootstrap(settings, default_adapters(settings))
    ctx.services.catalog.create("t", 1, 1)
    return ctx


def ask(ctx, names=None, auto=False, version=12):
    """(name, error, is_internal, partition count, topic id known) per topic answered."""
    T = MetadataRequest.MetadataRequestTopic
    if names is None:
        topics = None
    elif version >= 10:
        topics = [T(name=n, topic_id=None) for n in names]
    else:
        topics = [T(name=n) for n in names]
    fields = {"include_topic_authorized_operations": False} if version >= 8 else {}
    request = MetadataRequest[version](topics=topics, allow_auto_topic_creation=auto, **fields)
    answer = metadata.API.handle(ctx, request, version, CLIENT)
    return sorted(
        (
            t.name,
            t.error_code,
            t.is_internal,
            len(t.partitions),
            version >= 10 and t.topic_id not in (None, ZERO_UUID),
        )
        for t in answer.topics
    )


def find_group_coordinator(ctx, key_type=0):
    request = FindCoordinatorRequest[4](key_type=key_type, coordinator_keys=["g"])
    (found,) = find_coordinator.API.handle(ctx, request, 4, CLIENT).coordinators
    assert found.error_code == ErrorCode.NONE


def test_consumer_offsets_is_listed_as_internal_once_a_group_coordinator_was_looked_for(ctx):
    assert ask(ctx) == [("t", 0, False, 1, True)]
    assert ask(ctx, ["__consumer_offsets"]) == [("__consumer_offsets", UNKNOWN, True, 0, False)]
    find_group_coordinator(ctx)
    offsets = ("__consumer_offsets", 0, True, 1, True)
    assert ask(ctx) == [offsets, ("t", 0, False, 1, True)]
    assert ask(ctx, ["__consumer_offsets"]) == [offsets]
    assert ask(ctx, version=1) == [("__consumer_offsets", 0, True, 1, False), ("t", 0, False, 1, False)]
    find_group_coordinator(ctx, key_type=1)
    assert [t[0] for t in ask(ctx)] == ["__consumer_offsets", "__transaction_state", "t"]


def test_an_internal_topic_asked_for_with_auto_creation_is_created_as_kafka_creates_it(ctx):
    assert ask(ctx, ["__consumer_offsets"], auto=True) == [("__consumer_offsets", UNKNOWN, True, 0, False)]
    assert ask(ctx, ["__consumer_offsets"], auto=True) == [("__consumer_offsets", 0, True, 1, True)]


@pytest.mark.parametrize("version", [4, 12])
def test_the_request_that_auto_creates_a_topic_is_answered_unknown_topic_then_the_next_lists_it(ctx, version):
    """Kafka 4.2.2 answers the Metadata request that auto-creates a topic UNKNOWN_TOPIC_OR_PARTITION,
    without partitions or topic id (AutoTopicCreationManager); the client asks again."""
    assert ask(ctx, ["new"], auto=True, version=version) == [("new", UNKNOWN, False, 0, False)]
    assert ctx.services.catalog.get("new") is not None
    assert ask(ctx, ["new"], auto=True, version=version) == [("new", 0, False, 1, version >= 10)]


def test_an_unknown_topic_without_auto_creation_stays_unknown(ctx):
    assert ask(ctx, ["nope"]) == [("nope", UNKNOWN, False, 0, False)]
    assert ctx.services.catalog.get("nope") is None
