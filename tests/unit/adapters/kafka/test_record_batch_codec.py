"""trafka's record batch codec (`trafka.schema_codec.records`, ADR 101) against kafka-python's
`kafka.record`, the reader and builder it replaced, as the oracle (in the tests only): hypothesis draws
records (null and empty keys and values, headers, timestamps), and trafka's batch must be byte for byte
kafka-python's, read back by both to the same records, compressed with each of Kafka's codecs too; a
record that runs past its batch is CorruptBatch, never an IndexError or a wrong record."""

from __future__ import annotations

import warnings

import crc32c
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trafka.adapters.compression import compress, decompress
from trafka.schema_codec.records import (
    BatchHeader,
    CorruptBatch,
    NewRecord,
    build_batch,
    decode_records,
    iter_batches,
    read_records,
)

with warnings.catch_warnings():  # kafka-python 3.0.12 warns on import (its schema loader)
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

maybe_bytes = st.none() | st.binary(max_size=300)
records_strategy = st.lists(
    st.builds(
        NewRecord,
        st.integers(0, 2**41),
        maybe_bytes,
        maybe_bytes,
        st.lists(st.tuples(st.text(max_size=12), maybe_bytes), max_size=3).map(tuple),
    ),
    min_size=1,
    max_size=20,
)


def _theirs(records: list[NewRecord], compression: int = 0, producer_id: int = -1) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=compression,
        is_transactional=producer_id >= 0,
        producer_id=producer_id,
        producer_epoch=0 if producer_id >= 0 else -1,
        base_sequence=0 if producer_id >= 0 else -1,
        batch_size=2**31 - 1,
    )
    for delta, r in enumerate(records):
        builder.append(delta, timestamp=r.timestamp, key=r.key, value=r.value, headers=list(r.headers))
    return bytes(builder.build())


@settings(max_examples=150, deadline=None)
@given(records_strategy, st.booleans())
def test_a_built_batch_is_kafka_pythons_byte_for_byte(records, transactional):
    producer_id = 7 if transactional else -1
    ours = build_batch(
        records,
        crc32c.crc32c,
        partition_leader_epoch=0,  # what kafka-python's builder writes
        producer_id=producer_id,
        producer_epoch=0 if transactional else -1,
        base_sequence=0 if transactional else -1,
        transactional=transactional,
    )
    assert ours == _theirs(records, producer_id=producer_id)


@settings(max_examples=150, deadline=None)
@given(records_strategy, st.sampled_from([0, 1, 2, 3, 4]), st.integers(0, 2**40))
def test_a_batch_reads_back_as_kafka_python_reads_it(records, compression, base_offset):
    theirs = bytearray(_theirs(records, compression))
    theirs[0:8] = base_offset.to_bytes(8, "big")  # as the broker places it (the CRC does not cover it)
    read = decode_records(bytes(theirs), decompress)
    expected = [(r.offset, r.timestamp, r.key, r.value, tuple(r.headers)) for r in DefaultRecordBatch(bytes(theirs))]
    assert [tuple(r) for r in read] == expected
    assert [(r.key, r.value, r.headers) for r in read] == [(r.key, r.value, tuple(r.headers)) for r in records]
    ours = build_batch(records, crc32c.crc32c, compression=compression, compress=compress)
    assert [(r.key, r.value) for r in decode_records(ours, decompress)] == [(r.key, r.value) for r in records]


def test_batches_are_walked_whole_and_control_batches_left_out_unless_asked():
    first = build_batch([NewRecord(1, b"k", b"v")], crc32c.crc32c)
    control = bytearray(build_batch([NewRecord(2, b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x00")], crc32c.crc32c))
    control[21:23] = (0x30).to_bytes(2, "big")  # transactional | control (the CRC is not checked here)
    control[0:8] = (1).to_bytes(8, "big")
    log = first + bytes(control) + first[:30]  # a cut batch at the end, as a fetch returns
    assert [h.base_offset for h, _ in iter_batches(log)] == [0, 1]
    assert [r.value for r in read_records(log)] == [b"v"]
    assert len(list(read_records(log, controls=True))) == 2


def test_log_append_time_gives_the_batchs_time():
    batch = bytearray(build_batch([NewRecord(5, None, b"a"), NewRecord(9, None, b"b")], crc32c.crc32c))
    batch[21:23] = (0x08).to_bytes(2, "big")
    batch[35:43] = (1234).to_bytes(8, "big")  # max timestamp: the broker's append time
    assert [r.timestamp for r in decode_records(bytes(batch))] == [1234, 1234]


@pytest.mark.parametrize("cut", [62, 65, 70])
def test_a_record_past_its_batch_is_corrupt(cut):
    batch = bytearray(build_batch([NewRecord(1, b"key", b"value", (("h", b"1"),))], crc32c.crc32c))
    body = batch[61:cut]
    header = BatchHeader.parse(batch)
    short = bytearray(batch[:61]) + body
    short[8:12] = (len(short) - 12).to_bytes(4, "big")
    assert header.records_count == 1
    with pytest.raises(CorruptBatch):
        decode_records(bytes(short))


def test_a_compressed_batch_needs_a_decompressor():
    batch = build_batch([NewRecord(1, None, b"x" * 100)], crc32c.crc32c, compression=1, compress=compress)
    with pytest.raises(CorruptBatch, match="codec 1"):
        decode_records(batch)
    assert decode_records(batch, decompress)[0].value == b"x" * 100
