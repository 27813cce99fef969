"""ApiVersions v5 (Kafka 4.4, KIP-1242): the cluster id and node id a client expects, both or neither;
another cluster or another node is REBOOTSTRAP_REQUIRED with no APIs, as KafkaApis 4.4 answers (read
from kafka_2.13-4.4.0's `handleApiVersionsRequest`); a broker pinned before 4.4 does not serve v5."""

from __future__ import annotations

import attrs
import pytest

from trafka.adapters.kafka.apis.api_versions import Uses, handle_api_versions
from trafka.adapters.kafka.cluster import ClusterMap
from trafka.adapters.kafka.releases import api_versions
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.schema_codec.messages import ApiVersionsRequest

NONE, INVALID_REQUEST, REBOOTSTRAP_REQUIRED = 0, 42, 129
CLIENT = ClientInfo("test", "127.0.0.1")


@pytest.fixture
def ctx():
    settings = load_settings(overrides={"storage": {"kind": "memory"}})
    return bootstrap(settings, default_adapters(settings))


def _ask(ctx, cluster_id, node_id, client=CLIENT):
    request = ApiVersionsRequest[5](
        client_software_name="t", client_software_version="1", cluster_id=cluster_id, node_id=node_id
    )
    return handle_api_versions(ctx.view(Uses), request, 5, client)


def test_the_expected_cluster_and_node_get_the_full_answer(ctx):
    response = _ask(ctx, ctx.services.policy.cluster_id, ctx.services.policy.node_id)
    assert response.error_code == NONE
    assert {k.api_key for k in response.api_keys} >= {0, 1, 18}
    assert response.finalized_features


def test_neither_cluster_nor_node_is_a_client_that_knows_nothing_yet(ctx):
    response = _ask(ctx, None, -1)
    assert response.error_code == NONE and response.api_keys


@pytest.mark.parametrize("cluster_id, node_id", [("another-cluster-id", None), (None, 7)])
def test_another_cluster_or_another_node_must_rebootstrap(ctx, cluster_id, node_id):
    response = _ask(
        ctx, cluster_id or ctx.services.policy.cluster_id, ctx.services.policy.node_id if node_id is None else node_id
    )
    assert response.error_code == REBOOTSTRAP_REQUIRED
    assert response.api_keys == [] and not response.finalized_features


@pytest.mark.parametrize("cluster_id, node_id", [("some-cluster", -1), (None, 1)])
def test_one_without_the_other_is_an_invalid_request(ctx, cluster_id, node_id):
    response = _ask(ctx, cluster_id, node_id)
    assert response.error_code == INVALID_REQUEST and response.api_keys == []


def test_in_a_simulated_cluster_the_node_is_the_one_the_listener_reached(ctx):
    ctx = attrs.evolve(ctx, services=attrs.evolve(ctx.services, cluster=ClusterMap([1, 2, 3])))
    reached_2 = ClientInfo("test", "127.0.0.1", listener="BROKER2")
    assert _ask(ctx, ctx.services.policy.cluster_id, 2, reached_2).error_code == NONE
    assert _ask(ctx, ctx.services.policy.cluster_id, 1, reached_2).error_code == REBOOTSTRAP_REQUIRED


def test_only_44_advertises_v5():
    assert api_versions("4.4")[18] == (0, 5)
    assert api_versions("4.3")[18] == (0, 4)
