"""The reference broker itself: the session's Apache Kafka serves, at the pom's version, with the
features a fresh Kafka 4.2 cluster finalizes."""

from __future__ import annotations

import pytest
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse

from tests.integration.wire import WireClient

from .reference import classpath, kafka_version, maven_classpath

# The first test to ask for `apache_kafka` waits for Maven and Kafka's start (ADR 63).
pytestmark = pytest.mark.timeout(900)


def test_the_classpath_holds_the_pom_version_of_kafka():
    jars = classpath().split(":")
    assert any(jar.endswith(f"kafka_2.13-{kafka_version()}.jar") for jar in jars)
    assert any(jar.endswith(f"kafka-tools-{kafka_version()}.jar") for jar in jars)


def test_one_way_to_a_classpath_resolved_once_per_content_of_the_poms(tmp_path, monkeypatch):
    """`maven_classpath` is how the harness gets jars from Maven (the reference broker's pom, the
    tools' pom and its parent): resolved once, cached beside the pom under a name hashed over every pom
    given, resolved again when one of them changes (and the stale cache goes)."""
    calls = tmp_path / "calls"
    fake = tmp_path / "bin" / "mvn"
    fake.parent.mkdir()
    fake.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> {calls}\n'
        'for a in "$@"; do case "$a" in -Dmdep.outputFile=*) echo "/jars/a.jar:/jars/b.jar" > "${a#*=}";; esac; done\n'
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:/usr/bin:/bin")
    parent, pom = tmp_path / "parent.xml", tmp_path / "tools" / "pom.xml"
    pom.parent.mkdir()
    parent.write_text("<project>parent</project>")
    pom.write_text("<project>tools</project>")
    assert maven_classpath(pom, parent) == "/jars/a.jar:/jars/b.jar"
    assert maven_classpath(pom, parent) == "/jars/a.jar:/jars/b.jar"
    assert len(calls.read_text().splitlines()) == 1  # the second answer came from the cache
    parent.write_text("<project>parent, changed</project>")
    maven_classpath(pom, parent)
    assert len(calls.read_text().splitlines()) == 2
    assert len(list(pom.parent.glob(".classpath-*.txt"))) == 1


def test_the_tools_classpath_is_the_reference_brokers_way_with_its_parent_pom(monkeypatch):
    from tests.tools import kafka_tools

    asked = []
    monkeypatch.setattr(kafka_tools, "maven_classpath", lambda *poms: asked.append(poms) or "jars")
    assert kafka_tools.classpath() == "jars"
    assert asked == [(kafka_tools.POM, kafka_tools.PARENT_POM)]


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
