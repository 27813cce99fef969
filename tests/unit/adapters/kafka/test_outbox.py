"""The connection's outbox: responses leave in request order, ready ones in one write, a deferred one
holds back those behind it, a failed one ends the connection after the ones before it, and the
reader is held back while the outbox is full."""

from __future__ import annotations

import pytest
import trio
import trio.lowlevel
import trio.testing

from trafka.adapters.kafka.connection.outbox import ConnectionAborted, Outbox


class RecordingTransport:
    def __init__(self) -> None:
        self.writes: list[list[bytes]] = []
        self.gate: trio.Event | None = None  # when set to an unset event, send waits for it

    async def send(self, buffers):
        if self.gate is not None:
            await self.gate.wait()
        self.writes.append(list(buffers))

    async def receive_into(self, frames, wanted):  # pragma: no cover - not used by the outbox
        raise AssertionError


async def test_ready_responses_leave_in_one_write_in_request_order():
    transport = RecordingTransport()
    outbox = Outbox(transport, max_inflight=32, max_queued_bytes=1 << 20)
    outbox.add([b"a"])
    outbox.add([b"b1", b"b2"])
    outbox.add([b"c"])
    await outbox.flush()
    assert transport.writes == [[b"a", b"b1", b"b2", b"c"]]
    assert outbox.queued_bytes == 0


async def test_a_deferred_response_holds_back_the_ones_after_it_until_it_completes():
    transport = RecordingTransport()
    outbox = Outbox(transport, max_inflight=32, max_queued_bytes=1 << 20)
    outbox.add([b"first"])
    deferred = outbox.slot()
    outbox.add([b"third"])
    await outbox.flush()
    assert transport.writes == [[b"first"]]
    deferred.fill([b"second"])
    await outbox.flush()
    assert transport.writes == [[b"first"], [b"second", b"third"]]


async def test_a_failed_response_ends_the_connection_after_the_ones_before_it():
    transport = RecordingTransport()
    outbox = Outbox(transport, max_inflight=32, max_queued_bytes=1 << 20)
    outbox.add([b"ok"])
    outbox.add(None)
    outbox.add([b"never"])
    with pytest.raises(ConnectionAborted):
        await outbox.flush()
    assert transport.writes == [[b"ok"]]


async def test_one_flush_writes_at_a_time_and_picks_up_what_others_queued():
    transport = RecordingTransport()
    transport.gate = trio.Event()
    outbox = Outbox(transport, max_inflight=32, max_queued_bytes=1 << 20)
    outbox.add([b"1"])
    async with trio.open_nursery() as nursery:
        nursery.start_soon(outbox.flush)
        await trio.testing.wait_all_tasks_blocked()
        outbox.add([b"2"])
        await outbox.flush()  # returns at once: the first flush is writing
        assert transport.writes == []
        transport.gate.set()
    assert transport.writes == [[b"1"], [b"2"]]


async def test_the_reader_waits_while_the_outbox_is_full():
    transport = RecordingTransport()
    outbox = Outbox(transport, max_inflight=2, max_queued_bytes=1 << 20)
    waiting = outbox.slot()
    outbox.add([b"x"])
    assert outbox.full
    room = False

    async def reader():
        nonlocal room
        await outbox.wait_for_room()
        room = True

    async with trio.open_nursery() as nursery:
        nursery.start_soon(reader)
        await trio.testing.wait_all_tasks_blocked()
        assert not room
        waiting.fill([b"w"])
    assert room and transport.writes == [[b"w", b"x"]]


async def test_queued_bytes_over_the_budget_hold_the_reader_until_written():
    transport = RecordingTransport()
    transport.gate = trio.Event()
    outbox = Outbox(transport, max_inflight=32, max_queued_bytes=10)
    outbox.add([b"y" * 20])
    assert outbox.full
    async with trio.open_nursery() as nursery:
        nursery.start_soon(outbox.wait_for_room)
        await trio.testing.wait_all_tasks_blocked()
        assert transport.writes == []
        transport.gate.set()
    assert not outbox.full and transport.writes == [[b"y" * 20]]


async def test_drain_waits_for_a_deferred_response():
    transport = RecordingTransport()
    outbox = Outbox(transport, max_inflight=32, max_queued_bytes=1 << 20)
    deferred = outbox.slot()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(outbox.drain)
        await trio.testing.wait_all_tasks_blocked()
        deferred.fill([b"late"])
    assert transport.writes == [[b"late"]]


def test_every_connection_of_a_loop_reads_into_one_buffer_and_each_thread_has_its_own():
    # A buffer per connection would hold RECEIVE_BUFFER bytes for every idle connection.
    import threading

    from trafka.adapters.kafka.connection.transport import _receive_buffer

    here = _receive_buffer()
    assert _receive_buffer() is here
    other = []
    thread = threading.Thread(target=lambda: other.append(_receive_buffer()))
    thread.start()
    thread.join()
    assert other[0] is not here and len(other[0]) == len(here)


async def test_the_socket_transport_writes_every_byte_in_order_through_partial_writes():
    """Buffers larger than the socket can take at once (and more than IOV_MAX of them) arrive whole
    and in order while the reader drains slowly: the kernel takes part of a buffer, the rest goes on."""
    from trafka.adapters.kafka.connection.transport import SocketTransport

    left, right = trio.socket.socketpair()
    left.setsockopt(trio.socket.SOL_SOCKET, trio.socket.SO_SNDBUF, 4096)
    buffers = [bytes([n % 251]) * (n * 37 % 5000) for n in range(700)] + [b"\xaa" * 300_000]
    expected = b"".join(buffers)
    received = bytearray()

    async def read_slowly():
        while len(received) < len(expected):
            received.extend(await right.recv(7000))
            await trio.lowlevel.checkpoint()

    transport = SocketTransport(trio.SocketStream(left))
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(read_slowly)
            await transport.send(buffers)
    assert bytes(received) == expected
    left.close()
    right.close()


class PartialTransport(RecordingTransport):
    """Takes at most `room` bytes per `send_nowait`, as a socket whose buffer is nearly full."""

    def __init__(self, room: int) -> None:
        super().__init__()
        self.room = room
        self.taken = b""

    def send_nowait(self, buffers):
        data = b"".join(bytes(b) for b in buffers)
        self.taken += data[: self.room]
        rest = data[self.room :]
        self.room = max(0, self.room - len(data))
        return [rest] if rest else []


async def test_flush_nowait_writes_what_the_socket_takes_and_keeps_the_rest_at_the_head():
    transport = PartialTransport(room=5)
    outbox = Outbox(transport, max_inflight=32, max_queued_bytes=1 << 20)
    outbox.add([b"abc", b"def"])
    deferred = outbox.slot()
    outbox.add([b"later"])
    outbox.flush_nowait()
    assert transport.taken == b"abcde" and outbox.queued_bytes == len(b"f") + len(b"later")
    outbox.flush_nowait()  # nothing more taken now; the head still holds the rest
    assert transport.taken == b"abcde"
    deferred.fill([b"ghi"])
    await outbox.flush()
    assert transport.writes == [[b"f", b"ghi", b"later"]] and outbox.queued_bytes == 0


async def test_flush_nowait_stops_before_a_failed_response_and_leaves_it_to_flush():
    transport = PartialTransport(room=100)
    outbox = Outbox(transport, max_inflight=32, max_queued_bytes=1 << 20)
    outbox.add([b"ok"])
    outbox.add(None)
    outbox.flush_nowait()
    assert transport.taken == b"ok"
    with pytest.raises(ConnectionAborted):
        await outbox.flush()


async def test_send_nowait_takes_what_the_socket_takes_and_send_writes_the_rest_in_order():
    from trafka.adapters.kafka.connection.transport import SocketTransport

    left, right = trio.socket.socketpair()
    left.setsockopt(trio.socket.SOL_SOCKET, trio.socket.SO_SNDBUF, 4096)
    buffers = [bytes([n % 251]) * 3000 for n in range(400)]  # far more than the socket holds
    expected = b"".join(buffers)
    transport = SocketTransport(trio.SocketStream(left))
    rest = transport.send_nowait(buffers)
    written = len(expected) - sum(map(len, rest))
    assert 0 < written < len(expected)
    received = bytearray()

    async def read_all():
        while len(received) < len(expected):
            received.extend(await right.recv(65536))

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(read_all)
            await transport.send(rest)
    assert bytes(received) == expected
    right.close()
    assert transport.send_nowait([b"x"]) in ([b"x"], [])  # a closed peer: no exception here
    left.close()


async def test_answer_nowait_writes_the_only_response_at_once_and_keeps_what_the_socket_did_not_take():
    """ADR 130: a parked answer that is the only response queued goes to the socket past the queue; what
    the socket does not take stays at the head for `flush`; behind another response it waits its turn."""
    transport = PartialTransport(room=5)
    outbox = Outbox(transport, max_inflight=32, max_queued_bytes=1 << 20)
    alone = outbox.slot()
    outbox.answer_nowait(alone, [b"abc"])
    assert transport.taken == b"abc" and not outbox.pending and outbox.queued_bytes == 0
    partly = outbox.slot()
    outbox.answer_nowait(partly, [b"defgh"])
    assert transport.taken == b"abcde" and outbox.head_ready and outbox.queued_bytes == 3
    behind = outbox.slot()
    outbox.answer_nowait(behind, [b"ij"])  # not the only one: behind the rest, tried with it (`flush_nowait`)
    assert transport.taken == b"abcde" and outbox.queued_bytes == 5
    await outbox.flush()
    assert transport.writes == [[b"fghij"]] and outbox.queued_bytes == 0 and not outbox.pending
    failed = outbox.slot()
    outbox.answer_nowait(failed, None)
    with pytest.raises(ConnectionAborted):
        await outbox.flush()


async def test_send_nowait_of_one_buffer_gives_back_what_the_socket_did_not_take():
    from trafka.adapters.kafka.connection.transport import SocketTransport

    left, right = trio.socket.socketpair()
    left.setsockopt(trio.socket.SOL_SOCKET, trio.socket.SO_SNDBUF, 4096)
    transport = SocketTransport(trio.SocketStream(left))
    assert transport.send_nowait([b"small"]) == []
    big = bytes(range(256)) * 4096
    rest = transport.send_nowait([big])
    assert len(rest) == 1 and 0 < len(rest[0]) < len(big) and bytes(rest[0]) == big[len(big) - len(rest[0]) :]
    rest_again = transport.send_nowait([b"more"])  # full: nothing taken
    assert rest_again == [b"more"]
    right.close()
    left.close()


async def test_a_lone_response_written_while_others_queue_behind_it_is_followed_by_them():
    """One queued response goes to the transport as is (ADR 133); what is queued while its `send`
    waits is written by the same flush (a second flush returns at once: one writes at a time)."""
    transport = RecordingTransport()
    transport.gate = trio.Event()
    outbox = Outbox(transport, max_inflight=32, max_queued_bytes=1 << 20)
    outbox.add([b"first"])
    async with trio.open_nursery() as nursery:
        nursery.start_soon(outbox.flush)
        await trio.testing.wait_all_tasks_blocked()
        outbox.add([b"second"])
        outbox.add([b"third", b"3"])
        await outbox.flush()  # returns: the first flush is writing
        assert transport.writes == []
        transport.gate.set()
    assert transport.writes == [[b"first"], [b"second", b"third", b"3"]]
    assert outbox.queued_bytes == 0 and not outbox.pending


async def test_a_lone_failed_response_ends_the_connection():
    transport = RecordingTransport()
    outbox = Outbox(transport, max_inflight=32, max_queued_bytes=1 << 20)
    outbox.add(None)
    with pytest.raises(ConnectionAborted):
        await outbox.flush()
    assert transport.writes == [] and not outbox.pending


async def test_a_lone_response_whose_write_fails_is_not_written_again():
    """As a gathered one: taken off the queue before its write, so draining after a broken write does
    not retry it."""

    class Broken(RecordingTransport):
        async def send(self, buffers):
            self.writes.append(list(buffers))
            raise trio.BrokenResourceError

    transport = Broken()
    outbox = Outbox(transport, max_inflight=32, max_queued_bytes=1 << 20)
    outbox.add([b"lost"])
    with pytest.raises(trio.BrokenResourceError):
        await outbox.flush()
    assert not outbox.pending
    await outbox.drain()
    assert transport.writes == [[b"lost"]]
