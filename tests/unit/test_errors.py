"""The domain's error codes are Kafka's."""

from __future__ import annotations

import kafka.errors

from trafka.domain.errors import ErrorCode


def test_unsupported_endpoint_type_is_kafkas_115():
    # DescribeCluster v1+ answers a request for controller endpoints with UNSUPPORTED_ENDPOINT_TYPE;
    # it was declared as 119, which clients read as INVALID_REGISTRATION.
    assert ErrorCode.UNSUPPORTED_ENDPOINT_TYPE == kafka.errors.UnsupportedEndpointTypeError.errno == 115
