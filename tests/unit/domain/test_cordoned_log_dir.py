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


SET, DELETE = 0, 1


def test_a_dynamic_cordon_needs_metadata_version_43_and_the_log_dirs_own_name():
    """Kafka 4.3's dynamic `cordoned.log.dirs` (ADR 87): refused below 4.3-IV0 (level 30) with the
    controller's words, per broker only, each entry `*` or the log dir; it wins over the static value."""
    cluster = Cluster(BrokerPolicy(log_dir_cordoned=True, log_dir_names=frozenset({"/data/logs"})))
    configs = cluster.catalog.broker_configs
    with pytest.raises(KafkaError) as refused:
        configs.alter("1", {"cordoned.log.dirs": (SET, "*")})
    assert refused.value.code is ErrorCode.INVALID_CONFIG
    assert refused.value.message.endswith("requires metadata.version >= 4.3-IV0")
    cluster.store.feature_levels_changed({"metadata.version": 30})
    with pytest.raises(KafkaError) as refused:
        configs.alter("", {"cordoned.log.dirs": (SET, "*")})
    assert refused.value.message.startswith("Cannot update these configs at default cluster level")
    with pytest.raises(KafkaError) as refused:
        configs.alter("1", {"cordoned.log.dirs": (SET, "/data/other")})
    assert refused.value.code is ErrorCode.INVALID_REQUEST
    configs.alter("1", {"cordoned.log.dirs": (SET, "")})  # dynamic, empty: uncordoned over the static value
    assert not cluster.policy.is_log_dir_cordoned()
    cluster.catalog.create("open", 1)
    configs.alter("1", {"cordoned.log.dirs": (SET, "/data/logs")})
    assert cluster.policy.is_log_dir_cordoned()
    with pytest.raises(KafkaError) as refused:
        cluster.catalog.create("closed", 1)
    assert refused.value.message == "All brokers are currently fenced, or have all their log directories cordoned."
    configs.alter("1", {"cordoned.log.dirs": (DELETE, None)})
    assert cluster.policy.is_log_dir_cordoned()  # the static value again
