"""The cleaner's compiled key scan answers exactly as the domain's pure-Python one, corrupt batches too."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.batches import make_batch
from trafka.adapters.compression import decompress
from trafka.adapters.compression.keys import scan_keys
from trafka.domain.batch import HEADER_SIZE, BatchHeader
from trafka.domain.compaction.records import decode_keys
from trafka.domain.errors import ErrorCode, KafkaError


def test_the_compiled_reader_is_the_one_in_use():
    # aiokafka ships its Cython readers in the wheels this project installs; without them the
    # scan silently falls back to the domain's (correct, slower) one, which this would hide
    assert scan_keys is not decode_keys


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 2**40), st.none() | st.binary(max_size=40), st.none() | st.binary(max_size=300)),
        min_size=1,
        max_size=30,
    ),
    st.sampled_from([0, 1, 2, 3, 4]),
    st.lists(st.tuples(st.text(max_size=5), st.binary(max_size=5)), max_size=2),
)
def test_keys_and_offsets_as_the_domain_reads_them(records, compression, headers):
    batch = make_batch(records, compression, headers)
    header = BatchHeader.parse(batch)
    assert scan_keys(batch, header, decompress) == decode_keys(batch, header, decompress)


def test_a_record_running_past_its_batch_is_corrupt_as_the_domain_says():
    batch = bytearray(make_batch([(1, b"k%d" % i, b"v" * 50) for i in range(5)]))
    batch[57:61] = (6).to_bytes(4, "big")  # the header counts a sixth record the batch does not hold
    header = BatchHeader.parse(bytes(batch))
    for scan in (scan_keys, decode_keys):
        with pytest.raises(KafkaError) as refused:
            scan(bytes(batch), header, decompress)
        assert refused.value.code == ErrorCode.CORRUPT_MESSAGE


def test_a_header_key_that_is_not_utf8_is_read_by_the_domain_scanner():
    batch = bytearray(make_batch([(1, b"key", b"value")], 0, [("h", b"x")]))
    at = batch.index(b"h\x02x", HEADER_SIZE)  # header key "h" (length varint 2, then 'h')
    batch[at] = 0xFF  # no longer UTF-8: aiokafka refuses to decode it, the cleaner does not need it
    header = BatchHeader.parse(bytes(batch))
    assert scan_keys(bytes(batch), header, decompress) == ([(b"key", 0)], False)
