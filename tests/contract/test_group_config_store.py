"""Group configs (the GROUP config resource) in the store: the file store writes KRaft ConfigRecords of
resource type GROUP (32) to `__cluster_metadata`, a null value for a removed key, as Kafka 4's
controller, and replays them after a restart, beside the topic catalog's own ConfigRecords; the memory
store keeps the same contract."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trafka.adapters.filesystem import FileCatalogStore, FileGroupConfigStore
from trafka.adapters.filesystem.metadata_records import ConfigRecord, decode_metadata_record
from trafka.adapters.memory import MemoryGroupConfigStore
from trafka.app.ops.log_records import decode_metadata_record as dump_log_decode
from trafka.domain.topics import Topic

from .metadata_stores import FileStores, MemoryStores


@pytest.fixture(params=["memory", "filesystem"])
def stores(request, tmp_path):
    stores = (
        MemoryStores(MemoryGroupConfigStore())
        if request.param == "memory"
        else FileStores(str(tmp_path / "logs"), FileGroupConfigStore)
    )
    yield stores
    stores.close()


def test_overrides_survive_a_restart_with_removals_replayed(stores):
    store = stores.open()
    store.group_configs_changed("g", {"consumer.session.timeout.ms": "50000", "share.auto.offset.reset": "earliest"})
    store.group_configs_changed("h", {"share.isolation.level": "read_committed"})
    store.group_configs_changed("g", {"share.auto.offset.reset": None})
    store.group_configs_changed("h", {"share.isolation.level": None})
    store.group_configs_changed("g", {})
    assert stores.open().load() == {"g": {"consumer.session.timeout.ms": "50000"}}


def test_the_file_store_writes_kafka_group_config_records_beside_the_catalogs(tmp_path):
    stores = FileStores(str(tmp_path / "logs"), FileGroupConfigStore)
    try:
        store = stores.open()
        catalog = FileCatalogStore(stores.log, 1, uuid.UUID(int=2))
        catalog.topic_created(Topic("g", uuid.UUID(int=9), 1, {"retention.ms": "1000"}))  # a topic named as the group
        store.group_configs_changed("g", {"consumer.heartbeat.interval.ms": "6000"})
        store.group_configs_changed("g", {"consumer.heartbeat.interval.ms": None})
        store.group_configs_changed("g", {"share.auto.offset.reset": "earliest"})
        values = [value for _, _, value in stores.log.records()]
        (topic,) = FileCatalogStore(stores.log, 1, uuid.UUID(int=2)).load()
        assert topic.configs == {"retention.ms": "1000"}  # the catalog ignores GROUP records
        assert stores.open().load() == {"g": {"share.auto.offset.reset": "earliest"}}  # and this store TOPIC ones
    finally:
        stores.close()
    records = [r for r in map(decode_metadata_record, values) if isinstance(r, ConfigRecord) and r.resource_type == 32]
    assert [(r.resource_name, r.name, r.value) for r in records] == [
        ("g", "consumer.heartbeat.interval.ms", "6000"),
        ("g", "consumer.heartbeat.interval.ms", None),
        ("g", "share.auto.offset.reset", "earliest"),
    ]
    # and `trafka dump-log` decodes them
    dumped = [r for r in map(dump_log_decode, values) if type(r).__name__ == "ConfigRecord"]
    assert [r.to_dict() for r in dumped if r.resource_type == 32] == [r.to_dict() for r in records]


changes = st.dictionaries(
    st.sampled_from(["consumer.session.timeout.ms", "share.auto.offset.reset", "share.isolation.level"]),
    st.one_of(st.none(), st.text(min_size=1, max_size=5)),
    max_size=3,
)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["g", "h", "ü"]), changes), max_size=8))
def test_the_file_store_replays_what_the_memory_store_holds(tmp_path_factory, steps):
    memory = MemoryGroupConfigStore()
    stores = FileStores(str(tmp_path_factory.mktemp("logs")), FileGroupConfigStore)
    try:
        file = stores.open()
        for group_id, change in steps:
            memory.group_configs_changed(group_id, change)
            file.group_configs_changed(group_id, change)
        assert stores.open().load() == memory.load()
    finally:
        stores.close()
