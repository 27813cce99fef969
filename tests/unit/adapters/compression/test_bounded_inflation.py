"""Inflation is bounded (issue 42 #5, ADR 69): every codec is read as a stream and stops past the
limit with INVALID_RECORD; what a codec cannot read is CORRUPT_MESSAGE; normal payloads round-trip."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trafka.adapters.compression import compress, decompress
from trafka.domain.batch import Compression
from trafka.domain.errors import ErrorCode, KafkaError

CODECS = [Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD]


@settings(max_examples=25, deadline=None)
@given(
    codec=st.sampled_from(CODECS), data=st.binary(min_size=1, max_size=200_000)
)  # an empty xerial stream is unreadable in kafka-python too
def test_payloads_within_the_bound_round_trip(codec, data):
    assert decompress(codec, compress(codec, data)) == data


@pytest.mark.parametrize("codec", CODECS)
def test_a_payload_inflating_past_the_bound_is_refused_without_inflating_it_whole(codec):
    bomb = compress(codec, bytes(4 << 20))
    with pytest.raises(KafkaError) as refused:
        decompress(codec, bomb, limit=1 << 20)
    assert refused.value.code is ErrorCode.INVALID_RECORD
    assert decompress(codec, bomb, limit=4 << 20) == bytes(4 << 20)


@pytest.mark.parametrize("codec", CODECS)
def test_garbage_and_truncation_are_corrupt_message(codec):
    whole = compress(codec, b"record bytes " * 1000)
    for payload in (b"\x00garbage\xff" * 3, whole[: len(whole) // 2]):
        with pytest.raises(KafkaError) as refused:
            decompress(codec, payload)
        assert refused.value.code in (ErrorCode.CORRUPT_MESSAGE, ErrorCode.INVALID_RECORD)
