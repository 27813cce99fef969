"""The record-batch view: parse, validate and patch headers without touching records."""

from __future__ import annotations

import struct

import crc32c
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.batches import make_batch, read_batches
from trafka.domain.batch import BatchHeader, assign_offsets, iter_batches, validate_batches, validate_one_batch
from trafka.domain.errors import ErrorCode, KafkaError

MAX = 1 << 20

records = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=2**40),
        st.none() | st.binary(max_size=20),
        st.none() | st.binary(max_size=50),
    ),
    min_size=1,
    max_size=20,
)


@settings(max_examples=60, deadline=None)
@given(
    batches=st.lists(st.tuples(records, st.sampled_from([0, 1, 2, 3, 4])), min_size=1, max_size=4),
    base_offset=st.integers(min_value=0, max_value=2**62),
    epoch=st.integers(min_value=0, max_value=2**31 - 1),
)
def test_patching_offsets_keeps_every_batch_valid_and_readable(batches, base_offset, epoch):
    raw = b"".join(make_batch(recs, compression) for recs, compression in batches)
    validated = validate_batches(raw, crc32c.crc32c, MAX)
    headers = assign_offsets(validated, base_offset, epoch, crc32c.crc32c)

    decoded = read_batches(bytes(validated.buffer))
    expected_offset = base_offset
    for (recs, _), batch, header in zip(batches, decoded, headers, strict=True):
        assert batch.base_offset == header.base_offset == expected_offset
        messages = list(batch)
        assert [m.offset for m in messages] == list(range(expected_offset, expected_offset + len(recs)))
        assert [(m.timestamp, m.key, m.value) for m in messages] == recs
        expected_offset += len(recs)
    reparsed = [h for _, h in iter_batches(bytes(validated.buffer))]
    assert reparsed == headers
    assert all(h.partition_leader_epoch == epoch for h in reparsed)


def test_patching_leaves_the_producer_bytes_alone_outside_offset_and_epoch():
    raw = make_batch([(1, b"k", b"v"), (2, None, b"w")])
    validated = validate_batches(raw, crc32c.crc32c, MAX)
    assign_offsets(validated, 42, 7, crc32c.crc32c)
    patched = bytes(validated.buffer)
    assert patched[12:16] == struct.pack(">i", 7)
    assert patched[:8] == struct.pack(">q", 42)
    assert patched[16:] == raw[16:]
    assert patched[8:12] == raw[8:12]


def test_log_append_time_sets_the_type_bit_and_max_timestamp_and_a_valid_crc():
    raw = make_batch([(1, b"k", b"v"), (2, None, b"w")])
    validated = validate_batches(raw, crc32c.crc32c, MAX)
    (header,) = assign_offsets(validated, 0, 0, crc32c.crc32c, log_append_time_ms=5_000)
    (batch,) = read_batches(bytes(validated.buffer))
    assert header.max_timestamp == 5_000 and header.attributes & 0x08
    assert [m.timestamp for m in list(batch)] == [5_000, 5_000]


def _corrupt(raw: bytes, pos: int, value: bytes) -> bytes:
    return raw[:pos] + value + raw[pos + len(value) :]


@pytest.mark.parametrize(
    ("mutate", "code"),
    [
        (lambda raw: _corrupt(raw, 70, bytes([raw[70] ^ 0xFF])), ErrorCode.CORRUPT_MESSAGE),  # record bytes
        (lambda raw: _corrupt(raw, 17, b"\0\0\0\0"), ErrorCode.CORRUPT_MESSAGE),  # crc
        (lambda raw: _corrupt(raw, 16, b"\x01"), ErrorCode.INVALID_RECORD),  # magic
        (lambda raw: raw[:-1], ErrorCode.CORRUPT_MESSAGE),  # truncated
        (lambda raw: raw + b"\0" * 3, ErrorCode.CORRUPT_MESSAGE),  # trailing garbage
        (lambda raw: _corrupt(raw, 8, struct.pack(">i", 10)), ErrorCode.CORRUPT_MESSAGE),  # length too small
        (lambda raw: b"", ErrorCode.CORRUPT_MESSAGE),
    ],
)
def test_bad_batches_are_rejected_with_kafkas_error_code(mutate, code):
    raw = make_batch([(1, b"key", b"value-" * 5), (2, None, b"w")])
    with pytest.raises(KafkaError) as info:
        validate_batches(mutate(raw), crc32c.crc32c, MAX)
    assert info.value.code == code


def test_record_count_must_match_last_offset_delta():
    raw = bytearray(make_batch([(1, b"k", b"v"), (2, None, b"w")]))
    struct.pack_into(">i", raw, 57, 3)  # records_count, inside the CRC
    struct.pack_into(">I", raw, 17, crc32c.crc32c(bytes(raw[21:])))
    with pytest.raises(KafkaError) as info:
        validate_batches(bytes(raw), crc32c.crc32c, MAX)
    assert info.value.code == ErrorCode.INVALID_RECORD


def test_a_batch_over_the_size_limit_is_message_too_large():
    raw = make_batch([(1, None, b"x" * 2000)])
    with pytest.raises(KafkaError) as info:
        validate_batches(raw, crc32c.crc32c, 1000)
    assert info.value.code == ErrorCode.MESSAGE_TOO_LARGE


def test_a_create_time_far_in_the_future_is_invalid_timestamp():
    raw = make_batch([(10_000_000, None, b"x")])
    with pytest.raises(KafkaError) as info:
        validate_batches(raw, crc32c.crc32c, MAX, now_ms=0, timestamp_after_max_ms=3_600_000)
    assert info.value.code == ErrorCode.INVALID_TIMESTAMP


@given(st.binary(max_size=200))
def test_any_bytes_either_validate_or_raise_a_kafka_error(data):
    try:
        validate_batches(data, crc32c.crc32c, MAX)
    except KafkaError as error:
        assert error.code in (ErrorCode.CORRUPT_MESSAGE, ErrorCode.INVALID_RECORD, ErrorCode.MESSAGE_TOO_LARGE)


def test_header_parse_needs_61_bytes():
    with pytest.raises(KafkaError):
        BatchHeader.parse(b"\0" * 60)


@pytest.mark.parametrize("value_size", [10, 1900, 2100, 20_000])  # the CRC on a slice below 2 KiB, on a view above
@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview])
def test_one_batch_accepts_its_crc_and_refuses_a_flipped_byte_at_any_size(value_size, kind):
    raw = make_batch([(1, b"k", b"v" * value_size)])
    accepted = validate_one_batch(kind(raw), crc32c.crc32c, MAX, 2**62)
    assert accepted is not None
    copy, header = accepted
    assert bytes(copy) == raw and header == BatchHeader.parse(raw)
    for pos in (21, 61, len(raw) - 1):  # the attributes (the first byte the CRC covers), a record, the last byte
        assert validate_one_batch(kind(_corrupt(raw, pos, bytes([raw[pos] ^ 1]))), crc32c.crc32c, MAX, 2**62) is None
