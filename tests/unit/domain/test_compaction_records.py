"""The cleaner's record decoding and batch rebuilding against kafka-python's record reader."""

from __future__ import annotations

import crc32c
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.batches import make_batch, read_batches
from trafka.adapters.compression import compress, decompress
from trafka.adapters.compression.keys import scan_keys
from trafka.domain.batch import BatchHeader
from trafka.domain.compaction.records import decode_keys, decode_records, delete_horizon, rebuild_batch

records = st.lists(
    st.tuples(
        st.integers(0, 2**40),
        st.none() | st.binary(max_size=300),
        st.none() | st.binary(max_size=9000),
    ),
    min_size=1,
    max_size=20,
)


@settings(max_examples=150, deadline=None)
@given(records, st.sampled_from([0, 1, 2, 3, 4]), st.data())
def test_decoded_records_and_a_rebuilt_batch_read_back_as_kafka_python_reads_them(rs, compression, data):
    batch = make_batch(rs, compression)
    header = BatchHeader.parse(batch)
    decoded = decode_records(batch, header, decompress)
    original = list(read_batches(batch)[0])  # kafka-python's records iterate once
    expected = [(r.offset, r.timestamp, r.key, r.value is not None) for r in original]
    assert [(r.offset, r.timestamp, r.key, r.has_value) for r in decoded] == expected
    keyed = [r for r in original if r.key is not None]
    assert decode_keys(batch, header, decompress) == (
        [(r.key, r.offset) for r in keyed],
        any(r.value is None for r in original),  # any null value, keyed or not
    )
    assert scan_keys(batch, header, decompress) == decode_keys(batch, header, decompress)
    kept = [r for r in decoded if data.draw(st.booleans())] or decoded[-1:]
    horizon = data.draw(st.none() | st.integers(0, 2**41))
    rebuilt = rebuild_batch(header, kept, horizon, compress, crc32c.crc32c)
    again = list(read_batches(rebuilt)[0])  # the CRC is checked there
    by_offset = {r.offset: r for r in original}
    assert [(r.offset, r.timestamp, r.key, r.value) for r in again] == [
        (o.offset, o.timestamp, o.key, o.value) for o in (by_offset[k.offset] for k in kept)
    ]
    new_header = BatchHeader.parse(rebuilt)
    assert (new_header.base_offset, new_header.last_offset_delta) == (header.base_offset, header.last_offset_delta)
    assert new_header.compression == header.compression
    assert delete_horizon(new_header) == horizon
