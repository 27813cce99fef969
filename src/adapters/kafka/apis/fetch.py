"""Fetch (key 1): v4-18. Stored batches returned as they are (the fast-path response, ADR 9), long-poll
through `max_wait_ms`/`min_bytes`, topic ids from v13, read_committed up to the last stable offset.
v18 only adds a follower's high watermark to the request, which consumers never send.

A Fetch without enough bytes is parked in the broker's purgatory on its partitions (ADR 80): the append
that brings enough answers it from the appending task, before the producer's answer (ADR 58), and
`max_wait_ms` answers it with what there is.

Fetch sessions (KIP-227, ADR 56) from v7: the domain's `FetchSessionCache` picks what a request reads
(its own partitions, or its session's with the request's changes) and which partitions its answer
holds (records, a new high watermark or log start offset, an error); the answer carries the session
id. A simulated cluster (`trafka.Cluster`) serves without sessions.

Kafka's internal topics that exist (`__consumer_offsets` once a group coordinator was looked for) are
read like any topic (ADR 108): their one partition, as the coordinators wrote it.

Authorization: READ per topic; a refused partition has no records and -1 offsets, as Kafka's
FetchResponse.partitionResponse. The gate checks the topics a request names; the partitions an
incremental request reads from its session are checked here, as Kafka checks every partition of
the fetch context.

Version notes:
(v0-3 are not served)
- v4: IsolationLevel and aborted transactions (read_committed); v5: LogStartOffset.
- v6: KAFKA_STORAGE_ERROR; v7: incremental fetch sessions (KIP-227).
- v8: the response is sent before the client is throttled.
- v9: CurrentLeaderEpoch (KIP-320); v10: ZStandard batches (KIP-110); v11: RackId (KIP-392).
- v12: flexible versions, LastFetchedEpoch, DivergingEpoch and CurrentLeader.
- v13: topics by id (UNKNOWN_TOPIC_ID, KIP-516); v14: OFFSET_MOVED_TO_TIERED_STORAGE (KIP-405).
- v15: ReplicaState in place of ReplicaId (KIP-903); v16: NodeEndpoints (KIP-951).
- v17: ReplicaDirectoryId (KIP-853); v18: HighWatermark in the request (KIP-1166).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.fetch_read import FetchResult
from trafka.domain.fetch_sessions import (
    FINAL_EPOCH,
    INVALID_SESSION_ID,
    ContextKind,
    FetchContext,
    PartitionKey,
    Wanted,
)
from trafka.domain.quotas import QuotaSensors, QuotaType
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import ZERO_UUID, TopicPartition
from trafka.schema_codec.messages import FetchRequest, FetchResponse

from ..api import FastDecoder, KafkaApi, Parked, top_level_error
from ..connection.cluster import fail_partitions
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks
from ..security.partial import (
    TOPIC_REFUSED,
    TOPICS,
    PartialAnswer,
    topic_lists,
)
from ..wire.fast_fetch import FetchAnswer, PartitionAnswer, TopicAnswer
from ..wire.fast_fetch_request import REQUEST_VERSIONS, decode_fetch
from ..wire.fast_fetch_request import ProtocolError as FetchProtocolError
from .common.fetch_gates import by_id as _by_id
from .common.fetch_gates import fetch_entry, quota_use, refused_topic, topic_names

if TYPE_CHECKING:
    from trafka.domain.catalog import TopicCatalog
    from trafka.domain.configs import BrokerPolicy
    from trafka.domain.fetch_sessions import FetchSessionCache
    from trafka.domain.ports import BrokerObserver
    from trafka.domain.quotas import QuotaSensors
    from trafka.domain.replica_manager import ReplicaManager

    from ..cluster import ClusterMap
    from ..internal_topics import InternalTopics
    from ..request_context import ShutdownSignal
    from ..security.authorization import AuthorizationGate


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    catalog: TopicCatalog
    replicas: ReplicaManager
    policy: BrokerPolicy
    clock_ms: Callable[[], int]
    quotas: QuotaSensors
    authorization: AuthorizationGate | None
    observer: BrokerObserver
    cluster: ClusterMap | None
    fetch_sessions: FetchSessionCache
    internal_topics: InternalTopics
    shutting_down: ShutdownSignal


VERSIONS = (4, 18)
SESSIONS_FROM = 7

READ_COMMITTED = 1


Target = tuple[PartitionKey, str | None, ErrorCode, int, int]
"""One partition to read: (key, topic name or None, topic error, fetch offset, partition max bytes)."""

Tally = list[tuple[str, ErrorCode, int]]


def _wanted(request: FetchRequest, by_id: bool) -> list[Wanted]:
    return [
        ((topic.topic_id if by_id else topic.topic, p.partition), p.fetch_offset, p.partition_max_bytes)
        for topic in request.topics
        for p in topic.partitions
    ]


def _forgotten(request: FetchRequest, by_id: bool) -> list[PartitionKey]:
    return [
        (topic.topic_id if by_id else topic.topic, partition)
        for topic in request.forgotten_topics_data or ()
        for partition in topic.partitions
    ]


def _targets(ctx: Uses, wanted: Sequence[Wanted], by_id: bool, client: ClientInfo, check_reads: bool) -> list[Target]:
    """Each partition with its topic's name (by id from v13: UNKNOWN_TOPIC_ID if there is none) and,
    with `check_reads`, TOPIC_AUTHORIZATION_FAILED where READ is refused."""
    names: dict[Any, tuple[str | None, ErrorCode]] = {}
    gate = ctx.authorization if check_reads else None
    targets = []
    for key, fetch_offset, max_bytes in wanted:
        topic: Any = key[0]
        known = names.get(topic)
        if known is None:
            name: str | None = topic
            error = ErrorCode.NONE
            if by_id:
                found = _by_id(ctx, topic)
                name, error = (found.name, error) if found else (None, ErrorCode.UNKNOWN_TOPIC_ID)
            if gate is not None and name is not None and not gate.allowed(client, Op.READ, Res.TOPIC, name):
                error = TOPIC_REFUSED
            known = names[topic] = (name, error)
        targets.append((key, known[0], known[1], fetch_offset, max_bytes))
    return targets


def _read(
    ctx: Uses, request: FetchRequest, targets: Sequence[Target], quota_cap: int | None = None
) -> tuple[list[FetchResult], int, bool, Tally]:
    """One pass over the partitions: (a result for each, bytes gathered, any error, and per partition
    (topic, error, bytes) for the metrics of the pass that is answered). With a fetch quota, at most
    what its window lets through (Kafka's `getMaxValueInQuotaWindow`)."""
    budget = min(request.max_bytes, ctx.policy.fetch_max_bytes)
    if quota_cap is not None:
        budget = min(budget, quota_cap)
    read_committed = request.isolation_level == READ_COMMITTED
    gathered = 0
    errors = False
    results: list[FetchResult] = []
    tally: Tally = []
    for key, name, topic_error, fetch_offset, max_bytes in targets:
        if topic_error is not ErrorCode.NONE or name is None:
            result = FetchResult(topic_error)
        else:
            result = ctx.replicas.fetch(
                TopicPartition(name, key[1]),
                fetch_offset,
                min(max_bytes, max(budget - gathered, 0)),
                min_one_batch=gathered == 0,
                read_committed=read_committed,
            )
        errors |= result.error is not ErrorCode.NONE
        gathered += len(result.records)
        tally.append((name or "", result.error, len(result.records)))
        results.append(result)
    return results, gathered, errors, tally


def _answer(
    ctx: Uses,
    targets: Sequence[Target],
    results: Sequence[FetchResult],
    tally: Tally,
    context: FetchContext | None,
    by_id: bool,
) -> FetchAnswer:
    for name, error, size in tally:
        ctx.observer.partition_fetched(name, error, size)
    session_id = 0
    keep: list[bool] | None = None
    if context is not None:
        reads = [(len(r.records), r.high_watermark, r.log_start_offset, r.error) for r in results]
        session_id, error, keep = ctx.fetch_sessions.respond(context, reads, ctx.clock_ms())
        if error is not ErrorCode.NONE:
            return FetchAnswer([], error, session_id=session_id)
    topics: list[TopicAnswer] = []
    partitions: list[PartitionAnswer] = []
    current: object = None
    for i, (target, result) in enumerate(zip(targets, results, strict=True)):
        if keep is not None and not keep[i]:
            continue
        topic: Any = target[0][0]
        index = target[0][1]
        if topic != current or not topics:  # consecutive partitions of a topic share its entry, as Kafka's
            current = topic
            partitions = []
            topics.append((None if by_id else topic, topic if by_id else ZERO_UUID, partitions))
        aborted = None if result.aborted is None else [(a.producer_id, a.first_offset) for a in result.aborted]
        partitions.append(
            (
                index,
                result.error,
                result.high_watermark,
                result.last_stable_offset,
                result.log_start_offset,
                aborted,
                -1,
                result.records,
            )
        )
    return FetchAnswer(topics, session_id=session_id)


def _quota_cap(ctx: Uses, client: ClientInfo) -> int | None:
    if not ctx.quotas.quotas.throttles_requests:
        return None
    cap = ctx.quotas.max_value_in_window(QuotaType.FETCH, client.principal.name, client.client_id)
    return None if cap is None else int(cap)


def handle_fetch(ctx: Uses, request: FetchRequest, version: int, client: ClientInfo):
    by_id = version >= 13
    topics = request.topics
    if (
        len(topics) == 1
        and request.session_epoch == FINAL_EPOCH
        and request.session_id == INVALID_SESSION_ID
        and version >= SESSIONS_FROM
        and ctx.cluster is None
        and len(topics[0].partitions) == 1
    ):
        return _sessionless_one_partition(ctx, request, version, topics[0], client)
    return _handle(ctx, request, version, client, by_id)


def _sessionless_one_partition(ctx: Uses, request: FetchRequest, version: int, topic: Any, client: ClientInfo):
    """`_handle` for a sessionless request of one partition (librdkafka's and KafkaJS's consumers send
    one per answer, ADR 134): the session cache is not asked (a sessionless context with no session id
    changes nothing there), and `_targets`, `_read` and the park decision are made for that partition
    alone. The same answer or park as `_handle`'s (`tests/unit/adapters/kafka/test_fetch_one_partition.py`)."""
    by_id = version >= 13
    wanted = topic.partitions[0]
    key: Any = topic.topic_id if by_id else topic.topic
    index = wanted.partition
    name: str | None = key
    error = ErrorCode.NONE
    if by_id:
        found = _by_id(ctx, key)
        name, error = (found.name, error) if found else (None, ErrorCode.UNKNOWN_TOPIC_ID)
    if name is None and error is ErrorCode.NONE:  # a null topic name: the general path, as it answers it
        return _handle(ctx, request, version, client, by_id)
    target = ((key, index), name, error, wanted.fetch_offset, wanted.partition_max_bytes)
    cap = _quota_cap(ctx, client)
    tp = None
    if error is not ErrorCode.NONE or name is None:
        result = FetchResult(error)
    else:
        budget = min(request.max_bytes, ctx.policy.fetch_max_bytes)
        if cap is not None:
            budget = min(budget, cap)
        tp = TopicPartition(name, index)
        result = ctx.replicas.fetch(
            tp,
            wanted.fetch_offset,
            min(wanted.partition_max_bytes, max(budget, 0)),
            min_one_batch=True,
            read_committed=request.isolation_level == READ_COMMITTED,
        )
    size = len(result.records)
    if size >= request.min_bytes or result.error is not ErrorCode.NONE or request.max_wait_ms <= 0:
        return _answer(ctx, (target,), (result,), [(name or "", result.error, size)], None, by_id)
    assert tp is not None
    if cap is None:  # librdkafka's consumer at the log end
        return Parked((tp,), request.max_wait_ms, one_partition_completion(ctx, request, target, by_id, tp))
    return Parked((tp,), request.max_wait_ms, completion(ctx, request, (target,), cap, None, by_id))


def _handle(ctx: Uses, request: FetchRequest, version: int, client: ClientInfo, by_id: bool):
    context: FetchContext | None = None
    if version < SESSIONS_FROM:
        wanted = _wanted(request, by_id)
    elif ctx.cluster is not None:  # no sessions: every answer has session id 0, so clients send full requests
        if request.session_epoch not in (0, FINAL_EPOCH):  # a session this broker never gave out
            return FetchAnswer([], ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
        wanted = _wanted(request, by_id)
    else:
        context = ctx.fetch_sessions.new_context(
            by_id,
            request.session_id,
            request.session_epoch,
            _wanted(request, by_id),
            _forgotten(request, by_id),
            ctx.clock_ms(),
        )
        if context.kind is ContextKind.ERROR:
            return FetchAnswer([], context.error)
        wanted = context.wanted
        if context.kind is ContextKind.SESSIONLESS:  # librdkafka's and KafkaJS's (epoch -1): answered as is
            context = None
    incremental = context is not None and context.kind is ContextKind.INCREMENTAL
    targets = _targets(ctx, wanted, by_id, client, incremental and ctx.authorization is not None)
    partitions = [TopicPartition(name, key[1]) for key, name, error, _, _ in targets if name is not None and not error]
    cap = _quota_cap(ctx, client)
    results, gathered, errors, tally = _read(ctx, request, targets, cap)
    if gathered >= request.min_bytes or errors or request.max_wait_ms <= 0 or not targets:
        return _answer(ctx, targets, results, tally, context, by_id)

    if len(targets) == 1 and context is None and cap is None:  # librdkafka's consumer at the log end
        return Parked(partitions, request.max_wait_ms, one_partition_completion(ctx, request, targets[0], by_id))
    return Parked(partitions, request.max_wait_ms, completion(ctx, request, targets, cap, context, by_id))


def completion(
    ctx: Uses,
    request: FetchRequest,
    targets: Sequence[Target],
    cap: int | None,
    context: FetchContext | None,
    by_id: bool,
) -> Callable[[bool], FetchAnswer | None]:
    def complete(expired: bool) -> FetchAnswer | None:
        """Kafka's DelayedFetch.tryComplete, run by the task that appended to one of its partitions
        (or at `max_wait_ms`, or as the broker shuts down): read again, answer if there is enough."""
        results, gathered, errors, tally = _read(ctx, request, targets, cap)
        if gathered < request.min_bytes and not errors and not expired and not ctx.shutting_down.is_set():
            return None
        return _answer(ctx, targets, results, tally, context, by_id)

    return complete


class OnePartitionCompletion:
    """`completion` of a parked Fetch of one readable partition without a session or a fetch quota (every
    record of the latency bench's consumer, ADR 130): `_read` and `_answer` for that one partition, what
    stays the same between tries taken once. One object with what it reads (not a closure and its cells,
    nor the decoded request: ADR 134). Proven to answer what `completion` answers, tried after appends,
    transactions, markers and deletions, expired or not (`tests/unit/adapters/kafka/test_fetch_one_partition.py`)."""

    __slots__ = (
        "ctx",
        "tp",
        "fetch_offset",
        "max_bytes",
        "request_max_bytes",
        "min_bytes",
        "read_committed",
        "name",
        "index",
        "topic_name",
        "topic_id",
    )

    def __init__(
        self, ctx: Uses, request: FetchRequest, target: Target, by_id: bool, tp: TopicPartition | None = None
    ) -> None:
        key, name, _, self.fetch_offset, self.max_bytes = target
        assert name is not None
        self.tp = TopicPartition(name, key[1]) if tp is None else tp
        self.name, self.index = name, key[1]
        topic: Any = key[0]
        self.topic_name: str | None = None if by_id else topic
        self.topic_id: Any = topic if by_id else ZERO_UUID
        self.request_max_bytes, self.min_bytes = request.max_bytes, request.min_bytes
        self.read_committed = request.isolation_level == READ_COMMITTED
        self.ctx = ctx

    def __call__(self, expired: bool) -> FetchAnswer | None:
        ctx = self.ctx
        # min(max_bytes, max(min(request's, broker's), 0)), in comparisons (three builtin calls fewer)
        budget = self.request_max_bytes
        broker_max = ctx.policy.fetch_max_bytes
        if broker_max < budget:
            budget = broker_max
        max_bytes = self.max_bytes
        if budget < max_bytes:
            max_bytes = budget if budget > 0 else 0
        result = ctx.replicas.fetch(self.tp, self.fetch_offset, max_bytes, True, self.read_committed)
        records, error = result.records, result.error
        if len(records) < self.min_bytes and error is ErrorCode.NONE and not expired and not ctx.shutting_down.is_set():
            return None
        ctx.observer.partition_fetched(self.name, error, len(records))
        aborted = None if result.aborted is None else [(a.producer_id, a.first_offset) for a in result.aborted]
        partition = (
            self.index,
            error,
            result.high_watermark,
            result.last_stable_offset,
            result.log_start_offset,
            aborted,
            -1,
            records,
        )
        return FetchAnswer([(self.topic_name, self.topic_id, [partition])])


one_partition_completion = OnePartitionCompletion


API = KafkaApi(
    FetchRequest,
    FetchResponse,
    VERSIONS,
    handle_fetch,
    authorization=Checks(
        (Check(Res.TOPIC, Op.READ, topic_names),),
        PartialAnswer(TOPICS, topic_lists("topics", "responses", fetch_entry, refused_topic)),
    ),
    refusal=top_level_error,
    read_only=True,
    cluster=fail_partitions("responses", "partition_index"),
    quota=quota_use,
    fast_decoder=FastDecoder(REQUEST_VERSIONS, decode_fetch, FetchProtocolError, off_loop_when_large=True),  # ADR 116
)
