"""The client quota layer (KIP-219) on a memory-store broker: a Produce over its byte rate is answered
with its throttle and flagged for muting, a Fetch over its byte rate is answered empty with no data,
a client without a quota and ApiVersions pass untouched."""

from __future__ import annotations

import pytest

from tests.batches import make_batch
from trafka.adapters.kafka.apis import api_versions, fetch, produce
from trafka.adapters.kafka.apis import metadata as metadata_api
from trafka.adapters.kafka.connection import quotas
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.adapters.kafka.wire.fast_fetch import FetchAnswer
from trafka.adapters.kafka.wire.fast_produce import PartitionProduceData, ProduceRequestView, TopicProduceData
from trafka.adapters.kafka.wire.fast_produce_answer import ProduceAnswer
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.quotas import QuotaEntity
from trafka.domain.security import KafkaPrincipal
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import ApiVersionsRequest, FetchRequest, MetadataRequest

LIMITED = ClientInfo("limited", "127.0.0.1")
FREE = ClientInfo("free", "127.0.0.1")
NOW = 1_700_000_000_000


@pytest.fixture
def ctx():
    settings = load_settings(overrides={"storage": {"kind": "memory"}})
    ctx = bootstrap(settings, default_adapters(settings))
    ctx.services.catalog.create("t", 1, 1)
    return ctx


def _limit(ctx, key, value):
    ctx.services.quotas.quotas.alter([(QuotaEntity.user_client(client_id="limited"), [(key, value)])])


def _produce(ctx, client, size):
    request = ProduceRequestView(
        None, 1, 1000, [TopicProduceData("t", [PartitionProduceData(0, make_batch([(NOW, b"k", b"v" * size)]))])]
    )
    return quotas.layer(produce.API, produce.API.handle)(ctx, request, 9, client)


def test_a_produce_over_its_byte_rate_carries_its_throttle(ctx):
    _limit(ctx, "producer_byte_rate", 1000.0)
    assert ctx.services.quotas.quotas.throttles_requests
    first = _produce(ctx, LIMITED, 5_000)
    assert isinstance(first, ProduceAnswer) and first.throttle_time_ms == 0  # 5 KB over 10 s: 500/s
    second = _produce(ctx, LIMITED, 10_000)
    assert isinstance(second, quotas.Throttled) and second.throttle_ms > 0
    assert second.response.throttle_time_ms == second.throttle_ms
    assert second.response.topics[0][1][0][1] == 0  # appended all the same, as Kafka
    assert isinstance(_produce(ctx, FREE, 20_000), ProduceAnswer)


def test_a_throttled_fetch_carries_no_data(ctx):
    ctx.services.replicas.produce(TopicPartition("t", 0), make_batch([(NOW, b"k", b"v" * 20_000)]), NOW)
    _limit(ctx, "consumer_byte_rate", 1000.0)
    Topic = FetchRequest.FetchTopic
    request = FetchRequest[12](
        replica_id=-1,
        max_wait_ms=0,
        min_bytes=1,
        max_bytes=10**6,
        isolation_level=0,
        session_id=0,
        session_epoch=-1,
        topics=[
            Topic(topic="t", partitions=[Topic.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=10**6)])
        ],
        forgotten_topics_data=[],
        rack_id="",
    )
    served = quotas.layer(fetch.API, fetch.API.handle)
    throttled = served(ctx, request, 12, LIMITED)
    assert isinstance(throttled, quotas.Throttled) and throttled.throttle_ms > 0
    assert isinstance(throttled.response, FetchAnswer) and throttled.response.topics == []
    assert throttled.response.throttle_time_ms == throttled.throttle_ms
    # its bytes were taken back: the rate is as before the fetch
    (stats,) = [
        s for s in ctx.services.quotas.statistics(ctx.services.clock_ms()) if s.quota_type.key == "consumer_byte_rate"
    ]
    assert stats.rate == 0.0 and stats.throttles == 1
    free = served(ctx, request, 12, FREE)
    assert isinstance(free, FetchAnswer) and len(free.topics[0][2][0][7]) > 20_000


def test_api_versions_is_never_throttled(ctx):
    _limit(ctx, "request_percentage", 0.0001)
    assert quotas.layer(api_versions.API, api_versions.API.handle) is api_versions.API.handle
    request = ApiVersionsRequest[3](client_software_name="x", client_software_version="1")
    assert not isinstance(api_versions.API.handle(ctx, request, 3, LIMITED), quotas.Throttled)


def test_a_user_quota_counts_the_authenticated_principal(ctx):
    ctx.services.quotas.quotas.alter([(QuotaEntity.user_client("alice"), [("producer_byte_rate", 1000.0)])])
    alice = ClientInfo("any-client", "127.0.0.1", principal=KafkaPrincipal.user("alice"))
    bob = ClientInfo("any-client", "127.0.0.1", principal=KafkaPrincipal.user("bob"))
    assert isinstance(_produce(ctx, alice, 30_000), quotas.Throttled)
    assert isinstance(_produce(ctx, bob, 30_000), ProduceAnswer)


def test_the_request_quota_throttles_any_api_for_at_most_a_window(ctx):
    _limit(ctx, "request_percentage", 1e-9)  # any handler time is over it
    metadata = quotas.layer(metadata_api.API, metadata_api.API.handle)
    request = MetadataRequest[12](
        topics=None, allow_auto_topic_creation=False, include_topic_authorized_operations=False
    )
    outcome = metadata(ctx, request, 12, LIMITED)
    assert isinstance(outcome, quotas.Throttled) and 0 < outcome.throttle_ms <= 1000
    assert outcome.response.throttle_time_ms == outcome.throttle_ms
    assert not isinstance(metadata(ctx, request, 12, FREE), quotas.Throttled)
