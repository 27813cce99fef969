"""Feature flags and config resources through kafka-python's KafkaAdminClient (`describe_features`,
`update_features`, `list_config_resources`) on the filesystem store: Kafka 4.2's levels capped at what
trafka implements, an update recorded in `__cluster_metadata` and still finalized after a restart.
(confluent-kafka's Python AdminClient and KafkaJS' admin have neither call.)"""

from __future__ import annotations

import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewTopic as KafkaPythonNewTopic
from kafka.errors import InvalidUpdateVersionError

from .broker import BrokerProcess


def _admin(broker: BrokerProcess) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=broker.bootstrap)


@pytest.fixture(scope="module")
def fs_broker_admin(tmp_path_factory):
    broker = BrokerProcess(["--data-dir", str(tmp_path_factory.mktemp("logs"))]).start()
    admin = _admin(broker)
    yield admin, str(admin.describe_cluster()["controller_id"])
    admin.close()
    assert broker.stop() == 0, broker.log()


def test_describe_and_update_features_survive_a_restart(tmp_path):
    data = str(tmp_path / "logs")
    broker = BrokerProcess(["--data-dir", data]).start()
    try:
        admin = _admin(broker)
        features = admin.describe_features()
        assert features["metadata.version"]["supported"] == (
            7,
            33,
        )  # to Kafka 4.4's 4.4-IV2 (ADR 87); a new log dir runs 4.2-IV1
        assert features["metadata.version"]["finalized"] == (29, 29)
        assert features["kraft.version"]["finalized"] == (1, 1)
        assert features["transaction.version"]["finalized"] == (2, 2)  # transactions V2, as a fresh Kafka 4.2
        with pytest.raises(InvalidUpdateVersionError):
            admin.update_features({"transaction.version": 1})  # a downgrade needs a downgrade type
        assert admin.update_features({"transaction.version": ("SAFE_DOWNGRADE", 1)}) == {"transaction.version": "OK"}
        with pytest.raises(InvalidUpdateVersionError):
            admin.update_features({"metadata.version": 24})  # a downgrade needs a downgrade type
        assert admin.update_features({"metadata.version": ("SAFE_DOWNGRADE", 24)}, validate_only=True) == {
            "metadata.version": "OK"
        }
        assert admin.describe_features()["metadata.version"]["finalized"] == (29, 29)
        assert admin.update_features({"metadata.version": ("SAFE_DOWNGRADE", 24)}) == {"metadata.version": "OK"}
        assert admin.describe_features()["metadata.version"]["finalized"] == (24, 24)
        admin.close()
    finally:
        assert broker.stop() == 0, broker.log()
    broker = BrokerProcess(["--data-dir", data]).start()
    try:
        admin = _admin(broker)
        assert admin.describe_features()["metadata.version"]["finalized"] == (24, 24)
        assert admin.describe_features()["transaction.version"]["finalized"] == (1, 1)
        admin.close()
    finally:
        assert broker.stop() == 0, broker.log()


def test_list_config_resources_through_kafka_python(fs_broker_admin):
    admin, node = fs_broker_admin
    admin.create_topics([KafkaPythonNewTopic("listed", 1, 1)])
    resources = admin.list_config_resources()
    assert "listed" in resources["topic"]
    assert resources["broker"] == [node] and resources["broker_logger"] == [node]
    assert admin.list_config_resources(["TOPIC"]) == {"topic": resources["topic"]}
    assert admin.list_config_resources(["GROUP"]) == {}
