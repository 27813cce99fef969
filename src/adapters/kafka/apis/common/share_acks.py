"""What ShareFetch and ShareAcknowledge share: the request's identity checks, its acknowledgement
batches applied partition by partition, topic READ per partition, the per-partition answer shape."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import TopicPartition

from ...request_context import ClientInfo

if TYPE_CHECKING:
    from trafka.domain.catalog import TopicCatalog

    from ...runtime.share_runtime import ShareRuntime
    from ...security.authorization import AuthorizationGate


class AcknowledgesShares(Protocol):
    """What the share rooms' acknowledgements reach: the topics, the authorizer and the share groups."""

    @property
    def catalog(self) -> TopicCatalog: ...

    @property
    def authorization(self) -> AuthorizationGate | None: ...

    @property
    def share(self) -> ShareRuntime | None: ...


MAX_MEMBER_ID_LENGTH = 36  # a UUID's text, as Kafka's ShareRequestMetadata checks
RENEW = 4
NO_LEADER = {"leader_id": -1, "leader_epoch": -1}  # as Kafka's schema defaults


@attrs.frozen
class Target:
    """One partition of a request: its topic id and index, its name if known, and the error if not."""

    topic_id: Any
    partition: int
    tp: TopicPartition | None
    error: ErrorCode = ErrorCode.NONE


def identity_error(group_id: str | None, member_id: str | None) -> tuple[ErrorCode, str | None]:
    if not group_id:
        return ErrorCode.INVALID_GROUP_ID, "The group id is invalid."
    if not member_id or len(member_id) > MAX_MEMBER_ID_LENGTH:
        return ErrorCode.INVALID_REQUEST, "The member id is invalid."
    return ErrorCode.NONE, None


def may_read(ctx: AcknowledgesShares, client: ClientInfo, topic: str) -> bool:
    gate = ctx.authorization
    return gate is None or gate.allowed(client, Op.READ, Res.TOPIC, topic)


def target(ctx: AcknowledgesShares, client: ClientInfo, topic_id: Any, partition: int) -> Target:
    topic = ctx.catalog.by_id(topic_id)
    if topic is None:
        return Target(topic_id, partition, None, ErrorCode.UNKNOWN_TOPIC_ID)
    if not may_read(ctx, client, topic.name):
        return Target(topic_id, partition, None, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    if not 0 <= partition < topic.partition_count:
        return Target(topic_id, partition, None, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    return Target(topic_id, partition, TopicPartition(topic.name, partition))


def acknowledge(
    ctx: AcknowledgesShares,
    client: ClientInfo,
    group_id: str,
    member_id: str,
    topics: Iterable[Any],
    allow_renew: bool,
) -> dict[tuple[Any, int], ErrorCode]:
    """Apply every partition's acknowledgement batches: (topic id, partition) -> its error."""
    assert ctx.share is not None
    share = ctx.share.groups
    now = ctx.share.clock_ms()
    results: dict[tuple[Any, int], ErrorCode] = {}
    for topic in topics:
        for part in topic.partitions:
            if not part.acknowledgement_batches:
                continue
            where = target(ctx, client, topic.topic_id, part.partition_index)
            if where.tp is None:
                results[(topic.topic_id, part.partition_index)] = where.error
                continue
            batches = [(b.first_offset, b.last_offset, list(b.acknowledge_types)) for b in part.acknowledgement_batches]
            results[(topic.topic_id, part.partition_index)] = share.acknowledge(
                group_id, member_id, where.tp, batches, now, allow_renew
            )
    return results


def share_partitions(body: Any, ctx: AcknowledgesShares) -> list[TopicPartition]:
    """The simulated cluster's leader check: the share-partitions named (by topic id; unknown ids are
    the handler's to answer). A node that leads one of them not refuses the whole request, where Kafka
    answers those partitions alone: a client sends each leader its own partitions."""
    found = []
    for topic in body.topics or ():
        known = ctx.catalog.by_id(topic.topic_id)
        if known is not None:
            found += [TopicPartition(known.name, partition.partition_index) for partition in topic.partitions or ()]
    return found
