"""ApiVersions of trafka pinned to Kafka 4.2 against Apache Kafka 4.2's own, features included."""

from __future__ import annotations

import pytest
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

from tests import kafka_python_messages as messages

# The first test to ask for `apache_kafka` waits for Maven and Kafka's start (ADR 63).
pytestmark = pytest.mark.timeout(900)


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_api_versions(pair, version):
    def make():
        if version >= 3:
            return ApiVersionsRequest[version](client_software_name="differential", client_software_version="1.0")
        return ApiVersionsRequest[version]()

    pair.raw(f"ApiVersions v{version}", make, ApiVersionsResponse, version)


def test_api_versions_with_an_invalid_client_software_name(pair):
    pair.raw(
        "ApiVersions v3 invalid software name",
        lambda: ApiVersionsRequest[3](client_software_name="-bad name-", client_software_version="1.0"),
        ApiVersionsResponse,
        3,
    )


def test_api_versions_v5_on_a_42_broker(pair):
    """Kafka 4.4's v5 (KIP-1242) to a 4.2 broker: UNSUPPORTED_VERSION with a v0 body naming 0-4, which a
    4.4 client falls back to; trafka pinned to 4.2 answers the same (it serves v5 from 4.4 on)."""
    pair.raw(
        "ApiVersions v5 to a 4.2 broker",
        lambda: messages.ApiVersionsRequest[5](
            client_software_name="differential", client_software_version="1.0", cluster_id="any", node_id=1
        ),
        ApiVersionsResponse,  # kafka-python's: an error answer is read as v0
        5,
    )
