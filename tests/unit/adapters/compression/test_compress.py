"""The encoders the log cleaner rebuilds batches with (ADR 92: trafka's own over the same libraries, no
longer `kafka.codec`): each inflates back with trafka's decoder and with kafka-python's, the client's."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trafka.adapters.compression import compress, decompress
from trafka.domain.batch import Compression

CODECS = [Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD]


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name)
# the 70 kB payloads are deliberate (a codec's block size): not a health problem
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.data_too_large, HealthCheck.too_slow])
@given(
    payload=st.binary(min_size=1, max_size=3000) | st.binary(min_size=70_000, max_size=70_100)
)  # a batch has records
def test_what_trafka_compresses_kafka_python_inflates(codec, payload):
    from kafka import codec as theirs

    packed = compress(codec, payload)
    assert decompress(codec, packed) == payload
    inflate = {
        Compression.GZIP: theirs.gzip_decode,
        Compression.SNAPPY: theirs.snappy_decode,
        Compression.LZ4: theirs.lz4_decode,
        Compression.ZSTD: theirs.zstd_decode,
    }[codec]
    assert inflate(packed) == payload


def test_snappy_is_written_in_xerial_framing():
    assert compress(Compression.SNAPPY, b"x" * 100)[:8] == b"\x82SNAPPY\x00"
