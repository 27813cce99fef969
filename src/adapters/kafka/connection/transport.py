"""A connection's bytes in and out: straight on the socket for plain TCP, through trio's stream for TLS.

The broker's cost per small request is mostly the machinery around it, so the plain-TCP transport
works on the socket's file descriptor with trio's low-level waits (all public API):

- `receive_into` first tries a non-blocking `readv` into one reusable buffer and only when the
  socket is empty waits for it to become readable (`trio.lowlevel.wait_readable`, on the descriptor
  itself: trio's socket object would cost a Python-level `fileno()` per wait, ADR 135); a read that
  finds data does not yield to the scheduler, except once every `_FAIR_READS` reads in a row, so a
  client that keeps its socket full cannot starve the other connections. The buffer is shared by
  every connection of the thread's Trio loop (what is read is handed to the connection's frame
  reader before anything can yield), so a thousand idle connections do not hold a thousand buffers;
- `send` writes a list of buffers with one `writev` (a response's header and stored record bytes
  are never concatenated) and waits for writability only when the kernel takes part of them;
  `send_nowait` writes what the kernel takes now and gives back the rest (a response completed
  outside its connection's tasks, ADR 58).

`TlsTransport` gives the same two calls over any trio stream (SSLStream), which has to copy: TLS
encrypts what it sends anyway.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Protocol

import trio

from ..wire.framing import FrameReader

RECEIVE_BUFFER = 256 * 1024
_IOV_MAX = 512
_FAIR_READS = 16


class Transport(Protocol):
    async def receive_into(self, frames: FrameReader, limit: int) -> int:
        """Read what has arrived (blocking until something has) into `frames`, at most what completes
        its current frame or `limit` if it is more; 0 at end of stream."""

    async def send(self, buffers: Sequence[bytes]) -> None:
        """Write every buffer, in order."""

    def send_nowait(self, buffers: Sequence[bytes]) -> list[bytes | memoryview]:
        """Write what can be written without waiting; the rest, in order, for a later `send`."""


_per_thread = threading.local()


def _receive_buffer() -> memoryview:
    """This thread's receive buffer: one Trio loop runs per thread, and its tasks never read at once."""
    view = getattr(_per_thread, "view", None)
    if view is None:
        view = _per_thread.view = memoryview(bytearray(RECEIVE_BUFFER))
    return view


class SocketTransport:
    """Plain TCP on the socket's descriptor: one syscall per read and per batch of responses."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self._socket = stream.socket  # owns the descriptor: kept while it is used
        self._fd = stream.socket.fileno()
        self._reads_without_yield = 0
        self._drained = False  # the last read took less than the buffer: the socket was empty then

    async def receive_into(self, frames: FrameReader, limit: int) -> int:
        view = _receive_buffer()  # a large frame arrives over several reads into the same buffer
        if self._drained and not frames.buffered:  # a lone request's connection: no readv that only raises
            # (ADR 133); with part of a frame buffered the rest is likely on its way: read it at once
            self._drained = False
            await trio.lowlevel.wait_readable(self._fd)
            self._reads_without_yield = 0
        while True:
            try:
                count = os.readv(self._fd, (view,))
            except BlockingIOError:
                await trio.lowlevel.wait_readable(self._fd)
                self._reads_without_yield = 0
                continue
            except OSError as exc:  # ECONNRESET and friends: the peer is gone
                raise trio.BrokenResourceError(str(exc)) from exc
            break
        if count:
            frames.feed(view[:count])  # before any await: the buffer is the next reader's after that
            self._drained = count < RECEIVE_BUFFER
        self._reads_without_yield += 1
        if self._reads_without_yield >= _FAIR_READS:
            self._reads_without_yield = 0
            await trio.lowlevel.checkpoint()
        return count

    async def send(self, buffers: Sequence[bytes]) -> None:
        if len(buffers) <= _IOV_MAX:  # the kernel usually takes it all: no copy of the list, no walk
            try:
                written = os.writev(self._fd, buffers)
            except BlockingIOError:
                written = 0
            except OSError as exc:  # EPIPE, ECONNRESET: the peer is gone
                raise trio.BrokenResourceError(str(exc)) from exc
            if written == (len(buffers[0]) if len(buffers) == 1 else sum(map(len, buffers))):
                return
            pending: list[bytes | memoryview] = list(buffers)
            _drop_written(pending, written)
        else:
            pending = list(buffers)
        while pending:
            batch = pending if len(pending) <= _IOV_MAX else pending[:_IOV_MAX]
            try:
                written = os.writev(self._fd, batch)
            except BlockingIOError:
                await trio.lowlevel.wait_writable(self._fd)
                continue
            except OSError as exc:  # EPIPE, ECONNRESET: the peer is gone
                raise trio.BrokenResourceError(str(exc)) from exc
            _drop_written(pending, written)

    def send_nowait(self, buffers: Sequence[bytes]) -> list[bytes | memoryview]:
        if len(buffers) == 1:  # one small response (a parked Fetch's answer): no list, no walk
            try:
                written = os.writev(self._fd, buffers)
            except OSError:  # full, or the peer is gone: `send` finds out which
                return list(buffers)
            return [] if written == len(buffers[0]) else [memoryview(buffers[0])[written:]]
        pending: list[bytes | memoryview] = list(buffers)
        while pending:
            batch = pending if len(pending) <= _IOV_MAX else pending[:_IOV_MAX]
            try:
                written = os.writev(self._fd, batch)
            except OSError:  # full, or the peer is gone: `send` finds out which
                break
            _drop_written(pending, written)
        return pending


class TlsTransport:
    """Any trio stream (TLS): receive_some and send_all, the responses joined into one record run."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self._stream = stream

    async def receive_into(self, frames: FrameReader, limit: int) -> int:
        data = await self._stream.receive_some(max(RECEIVE_BUFFER, min(frames.wanted(), limit)))
        if data:
            frames.feed(data)
        return len(data)

    async def send(self, buffers: Sequence[bytes]) -> None:
        await self._stream.send_all(buffers[0] if len(buffers) == 1 else b"".join(buffers))

    def send_nowait(self, buffers: Sequence[bytes]) -> list[bytes | memoryview]:
        return list(buffers)  # TLS records are written by the stream's own task: all of it for `send`


def _drop_written(pending: list[bytes | memoryview], written: int) -> None:
    """Drop what the kernel took; a buffer it took part of goes on as a view of the rest."""
    done = 0
    while done < len(pending) and written >= len(pending[done]):
        written -= len(pending[done])
        done += 1
    del pending[:done]
    if written:
        pending[0] = memoryview(pending[0])[written:]
