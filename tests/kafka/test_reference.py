"""The reference broker itself: the session's Apache Kafka serves, at the pom's version, with the
features a fresh Kafka 4.2 cluster finalizes."""

from __future__ import annotations

from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse

from tests.integration.wire import WireClient

from .reference import classpath, kafka_version


def test_the_classpath_holds_the_pom_version_of_kafka():
    jars = classpath().split(":")
    assert any(jar.endswith(f"kafka_2.13-{kafka_version()}.jar") for jar in jars)
    assert any(jar.endswith(f"kafka-tools-{kafka_version()}.jar") for jar in jars)


def test_apache_kafka_answers_api_versions_with_the_features_of_a_fresh_cluster(apache_kafka):
    with WireClient(apache_kafka.bootstrap) as client:
        versions = client.request(
            ApiVersionsRequest[3](client_software_name="trafka-tests", client_software_version="1"),
            ApiVersionsResponse,
            3,
        )
        metadata = client.request(MetadataRequest[12](topics=[]), MetadataResponse, 12)
    assert versions.error_code == 0
    assert {api.api_key for api in versions.api_keys} >= {0, 1, 3, 18, 68, 76, 88}
    finalized = {feature.name: feature.max_version_level for feature in versions.finalized_features}
    assert finalized["share.version"] == 1
    assert finalized["streams.version"] == 1
    assert finalized["group.version"] == 1
    assert [broker.node_id for broker in metadata.brokers] == [1]
    assert metadata.cluster_id == apache_kafka.cluster_id
