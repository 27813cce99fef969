"""ApiVersions (key 18): v0-5. The versions this broker serves, read from the registry; an unknown
version gets UNSUPPORTED_VERSION with a v0 body, as Kafka. Served before authentication, unauthorized.

From v3 the response lists the supported and finalized features (KIP-584), as a Kafka 4.2 broker does,
each capped at the level trafka implements (`feature_ceilings`, ADR 44): `group.version` 1 only when
ConsumerGroupHeartbeat is served, `share.version` only with ShareGroupHeartbeat, `streams.version` only
with StreamsGroupHeartbeat, `transaction.version` 2 (transactions V2, ADR 75) only with EndTxn v5 (a
release pinned before 4.0 has neither), so clients choose the protocols trafka speaks. Below v4 a feature
whose supported range starts at 0 is left out, as Kafka 4.2 leaves it out for the clients KAFKA-17011
broke (KIP-1022; seen against Apache Kafka 4.2.2 by tests/differential). From v3 a client software name
or version that is not Kafka's `[a-zA-Z0-9](?:[a-zA-Z0-9-.]*[a-zA-Z0-9])?` gets INVALID_REQUEST and
no APIs, as from Kafka. The finalized
features' epoch is the metadata log's last offset (Kafka's metadata image offset), or a change count.

v5 (Kafka 4.4, KIP-1242) carries the cluster id and node id the client expects to reach, both or
neither (one without the other is INVALID_REQUEST, Kafka's `isValid`); a cluster id that is not this
broker's, or a node id that is not the node this connection reached, is REBOOTSTRAP_REQUIRED with no
APIs (KafkaApis 4.4 `clusterIdOrNodeIdIsInvalid`): the client was pointed at another cluster or node
and must bootstrap again. The classes are trafka's (kafka-python 3.0.12 stops at v4).

Version notes:
- v1: throttle time; v2: the response is sent before the client is throttled.
- v3: flexible versions (the body only; the response header stays v0), ClientSoftwareName/Version.
- v4: a supported feature's MinVersion may be 0 (KAFKA-17011).
- v5: ClusterId and NodeId checked, REBOOTSTRAP_REQUIRED (KIP-1242).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.features import (
    ELIGIBLE_LEADER_REPLICAS_VERSION,
    GROUP_VERSION,
    KRAFT_VERSION,
    LATEST_METADATA_VERSION,
    METADATA_VERSION,
    METADATA_VERSION_43,
    METADATA_VERSION_44,
    SHARE_VERSION,
    STREAMS_VERSION,
    TRANSACTION_VERSION,
)
from trafka.schema_codec.messages import ApiVersionsRequest, ApiVersionsResponse

from ..api import HandlerRegistry, KafkaApi, top_level_error
from ..request_context import ClientInfo

if TYPE_CHECKING:
    from trafka.domain.configs import BrokerPolicy
    from trafka.domain.features import FeatureControl
    from trafka.domain.replica_manager import ReplicaManager

    from ..api import HandlerRegistry
    from ..cluster import ClusterMap


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    replicas: ReplicaManager
    policy: BrokerPolicy
    features: FeatureControl
    cluster: ClusterMap | None
    registry: HandlerRegistry


VERSIONS = (0, 5)

# Kafka's ApiVersionsRequest.isValid(): a v3+ client's software name and version
_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")

CONSUMER_GROUP_HEARTBEAT = 68
SHARE_GROUP_HEARTBEAT = 76
STREAMS_GROUP_HEARTBEAT = 88
END_TXN = 26
API_VERSIONS = 18
DESCRIBE_LOG_DIRS = 35


def _serves(registry: HandlerRegistry, api_key: int, version: int = 0) -> bool:
    """Is `version` of `api_key` served (read from the rooms' table: no room is imported)?"""
    versions = registry.versions(api_key)
    return versions is not None and versions[1] >= version


def feature_ceilings(registry: HandlerRegistry) -> dict[str, int]:
    """The highest level of each feature this broker implements, from the APIs it serves."""
    return {
        # Kafka 4.4's 4.4-IV2 with its surface (ApiVersions v5), 4.3's 4.3-IV0 with DescribeLogDirs v5, else 4.2's
        METADATA_VERSION: METADATA_VERSION_44
        if _serves(registry, API_VERSIONS, 5)
        else METADATA_VERSION_43
        if _serves(registry, DESCRIBE_LOG_DIRS, 5)
        else LATEST_METADATA_VERSION,
        KRAFT_VERSION: 1,  # one static voter, as `kafka-storage format --standalone` leaves it
        TRANSACTION_VERSION: 2 if _serves(registry, END_TXN, 5) else 0,  # KIP-890 part 2 needs EndTxn v5
        GROUP_VERSION: 1 if _serves(registry, CONSUMER_GROUP_HEARTBEAT) else 0,
        ELIGIBLE_LEADER_REPLICAS_VERSION: 1,  # one broker: the eligible leader replicas are always empty
        # 2 (KIP-1191's dead-letter queue) with Kafka 4.4's surface, which ApiVersions v5 marks
        SHARE_VERSION: (2 if _serves(registry, API_VERSIONS, 5) else 1)
        if _serves(registry, SHARE_GROUP_HEARTBEAT)
        else 0,
        STREAMS_VERSION: 1 if _serves(registry, STREAMS_GROUP_HEARTBEAT) else 0,
    }


def finalized_features_epoch(ctx: Uses) -> int:
    """The metadata log's last offset (Kafka's metadata image offset), or with the memory store, which
    keeps no metadata log, the number of feature updates since start-up: it grows with every change."""
    end = ctx.replicas.metadata_log_end_offset()
    return end - 1 if end > 0 else ctx.features.changes


def handle_api_versions(
    ctx: Uses, request: ApiVersionsRequest, version: int, client: ClientInfo
) -> ApiVersionsResponse:
    if version >= 3 and not (
        _SOFTWARE.fullmatch(request.client_software_name or "")
        and _SOFTWARE.fullmatch(request.client_software_version or "")
    ):  # Kafka answers INVALID_REQUEST with no APIs and no features
        return _refused(version, ErrorCode.INVALID_REQUEST)
    if version >= 5:
        expects_cluster, expects_node = request.cluster_id is not None, request.node_id != -1
        if expects_cluster != expects_node:  # both or neither
            return _refused(version, ErrorCode.INVALID_REQUEST)
        if expects_cluster and (
            request.cluster_id != ctx.policy.cluster_id or request.node_id != _node_reached(ctx, client)
        ):
            return _refused(version, ErrorCode.REBOOTSTRAP_REQUIRED)
    keys = [
        ApiVersionsResponse.ApiVersion(api_key=key, min_version=low, max_version=high)
        for key, low, high in ctx.registry.supported()
    ]
    response = ApiVersionsResponse(version=version, error_code=ErrorCode.NONE, api_keys=keys, throttle_time_ms=0)
    if version >= 3:
        ceilings = feature_ceilings(ctx.registry)
        response.supported_features = [
            ApiVersionsResponse.SupportedFeatureKey(name=name, min_version=low, max_version=high)
            for name, (low, high) in ctx.features.supported(ceilings).items()
            if version >= 4 or low > 0
        ]
        response.finalized_features = [
            ApiVersionsResponse.FinalizedFeatureKey(name=name, max_version_level=level, min_version_level=level)
            for name, level in ctx.features.finalized(ceilings).items()
        ]
        response.finalized_features_epoch = finalized_features_epoch(ctx)
        response.zk_migration_ready = False
    return response


def _refused(version: int, error: ErrorCode) -> ApiVersionsResponse:
    """Kafka's error answer at the request's version: the error, no APIs, no features."""
    return ApiVersionsResponse(version=version, error_code=error, api_keys=[], throttle_time_ms=0)


def _node_reached(ctx: Uses, client: ClientInfo) -> int:
    """The node this connection reached: a simulated cluster's node by its listener, else this broker."""
    node = ctx.cluster.node_of(client) if ctx.cluster is not None else None
    return node if node is not None else ctx.policy.node_id


def unsupported_version_response(versions: tuple[int, int] = VERSIONS) -> ApiVersionsResponse:
    """What Kafka sends for an ApiVersions version it does not know: error 35, v0, its own range
    (`versions`: narrower on a broker pinned to an older release)."""
    return ApiVersionsResponse(
        version=0,
        error_code=ErrorCode.UNSUPPORTED_VERSION,
        api_keys=[
            ApiVersionsResponse.ApiVersion(
                api_key=ApiVersionsRequest.API_KEY, min_version=versions[0], max_version=versions[1]
            )
        ],
    )


def _unsupported_version(api: KafkaApi) -> tuple[ApiVersionsResponse, int]:
    """A version this broker does not serve: error 35 with a v0 body listing the versions (what a
    client retries with), as Kafka answers; for any other API Kafka closes the connection."""
    return unsupported_version_response(api.versions), 0


API = KafkaApi(
    ApiVersionsRequest,
    ApiVersionsResponse,
    VERSIONS,
    handle_api_versions,
    authorization=None,
    refusal=top_level_error,
    read_only=False,
    quota=None,
    unsupported_version=_unsupported_version,
    fault_injectable=False,
)
