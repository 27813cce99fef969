"""ApiVersions: the versions this broker serves, read from the handler registry."""

from __future__ import annotations

from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

from trafka.domain.errors import ErrorCode

from ..api import HandlerRegistry
from ..context import BrokerContext, ClientInfo

VERSIONS = (0, 4)


def handle_api_versions(
    ctx: BrokerContext, request: ApiVersionsRequest, version: int, client: ClientInfo
) -> ApiVersionsResponse:
    keys = [
        ApiVersionsResponse.ApiVersion(api_key=key, min_version=low, max_version=high)
        for key, low, high in ctx.registry.supported()
    ]
    return ApiVersionsResponse(version=version, error_code=ErrorCode.NONE, api_keys=keys, throttle_time_ms=0)


def unsupported_version_response() -> ApiVersionsResponse:
    """What Kafka sends for an ApiVersions version it does not know: error 35, v0, its own range."""
    return ApiVersionsResponse(
        version=0,
        error_code=ErrorCode.UNSUPPORTED_VERSION,
        api_keys=[
            ApiVersionsResponse.ApiVersion(
                api_key=ApiVersionsRequest.API_KEY, min_version=VERSIONS[0], max_version=VERSIONS[1]
            )
        ],
    )


def register(registry: HandlerRegistry) -> None:
    registry.register(ApiVersionsRequest, ApiVersionsResponse, VERSIONS, handle_api_versions)
