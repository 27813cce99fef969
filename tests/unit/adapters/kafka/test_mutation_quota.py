"""The controller mutation quota in CreateTopics, CreatePartitions and DeleteTopics (KIP-599): one
permit per partition, THROTTLING_QUOTA_EXCEEDED once the client's bucket is empty (strict versions),
served but throttled on older versions; the response carries the throttle."""

from __future__ import annotations

import pytest

from trafka.adapters.kafka.apis import create_partitions, create_topics, delete_topics
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.errors import ErrorCode
from trafka.domain.quotas import QuotaEntity
from trafka.schema_codec.messages import (
    CreatePartitionsRequest,
    CreateTopicsRequest,
    DeleteTopicsRequest,
)

LIMITED = ClientInfo("limited", "127.0.0.1")
FREE = ClientInfo("free", "127.0.0.1")


@pytest.fixture
def ctx():
    settings = load_settings(overrides={"storage": {"kind": "memory"}})
    ctx = bootstrap(settings, default_adapters(settings))
    # 1 partition a second, a burst of 11 (controller.quota.window.num 11 x 1 s)
    ctx.services.quotas.quotas.alter(
        [(QuotaEntity.user_client(client_id="limited"), [("controller_mutation_rate", 1.0)])]
    )
    return ctx


def _create(ctx, client, topics, version=7):
    Topic = CreateTopicsRequest.CreatableTopic
    request = CreateTopicsRequest[version](
        topics=[
            Topic(name=name, num_partitions=n, replication_factor=1, assignments=[], configs=[]) for name, n in topics
        ],
        timeout_ms=1000,
        validate_only=False,
    )
    return create_topics.API.handle(ctx, request, version, client)


def test_create_topics_past_the_burst_is_throttling_quota_exceeded(ctx):
    response = _create(ctx, LIMITED, [("a", 10), ("b", 5), ("c", 1)])
    assert [(t.name, t.error_code) for t in response.topics] == [
        ("a", ErrorCode.NONE),
        ("b", ErrorCode.NONE),  # the bucket held 1: served, and left 4 short
        ("c", ErrorCode.THROTTLING_QUOTA_EXCEEDED),
    ]
    assert response.topics[2].error_message == "The throttling quota has been exceeded."
    assert 3_900 <= response.throttle_time_ms <= 4_000
    assert ctx.services.catalog.get("c") is None
    free = _create(ctx, FREE, [("d", 20)])
    assert free.topics[0].error_code == ErrorCode.NONE and free.throttle_time_ms == 0


def test_before_create_topics_v6_the_quota_only_throttles(ctx):
    response = _create(ctx, LIMITED, [("a", 10), ("b", 5), ("c", 1)], version=5)
    assert [t.error_code for t in response.topics] == [ErrorCode.NONE] * 3
    assert 4_900 <= response.throttle_time_ms <= 5_000


def test_create_partitions_and_delete_topics_take_permits(ctx):
    ctx.services.catalog.create("t", 1, 1)
    ctx.services.catalog.create("u", 5, 1)
    Topic = CreatePartitionsRequest.CreatePartitionsTopic
    grown = create_partitions.API.handle(
        ctx,
        CreatePartitionsRequest[3](
            topics=[Topic(name="t", count=12, assignments=None)], timeout_ms=1000, validate_only=False
        ),
        3,
        LIMITED,
    )
    assert grown.results[0].error_code == ErrorCode.NONE  # 11 new partitions: the whole burst
    Deletion = DeleteTopicsRequest.DeleteTopicState
    deleted = delete_topics.API.handle(
        ctx, DeleteTopicsRequest[6](topics=[Deletion(name="u", topic_id=None)], timeout_ms=1000), 6, LIMITED
    )
    assert deleted.responses[0].error_code == ErrorCode.NONE  # bucket at 0: served, 5 short
    again = delete_topics.API.handle(
        ctx, DeleteTopicsRequest[6](topics=[Deletion(name="t", topic_id=None)], timeout_ms=1000), 6, LIMITED
    )
    assert again.responses[0].error_code == ErrorCode.THROTTLING_QUOTA_EXCEEDED
    assert ctx.services.catalog.get("t") is not None and again.throttle_time_ms > 4_000
