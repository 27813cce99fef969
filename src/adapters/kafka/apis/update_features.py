"""UpdateFeatures (key 57): v0-2. Finalizes feature levels as the controller of a single-voter KRaft
quorum does (FeatureControlManager.updateFeatures): every update checked against the levels this broker
supports (ApiVersions' supported features, capped at what trafka implements, ADR 44), a downgrade only
with a downgrade type (v0: AllowDowngrade), a metadata.version downgrade only across levels that did not
change the metadata records; all applied or none, recorded as FeatureLevelRecords in `__cluster_metadata`
(in memory with the memory store), nothing recorded with ValidateOnly (v1+). The outcome is the
top-level error and message, repeated for each feature below v2 (v2 has no per-feature results).

Authorization: ALTER on the cluster; refused, the top-level error and each feature's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.features import FeatureUpdate, UpgradeType
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.schema_codec.messages import UpdateFeaturesRequest, UpdateFeaturesResponse

from ..api import KafkaApi
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks, the_cluster
from .api_versions import feature_ceilings

if TYPE_CHECKING:
    from trafka.domain.features import FeatureControl

    from ..api import HandlerRegistry


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    features: FeatureControl
    registry: HandlerRegistry


Result = UpdateFeaturesResponse.UpdatableFeatureResult


def _answer(request: UpdateFeaturesRequest, version: int, error: int, message: str | None) -> UpdateFeaturesResponse:
    response = UpdateFeaturesResponse(
        version=version, throttle_time_ms=0, error_code=error, error_message=message, results=[]
    )
    if version < 2:
        response.results = [
            Result(feature=update.feature, error_code=error, error_message=message)
            for update in request.feature_updates
        ]
    return response


def _update(entry: Any, version: int) -> FeatureUpdate:
    if version == 0:
        upgrade = UpgradeType.SAFE_DOWNGRADE if entry.allow_downgrade else UpgradeType.UPGRADE
    else:
        upgrade = UpgradeType.of(entry.upgrade_type)
    return FeatureUpdate(entry.feature, entry.max_version_level, upgrade)


def handle_update_features(
    ctx: Uses, request: UpdateFeaturesRequest, version: int, client: ClientInfo
) -> UpdateFeaturesResponse:
    updates = [_update(entry, version) for entry in request.feature_updates]
    validate_only = bool(version >= 1 and request.validate_only)
    error = ctx.features.update(updates, feature_ceilings(ctx.registry), validate_only)
    if error is None:
        return _answer(request, version, ErrorCode.NONE, None)
    return _answer(request, version, error.code, error.message)


def refuse_update_features(api: KafkaApi, request: UpdateFeaturesRequest, version: int, error: int) -> Any:
    return _answer(request, version, error, ErrorCode.of(error).message)


API = KafkaApi(
    UpdateFeaturesRequest,
    UpdateFeaturesResponse,
    (0, 2),
    handle_update_features,
    authorization=Checks((Check(Res.CLUSTER, Op.ALTER, the_cluster),)),
    refusal=refuse_update_features,
    read_only=False,
)
