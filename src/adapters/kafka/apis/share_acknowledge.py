"""ShareAcknowledge (key 79): v1-2. KIP-932 share groups: acknowledge records acquired through
ShareFetch (ACCEPT, RELEASE, REJECT, GAP; RENEW from v2 with IsRenewAck, KIP-1222), within the
member's share session: the request carries the session's next epoch, or -1 to close it after the
acknowledgements (releasing what the member still holds there). Epoch 0 cannot open a session here:
INVALID_SHARE_SESSION_EPOCH. v2 answers with the lock duration.

Authorization: READ on the group (the whole request); READ on each topic, per partition.

Version notes:
(v0 was KIP-932's early access and is not served)
- v1: the first stable version (KIP-932).
- v2: renew acknowledgements (IsRenewAck, KIP-1222).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.groups.share.service import FINAL_EPOCH, INITIAL_EPOCH
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.schema_codec.messages import ShareAcknowledgeRequest, ShareAcknowledgeResponse

from ..api import KafkaApi, top_level_error
from ..connection.cluster import refuse_unless_leader
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks, request_field
from .common.share_acks import NO_LEADER, acknowledge, identity_error, share_partitions

if TYPE_CHECKING:
    from trafka.domain.catalog import TopicCatalog

    from ..runtime.share_runtime import ShareRuntime
    from ..security.authorization import AuthorizationGate


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    catalog: TopicCatalog
    authorization: AuthorizationGate | None
    share: ShareRuntime | None


Topic = ShareAcknowledgeResponse.ShareAcknowledgeTopicResponse
Partition = Topic.PartitionData


def _answer(
    version: int, error: ErrorCode, lock_ms: int, results: dict[tuple[Any, int], ErrorCode] | None = None
) -> ShareAcknowledgeResponse:
    by_topic: dict[Any, list[Any]] = {}
    for (topic_id, partition), code in (results or {}).items():
        by_topic.setdefault(topic_id, []).append(
            Partition(
                partition_index=partition,
                error_code=code,
                error_message=None,
                current_leader=Partition.LeaderIdAndEpoch(**NO_LEADER),
            )
        )
    return ShareAcknowledgeResponse(
        version=version,
        throttle_time_ms=0,
        error_code=error,
        error_message=None,
        acquisition_lock_timeout_ms=lock_ms,
        responses=[Topic(topic_id=t, partitions=ps) for t, ps in by_topic.items()],
        node_endpoints=[],
    )


def handle_share_acknowledge(
    ctx: Uses, request: ShareAcknowledgeRequest, version: int, client: ClientInfo
) -> ShareAcknowledgeResponse:
    share = ctx.share
    if share is None:
        return _answer(version, ErrorCode.UNSUPPORTED_VERSION, 0)
    group_id, member_id = request.group_id or "", request.member_id or ""
    lock_ms = share.lock_duration_ms(group_id)  # the group's share.record.lock.duration.ms
    error, _ = identity_error(group_id, member_id)
    if error is not ErrorCode.NONE:
        return _answer(version, error, lock_ms)
    epoch = request.share_session_epoch
    if epoch == INITIAL_EPOCH:
        return _answer(version, ErrorCode.INVALID_SHARE_SESSION_EPOCH, lock_ms)
    error, session = share.groups.open_session(group_id, member_id, epoch)
    if error is not ErrorCode.NONE or session is None:
        return _answer(version, error, lock_ms)
    renew = version >= 2 and bool(request.is_renew_ack)
    results = acknowledge(ctx, client, group_id, member_id, request.topics, allow_renew=renew)
    if epoch == FINAL_EPOCH:
        share.groups.close_session(group_id, member_id)
    return _answer(version, ErrorCode.NONE, lock_ms, results)


API = KafkaApi(
    ShareAcknowledgeRequest,
    ShareAcknowledgeResponse,
    (1, 2),
    handle_share_acknowledge,
    authorization=Checks((Check(Res.GROUP, Op.READ, request_field("group_id")),)),
    refusal=top_level_error,
    read_only=False,
    cluster=refuse_unless_leader(share_partitions),
)
