"""ApiVersions of trafka pinned to Kafka 4.2 against Apache Kafka 4.2's own, features included."""

from __future__ import annotations

import pytest
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse


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
