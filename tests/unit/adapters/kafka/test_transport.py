"""The plain-TCP transport on a socket pair: what arrives is read whenever it arrives, a lone request's
connection waits for the socket without a read that only raises (ADR 133), and a write the kernel
takes only part of is finished once the peer reads."""

from __future__ import annotations

import os
import socket
import struct

import pytest
import trio
import trio.testing

from trafka.adapters.kafka.connection import transport as transport_module
from trafka.adapters.kafka.connection.transport import SocketTransport
from trafka.adapters.kafka.wire.framing import FrameReader


def _pair() -> tuple[SocketTransport, socket.socket]:
    ours, theirs = socket.socketpair()
    return SocketTransport(trio.SocketStream(trio.socket.from_stdlib_socket(ours))), theirs


def _frame(body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + body


@pytest.fixture
def empty_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The readvs that found the socket empty (each an exception raised and caught)."""
    raised: list[int] = []
    real = os.readv

    def readv(fd: int, buffers: list[memoryview]) -> int:
        try:
            return real(fd, buffers)
        except BlockingIOError:
            raised.append(fd)
            raise

    monkeypatch.setattr(transport_module.os, "readv", readv)
    return raised


async def test_requests_sent_one_at_a_time_are_read_without_an_empty_read(empty_reads: list[int]):
    """A producer waiting for each answer: the reader waits for its next request with the socket empty."""
    transport, peer = _pair()
    frames = FrameReader(1 << 20)
    with peer:
        peer.sendall(_frame(b"request 0"))
        assert await transport.receive_into(frames, 1 << 20) == 4 + 9
        read = [frames.next_frame()]  # as the reader does: every whole frame taken before the next read
        for n in range(1, 6):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(transport.receive_into, frames, 1 << 20)
                await trio.testing.wait_all_tasks_blocked()  # the reader waits: its socket is empty
                peer.sendall(_frame(b"request %d" % n))
            read.append(frames.next_frame())
    assert read + [frames.next_frame()] == [b"request %d" % n for n in range(6)] + [None]
    assert empty_reads == []


async def test_bytes_that_arrive_after_a_short_read_and_before_the_next_are_read():
    transport, peer = _pair()
    frames = FrameReader(1 << 20)
    with peer:
        peer.sendall(_frame(b"a"))
        await transport.receive_into(frames, 1 << 20)
        peer.sendall(_frame(b"b") + _frame(b"c"))  # already there when the next read starts
        with trio.fail_after(5):
            assert await transport.receive_into(frames, 1 << 20) == 10
        assert [frames.next_frame() for _ in range(3)] == [b"a", b"b", b"c"]


async def test_a_read_waits_for_bytes_that_arrive_later():
    transport, peer = _pair()
    frames = FrameReader(1 << 20)
    with peer:
        peer.sendall(_frame(b"a"))
        await transport.receive_into(frames, 1 << 20)
        async with trio.open_nursery() as nursery:
            read: list[int] = []

            async def receive() -> None:
                read.append(await transport.receive_into(frames, 1 << 20))

            nursery.start_soon(receive)
            await trio.testing.wait_all_tasks_blocked()
            assert read == []
            peer.sendall(_frame(b"late"))
        assert read == [8]
        assert [frames.next_frame(), frames.next_frame()] == [b"a", b"late"]
        peer.shutdown(socket.SHUT_WR)
        assert await transport.receive_into(frames, 1 << 20) == 0  # the end of the stream


async def test_a_full_buffer_is_read_on_without_waiting(empty_reads: list[int]):
    """A read that fills the buffer may have left bytes in the socket: the next reads them at once."""
    transport, peer = _pair()
    peer.setblocking(False)
    body = b"x" * (3 * transport_module.RECEIVE_BUFFER)
    frames = FrameReader(len(body))
    pending = memoryview(_frame(body))
    with peer:
        async with trio.open_nursery() as nursery:

            async def write() -> None:
                nonlocal pending
                while pending:
                    await trio.lowlevel.wait_writable(peer)
                    pending = pending[peer.send(pending) :]

            nursery.start_soon(write)
            while (frame := frames.next_frame()) is None:
                assert await transport.receive_into(frames, len(body))
        assert frame == body


async def test_a_write_the_kernel_takes_part_of_is_finished_when_the_peer_reads():
    transport, peer = _pair()
    buffers = [b"h" * 10, b"x" * (4 << 20), b"t" * 7]
    received = bytearray()
    with peer:
        peer.setblocking(False)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(transport.send, buffers)

            while len(received) < sum(map(len, buffers)):
                await trio.lowlevel.wait_readable(peer)
                received += peer.recv(1 << 20)
    assert bytes(received) == b"".join(buffers)


async def test_a_write_to_a_closed_peer_breaks_the_stream():
    transport, peer = _pair()
    peer.close()
    with pytest.raises(trio.BrokenResourceError):
        await transport.send([b"answer"])


async def test_a_peer_that_closes_after_a_short_read_ends_the_stream():
    transport, peer = _pair()
    frames = FrameReader(1 << 20)
    peer.sendall(_frame(b"last"))
    assert await transport.receive_into(frames, 1 << 20) == 8
    peer.close()
    with trio.fail_after(5):
        assert await transport.receive_into(frames, 1 << 20) == 0
    assert frames.next_frame() == b"last"


async def test_a_peer_that_resets_after_a_short_read_breaks_the_stream():
    listener = socket.create_server(("127.0.0.1", 0))
    with listener:
        peer = socket.create_connection(listener.getsockname())
        ours, _ = listener.accept()
    transport = SocketTransport(trio.SocketStream(trio.socket.from_stdlib_socket(ours)))
    frames = FrameReader(1 << 20)
    peer.sendall(_frame(b"last"))
    while not frames.buffered:
        await transport.receive_into(frames, 1 << 20)
    peer.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    peer.close()  # an RST
    with trio.fail_after(5), pytest.raises(trio.BrokenResourceError):
        await transport.receive_into(frames, 1 << 20)


async def test_the_rest_of_a_frame_cut_short_is_read_without_waiting_for_the_socket(monkeypatch: pytest.MonkeyPatch):
    """A short read that ends inside a frame: the rest is likely on its way (a large request streaming
    in), so the next read tries the socket at once, not after a pass through the scheduler."""
    transport, peer = _pair()
    frames = FrameReader(1 << 20)
    waits: list[object] = []
    real = trio.lowlevel.wait_readable

    async def wait_readable(sock: object) -> None:
        waits.append(sock)
        await real(sock)

    monkeypatch.setattr(trio.lowlevel, "wait_readable", wait_readable)
    frame = _frame(b"y" * 1000)
    with peer:
        peer.sendall(frame[:300])
        assert await transport.receive_into(frames, 1 << 20) == 300
        assert frames.next_frame() is None
        peer.sendall(frame[300:])
        assert await transport.receive_into(frames, 1 << 20) == len(frame) - 300
        assert waits == []
        assert frames.next_frame() == b"y" * 1000
        peer.sendall(_frame(b"z"))
        assert await transport.receive_into(frames, 1 << 20) == 5  # after a whole frame: waits first
        assert len(waits) == 1


async def test_the_reader_waits_on_the_descriptor_without_asking_trios_socket(monkeypatch: pytest.MonkeyPatch):
    """ADR 135: each wait for readability is on the descriptor itself; trio's socket object answers
    `fileno()` in Python, a call per wait on the latency path (two per record) that the int avoids."""
    transport, peer = _pair()
    frames = FrameReader(1 << 20)
    asked: list[int] = []
    socket_type = type(transport._socket)
    real = socket_type.fileno
    monkeypatch.setattr(socket_type, "fileno", lambda self: asked.append(1) or real(self))
    with peer:
        for n in range(3):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(transport.receive_into, frames, 1 << 20)
                await trio.testing.wait_all_tasks_blocked()  # waiting for readability
                peer.sendall(_frame(b"request %d" % n))
            assert frames.next_frame() == b"request %d" % n
    assert asked == []
