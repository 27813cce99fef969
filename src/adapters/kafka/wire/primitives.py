"""The encoding pieces both fast paths share: Kafka's int16/int32, unsigned varints, (compact) strings and
array counts, as kafka-python's `kafka.protocol.types` writes them (checked by the fast paths'
differential tests)."""

from __future__ import annotations

import functools
import struct

I16 = struct.Struct(">h")
I32 = struct.Struct(">i")


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
