"""Fetch's gates (key 1, `fetch.py`): the topics a request names for the READ check (by name, or by id
from v13: an unknown id is not checked here, the handler answers UNKNOWN_TOPIC_ID), a refused topic's
answer as Kafka's `FetchResponse.partitionResponse(tp, TOPIC_AUTHORIZATION_FAILED)`, and the client
quotas' charge of a Fetch (KafkaApis: the request quota, then consumer_byte_rate on the records' bytes)."""

from __future__ import annotations

from typing import Any

from trafka.domain.errors import ErrorCode
from trafka.domain.quotas import QuotaSensors, QuotaType
from trafka.domain.topics import Topic

from ...api import QuotaCharge
from ...security.partial import TOPIC_REFUSED
from ...wire.fast_fetch import FetchAnswer


def topic_names(request, version, ctx) -> list[str]:
    if version < 13:
        return [t.topic for t in request.topics]
    return [topic.name for t in request.topics if (topic := by_id(ctx, t.topic_id)) is not None]


def fetch_entry(entry, version, ctx) -> str | None:
    if version < 13:
        return entry.topic
    topic = by_id(ctx, entry.topic_id)
    return topic.name if topic is not None else None


def by_id(ctx: Any, topic_id: Any) -> Topic | None:
    """A catalog topic, or an internal one that exists (`__consumer_offsets`: readable, ADR 108)."""
    return ctx.catalog.by_id(topic_id) or ctx.internal_topics.by_id(topic_id)


def refused_topic(Response, entry, version: int) -> Any:
    """Kafka's FetchResponse.partitionResponse(tp, TOPIC_AUTHORIZATION_FAILED): no offsets, and empty
    records (size 0): Kafka never sends null records, and librdkafka refuses them in flexible versions."""
    Topic = Response.FetchableTopicResponse
    Partition = Topic.PartitionData
    return Topic(
        topic=getattr(entry, "topic", None),
        topic_id=getattr(entry, "topic_id", None),
        partitions=[
            Partition(
                partition_index=p.partition,
                error_code=TOPIC_REFUSED,
                high_watermark=-1,
                last_stable_offset=-1,
                log_start_offset=-1,
                aborted_transactions=None,
                preferred_read_replica=-1,
                records=b"",
            )
            for p in entry.partitions
        ],
    )


def quota_use(
    sensors: QuotaSensors, request: Any, outcome: Any, user: str, client_id: str, percent: float, now: int
) -> QuotaCharge:
    """Client quotas, as KafkaApis: the handler's time against the request quota, then the records'
    bytes against consumer_byte_rate; a throttled Fetch is answered with no data (empty, error NONE:
    `FetchContext.getThrottledResponse`) and its bytes are taken back (`unrecordQuotaSensor`)."""
    request_throttle = sensors.record(QuotaType.REQUEST, user, client_id, percent, now)
    size = fetched_bytes(outcome)
    bandwidth = sensors.record(QuotaType.FETCH, user, client_id, size, now)
    if bandwidth > 0 or request_throttle > 0:
        sensors.unrecord(QuotaType.FETCH, user, client_id, size, now)
        if isinstance(outcome, FetchAnswer):
            outcome = FetchAnswer([], ErrorCode.NONE, session_id=outcome.session_id)
    return QuotaCharge(outcome, QuotaType.FETCH, bandwidth, request_throttle)


def fetched_bytes(outcome: Any) -> int:
    if not isinstance(outcome, FetchAnswer):
        return 0
    return sum(len(p[7]) for _, _, partitions in outcome.topics for p in partitions if p[7])
