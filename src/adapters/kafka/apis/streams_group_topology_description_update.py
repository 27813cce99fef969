"""StreamsGroupTopologyDescriptionUpdate (key 93): v0 (Kafka 4.4, KIP-1331). A Kafka Streams member
pushes its topology's description (what `Topology#describe()` says: subtopologies, their nodes with
source and sink topics, stores and successors, and the global stores) for its group's topology epoch,
when its StreamsGroupHeartbeat v1 answer says `TopologyDescriptionRequired`; StreamsGroupDescribe v1
returns it to `Admin.describeStreamsGroups` and `kafka-streams-groups --describe --topology`.

As Kafka 4.4's GroupCoordinatorService, in its order: without a topology description plugin
(`group.streams.topology.description.plugin.class`; trafka's is Kafka's in-memory one, ADR 95) the push
is UNSUPPORTED_VERSION with Kafka's message; an empty member or group id, or no description, is
INVALID_REQUEST; a group that is not a streams group is GROUP_ID_NOT_FOUND; a member the group does not
have is UNKNOWN_MEMBER_ID (the client takes itself for fenced and joins again); a topology epoch other
than the group's is INVALID_REQUEST; a node of an unknown type, or a global store that is not a source
and a processor, is INVALID_REQUEST. The description is then the group's, for that epoch.

Kafka's KafkaApis first: `streams.version` not finalized is UNSUPPORTED_VERSION, then READ on the group
(else GROUP_AUTHORIZATION_FAILED), each with its exception's default message. Served unpinned and to
`kafka_version="4.4"`, not to a release before.

Version notes:
- v0 only (Kafka 4.4, KIP-1331).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.features import STREAMS_VERSION
from trafka.domain.groups.streams.description import DescribedSubtopology, GlobalStore, Node, TopologyDescription
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.schema_codec.messages import (
    StreamsGroupTopologyDescriptionUpdateRequest,
    StreamsGroupTopologyDescriptionUpdateResponse,
)

from ..api import KafkaApi
from ..connection.cluster import one_group, refuse_unless_coordinator
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks, request_field
from .api_versions import feature_ceilings

if TYPE_CHECKING:
    from trafka.domain.features import FeatureControl

    from ..api import HandlerRegistry
    from ..runtime.group_runtime import GroupRuntime


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    groups: GroupRuntime
    features: FeatureControl
    registry: HandlerRegistry


Request = StreamsGroupTopologyDescriptionUpdateRequest
Response = StreamsGroupTopologyDescriptionUpdateResponse

NO_PLUGIN = "The broker has no streams group topology description plugin configured."


def handle_streams_group_topology_description_update(
    ctx: Uses, request: Request, version: int, client: ClientInfo
) -> Response:
    streams = ctx.groups.streams
    if streams is None or not ctx.features.finalized(feature_ceilings(ctx.registry)).get(STREAMS_VERSION):
        return _answer(version, ErrorCode.UNSUPPORTED_VERSION, ErrorCode.UNSUPPORTED_VERSION.message)
    try:  # in the order of Kafka 4.4's GroupCoordinatorService
        if not streams.describes_topologies:
            raise KafkaError(ErrorCode.UNSUPPORTED_VERSION, NO_PLUGIN)
        if not request.member_id.strip():
            raise KafkaError(ErrorCode.INVALID_REQUEST, "MemberId can't be empty.")
        if not request.group_id.strip():
            raise KafkaError(ErrorCode.INVALID_REQUEST, "GroupId can't be empty.")
        if request.topology_description is None:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "TopologyDescription can't be null.")
        streams.update_topology_description(
            request.group_id,
            request.member_id,
            request.topology_epoch,
            lambda: _description(request.topology_description),
        )
    except KafkaError as error:
        return _answer(version, error.code, error.message)
    return _answer(version, ErrorCode.NONE, None)


def _node(wire: Any) -> Node:
    return Node.of(
        wire.name, wire.node_type, wire.source_topics or (), wire.sink_topic, wire.stores or (), wire.successors or ()
    )


def _description(wire: Any) -> TopologyDescription:
    return TopologyDescription(
        subtopologies=tuple(
            DescribedSubtopology(s.subtopology_id, tuple(_node(n) for n in s.nodes or ()))
            for s in wire.subtopologies or ()
        ),
        global_stores=tuple(GlobalStore(_node(g.source), _node(g.processor)) for g in wire.global_stores or ()),
    )


def _answer(version: int, error: ErrorCode, message: str | None) -> Response:
    return Response(version=version, throttle_time_ms=0, error_code=error, error_message=message)


def _refusal(api: KafkaApi, request: Any, version: int, error: int) -> Response:
    """Kafka's getErrorResponse: the error and its exception's default message."""
    code = ErrorCode(error)  # type: ignore[call-arg]  # the enum looked up by its value
    return _answer(version, code, code.message)


API = KafkaApi(
    Request,
    Response,
    (0, 0),
    handle_streams_group_topology_description_update,
    authorization=Checks((Check(Res.GROUP, Op.READ, request_field("group_id")),)),
    refusal=_refusal,
    read_only=False,
    cluster=refuse_unless_coordinator(one_group),
)
