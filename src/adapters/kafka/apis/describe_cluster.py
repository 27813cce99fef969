"""DescribeCluster (key 60): v0-2. The cluster id, the controller and the brokers (v1+: endpoint type).

Authorization: none needed to describe; the cluster's authorized operations filled from the ACLs.

Version notes:
- v1: EndpointType (brokers or controllers, KIP-919), MISMATCHED_ENDPOINT_TYPE.
- v2: IncludeFencedBrokers and each broker's IsFenced (KIP-1073).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import CLUSTER_NAME
from trafka.domain.security.acls import ResourceType as Res
from trafka.schema_codec.messages import (
    DescribeClusterRequest,
    DescribeClusterResponse,
)

from ..api import Handle, KafkaApi, top_level_error
from ..cluster import ClusterMap
from ..connection.cluster import live_brokers, then
from ..request_context import ClientInfo
from ..security.authorization import Filter
from .common.authorized_operations import CLUSTER_OPERATIONS, as_bits

if TYPE_CHECKING:
    from trafka.domain.configs import BrokerPolicy


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    policy: BrokerPolicy


BROKERS_ENDPOINT = 1


def handle_describe_cluster(
    ctx: Uses, request: DescribeClusterRequest, version: int, client: ClientInfo
) -> DescribeClusterResponse:
    node = ctx.policy.node_id
    if version >= 1 and request.endpoint_type != BROKERS_ENDPOINT:
        # As a Kafka broker: controller endpoints are asked of controllers (UNSUPPORTED_ENDPOINT_TYPE).
        return DescribeClusterResponse(
            version=version,
            throttle_time_ms=0,
            error_code=ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
            error_message="The broker does not support endpoint type " + str(request.endpoint_type),
            endpoint_type=BROKERS_ENDPOINT,
            cluster_id=ctx.policy.cluster_id,
            controller_id=node,
            brokers=[],
            authorized_operations=None,
        )
    return DescribeClusterResponse(
        version=version,
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        error_message=None,
        endpoint_type=BROKERS_ENDPOINT,
        cluster_id=ctx.policy.cluster_id,
        controller_id=node,
        brokers=[
            DescribeClusterResponse.DescribeClusterBroker(
                broker_id=node, host=client.advertised.host, port=client.advertised.port, rack=None, is_fenced=False
            )
        ],
        authorized_operations=as_bits(CLUSTER_OPERATIONS if request.include_cluster_authorized_operations else None),
    )


def _filter(gate, handler, ctx, body, version, client):
    response = handler.handle(ctx, body, version, client)
    if response.authorized_operations is not None:
        response.authorized_operations = gate.operations(client, Res.CLUSTER, CLUSTER_NAME)
    return response


def _in_cluster(
    cluster: ClusterMap,
    node: int,
    api: KafkaApi,
    serve: Handle,
    ctx: Any,
    body: Any,
    version: int,
    client: ClientInfo,
) -> Any:
    """On a simulated cluster: the live nodes as the brokers, the lowest the controller."""

    def rewrite(response: Any) -> Any:
        if response.error_code == 0:
            response.brokers = live_brokers(cluster, type(response).DescribeClusterBroker)
            response.controller_id = min(cluster.live())
        return response

    return then(serve(ctx, body, version, client), rewrite)


API = KafkaApi(
    DescribeClusterRequest,
    DescribeClusterResponse,
    (0, 2),
    handle_describe_cluster,
    authorization=Filter(_filter),
    refusal=top_level_error,
    read_only=True,
    cluster=_in_cluster,
)
