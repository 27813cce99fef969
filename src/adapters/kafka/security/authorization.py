"""Which resource and operation every API needs, in one table, and the gate that applies it.

`ACL_TABLE` maps an API to its checks, in the order Kafka's KafkaApis makes them: each names a
resource type, an operation and how to find the resource names in the request (a transactional id,
a group id, the topics, the cluster). `AuthorizationGate.handle` runs before the handler when an
authorizer is configured (`authorizer.class.name`):

- where Kafka answers per resource (`partial_authorization.PARTIAL`: the topics of Produce, Fetch,
  DeleteTopics, DeleteRecords..., the config resources, the groups of DeleteGroups, the keys of
  FindCoordinator v4+), the refused resources get their error in their own response entries and
  the others are served;
- any other refusal (a group, transactional id or cluster check, mostly) answers the whole request
  with GROUP_/TRANSACTIONAL_ID_/CLUSTER_AUTHORIZATION_FAILED, built from the request as Kafka's
  getErrorResponse: no side effect, nothing read (a refused DescribeAcls lists no ACLs);
- a check with `cluster_grants` passes for every name when the principal has that operation on the
  cluster (CREATE for CreateTopics, DELETE for DeleteTopics, as Kafka's hasClusterAuth);
- Metadata, DescribeTopicPartitions, OffsetFetch and DescribeTransactions leave out what the
  principal may not DESCRIBE (or answer TOPIC_AUTHORIZATION_FAILED for what it named); Metadata does
  not auto-create a topic without CREATE;
- authorized-operations fields (Metadata, DescribeCluster, DescribeGroups, DescribeTopicPartitions)
  carry what the authorizer allows this principal.

APIs absent from the table (ApiVersions, the SASL APIs) need no authorization, as in Kafka.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import CLUSTER_NAME, Authorizer
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import is_internal_topic

from ..api import CloseConnection
from ..connection.faults import can_fail, error_response, response_from_request
from .filters import SPECIAL as _SPECIAL
from .partial import PARTIAL, WHOLE, Refused

ERRORS = {
    Res.TOPIC: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    Res.GROUP: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    Res.CLUSTER: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    Res.TRANSACTIONAL_ID: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
}

Names = Callable[[Any, int, Any], Iterable[str]]  # (request, version, ctx) -> resource names


@attrs.frozen
class Check:
    resource_type: Res
    operation: Op
    names: Names
    cluster_grants: Op | None = None  # this operation on the cluster allows every name
    or_on_any: tuple[Op, Res] | None = None  # or this operation on any one resource of the type (Kafka's
    # authorizeByResourceType: an idempotent producer needs IDEMPOTENT_WRITE on the cluster or WRITE on a topic)
    internal_refused: bool = False  # an internal topic is refused whatever the ACLs say


def _topics(field: str = "topics", name: str = "name") -> Names:
    return lambda request, version, ctx: [getattr(t, name) for t in getattr(request, field) or ()]


def _attr(field: str) -> Names:
    return lambda request, version, ctx: [value] if (value := getattr(request, field, None)) else []


def _cluster(request, version, ctx) -> list[str]:
    return [CLUSTER_NAME]


def _fetch_topics(request, version, ctx) -> list[str]:
    if version < 13:
        return [t.topic for t in request.topics]
    return [topic.name for t in request.topics if (topic := ctx.catalog.by_id(t.topic_id)) is not None]


def _coordinator_keys(key_type: int) -> Names:
    def names(request, version, ctx) -> list[str]:
        if request.key_type != key_type:
            return []
        return list(request.coordinator_keys) if version >= 4 else [request.key]

    return names


def _delete_topic_names(request, version, ctx) -> list[str]:
    if version < 6:
        return list(request.topic_names)
    out = []
    for t in request.topics:
        topic = ctx.catalog.by_id(t.topic_id) if not t.name else None
        out.append(t.name or (topic.name if topic is not None else ""))
    return [n for n in out if n]


def _config_resources(resource_type: int) -> Names:
    return lambda request, version, ctx: [
        r.resource_name for r in request.resources if r.resource_type == resource_type
    ]


_TOPIC_CONFIG, _BROKER_CONFIG, _BROKER_LOGGER_CONFIG = 2, 4, 8


def _broker_configs(*types: int) -> Names:
    """The cluster, when the request names a broker config resource (legacy AlterConfigs has no loggers)."""
    return lambda request, version, ctx: (
        [CLUSTER_NAME] if any(r.resource_type in types for r in request.resources) else []
    )


def _idempotent(request, version, ctx) -> list[str]:
    return [] if request.transactional_id else [CLUSTER_NAME]


TXN_WRITE = Check(Res.TRANSACTIONAL_ID, Op.WRITE, _attr("transactional_id"))

ACL_TABLE: dict[str, tuple[Check, ...]] = {
    "Produce": (TXN_WRITE, Check(Res.TOPIC, Op.WRITE, _topics("topic_data"))),
    "Fetch": (Check(Res.TOPIC, Op.READ, _fetch_topics),),
    "ListOffsets": (Check(Res.TOPIC, Op.DESCRIBE, _topics()),),
    "OffsetCommit": (Check(Res.GROUP, Op.READ, _attr("group_id")), Check(Res.TOPIC, Op.READ, _topics())),
    "OffsetDelete": (Check(Res.GROUP, Op.DELETE, _attr("group_id")), Check(Res.TOPIC, Op.READ, _topics())),
    "FindCoordinator": (
        Check(Res.GROUP, Op.DESCRIBE, _coordinator_keys(0)),
        Check(Res.TRANSACTIONAL_ID, Op.DESCRIBE, _coordinator_keys(1)),
    ),
    "JoinGroup": (Check(Res.GROUP, Op.READ, _attr("group_id")),),
    "SyncGroup": (Check(Res.GROUP, Op.READ, _attr("group_id")),),
    "Heartbeat": (Check(Res.GROUP, Op.READ, _attr("group_id")),),
    "LeaveGroup": (Check(Res.GROUP, Op.READ, _attr("group_id")),),
    "DeleteGroups": (Check(Res.GROUP, Op.DELETE, lambda r, v, c: list(r.groups_names)),),
    "CreateTopics": (Check(Res.TOPIC, Op.CREATE, _topics(), cluster_grants=Op.CREATE),),
    "DeleteTopics": (Check(Res.TOPIC, Op.DELETE, _delete_topic_names, cluster_grants=Op.DELETE),),
    "CreatePartitions": (Check(Res.TOPIC, Op.ALTER, _topics()),),
    "DeleteRecords": (Check(Res.TOPIC, Op.DELETE, _topics()),),
    "DescribeConfigs": (
        Check(Res.CLUSTER, Op.DESCRIBE_CONFIGS, _broker_configs(_BROKER_CONFIG, _BROKER_LOGGER_CONFIG)),
        Check(Res.TOPIC, Op.DESCRIBE_CONFIGS, _config_resources(_TOPIC_CONFIG)),
    ),
    "AlterConfigs": (
        Check(Res.CLUSTER, Op.ALTER_CONFIGS, _broker_configs(_BROKER_CONFIG)),
        Check(Res.TOPIC, Op.ALTER_CONFIGS, _config_resources(_TOPIC_CONFIG)),
    ),
    "IncrementalAlterConfigs": (
        Check(Res.CLUSTER, Op.ALTER_CONFIGS, _broker_configs(_BROKER_CONFIG, _BROKER_LOGGER_CONFIG)),
        Check(Res.TOPIC, Op.ALTER_CONFIGS, _config_resources(_TOPIC_CONFIG)),
    ),
    "InitProducerId": (
        TXN_WRITE,
        Check(Res.CLUSTER, Op.IDEMPOTENT_WRITE, _idempotent, or_on_any=(Op.WRITE, Res.TOPIC)),
    ),
    "AddPartitionsToTxn": (
        Check(Res.TRANSACTIONAL_ID, Op.WRITE, _attr("v3_and_below_transactional_id")),
        Check(Res.TOPIC, Op.WRITE, _topics("v3_and_below_topics"), internal_refused=True),
    ),
    "AddOffsetsToTxn": (TXN_WRITE, Check(Res.GROUP, Op.READ, _attr("group_id"))),
    "TxnOffsetCommit": (TXN_WRITE, Check(Res.GROUP, Op.READ, _attr("group_id")), Check(Res.TOPIC, Op.READ, _topics())),
    "EndTxn": (TXN_WRITE,),
    "DescribeProducers": (Check(Res.TOPIC, Op.READ, _topics()),),
    "DescribeAcls": (Check(Res.CLUSTER, Op.DESCRIBE, _cluster),),
    "CreateAcls": (Check(Res.CLUSTER, Op.ALTER, _cluster),),
    "DeleteAcls": (Check(Res.CLUSTER, Op.ALTER, _cluster),),
    "DescribeUserScramCredentials": (Check(Res.CLUSTER, Op.DESCRIBE, _cluster),),
    "AlterUserScramCredentials": (Check(Res.CLUSTER, Op.ALTER, _cluster),),
    "AlterPartitionReassignments": (Check(Res.CLUSTER, Op.ALTER, _cluster),),
    "ListPartitionReassignments": (Check(Res.CLUSTER, Op.DESCRIBE, _cluster),),
}
"""API name -> its checks. The APIs of `_SPECIAL` filter or annotate their answers instead; `UNCHECKED`
need nothing, as in Kafka."""

UNCHECKED = frozenset({"ApiVersions", "SaslHandshake", "SaslAuthenticate"})


class AuthorizationGate:
    def __init__(self, authorizer: Authorizer) -> None:
        self.authorizer = authorizer

    def allowed(self, client: Any, operation: Op, resource_type: Res, name: str) -> bool:
        return self.authorizer.authorize(client.principal, client.host, operation, resource_type, name)

    def operations(self, client: Any, resource_type: Res, name: str) -> set[int]:
        return {
            int(op) for op in self.authorizer.authorized_operations(client.principal, client.host, resource_type, name)
        }

    def handle(self, handler: Any, ctx: Any, body: Any, version: int, client: Any) -> Any:
        special = _SPECIAL.get(handler.name)
        if special is not None:
            return special(self, handler, ctx, body, version, client)
        partial = PARTIAL.get(handler.name)
        if partial is not None and version < partial.min_version:
            partial = None
        refused: dict[Res, set[str]] = {}
        for check in ACL_TABLE.get(handler.name, ()):
            denied = self._denied(check, body, version, ctx, client)
            if not denied:
                continue
            if partial is not None and check.resource_type in partial.resource_types:
                refused.setdefault(check.resource_type, set()).update(denied)
                continue
            return self._refused_whole(handler, ctx, body, version, client, ERRORS[check.resource_type])
        if refused:
            assert partial is not None
            allowed = functools.partial(self.allowed, client)
            return partial.answer(Refused(handler, ctx, body, version, client, refused, allowed))
        return handler.handle(ctx, body, version, client)

    def _denied(self, check: Check, body: Any, version: int, ctx: Any, client: Any) -> set[str]:
        names = list(check.names(body, version, ctx))
        denied = {
            n
            for n in names
            if (check.internal_refused and is_internal_topic(n))
            or not self.allowed(client, check.operation, check.resource_type, n)
        }
        if (
            denied
            and check.cluster_grants is not None
            and self.allowed(client, check.cluster_grants, Res.CLUSTER, CLUSTER_NAME)
        ):
            return set()
        if (
            denied
            and check.or_on_any is not None
            and self.authorizer.authorize_by_resource_type(client.principal, client.host, *check.or_on_any)
        ):
            return set()
        return denied

    def _refused_whole(self, handler: Any, ctx: Any, body: Any, version: int, client: Any, error: ErrorCode) -> Any:
        whole = WHOLE.get(handler.name)
        if whole is not None:
            return whole(handler, body, version, error)
        response = response_from_request(handler, body, version, error)  # Kafka's getErrorResponse: nothing served
        if response is not None:
            return response
        if not can_fail(handler):
            raise CloseConnection(f"{client.principal} is not authorized for {handler.name}")
        return error_response(handler, ctx, body, version, client, error)
