"""Inflating compressed record batches, for the domain's `Decompress` port, and deflating the batches
the log cleaner rebuilds (`compress`), with the batch's own codec.

Kafka's codecs (snappy raw and xerial-framed, LZ4 frame, gzip, zstd) over their libraries, as Kafka's
clients frame them. Only record-level lookups inflate; produce and fetch store and serve compressed
batches as they came.

Inflation is bounded (issue 42, ADR 69): a 16 KB zstd batch can declare 512 MiB. Each codec is read
as a stream, 64 KiB at a time, and stops once the output passes `MAX_INFLATED` (64 MiB): such a batch
is INVALID_RECORD, never a gigabyte in memory; snappy's declared block lengths are checked before a
block is inflated. Kafka streams compressed records through small buffers too; it has no total bound,
trafka keeps one because its record-level lookups run on the event loop. A payload a codec cannot
read is CORRUPT_MESSAGE, as in Kafka.

Each codec's library is imported at its first use (ADR 118): a broker that never inflates a batch
loads none of them.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from typing import Any

from trafka.domain.batch import Compression
from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.varint import read_uvarint

MAX_INFLATED = 64 << 20
_CHUNK = 64 << 10
# Xerial's snappy-java stream header (Kafka's SnappyOutputStream): a magic, version 1, compatible version 1.
_XERIAL_MAGIC = struct.pack(">b6sBii", -126, b"SNAPPY", 0, 1, 1)
_XERIAL_HEADER = len(_XERIAL_MAGIC)
_XERIAL_BLOCK = 32 << 10  # snappy-java's default block size
_ZSTD_STEP = 64


class _TooLarge(Exception):
    pass


def _grow(out: bytearray, chunk: bytes, limit: int) -> None:
    out += chunk
    if len(out) > limit:
        raise _TooLarge


def _gunzip(payload: bytes, limit: int) -> bytes:
    out = bytearray()
    data = payload
    while data:  # gzip members one after another, as GzipFile reads them
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        while True:
            chunk = inflater.decompress(data, _CHUNK)
            _grow(out, chunk, limit)
            data = inflater.unconsumed_tail
            if inflater.eof:
                break
            if not chunk and not data:
                raise zlib.error("truncated gzip stream")
        data = inflater.unused_data.lstrip(b"\0")  # GzipFile ignores zero padding after a member
    return bytes(out)


def _unzstd(payload: bytes, limit: int) -> bytes:
    """zstd's streaming object has no output bound, so it is fed a little input at a time: one zstd
    block inflates to at most 128 KiB, so 64 input bytes to a few MiB at most."""
    import zstandard

    out = bytearray()
    data = memoryview(payload)
    while len(data):  # frames one after another
        inflater = zstandard.ZstdDecompressor().decompressobj()
        pos = 0
        while not inflater.eof:
            if pos >= len(data):
                raise zstandard.ZstdError("truncated zstd frame")
            _grow(out, inflater.decompress(data[pos : pos + _ZSTD_STEP]), limit)
            pos += _ZSTD_STEP
        data = memoryview(bytes(inflater.unused_data) + bytes(data[pos:]))
    return bytes(out)


def _unlz4(payload: bytes, limit: int) -> bytes:
    import lz4.frame

    out = bytearray()
    data = payload
    while data:  # LZ4 frames one after another
        inflater = lz4.frame.LZ4FrameDecompressor()
        chunk = inflater.decompress(data, max_length=_CHUNK)
        _grow(out, chunk, limit)
        while not inflater.eof:
            if inflater.needs_input:
                raise RuntimeError("truncated LZ4 frame")
            chunk = inflater.decompress(b"", max_length=_CHUNK)
            _grow(out, chunk, limit)
        data = inflater.unused_data
    return bytes(out)


def _unsnappy(payload: bytes, limit: int) -> bytes:
    import snappy

    if not (len(payload) > _XERIAL_HEADER and payload[:_XERIAL_HEADER] == _XERIAL_MAGIC):
        _declared(payload, 0, limit)
        return snappy.decompress(payload)
    out = bytearray()
    cursor = _XERIAL_HEADER
    while cursor < len(payload):
        (size,) = struct.unpack_from(">i", payload, cursor)
        cursor += 4
        block = payload[cursor : cursor + size]
        _declared(block, len(out), limit)
        _grow(out, snappy.decompress(block), limit)
        cursor += size
    return bytes(out)


def _declared(block: bytes, so_far: int, limit: int) -> None:
    """A raw snappy block starts with its inflated length: checked before anything is allocated."""
    length, _ = read_uvarint(block, 0)
    if so_far + length > limit:
        raise _TooLarge


# Keyed by the int a batch header carries (Compression is an IntEnum, so its members hash as those ints).
_DECODERS: dict[int, Callable[[bytes, int], bytes]] = {
    Compression.GZIP: _gunzip,
    Compression.SNAPPY: _unsnappy,
    Compression.LZ4: _unlz4,
    Compression.ZSTD: _unzstd,
}


def decompress(compression: int, payload: bytes, limit: int = MAX_INFLATED) -> bytes:
    decoder = _DECODERS.get(compression)
    if decoder is None:
        raise KafkaError(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, f"unknown compression codec {compression}")
    try:
        return decoder(bytes(payload), limit)
    except _TooLarge:
        raise KafkaError(ErrorCode.INVALID_RECORD, f"a compressed batch inflates past {limit} bytes") from None
    except Exception as exc:  # a corrupt payload is the client's error, not the broker's
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, f"cannot decompress batch: {exc}") from exc


def _gzip(data: bytes) -> bytes:
    deflater = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # a gzip member, level 9
    return deflater.compress(data) + deflater.flush()


def _lz4_frame() -> Any:
    import lz4.frame

    return lz4.frame


def _zstandard() -> Any:
    import zstandard

    return zstandard


def _snappy_xerial(data: bytes) -> bytes:
    import snappy

    """Snappy in the xerial framing Kafka's SnappyOutputStream writes: the header, then each 32 KiB
    block compressed, after its int32 length."""
    out = bytearray(_XERIAL_MAGIC)
    for start in range(0, len(data), _XERIAL_BLOCK):
        block = snappy.compress(data[start : start + _XERIAL_BLOCK])
        out += struct.pack(">i", len(block)) + block
    return bytes(out)


_ENCODERS: dict[int, Callable[[bytes], bytes]] = {
    Compression.GZIP: _gzip,
    Compression.SNAPPY: _snappy_xerial,
    Compression.LZ4: lambda data: bytes(_lz4_frame().compress(data)),
    Compression.ZSTD: lambda data: bytes(_zstandard().ZstdCompressor().compress(data)),
}


def compress(compression: int, payload: bytes) -> bytes:
    encoder = _ENCODERS.get(compression)
    if encoder is None:
        raise KafkaError(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, f"unknown compression codec {compression}")
    return encoder(payload)


__all__ = ["compress", "decompress"]
