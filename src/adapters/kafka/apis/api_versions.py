"""ApiVersions (key 18): v0-4. The versions this broker serves, read from the registry; an unknown
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
"""

from __future__ import annotations

import re

from trafka.domain.errors import ErrorCode
from trafka.domain.features import (
    ELIGIBLE_LEADER_REPLICAS_VERSION,
    GROUP_VERSION,
    KAFKA_SUPPORTED,
    KRAFT_VERSION,
    METADATA_VERSION,
    SHARE_VERSION,
    STREAMS_VERSION,
    TRANSACTION_VERSION,
)
from trafka.schema_codec.messages import ApiVersionsRequest, ApiVersionsResponse

from ..api import HandlerRegistry, KafkaApi, top_level_error
from ..context import BrokerContext
from ..request_context import ClientInfo

VERSIONS = (0, 4)

# Kafka's ApiVersionsRequest.isValid(): a v3+ client's software name and version
_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")

CONSUMER_GROUP_HEARTBEAT = 68
SHARE_GROUP_HEARTBEAT = 76
STREAMS_GROUP_HEARTBEAT = 88
END_TXN = 26


def _serves(registry: HandlerRegistry, api_key: int, version: int) -> bool:
    api = registry.get(api_key)
    return api is not None and api.max_version >= version


def feature_ceilings(registry: HandlerRegistry) -> dict[str, int]:
    """The highest level of each feature this broker implements, from the APIs it serves."""
    return {
        METADATA_VERSION: KAFKA_SUPPORTED[METADATA_VERSION][1],
        KRAFT_VERSION: 1,  # one static voter, as `kafka-storage format --standalone` leaves it
        TRANSACTION_VERSION: 2 if _serves(registry, END_TXN, 5) else 0,  # KIP-890 part 2 needs EndTxn v5
        GROUP_VERSION: 1 if registry.get(CONSUMER_GROUP_HEARTBEAT) else 0,
        ELIGIBLE_LEADER_REPLICAS_VERSION: 1,  # one broker: the eligible leader replicas are always empty
        SHARE_VERSION: 1 if registry.get(SHARE_GROUP_HEARTBEAT) else 0,
        STREAMS_VERSION: 1 if registry.get(STREAMS_GROUP_HEARTBEAT) else 0,
    }


def finalized_features_epoch(ctx: BrokerContext) -> int:
    """The metadata log's last offset (Kafka's metadata image offset), or with the memory store, which
    keeps no metadata log, the number of feature updates since start-up: it grows with every change."""
    end = ctx.replicas.metadata_log_end_offset()
    return end - 1 if end > 0 else ctx.features.changes


def handle_api_versions(
    ctx: BrokerContext, request: ApiVersionsRequest, version: int, client: ClientInfo
) -> ApiVersionsResponse:
    if version >= 3 and not (
        _SOFTWARE.fullmatch(request.client_software_name or "")
        and _SOFTWARE.fullmatch(request.client_software_version or "")
    ):  # Kafka answers INVALID_REQUEST with no APIs and no features
        return ApiVersionsResponse(
            version=version, error_code=ErrorCode.INVALID_REQUEST, api_keys=[], throttle_time_ms=0
        )
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
