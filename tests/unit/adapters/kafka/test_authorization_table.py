"""Every served API declares its rules in its own room (`adapters/kafka/apis/`): what it needs
authorized, how a refusal is answered from its request, and how an injected fault answers it."""

from __future__ import annotations

import pytest

from trafka.adapters.kafka.api import KafkaApi, top_level_error
from trafka.adapters.kafka.apis import APIS, build_registry
from trafka.adapters.kafka.connection.faults import can_fail
from trafka.adapters.kafka.security.authorization import Checks, Filter

SERVED_UNAUTHORIZED = {"ApiVersions", "SaslHandshake", "SaslAuthenticate"}  # as Kafka: before authentication
NEVER_FAILED = {"ApiVersions"}  # it opens every connection; its errors mean something else


@pytest.mark.parametrize("api", APIS, ids=[api.name for api in APIS])
def test_every_served_api_declares_its_authorization(api: KafkaApi):
    if api.name in SERVED_UNAUTHORIZED:
        assert api.authorization is None
    else:
        assert isinstance(api.authorization, Checks | Filter), f"{api.name} has no authorization rule"
    if isinstance(api.authorization, Checks):
        assert api.authorization.checks, f"{api.name} declares no check"


@pytest.mark.parametrize("api", APIS, ids=[api.name for api in APIS])
def test_every_served_api_can_be_refused_and_failed(api: KafkaApi):
    """A refusal from the request, or (read-only APIs) served and then every error code set."""
    if api.refusal is top_level_error and not api.read_only:
        error_code = api.response.fields.get("error_code")
        covered = [v for v in range(api.min_version, api.max_version + 1) if error_code and error_code.for_version_q(v)]
        partial = isinstance(api.authorization, Checks) and api.authorization.partial is not None
        assert covered or partial, f"{api.name}: no top-level error code and no per-resource answer"
    assert can_fail(api) == (api.name not in NEVER_FAILED)


def test_the_registry_serves_every_room_once_in_key_order():
    registry = build_registry()
    assert [api.api_key for api in registry.apis()] == sorted(api.api_key for api in APIS)
    assert len({api.api_key for api in APIS}) == len(APIS)


def test_an_api_without_its_rules_cannot_be_declared():
    from trafka.schema_codec.messages import MetadataRequest, MetadataResponse

    with pytest.raises(TypeError):
        KafkaApi(MetadataRequest, MetadataResponse, (0, 13), lambda *a: None)  # type: ignore[call-arg]
