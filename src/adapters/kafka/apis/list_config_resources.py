"""ListConfigResources (key 74): v0-1 (KIP-1142; v0 was ListClientMetricsResources). The resources that
have configs, of the types asked for (none asked: every type the version knows), as Kafka 4.2's
KafkaApis.handleListConfigResources lists them: the topics by name, this broker (BROKER and
BROKER_LOGGER, by node id), the client metrics subscriptions (trafka has none) and the groups with
dynamic group configs (recorded in the metadata log, whether or not the group exists). v0 knows only
CLIENT_METRICS; a type the version does not know is UNSUPPORTED_VERSION for the whole request.

Authorization: DESCRIBE_CONFIGS on the cluster; refused, the top-level error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from trafka.domain.configs import ConfigResourceType as Type
from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.schema_codec.messages import ListConfigResourcesRequest, ListConfigResourcesResponse

from ..api import KafkaApi, top_level_error
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks, the_cluster

if TYPE_CHECKING:
    from trafka.domain.catalog import TopicCatalog
    from trafka.domain.configs import BrokerPolicy
    from trafka.domain.groups.recorded_configs import DurableGroupConfigs


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    catalog: TopicCatalog
    policy: BrokerPolicy
    group_configs: DurableGroupConfigs | None


SUPPORTED = {
    0: (Type.CLIENT_METRICS,),
    1: (Type.TOPIC, Type.BROKER, Type.BROKER_LOGGER, Type.CLIENT_METRICS, Type.GROUP),
}
"""The resource types each version lists."""

Resource = ListConfigResourcesResponse.ConfigResource


def handle_list_config_resources(
    ctx: Uses, request: ListConfigResourcesRequest, version: int, client: ClientInfo
) -> ListConfigResourcesResponse:
    supported = SUPPORTED[min(version, 1)]
    wanted = list(request.resource_types or ()) if version >= 1 else []
    if not wanted:
        wanted = list(supported)
    if any(t not in supported for t in wanted):
        return ListConfigResourcesResponse(
            version=version, throttle_time_ms=0, error_code=ErrorCode.UNSUPPORTED_VERSION, config_resources=[]
        )
    listed: list[tuple[str, int]] = []
    if Type.TOPIC in wanted:
        listed += [(topic.name, Type.TOPIC) for topic in ctx.catalog.topics()]
    node = str(ctx.policy.node_id)
    if Type.BROKER_LOGGER in wanted:
        listed.append((node, Type.BROKER_LOGGER))
    if Type.BROKER in wanted:
        listed.append((node, Type.BROKER))
    if Type.GROUP in wanted and ctx.group_configs is not None:
        listed += [(group_id, Type.GROUP) for group_id in sorted(ctx.group_configs.recorded)]
    return ListConfigResourcesResponse(
        version=version,
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        config_resources=[Resource(resource_name=name, resource_type=kind) for name, kind in listed],
    )


API = KafkaApi(
    ListConfigResourcesRequest,
    ListConfigResourcesResponse,
    (0, 1),
    handle_list_config_resources,
    authorization=Checks((Check(Res.CLUSTER, Op.DESCRIBE_CONFIGS, the_cluster),)),
    refusal=top_level_error,
    read_only=True,
)
