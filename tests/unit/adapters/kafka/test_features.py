"""ApiVersions' features and UpdateFeatures through their handlers on a memory-store broker."""

from __future__ import annotations

import attrs
import pytest

from trafka.adapters.kafka.api import HandlerRegistry
from trafka.adapters.kafka.apis import APIS, api_versions, update_features
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.adapters.kafka.wire.codec import encode_response
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.errors import ErrorCode
from trafka.schema_codec.messages import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    UpdateFeaturesRequest,
    UpdateFeaturesResponse,
)

CLIENT = ClientInfo("test", "127.0.0.1")
Update = UpdateFeaturesRequest.FeatureUpdateKey


@pytest.fixture
def ctx():
    settings = load_settings(overrides={"storage": {"kind": "memory"}, "broker": {"node_id": 7}})
    return bootstrap(settings, default_adapters(settings))


def _versions(ctx, version):
    response = api_versions.handle_api_versions(
        ctx.view(api_versions.Uses),
        ApiVersionsRequest[version](client_software_name="t", client_software_version="1"),
        version,
        CLIENT,
    )
    decoded = ApiVersionsResponse.decode(encode_response(response, version, 1)[4:], version=version, header=True)
    supported = {f.name: (f.min_version, f.max_version) for f in decoded.supported_features}
    finalized = {f.name: (f.min_version_level, f.max_version_level) for f in decoded.finalized_features}
    return supported, finalized, decoded


def _registry_with(*api_keys):
    """This broker's registry, plus stand-ins registered under the keys named (as another room would)."""
    registry = HandlerRegistry()
    for api in APIS:
        registry.register(api)
    for key in api_keys:
        registry._apis[key] = APIS[0]
    return registry


def test_v4_lists_the_features_trafka_implements_at_kafkas_levels(ctx):
    supported, finalized, decoded = _versions(ctx, 4)
    assert supported["metadata.version"] == (7, 33)  # to Kafka 4.4's 4.4-IV2 (4.2's 4.2-IV1 when pinned)
    assert supported["kraft.version"] == (0, 1)
    assert supported["eligible.leader.replicas.version"] == (0, 1)
    assert finalized["metadata.version"] == (29, 29)
    assert finalized["kraft.version"] == (1, 1)
    # Transactions V2, as a fresh Kafka 4.2 cluster finalizes them (ADR 75).
    assert supported["transaction.version"] == (0, 2) and finalized["transaction.version"] == (2, 2)
    assert decoded.finalized_features_epoch >= 0


def test_group_share_and_streams_versions_follow_the_apis_served(ctx):
    served = set(ctx.registry.rooms())
    supported, finalized, _ = _versions(ctx, 4)
    assert ("group.version" in finalized) == (68 in served)
    assert ("share.version" in finalized) == (76 in served)
    ctx = attrs.evolve(ctx, registry=_registry_with(68, 76, 88))
    supported, finalized, _ = _versions(ctx, 4)
    assert supported["group.version"] == supported["streams.version"] == (0, 1)
    assert finalized["group.version"] == finalized["streams.version"] == (1, 1)
    # Kafka 4.4's share.version 2 (KIP-1191's dead-letter queue) supported; a new log dir finalizes 4.2's 1
    assert supported["share.version"] == (0, 2) and finalized["share.version"] == (1, 1)


def test_a_broker_pinned_to_44_formats_share_version_2():
    settings = load_settings(overrides={"storage": {"kind": "memory"}, "broker": {"kafka_version": "4.4"}})
    supported, finalized, _ = _versions(bootstrap(settings, default_adapters(settings)), 4)
    assert supported["share.version"] == (0, 2) and finalized["share.version"] == (2, 2)


def test_share_version_2_needs_kafka_44s_surface(ctx):
    """A broker pinned before 4.4 (no ApiVersions v5) supports and finalizes share.version 1, as 4.2."""
    registry = HandlerRegistry()
    for api in APIS:
        registry.register(attrs.evolve(api, versions=(0, 4)) if api.api_key == 18 else api)
    supported, finalized, _ = _versions(attrs.evolve(ctx, registry=registry), 4)
    assert supported["share.version"] == (0, 1) and finalized["share.version"] == (1, 1)


@pytest.mark.parametrize("release, top, formatted", [("4.2", 29, 29), ("4.3", 30, 30), ("4.4", 33, 33)])
def test_metadata_version_follows_the_release(release, top, formatted):
    """4.3-IV0 (KIP-1066's cordoned log dirs) from 4.3 on, 4.4-IV2 in 4.4; a pin formats its release's."""
    settings = load_settings(overrides={"storage": {"kind": "memory"}, "broker": {"kafka_version": release}})
    supported, finalized, _ = _versions(bootstrap(settings, default_adapters(settings)), 4)
    assert supported["metadata.version"] == (7, top) and finalized["metadata.version"] == (formatted, formatted)


def test_transaction_version_follows_end_txn_v5(ctx):
    """A registry without EndTxn v5 (a release pinned before Kafka 4.0) has no transactions V2."""
    registry = HandlerRegistry()
    for api in APIS:
        registry.register(attrs.evolve(api, versions=(0, 4)) if api.api_key == 26 else api)
    supported, finalized, _ = _versions(attrs.evolve(ctx, registry=registry), 4)
    assert "transaction.version" not in supported and "transaction.version" not in finalized


def test_v3_leaves_out_the_features_whose_range_starts_at_0(ctx):
    """As Apache Kafka 4.2.2 answers ApiVersions v3 (tests/differential): only metadata.version."""
    supported, finalized, _ = _versions(ctx, 3)
    assert supported == {"metadata.version": (7, 33)}
    assert finalized["kraft.version"] == (1, 1)


def test_versions_below_3_carry_no_features(ctx):
    response = api_versions.handle_api_versions(ctx.view(api_versions.Uses), ApiVersionsRequest[2](), 2, CLIENT)
    assert encode_response(response, 2, 1)  # encodable at v2 without the tagged fields


def _update(ctx, version, updates, validate_only=False):
    request = UpdateFeaturesRequest[version](
        feature_updates=updates, **({"validate_only": validate_only} if version >= 1 else {})
    )
    response = update_features.handle_update_features(ctx.view(update_features.Uses), request, version, CLIENT)
    return UpdateFeaturesResponse.decode(encode_response(response, version, 1)[4:], version=version, header=True)


@pytest.mark.parametrize("version", [1, 2])
def test_a_safe_downgrade_is_recorded_and_listed(ctx, version):
    response = _update(ctx, version, [Update(feature="metadata.version", max_version_level=25, upgrade_type=2)])
    assert response.error_code == 0 and response.error_message is None
    assert _versions(ctx, 4)[1]["metadata.version"] == (25, 25)
    if version == 1:
        assert [(r.feature, r.error_code) for r in response.results] == [("metadata.version", 0)]


def test_v0_allow_downgrade_and_a_refused_upgrade_type(ctx):
    refused = _update(ctx, 0, [Update(feature="metadata.version", max_version_level=25, allow_downgrade=False)])
    assert refused.error_code == ErrorCode.INVALID_UPDATE_VERSION
    assert "without setting the upgrade type" in refused.error_message
    assert [(r.feature, r.error_code) for r in refused.results] == [("metadata.version", 95)]
    assert (
        _update(ctx, 0, [Update(feature="metadata.version", max_version_level=25, allow_downgrade=True)]).error_code
        == 0
    )


def test_the_finalized_epoch_grows_with_each_change(ctx):
    before = _versions(ctx, 4)[2].finalized_features_epoch
    _update(ctx, 2, [Update(feature="metadata.version", max_version_level=25, upgrade_type=2)])
    assert _versions(ctx, 4)[2].finalized_features_epoch > before


def test_validate_only_changes_nothing(ctx):
    response = _update(ctx, 2, [Update(feature="metadata.version", max_version_level=24, upgrade_type=2)], True)
    assert response.error_code == 0
    assert _versions(ctx, 4)[1]["metadata.version"] == (29, 29)


def test_transaction_version_downgrades_safely_and_upgrades_again(ctx):
    """As Kafka's FeatureControlManager: a feature other than metadata.version goes down with
    SAFE_DOWNGRADE (not with UPGRADE) and back up with UPGRADE."""
    refused = _update(ctx, 2, [Update(feature="transaction.version", max_version_level=1, upgrade_type=1)])
    assert refused.error_code == ErrorCode.INVALID_UPDATE_VERSION
    assert _update(ctx, 2, [Update(feature="transaction.version", max_version_level=1, upgrade_type=2)]).error_code == 0
    assert _versions(ctx, 4)[1]["transaction.version"] == (1, 1)
    assert _update(ctx, 2, [Update(feature="transaction.version", max_version_level=0, upgrade_type=2)]).error_code == 0
    assert "transaction.version" not in _versions(ctx, 4)[1]
    assert _update(ctx, 2, [Update(feature="transaction.version", max_version_level=2, upgrade_type=1)]).error_code == 0
    assert _versions(ctx, 4)[1]["transaction.version"] == (2, 2)
    too_high = _update(ctx, 2, [Update(feature="transaction.version", max_version_level=3, upgrade_type=1)])
    assert too_high.error_message == (
        "Invalid update version 3 for feature transaction.version. Local controller 7 only supports versions 0-2"
    )


def test_refusal_answers_every_feature(ctx):
    request = UpdateFeaturesRequest[1](feature_updates=[Update(feature="group.version", max_version_level=1)])
    refused = update_features.API.refuse(request, 1, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    assert refused.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert [(r.feature, r.error_code) for r in refused.results] == [("group.version", 31)]


@pytest.mark.parametrize("name, software_version", [("-bad name-", "1.0"), ("ok", ""), ("ok", "1.0 beta")])
def test_v3_refuses_a_client_software_name_or_version_kafka_refuses(ctx, name, software_version):
    """Apache Kafka 4.2.2 answers INVALID_REQUEST with no APIs (tests/differential)."""
    request = ApiVersionsRequest[3](client_software_name=name, client_software_version=software_version)
    response = api_versions.handle_api_versions(ctx.view(api_versions.Uses), request, 3, CLIENT)
    assert response.error_code == ErrorCode.INVALID_REQUEST
    assert list(response.api_keys) == []


def test_the_levels_in_force_are_recorded_at_start_up_for_a_kafka_node_to_read(ctx):
    """A Kafka node on trafka's log dir finalizes only what the metadata log records (ADR 64): the
    bootstrapped levels are written, as `kafka-storage format` writes them (transaction.version 2 too, as a
    fresh Kafka 4.2 cluster); kraft.version is no record."""
    recorded = dict(ctx.services.features._store.feature_levels())
    _, finalized, _ = _versions(ctx, 4)
    assert recorded["group.version"] == recorded["share.version"] == 1
    assert recorded["eligible.leader.replicas.version"] == 1
    assert "kraft.version" not in recorded and recorded["transaction.version"] == 2  # transactions V2 (ADR 75)
    assert {name: level for name, (_, level) in finalized.items() if name != "kraft.version"} == {
        name: level for name, level in recorded.items() if level > 0 and name != "metadata.version"
    } | {"metadata.version": finalized["metadata.version"][1]}


def test_eligible_leader_replicas_make_min_insync_replicas_the_clusters(ctx):
    """KIP-966 as Kafka 4.2's controller: a new log dir with eligible leader replicas on gets the
    cluster-level min.insync.replicas (the static one, 1) with its bootstrap (ActivationRecordsGenerator);
    while they are on, a broker-level one may not be set nor the cluster's removed; an UpdateFeatures
    naming them at a level above 0 sets the cluster's again where it is missing
    (maybeGenerateElrSafetyRecords)."""
    from trafka.domain.errors import KafkaError

    configs = ctx.services.catalog.broker_configs
    assert configs.current("") == {"min.insync.replicas": "1"}
    with pytest.raises(KafkaError) as refused:
        configs.alter("7", {"min.insync.replicas": (0, "2")})
    assert (refused.value.code, refused.value.message) == (
        ErrorCode.INVALID_CONFIG,
        "Broker-level min.insync.replicas cannot be altered while ELR is enabled.",
    )
    with pytest.raises(KafkaError) as refused:
        configs.alter("", {"min.insync.replicas": (1, None)})
    assert refused.value.message == "Cluster-level min.insync.replicas cannot be removed while ELR is enabled."
    configs.alter("", {"min.insync.replicas": (0, "2")})  # changed, not removed: allowed
    assert configs.current("") == {"min.insync.replicas": "2"}
    off = _update(ctx, 2, [Update(feature="eligible.leader.replicas.version", max_version_level=0, upgrade_type=2)])
    assert off.error_code == 0
    configs.alter("", {"min.insync.replicas": (1, None)})
    configs.alter("7", {"min.insync.replicas": (0, "3")})
    on = _update(ctx, 2, [Update(feature="eligible.leader.replicas.version", max_version_level=1, upgrade_type=1)])
    assert on.error_code == 0
    assert configs.current("") == {"min.insync.replicas": "1"} and configs.current("7") == {}


def test_the_clusters_min_insync_replicas_is_the_static_one():
    """Kafka's getStaticallyConfiguredMinInsyncReplicas: the broker's configured value, else 1."""
    from tests.unit.conftest import Cluster
    from trafka.domain.configs import BrokerPolicy

    cluster = Cluster(BrokerPolicy(topic_defaults={"min.insync.replicas": "2"}))
    cluster.catalog.broker_configs.elr_safety()
    assert cluster.catalog.broker_configs.current("") == {"min.insync.replicas": "2"}
