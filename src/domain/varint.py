"""Kafka's variable-length integers: unsigned (KRaft record framing, compact lengths) and zig-zag
signed (fields inside records). Reading past the end raises CORRUPT_MESSAGE."""

from __future__ import annotations

from .errors import ErrorCode, KafkaError


def encode_uvarint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def encode_varint(value: int) -> bytes:
    """Zig-zag, as Kafka's record format writes signed varints."""
    return encode_uvarint((value << 1) ^ (value >> 63))


def read_uvarint(buf: bytes | bytearray | memoryview, pos: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if pos >= len(buf):
            raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "truncated varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "varint too long")


def read_varint(buf: bytes | bytearray | memoryview, pos: int) -> tuple[int, int]:
    if pos + 1 < len(buf):  # one and two bytes (up to +-8191) without a further call: the per-record case
        byte = buf[pos]
        if byte < 0x80:
            return (byte >> 1) ^ -(byte & 1), pos + 1
        second = buf[pos + 1]
        if second < 0x80:
            raw = (byte & 0x7F) | (second << 7)
            return (raw >> 1) ^ -(raw & 1), pos + 2
    raw, pos = read_uvarint(buf, pos)
    return (raw >> 1) ^ -(raw & 1), pos
