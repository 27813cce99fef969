"""The client libraries' suites: which Go packages, and how their own CI points them at a broker.

Each suite says, in Kafka's configuration words, what its CI's broker is configured with (the same
properties go to Apache Kafka and to trafka, which reads Kafka's keys), which SCRAM users its tests
log in as, and the environment its tests read. kafka-go's tests dial `localhost:9092` (and the SASL
listener `localhost:9093`) by hard-coded address, so that suite runs with its broker in a private
network namespace where those ports are its own (`fixed_ports`); franz-go's take `KGO_SEEDS`.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

PLAIN_JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required"
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


@attrs.frozen
class Endpoints:
    """Where the broker under test listens: "host:port" per listener name."""

    plaintext: str
    sasl: str


@attrs.frozen
class Suite:
    name: str
    module: str  # the Go module that holds the suite (its version is pinned in go.mod)
    packages: tuple[str, ...]
    properties: Mapping[str, str]  # server properties its CI's broker has, in Kafka's words
    scram_users: tuple[tuple[str, str, str], ...]  # (user, mechanism, password)
    fixed_ports: tuple[int, int] | None  # (PLAINTEXT, SASL_PLAINTEXT) when its tests hard-code them
    default_records: int  # its CI's record count (kgo: KGO_TEST_RECORDS' default)
    timeout: str  # `go test -timeout` for one package against one broker
    ci: str  # where its CI's configuration is, for the report

    def environment(self, endpoints: Endpoints, kafka_version: str, records: int) -> dict[str, str]:
        if self.name == "kgo":
            return {
                "KGO_SEEDS": endpoints.plaintext,
                "KGO_TEST_RF": "1",
                "KGO_TEST_RECORDS": str(records),
                "KGO_TEST_SCRAM_SEEDS": endpoints.sasl,
                "KGO_TEST_SCRAM": "testuser:testpass",
            }
        return {"KAFKA_VERSION": kafka_version, "KAFKA_SKIP_NETTEST": "1"}


KGO = Suite(
    name="kgo",
    module="github.com/twmb/franz-go",
    packages=("github.com/twmb/franz-go/pkg/kgo",),
    properties={
        # franz-go's lint-and-test.yml, job integration-test-kafka
        "group.coordinator.rebalance.protocols": "classic,consumer,share",
        "group.share.delivery.count.limit": "10",
        "share.coordinator.state.topic.num.partitions": "5",
        "sasl.enabled.mechanisms": "SCRAM-SHA-256",
    },
    scram_users=(("testuser", "SCRAM-SHA-256", "testpass"),),
    fixed_ports=None,
    default_records=500_000,
    timeout="30m",
    ci="franz-go `.github/workflows/lint-and-test.yml` (integration-test-kafka, integration-test-kfake)",
)

KAFKA_GO = Suite(
    name="kafka-go",
    module="github.com/segmentio/kafka-go",
    packages=(
        "github.com/segmentio/kafka-go",
        "github.com/segmentio/kafka-go/compress",
        "github.com/segmentio/kafka-go/sasl",
        "github.com/segmentio/kafka-go/topics",
    ),
    properties={
        # kafka-go's .circleci/config.yml (the kafka-370 job's broker; 4.0's users, see sasl_test.go)
        "advertised.listeners": "PLAINTEXT://localhost:9092,SASL_PLAINTEXT://localhost:9093",
        "auto.create.topics.enable": "true",
        "message.max.bytes": "200000000",
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": (
            f'{PLAIN_JAAS} username="adminplain" password="admin-secret" user_adminplain="admin-secret";'
        ),
        "authorizer.class.name": STANDARD_AUTHORIZER,
        "allow.everyone.if.no.acl.found": "true",
        "super.users": "User:ANONYMOUS;User:adminplain;User:adminscram;User:adminscram256;User:adminscram512",
    },
    scram_users=(
        ("adminscram", "SCRAM-SHA-256", "admin-secret-256"),
        ("adminscram", "SCRAM-SHA-512", "admin-secret-512"),
        ("adminscram256", "SCRAM-SHA-256", "admin-secret-256"),
        ("adminscram512", "SCRAM-SHA-512", "admin-secret-512"),
    ),
    fixed_ports=(9092, 9093),
    default_records=0,
    timeout="20m",
    ci="kafka-go `.circleci/config.yml` (KAFKA_VERSION, KAFKA_SKIP_NETTEST, the broker's environment)",
)

SUITES = {suite.name: suite for suite in (KGO, KAFKA_GO)}
