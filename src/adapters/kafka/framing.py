"""Kafka's framing: a 4-byte big-endian size, then that many bytes.

`FrameReader` buffers a byte stream and cuts it into frames. The size is checked against the
maximum before anything is allocated for the body, so a client announcing a 2 GiB request costs
nothing but a closed connection.
"""

from __future__ import annotations

import struct

_SIZE = struct.Struct(">i")


class FrameError(Exception):
    """The byte stream cannot be framed: a negative, empty or oversized frame."""


class FrameReader:
    def __init__(self, max_frame_bytes: int) -> None:
        self._max = max_frame_bytes
        self._buffer = bytearray()

    def feed(self, data: bytes | bytearray) -> None:
        self._buffer += data

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def next_frame(self) -> bytes | None:
        """The next complete frame's body, or None until more bytes arrive; FrameError if invalid."""
        if len(self._buffer) < 4:
            return None
        (size,) = _SIZE.unpack_from(self._buffer, 0)
        if size <= 0:
            raise FrameError(f"invalid frame size {size}")
        if size > self._max:
            raise FrameError(f"frame of {size} bytes exceeds the maximum request size of {self._max}")
        if len(self._buffer) < 4 + size:
            return None
        frame = bytes(self._buffer[4 : 4 + size])
        del self._buffer[: 4 + size]
        return frame

    def wanted(self) -> int:
        """How many more bytes complete the current frame (at least 1)."""
        if len(self._buffer) < 4:
            return 4 - len(self._buffer)
        (size,) = _SIZE.unpack_from(self._buffer, 0)
        return max(1, 4 + size - len(self._buffer))
