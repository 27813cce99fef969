from hypothesis import given
from hypothesis import strategies as st
from kafka.record.util import decode_varint
from kafka.record.util import encode_varint as kafka_encode_varint

from trafka.domain.varint import encode_uvarint, encode_varint, read_uvarint, read_varint


@given(st.integers(min_value=0, max_value=2**63 - 1))
def test_unsigned_round_trip(value):
    assert read_uvarint(encode_uvarint(value), 0) == (value, len(encode_uvarint(value)))


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_signed_round_trip_and_agreement_with_kafka_python(value):
    encoded = encode_varint(value)
    assert read_varint(encoded, 0) == (value, len(encoded))
    if -(2**31) <= value < 2**31:
        out = bytearray()
        kafka_encode_varint(value, out.append)
        assert bytes(out) == encoded and decode_varint(encoded, 0)[0] == value
