"""A `_schemas` topic replayed read-only as the registry of a typed read (here a data dir's, through
the `LogDirSource` a read uses; the broker's is read the same way, tests/spark/test_typed.py)."""

from __future__ import annotations

import pickle

import pytest

from tests.batches import make_batch
from trafka.adapters.spark import SourceError
from trafka.adapters.spark.topic_schemas import log_dir_schemas
from trafka.domain.batch import BatchHeader
from trafka.domain.schema_registry import RegistryEntry, Schema, SchemaType, SubjectVersion
from trafka.domain.schema_registry.log_entries import delete_subject_entry, schema_entry


class SchemasLog:
    """A `LogDirReader` holding only `_schemas`, one batch per entry."""

    path = "/data"
    batches_read = 0
    opened = 0

    def __init__(self) -> None:
        self.stored: list[bytes] = []

    def add(self, entry: RegistryEntry) -> None:
        self.add_raw(entry.key.to_json(), entry.value_json())

    def add_raw(self, key: bytes, value: bytes | None) -> None:
        batch = bytearray(make_batch([(1, key, value)]))
        batch[0:8] = len(self.stored).to_bytes(8, "big")  # its offset
        self.stored.append(bytes(batch))

    def partition_count(self, topic: str) -> int | None:
        return 1 if topic == "_schemas" and self.stored else None

    def log_start_offset(self, topic: str, partition: int) -> int:
        return 0

    def log_end_offset(self, topic: str, partition: int) -> int:
        return len(self.stored)

    def batches(self, topic: str, partition: int, offset: int):
        for batch in self.stored:
            if BatchHeader.parse(batch).base_offset >= offset:
                SchemasLog.batches_read += 1
                yield batch

    def close(self) -> None:
        pass


LOG = SchemasLog()


def open_log(path: str) -> SchemasLog:
    assert path == "/data"
    SchemasLog.opened += 1
    return LOG


def version(subject: str, number: int, schema_id: int, text: str, schema_type=SchemaType.AVRO) -> RegistryEntry:
    return schema_entry(SubjectVersion(subject, number, schema_id, Schema(text, schema_type)))


@pytest.fixture(autouse=True)
def empty_log():
    LOG.stored.clear()


def test_latest_and_by_id_follow_the_registrys_rules():
    LOG.add(version("t-value", 1, 1, '"int"'))
    LOG.add(version("t-value", 2, 2, '"long"'))
    LOG.add(version("u-value", 1, 3, '{"type": "string"}', SchemaType.JSON))
    LOG.add_raw(b"not json", b"{}")  # skipped, as the broker skips it
    schemas = log_dir_schemas("/data", open_log)
    assert schemas.latest("t-value") == ("AVRO", '"long"')
    assert schemas.latest("u-value") == ("JSON", '{"type": "string"}')
    LOG.add(delete_subject_entry("t-value", 2))
    assert schemas.by_id(1) == ("AVRO", '"int"')  # known: no replay
    with pytest.raises(SourceError, match="is not in the _schemas topic"):
        log_dir_schemas("/data", open_log).latest("t-value")  # soft-deleted subject
    assert log_dir_schemas("/data", open_log).by_id(2) == ("AVRO", '"long"')  # ids of deleted versions still resolve


def test_an_id_written_after_the_start_is_read_once_and_the_replay_is_pickled_along():
    LOG.add(version("t-value", 1, 1, '"int"'))
    schemas = log_dir_schemas("/data", open_log)
    schemas.latest("t-value")
    on_executor = pickle.loads(pickle.dumps(schemas))
    LOG.add(version("t-value", 2, 7, '"long"'))
    before = SchemasLog.batches_read
    assert on_executor.by_id(1) == ("AVRO", '"int"')
    assert SchemasLog.batches_read == before  # replayed on the driver
    assert on_executor.by_id(7) == ("AVRO", '"long"')
    assert SchemasLog.batches_read == before + 1  # only the new entry is read
    with pytest.raises(SourceError, match="^not in the _schemas topic of data dir /data$"):
        on_executor.by_id(9)


def test_a_data_dir_without_schemas_says_so():
    with pytest.raises(SourceError, match="has no _schemas topic"):
        log_dir_schemas("/data", open_log).latest("t-value")


def test_a_decoder_asks_for_an_unknown_id_once_not_per_record():
    from trafka.adapters.spark.decode import ColumnDecoder

    LOG.add(version("t-value", 1, 1, '"long"'))
    decoder = ColumnDecoder.for_subject("value", "avro", log_dir_schemas("/data", open_log), "t-value")
    assert decoder.decode(b"\0\0\0\0\x01\x02") == 1
    before = SchemasLog.opened
    for _ in range(3):
        with pytest.raises(ValueError, match="^schema id 9: not in the _schemas topic of data dir /data$"):
            decoder.decode(b"\0\0\0\0\x09\x02")
    assert SchemasLog.opened == before + 1  # one catch-up, not one per record
