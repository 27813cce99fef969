"""Broker-side schema id validation (confluent.value.schema.validation) through the domain's produce."""

from __future__ import annotations

import struct

import crc32c
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch

from tests.batches import make_batch
from tests.unit.conftest import Cluster
from trafka.adapters.compression import decompress
from trafka.domain.batch import Compression
from trafka.domain.batch_records import record_keys_values
from trafka.domain.catalog import AlterOp
from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.topics import TopicPartition

NOW = 1_700_000_000_000
TP = TopicPartition("t", 0)


class Registry:
    """A `SchemaIdLookup` with fixed subjects, counting the questions it is asked."""

    def __init__(self, subjects: dict[str, set[int]]) -> None:
        self.subjects = subjects
        self.asked: list[str] = []

    def schema_ids(self, subject: str) -> set[int]:
        self.asked.append(subject)
        return self.subjects.get(subject, set())


def wire(schema_id: int, payload: bytes = b"\x02") -> bytes:
    return b"\x00" + struct.pack(">i", schema_id) + payload


@pytest.fixture
def registry(cluster: Cluster) -> Registry:
    registry = Registry({"t-value": {1, 2}, "t-key": {7}})
    cluster.replicas.admission.schema_ids = registry
    return registry


def end_offset(cluster: Cluster) -> int:
    return cluster.replicas.watermarks(TP)[1]


def test_a_topic_without_the_config_takes_any_bytes_and_never_asks_the_registry(cluster, registry):
    cluster.catalog.create("t", 1, 1, {"retention.ms": "1000"})
    assert cluster.replicas.produce(TP, make_batch([(1, b"k", b"raw bytes")]), NOW).error is ErrorCode.NONE
    cluster.catalog.create("u", 1, 1)
    assert cluster.replicas.produce(TopicPartition("u", 0), make_batch([(1, None, b"x")]), NOW).error is ErrorCode.NONE
    assert registry.asked == []


def test_values_with_ids_registered_under_the_subject_are_appended(cluster, registry):
    cluster.catalog.create("t", 1, 1, {"confluent.value.schema.validation": "true"})
    result = cluster.replicas.produce(TP, make_batch([(1, b"k", wire(1)), (2, None, wire(2)), (3, b"k", None)]), NOW)
    assert (result.error, result.base_offset, end_offset(cluster)) == (ErrorCode.NONE, 0, 3)
    assert registry.asked == ["t-value"]  # once per subject per batch, not per record


NO_ID = "the value has no schema id (Confluent's wire format: magic byte 0, then a 4-byte schema id)"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (b"raw bytes", NO_ID),
        (b"\x00\x00\x00", NO_ID),
        (b"", NO_ID),
        (b"\x01" + wire(1)[1:], NO_ID),
        (wire(3), "the value's schema id 3 is not registered under subject t-value"),
        (wire(7), "the value's schema id 7 is not registered under subject t-value"),
    ],
)
def test_a_bad_value_refuses_the_whole_batch_with_invalid_record(cluster, registry, value, problem):
    cluster.catalog.create("t", 1, 1, {"confluent.value.schema.validation": "true"})
    result = cluster.replicas.produce(TP, make_batch([(1, None, wire(1)), (2, None, value), (3, None, wire(2))]), NOW)
    assert result.error is ErrorCode.INVALID_RECORD
    assert result.message.startswith(
        "One or more records have been rejected due to 1 record errors in total, and only showing the first "
        f"three errors at most: [RecordError(batchIndex=1, message='{problem}"
    )
    assert end_offset(cluster) == 0


def test_the_message_counts_every_bad_record_and_shows_three_as_kafka_does(cluster, registry):
    cluster.catalog.create("t", 1, 1, {"confluent.value.schema.validation": "true"})
    records = [(1, None, wire(1)), *[(2, None, b"raw")] * 4, (3, None, wire(9))]
    result = cluster.replicas.produce(TP, make_batch(records), NOW)
    assert result.message.startswith("One or more records have been rejected due to 5 record errors in total")
    assert [f"batchIndex={i}" in result.message for i in range(6)] == [False, True, True, True, False, False]


def test_key_validation_checks_keys_against_the_key_subject_and_lets_null_keys_pass(cluster, registry):
    cluster.catalog.create("t", 1, 1, {"confluent.key.schema.validation": "true"})
    assert (
        cluster.replicas.produce(TP, make_batch([(1, wire(7), b"raw"), (2, None, b"raw")]), NOW).error is ErrorCode.NONE
    )
    refused = cluster.replicas.produce(TP, make_batch([(1, wire(1), wire(1))]), NOW)
    assert refused.error is ErrorCode.INVALID_RECORD
    assert (
        "RecordError(batchIndex=0, message='the key's schema id 1 is not registered under subject t-key')"
        in refused.message
    )
    assert end_offset(cluster) == 2


def test_redpandas_config_name_is_the_same_switch(cluster, registry):
    cluster.catalog.create("t", 1, 1, {"redpanda.value.schema.id.validation": "true"})
    assert cluster.replicas.produce(TP, make_batch([(1, None, b"raw")]), NOW).error is ErrorCode.INVALID_RECORD
    assert cluster.replicas.produce(TP, make_batch([(1, None, wire(2))]), NOW).error is ErrorCode.NONE


@pytest.mark.parametrize("compression", [Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD])
def test_compressed_batches_are_validated_record_by_record(cluster, registry, compression):
    cluster.catalog.create("t", 1, 1, {"confluent.value.schema.validation": "true"})
    good = [(i, None, wire(1, b"x" * 100)) for i in range(20)]
    assert cluster.replicas.produce(TP, make_batch(good, compression), NOW).error is ErrorCode.NONE
    refused = cluster.replicas.produce(TP, make_batch([*good, (21, None, b"x" * 100)], compression), NOW)
    assert (refused.error, end_offset(cluster)) == (ErrorCode.INVALID_RECORD, 20)
    assert f"RecordError(batchIndex=20, message='{NO_ID}" in refused.message


def test_turning_validation_on_and_off_with_incremental_alter_configs_takes_effect_at_once(cluster, registry):
    cluster.catalog.create("t", 1, 1, {"retention.ms": "1000"})
    raw = make_batch([(1, None, b"raw")])
    assert cluster.replicas.produce(TP, raw, NOW).error is ErrorCode.NONE
    cluster.catalog.alter_configs("t", {"confluent.value.schema.validation": (AlterOp.SET, "true")})
    assert cluster.replicas.produce(TP, raw, NOW).error is ErrorCode.INVALID_RECORD
    cluster.catalog.alter_configs("t", {"confluent.value.schema.validation": (AlterOp.DELETE, None)})
    assert cluster.replicas.produce(TP, raw, NOW).error is ErrorCode.NONE


def test_a_recreated_topic_does_not_inherit_validation(cluster, registry):
    cluster.catalog.create("t", 1, 1, {"confluent.value.schema.validation": "true"})
    assert cluster.replicas.produce(TP, make_batch([(1, None, b"raw")]), NOW).error is ErrorCode.INVALID_RECORD
    cluster.catalog.delete("t")
    cluster.catalog.create("t", 1, 1, {"retention.ms": "1000"})
    assert cluster.replicas.produce(TP, make_batch([(1, None, b"raw")]), NOW).error is ErrorCode.NONE


def test_validation_without_a_registry_refuses_rather_than_lets_records_through(cluster):
    cluster.catalog.create("t", 1, 1, {"confluent.value.schema.validation": "true"})
    result = cluster.replicas.produce(TP, make_batch([(1, None, wire(1))]), NOW)
    assert result.error is ErrorCode.INVALID_RECORD and "no schema registry" in result.message


def test_a_record_running_past_its_batch_is_corrupt_message_not_a_crash(cluster, registry):
    cluster.catalog.create("t", 1, 1, {"confluent.value.schema.validation": "true"})
    batch = bytearray(make_batch([(1, None, wire(1))]))
    batch[61] = 0x7E  # the record's length varint: 63 bytes, more than the batch holds
    struct.pack_into(">I", batch, 17, crc32c.crc32c(bytes(batch[21:])))
    result = cluster.replicas.produce(TP, bytes(batch), NOW)
    assert result.error is ErrorCode.CORRUPT_MESSAGE and end_offset(cluster) == 0


@pytest.mark.parametrize(
    ("configs", "accepted"),
    [
        ({"confluent.value.schema.validation": "true", "confluent.key.schema.validation": "false"}, True),
        ({"confluent.value.subject.name.strategy": "io.confluent.kafka.serializers.subject.TopicNameStrategy"}, True),
        ({"confluent.key.subject.name.strategy": "TopicNameStrategy"}, True),
        ({"confluent.value.schema.validation": "yes"}, False),
        ({"confluent.value.subject.name.strategy": "io.confluent.kafka.serializers.subject.RecordNameStrategy"}, False),
    ],
)
def test_the_topic_config_catalog_knows_the_validation_configs(cluster, configs, accepted):
    if accepted:
        assert cluster.catalog.create("t", 1, 1, configs).configs == configs
        return
    with pytest.raises(KafkaError) as refused:
        cluster.catalog.create("t", 1, 1, configs)
    assert refused.value.code is ErrorCode.INVALID_CONFIG


def test_describe_configs_lists_the_validation_configs_with_their_defaults(cluster):
    entries = {e.name: e.value for e in cluster.policy.describe_topic({}, None)}
    assert entries["confluent.value.schema.validation"] == "false"
    assert entries["confluent.key.subject.name.strategy"] == "io.confluent.kafka.serializers.subject.TopicNameStrategy"


records = st.lists(
    st.tuples(st.integers(0, 2**40), st.none() | st.binary(max_size=300), st.none() | st.binary(max_size=300)),
    min_size=1,
    max_size=20,
)


@given(records, st.sampled_from(list(Compression)))
@settings(max_examples=60, deadline=None)
def test_keys_and_values_read_as_kafka_pythons_reader_reads_them(batch_records, compression):
    batch = make_batch(batch_records, compression)
    ours = [
        (None if k is None else bytes(k), None if v is None else bytes(v))
        for k, v in record_keys_values(batch, decompress)
    ]
    assert ours == [(r.key, r.value) for r in DefaultRecordBatch(batch)]
