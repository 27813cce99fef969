"""ShareFetch (key 78): v1-2. KIP-932 share groups: acknowledge what the request carries (piggybacked),
then acquire records for the member from the partitions of its share session and return the stored
batches holding them with the acquired ranges (first, last offset, delivery count) and the lock time.
v2 (KIP-1206, KIP-1222): the acquire mode (batch_optimized, the default and v1's: MaxRecords is a soft
limit and the log batch holding the last record is acquired whole; record_limit: at most MaxRecords)
and IsRenewAck (a request that only renews locks: no fetch).

Share session epochs (the domain's ShareGroups): 0 opens a session with the request's partitions,
then 1, 2, ... add partitions and forget `ForgottenTopicsData`; -1 applies the acknowledgements and
closes it, releasing what the member still holds there. A fetch that acquires nothing is parked in the
broker's purgatory on its partitions for up to MaxWaitMs (ADR 80), as Fetch long-polls: new or
released records there answer it from the task that appended or released them.

Authorization: READ on the group (the whole request); READ on each topic, per partition
(TOPIC_AUTHORIZATION_FAILED in its entry), as Kafka's KafkaApis.handleShareFetchRequest: on every
request, for every partition of the share session, not only those the request names, so a member
whose READ was revoked, or another principal fetching with the session's member id, reads nothing.

Version notes:
(v0 was KIP-932's early access and is not served)
- v1: the first stable version (KIP-932).
- v2: ShareAcquireMode (KIP-1206) and renew acknowledgements (KIP-1222).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.groups.share import PartitionFetch
from trafka.domain.groups.share.service import ACQUIRE_MODES, BATCH_OPTIMIZED, FINAL_EPOCH, INITIAL_EPOCH
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import ShareFetchRequest, ShareFetchResponse

from .. import internal_topics
from ..api import KafkaApi, Parked, top_level_error
from ..connection.cluster import refuse_unless_leader
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks, request_field
from .common.share_acks import NO_LEADER, Target, acknowledge, identity_error, may_read, share_partitions, target

if TYPE_CHECKING:
    from trafka.domain.catalog import TopicCatalog
    from trafka.domain.configs import BrokerPolicy
    from trafka.domain.ports import BrokerObserver

    from ..internal_topics import InternalTopics
    from ..request_context import ShutdownSignal
    from ..runtime.share_runtime import ShareRuntime
    from ..security.authorization import AuthorizationGate


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    catalog: TopicCatalog
    policy: BrokerPolicy
    authorization: AuthorizationGate | None
    observer: BrokerObserver
    share: ShareRuntime | None
    internal_topics: InternalTopics
    shutting_down: ShutdownSignal


Topic = ShareFetchResponse.ShareFetchableTopicResponse
Partition = Topic.PartitionData
DEFAULT_MAX_RECORDS = 500


def _error(version: int, error: ErrorCode, message: str | None = None, lock_ms: int = 0) -> ShareFetchResponse:
    return ShareFetchResponse(
        version=version,
        throttle_time_ms=0,
        error_code=error,
        error_message=message,
        acquisition_lock_timeout_ms=lock_ms,
        responses=[],
        node_endpoints=[],
    )


def handle_share_fetch(ctx: Uses, request: ShareFetchRequest, version: int, client: ClientInfo) -> Any:
    share = ctx.share
    if share is None:
        return _error(version, ErrorCode.UNSUPPORTED_VERSION, "Share groups are disabled.")
    group_id, member_id = request.group_id or "", request.member_id or ""
    lock_ms = share.lock_duration_ms(group_id)  # the group's share.record.lock.duration.ms
    error, message = identity_error(group_id, member_id)
    if error is not ErrorCode.NONE:
        return _error(version, error, message, lock_ms)
    renew = version >= 2 and bool(request.is_renew_ack)
    if renew and (request.max_bytes or request.min_bytes or request.max_records or request.max_wait_ms):
        return _error(version, ErrorCode.INVALID_REQUEST, "A renew acknowledgement must not fetch.", lock_ms)
    mode = request.share_acquire_mode if version >= 2 else BATCH_OPTIMIZED
    if mode not in ACQUIRE_MODES:
        return _error(version, ErrorCode.INVALID_REQUEST, f"Unknown share acquire mode {mode}.", lock_ms)
    epoch = request.share_session_epoch
    error, session = share.groups.open_session(group_id, member_id, epoch, client.connection)
    if error is not ErrorCode.NONE or session is None:
        return _error(version, error, None, lock_ms)
    acked = acknowledge(ctx, client, group_id, member_id, request.topics, allow_renew=renew)
    entries: dict[tuple[Any, int], dict[str, Any]] = {}
    for (topic_id, partition), ack_error in acked.items():
        entries[(topic_id, partition)] = {"acknowledge_error_code": ack_error}
    if epoch == FINAL_EPOCH or renew:
        if epoch == FINAL_EPOCH:
            share.groups.close_session(group_id, member_id)
        return _response(ctx, version, lock_ms, entries)
    targets: dict[tuple[Any, int], Target] = {}
    for topic in request.topics:
        for part in topic.partitions:
            where = target(ctx, client, topic.topic_id, part.partition_index)
            targets[(topic.topic_id, part.partition_index)] = where
            if where.tp is not None:
                session.add(topic.topic_id, where.tp)
    for forgotten in request.forgotten_topics_data:  # by id: a deleted topic's partitions are forgotten too
        for p in forgotten.partitions:
            session.forget(forgotten.topic_id, p)
    for key, where in targets.items():
        if where.error is not ErrorCode.NONE:
            entries.setdefault(key, {})["error_code"] = where.error
    if epoch == INITIAL_EPOCH:  # a full answer names every partition of the new session
        for key in targets:
            entries.setdefault(key, {})
    live, stale = share.groups.live_partitions(session)
    for key in stale:  # deleted, or created again under a new id the client has not asked for yet
        entries.setdefault(key, {})["error_code"] = ErrorCode.UNKNOWN_TOPIC_ID
    partitions = []
    for tp in live:
        if may_read(ctx, client, tp.topic):
            partitions.append(tp)
        elif (found := ctx.catalog.get(tp.topic)) is not None:
            entries.setdefault((found.topic_id, tp.partition), {})["error_code"] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
    max_records = request.max_records if request.max_records > 0 else DEFAULT_MAX_RECORDS
    if request.max_bytes == 0:  # Kafka's processShareFetch: no data requested, answered at once without records
        return _response(ctx, version, lock_ms, entries)
    fetched = _acquire(ctx, group_id, member_id, partitions, max_records, request.max_bytes, mode)
    if fetched or request.max_wait_ms <= 0 or not partitions:
        return _response(ctx, version, lock_ms, entries, fetched)

    def complete(expired: bool) -> ShareFetchResponse | None:
        """New or released records on a partition (in the task that appended or released them), the
        broker shutting down, or `max_wait_ms` (answered empty, as before any acquisition)."""
        if expired:
            return _response(ctx, version, lock_ms, entries)
        fetched = _acquire(ctx, group_id, member_id, partitions, max_records, request.max_bytes, mode)
        if not fetched and not ctx.shutting_down.is_set():
            return None
        return _response(ctx, version, lock_ms, entries, fetched)

    return Parked(partitions, request.max_wait_ms, complete)


def _acquire(
    ctx: Uses,
    group_id: str,
    member_id: str,
    partitions: list[TopicPartition],
    max_records: int,
    max_bytes: int,
    mode: int,
) -> dict[TopicPartition, PartitionFetch]:
    """Acquire across the session's partitions up to MaxRecords and MaxBytes in all; (partition ->
    what it gave) for the partitions that gave records or an error.

    Share-partitions this fetch creates are read after the others, and once one has given records
    the rest wait for the next fetch: Kafka's DelayedShareFetch reads only initialized share-partitions,
    and each new one finishes its initialization (a read of its state) apart, so the first answer of
    a new group carries the records of the first initialized partition (librdkafka's 0179)."""
    assert ctx.share is not None
    now = ctx.share.clock_ms()
    budget = min(max_bytes, ctx.policy.fetch_max_bytes) if max_bytes > 0 else ctx.policy.fetch_max_bytes
    result: dict[TopicPartition, PartitionFetch] = {}
    created = {tp for tp in partitions if ctx.share.groups.initialize(group_id, tp, now)}
    if created:  # Kafka's share coordinator creates its state topic on the first share-partition's state
        ctx.internal_topics.create(internal_topics.SHARE_STATE)
    for tp in sorted(partitions, key=lambda tp: tp in created):  # stable: the session's order otherwise
        if max_records <= 0 or budget <= 0 or (tp in created and any(f.acquired for f in result.values())):
            break
        fetched = ctx.share.groups.fetch(group_id, member_id, tp, max_records, budget, now, mode)
        if fetched.error is not ErrorCode.NONE or fetched.acquired:
            result[tp] = fetched
        for a in fetched.acquired:
            max_records -= a.last - a.first + 1
        budget -= len(fetched.records)
        ctx.observer.partition_fetched(tp.topic, fetched.error, len(fetched.records))
    return result


def _response(
    ctx: Uses,
    version: int,
    lock_ms: int,
    entries: dict[tuple[Any, int], dict[str, Any]],
    fetched: dict[TopicPartition, PartitionFetch] | None = None,
) -> ShareFetchResponse:
    by_topic: dict[Any, list[Any]] = {}
    answers = dict(entries)
    for tp, f in (fetched or {}).items():
        topic = ctx.catalog.get(tp.topic)
        if topic is None:
            continue
        topic_id = topic.topic_id
        fields = answers.setdefault((topic_id, tp.partition), {})
        fields["error_code"] = f.error
        fields["records"] = f.records
        fields["acquired_records"] = [
            Partition.AcquiredRecords(first_offset=a.first, last_offset=a.last, delivery_count=a.delivery_count)
            for a in f.acquired
        ]
    for (topic_id, partition), fields in answers.items():
        by_topic.setdefault(topic_id, []).append(
            Partition(
                partition_index=partition,
                error_code=fields.get("error_code", ErrorCode.NONE),
                error_message=None,
                acknowledge_error_code=fields.get("acknowledge_error_code", ErrorCode.NONE),
                acknowledge_error_message=None,
                current_leader=Partition.LeaderIdAndEpoch(**NO_LEADER),
                records=fields.get("records", b""),
                acquired_records=fields.get("acquired_records", []),
            )
        )
    return ShareFetchResponse(
        version=version,
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        error_message=None,
        acquisition_lock_timeout_ms=lock_ms,
        responses=[Topic(topic_id=t, partitions=ps) for t, ps in by_topic.items()],
        node_endpoints=[],
    )


API = KafkaApi(
    ShareFetchRequest,
    ShareFetchResponse,
    (1, 2),
    handle_share_fetch,
    authorization=Checks((Check(Res.GROUP, Op.READ, request_field("group_id")),)),
    refusal=top_level_error,
    read_only=False,
    cluster=refuse_unless_leader(share_partitions),
)
