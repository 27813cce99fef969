"""Dynamic broker configs in the catalog store: the file store writes them as KRaft ConfigRecords of the
BROKER resource ("" the cluster default, else the node id; a removal has a null value) and replays them
after a restart, beside the topics' own; the memory store keeps the same contract."""

from __future__ import annotations

import uuid

import pytest

from trafka.adapters.filesystem import FileCatalogStore
from trafka.adapters.filesystem.metadata_records import ConfigRecord, decode_metadata_record
from trafka.adapters.memory import MemoryCatalogStore
from trafka.domain.configs import ConfigResourceType
from trafka.domain.topics import Topic

from .metadata_stores import FileStores, MemoryStores

TOPIC = Topic("t", uuid.UUID(int=9), 1, {"retention.ms": "5"})


def catalog_store(log):
    return FileCatalogStore(log, 1, uuid.UUID(int=2))


@pytest.fixture(params=["memory", "filesystem"])
def stores(request, tmp_path):
    stores = (
        MemoryStores(MemoryCatalogStore())
        if request.param == "memory"
        else FileStores(str(tmp_path / "logs"), catalog_store)
    )
    yield stores
    stores.close()


def test_broker_configs_are_kept_per_resource_and_survive_a_restart(stores):
    store = stores.open()
    assert store.broker_configs() == {}
    store.topic_created(TOPIC)
    store.broker_configs_changed("", {"message.max.bytes": "5000", "log.retention.ms": "60000"})
    store.broker_configs_changed("1", {"log.segment.bytes": "2048"})
    store.broker_configs_changed("", {"log.retention.ms": None})
    store.broker_configs_changed("1", {"log.segment.bytes": None})
    store.broker_configs_changed("1", {"log.roll.ms": "1000"})
    again = stores.open()
    assert again.broker_configs() == {"": {"message.max.bytes": "5000"}, "1": {"log.roll.ms": "1000"}}
    assert [(t.name, dict(t.configs)) for t in again.load()] == [("t", {"retention.ms": "5"})]


def test_the_file_store_writes_kafkas_broker_config_records(tmp_path):
    stores = FileStores(str(tmp_path / "logs"), catalog_store)
    try:
        stores.open().broker_configs_changed("", {"message.max.bytes": "5000", "log.retention.ms": None})
        records = [decode_metadata_record(v) for _, _, v in stores.log.records() if v is not None]
        configs = [(r.resource_type, r.resource_name, r.name, r.value) for r in records if isinstance(r, ConfigRecord)]
        assert configs == [
            (ConfigResourceType.BROKER, "", "log.retention.ms", None),
            (ConfigResourceType.BROKER, "", "message.max.bytes", "5000"),
        ]
    finally:
        stores.close()
