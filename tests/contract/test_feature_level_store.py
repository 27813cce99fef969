"""Finalized feature levels in the catalog store: the file store writes them as KRaft FeatureLevelRecords
in `__cluster_metadata` (a new log opens with metadata.version at Kafka 4.2's level) and replays them
after a restart, level 0 included; the memory store keeps the same contract."""

from __future__ import annotations

from trafka.adapters.filesystem.metadata_records import FeatureLevelRecord, decode_metadata_record

from .metadata_stores import FileStores
from .test_broker_config_store import TOPIC, catalog_store, stores  # noqa: F401  (the fixture)


def test_feature_levels_are_recorded_and_survive_a_restart(stores):
    store = stores.open()
    before = dict(store.feature_levels())
    store.topic_created(TOPIC)
    store.feature_levels_changed({"group.version": 0, "metadata.version": 25})
    store.feature_levels_changed({"eligible.leader.replicas.version": 1})
    again = stores.open()
    assert again.feature_levels() == {
        **before,
        "group.version": 0,
        "metadata.version": 25,
        "eligible.leader.replicas.version": 1,
    }
    assert [t.name for t in again.load()] == ["t"]


def test_the_file_store_writes_kafkas_feature_level_records(tmp_path):
    stores = FileStores(str(tmp_path / "logs"), catalog_store)
    try:
        store = stores.open()
        assert store.feature_levels() == {"metadata.version": 29}
        store.feature_levels_changed({"group.version": 0})
        records = [decode_metadata_record(v) for _, _, v in stores.log.records() if v is not None]
        levels = [(r.name, r.feature_level) for r in records if isinstance(r, FeatureLevelRecord)]
        assert levels == [("metadata.version", 29), ("group.version", 0)]
    finally:
        stores.close()
