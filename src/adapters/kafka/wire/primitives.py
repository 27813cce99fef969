"""The pieces the codec and both fast paths share: Kafka's int16/int32, unsigned varints, (compact) strings
and array counts, as kafka-python's `kafka.protocol.types` writes them (checked by the fast paths'
differential tests), and the request header as Kafka reads it."""

from __future__ import annotations

import functools
import struct

I16 = struct.Struct(">h")
I32 = struct.Struct(">i")
_HEAD = struct.Struct(">hhih")  # api key, version, correlation id, client id length


def uvarint(frame: bytes, pos: int) -> tuple[int, int]:
    """The unsigned varint at `pos` and the position after it: ValueError past five bytes, IndexError past
    the frame (each caller turns them into its own failure)."""
    value = shift = 0
    while True:
        byte = frame[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
        if shift > 28:
            raise ValueError("varint too long")


def request_header(frame: bytes, flexible: bool) -> tuple[int, str | None, int]:
    """(correlation id, client id, where the body starts) of request header v1 or v2 (flexible), from a
    frame without its size prefix; ValueError (or struct.error) if malformed.

    The client id is a non-compact nullable string in both, as Kafka keeps it; v2 adds tagged fields,
    skipped as Kafka's parser skips the ones it does not know.
    """
    _, _, correlation_id, size = _HEAD.unpack_from(frame, 0)
    pos = 10
    client_id = None
    if size >= 0:
        end = pos + size
        if end > len(frame):
            raise ValueError("the client id runs past the frame")
        client_id = frame[pos:end].decode()
        pos = end
    if flexible:
        if pos < len(frame) and not frame[pos]:  # no tagged fields: the header every client sends
            return correlation_id, client_id, pos + 1
        try:
            count, pos = uvarint(frame, pos)
            for _ in range(count):
                _, pos = uvarint(frame, pos)
                length, pos = uvarint(frame, pos)
                pos += length
        except (ValueError, IndexError):
            raise ValueError("a bad varint in the request header") from None
        if pos > len(frame):
            raise ValueError("the header's tagged fields run past the frame")
    return correlation_id, client_id, pos


def uvarint_bytes(value: int) -> bytes:
    if value < 0x80:
        return _SMALL[value]
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_SMALL = [bytes([n]) for n in range(0x80)]


@functools.lru_cache(maxsize=4096)
def name(value: str, flexible: bool) -> bytes:
    """A topic name as a (compact) string; names repeat in every response, so they are cached."""
    data = value.encode()
    return (uvarint_bytes(len(data) + 1) if flexible else I16.pack(len(data))) + data


def string(value: str | None, flexible: bool) -> bytes:
    if value is None:
        return b"\x00" if flexible else b"\xff\xff"
    return name(value, flexible) if len(value) < 256 else name.__wrapped__(value, flexible)


def count(n: int, flexible: bool) -> bytes:
    return uvarint_bytes(n + 1) if flexible else I32.pack(n)
