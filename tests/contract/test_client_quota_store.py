"""Client quotas in the store: the file store writes KRaft ClientQuotaRecords to `__cluster_metadata`
(a null entity name for the default, `remove` for a removed key) and replays them after a restart; the
memory store keeps the same contract."""

from __future__ import annotations

import pytest

from trafka.adapters.filesystem import FileClientQuotaStore
from trafka.adapters.filesystem.metadata_records import ClientQuotaRecord, decode_metadata_record
from trafka.adapters.memory import MemoryClientQuotaStore
from trafka.app.ops.log_records import decode_metadata_record as dump_log_decode
from trafka.domain.quotas import ClientQuotas, DescribeFilter, QuotaEntity

from .metadata_stores import FileStores, MemoryStores

ALICE = QuotaEntity.user_client("alice")
ALICE_DEFAULT_CLIENT = QuotaEntity.user_client("alice", default_client=True)


@pytest.fixture(params=["memory", "filesystem"])
def stores(request, tmp_path):
    stores = (
        MemoryStores(MemoryClientQuotaStore())
        if request.param == "memory"
        else FileStores(str(tmp_path / "logs"), FileClientQuotaStore)
    )
    yield stores
    stores.close()


def _everything():
    return DescribeFilter.parse([], strict=False)


def test_quotas_survive_a_restart_with_removals_replayed(stores):
    quotas = ClientQuotas(stores.open())
    quotas.alter(
        [
            (ALICE, [("producer_byte_rate", 1024.0), ("request_percentage", 12.5)]),
            (ALICE_DEFAULT_CLIENT, [("consumer_byte_rate", 2048.0)]),
        ]
    )
    quotas.alter([(ALICE, [("request_percentage", None)]), (ALICE_DEFAULT_CLIENT, [("consumer_byte_rate", None)])])
    reopened = ClientQuotas(stores.open())
    assert reopened.describe(_everything()) == [(ALICE, {"producer_byte_rate": 1024.0})]


def test_validate_only_writes_nothing(stores):
    quotas = ClientQuotas(stores.open())
    assert quotas.alter([(ALICE, [("producer_byte_rate", 1024.0)])], validate_only=True) == {ALICE: None}
    assert ClientQuotas(stores.open()).describe(_everything()) == []


def test_the_file_store_writes_kafka_client_quota_records(tmp_path):
    stores = FileStores(str(tmp_path / "logs"), FileClientQuotaStore)
    try:
        store = stores.open()
        ClientQuotas(store).alter([(QuotaEntity.user_client(default_user=True), [("consumer_byte_rate", 5.0)])])
        values = [value for _, _, value in stores.log.records()]
        records = [decode_metadata_record(value) for value in values]
    finally:
        stores.close()
    (record,) = [r for r in records if isinstance(r, ClientQuotaRecord)]
    assert [(e.entity_type, e.entity_name) for e in record.entity] == [("user", None)]
    assert (record.key, record.value, record.remove) == ("consumer_byte_rate", 5.0, False)
    # and `trafka dump-log` decodes it
    (dumped,) = [r for r in map(dump_log_decode, values) if type(r).__name__ == "ClientQuotaRecord"]
    assert dumped.to_dict() == record.to_dict()
