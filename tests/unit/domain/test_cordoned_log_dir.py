"""`cordoned.log.dirs` (Kafka 4.3, KIP-1066): a cordoned log dir takes no new partitions, whether a
topic is created, auto-created or grows; what it holds stays served."""

from __future__ import annotations

import pytest

from tests.unit.conftest import Cluster
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import log_dir_cordoned
from trafka.domain.configs import BrokerPolicy
from trafka.domain.errors import ErrorCode, KafkaError


def test_a_cordoned_log_dir_refuses_new_topics_and_partitions():
    open_cluster = Cluster()
    open_cluster.catalog.create("kept", 1)
    cordoned = Cluster(BrokerPolicy(log_dir_cordoned=True), store=open_cluster.store)
    for create in (
        lambda: cordoned.catalog.create("new", 1),
        lambda: cordoned.catalog.auto_create("auto"),
        lambda: cordoned.catalog.create_partitions("kept", 2),
    ):
        with pytest.raises(KafkaError) as refused:
            create()
        assert refused.value.code is ErrorCode.INVALID_REPLICATION_FACTOR
        assert "cordoned" in (refused.value.message or "")


@pytest.mark.parametrize(
    ("cordoned", "expected"),
    [("", False), ("*", True), ("/tmp/x/logs", True), ("/tmp/x/logs/", True), ("/tmp/other,/tmp/x/logs", True)],
)
def test_the_setting_names_the_log_dir_by_its_path_or_star(cordoned, expected):
    settings = load_settings(
        overrides={"storage": {"data_dir": "/tmp/x/logs"}, "broker": {"cordoned_log_dirs": cordoned}}
    )
    assert log_dir_cordoned(settings) is expected
