"""The Produce lane shared by every connection (ADR 105): one-partition requests that several
connections have ready in one scheduler pass are answered in one call, one log write per partition.

Grouping must be invisible but for the writes: the same answers (offsets included), in each
connection's order, and the same bytes stored as when each connection's group is answered on its own,
one after another (hypothesis). Then a real server, several raw connections producing to one partition
at once: one append and one response write per connection, counted without strace.
"""

from __future__ import annotations

import os
import socket
import struct

import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from trafka.adapters.kafka.apis.produce import Uses, answer_one_partition
from trafka.adapters.kafka.connection.limits import ServerLimits
from trafka.adapters.kafka.connection.outbox import Outbox
from trafka.adapters.kafka.connection.server import serve
from trafka.adapters.kafka.connection.shared_lane import SharedLane
from trafka.adapters.kafka.wire import fast_produce
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters, listeners_from
from trafka.app.wiring.runtime import run_services
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import ProduceRequest

from .test_produce_lane import REGISTRY, _batch, _context, _log_bytes, one_partition_requests

PRODUCE = REGISTRY.get(0)


class _Transport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []

    async def receive_into(self, frames, wanted):  # pragma: no cover - never read here
        raise AssertionError

    async def send(self, buffers) -> None:
        self.writes.append(b"".join(buffers))

    def send_nowait(self, buffers):
        self.writes.append(b"".join(buffers))
        return []


class _Connection:
    """What a reader gives a turn: a peer name, an outbox, and the write after another task filled it."""

    def __init__(self, name: str) -> None:
        self.peer = name
        self.transport = _Transport()
        self.outbox = Outbox(self.transport, 1000, 1 << 30)
        self.written_elsewhere = 0

    def answered_elsewhere(self) -> None:
        self.written_elsewhere += 1
        self.outbox.flush_nowait()


@settings(max_examples=200, deadline=None)
@given(
    joins=st.lists(
        st.tuples(st.integers(0, 3), st.lists(one_partition_requests(), min_size=1, max_size=4)), min_size=1, max_size=6
    )
)
def test_a_turn_answers_and_stores_exactly_what_each_group_alone_does(joins):
    """Groups from up to four connections joined into one turn, in any order (a connection may join
    twice), against each group answered on its own in the order they joined."""
    grouped, alone = _context(), _context()
    lane = SharedLane(grouped, PRODUCE)
    connections = [_Connection(f"c{n}") for n in range(4)]
    expected: dict[int, list[bytes]] = {n: [] for n in range(4)}
    turn = None
    for n, requests in joins:
        group = [fast_produce.decode_one_partition(frame) for _, frame in requests]
        expected[n].extend(answer_one_partition(alone.view(Uses), group))
        connection = connections[n]
        opened = lane.join(connection, group, [connection.outbox.slot() for _ in group])
        assert (opened is not None) == (turn is None)
        turn = turn or opened
    assert turn is not None
    lane.answer(turn)
    assert turn.answered
    assert _log_bytes(grouped) == _log_bytes(alone)  # the same bytes, offsets and all
    for n, connection in enumerate(connections):
        joined = any(m == n for m, _ in joins)
        assert connection.written_elsewhere == (1 if joined else 0)
        assert connection.transport.writes == ([b"".join(expected[n])] if joined else [])  # one write each


def test_one_connection_alone_is_answered_at_once_after_its_first_turn():
    lane = SharedLane(_context(), PRODUCE)
    one, other = _Connection("one"), _Connection("other")
    assert lane.gathers(one)  # nothing answered yet: the first group opens a turn
    turn = lane.join(one, [], [])
    assert turn is not None
    assert lane.open_turn(one) is turn and lane.open_turn(other) is None
    assert lane.gathers(other)  # while a turn is open, every group joins it
    lane.answer(turn)
    assert lane.open_turn(one) is None
    assert not lane.gathers(one)  # it was alone: answered at once from now on
    assert lane.gathers(other)  # until another connection's group comes
    both = lane.join(other, [], [])
    lane.join(one, [], [])
    lane.answer(both)  # type: ignore[arg-type]
    assert lane.gathers(one) and lane.gathers(other)  # several: every group opens a turn


@settings(max_examples=150, deadline=None)
@given(requests=st.lists(one_partition_requests(), min_size=1, max_size=6), through_group=st.lists(st.booleans()))
def test_a_lone_request_is_answered_by_answer_one_with_the_groups_answers_and_bytes(requests, through_group):
    """ADR 135: a connection's group of one goes to the lane's `answer_one` (its view resolved when the
    lane is made), never through the group's function: the answers and the stored bytes are those of
    `answer_one_partition` for each request in turn, whether the reader calls `answer_alone` or
    `answer_now` with a group of one."""
    lane_ctx, reference = _context(), _context()
    lane = SharedLane(lane_ctx, PRODUCE)
    connection = _Connection("one")
    lane._answer = _never_the_group  # type: ignore[method-assign]  # a lone request must not take it
    for n, (_, frame) in enumerate(requests):
        one = fast_produce.decode_one_partition(frame)
        expected = answer_one_partition(reference.view(Uses), [one])
        if n < len(through_group) and through_group[n]:
            assert lane.answer_now(connection, [one]) == expected
        else:
            assert [lane.answer_alone(connection, one)] == expected
    assert not lane.gathers(connection)  # answered alone: its next group is answered at once too
    assert _log_bytes(lane_ctx) == _log_bytes(reference)


def _never_the_group(ctx, requests):
    raise AssertionError("a lone request took the group's answer")


def _frame(correlation_id: int, value: bytes, topic: str = "orders", partition: int = 0) -> bytes:
    request = ProduceRequest[9](
        transactional_id=None,
        acks=-1,
        timeout_ms=30_000,
        topic_data=[
            ProduceRequest.TopicProduceData(
                name=topic,
                partition_data=[
                    ProduceRequest.TopicProduceData.PartitionProduceData(index=partition, records=_batch([value]))
                ],
            )
        ],
    )
    request.with_header(correlation_id=correlation_id, client_id="fan-in")
    return bytes(request.encode(header=True, framed=True))


def _responses(sock: socket.socket, count: int) -> list[tuple[int, int, int]]:
    """(correlation id, error code, base offset) of `count` Produce v9 responses."""
    sock.settimeout(10)
    data = b""
    answers = []
    while len(answers) < count:
        while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
            chunk = sock.recv(65536)
            assert chunk, "closed by the broker"
            data += chunk
        size = int.from_bytes(data[:4], "big")
        body, data = data[4 : 4 + size], data[4 + size :]
        correlation_id = int.from_bytes(body[:4], "big")
        # v9 (flexible): header tagged fields, responses array (compact: n+1), topic name (compact
        # string), partitions array, index, error code, base offset
        at = 5 + 1
        name_length = body[at] - 1
        at += 1 + name_length + 1
        _index, error, base_offset = struct.unpack_from(">ihq", body, at)
        answers.append((correlation_id, error, base_offset))
    return answers


async def test_several_connections_producing_at_once_share_one_append_and_one_write_each(monkeypatch):
    settings = load_settings(overrides={"storage": {"kind": "memory"}, "server": {"host": "127.0.0.1", "port": 0}})
    adapters = default_adapters(settings)
    ctx = bootstrap(settings, adapters)
    ctx.services.catalog.create("orders", 1, 1)
    log = adapters.logs.get(TopicPartition("orders", 0))
    appends = []
    append = log.append
    monkeypatch.setattr(
        log, "append", lambda batches, headers: (appends.append(len(headers)), append(batches, headers))
    )
    writes = []
    writev = os.writev
    monkeypatch.setattr(os, "writev", lambda fd, buffers: (writes.append(fd), writev(fd, buffers))[1])
    async with trio.open_nursery() as nursery:
        run_services(nursery, ctx)
        bound = await nursery.start(serve, ctx, listeners_from(settings), ServerLimits())
        port = bound[0].port
        clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(4)]
        await trio.testing.wait_all_tasks_blocked()  # every connection accepted, its reader waiting
        for n, client in enumerate(clients):  # all sent before the broker runs: its readers wake together
            client.sendall(_frame(2 * n, b"a%d" % n) + _frame(2 * n + 1, b"b%d" % n))
        await trio.testing.wait_all_tasks_blocked()
        answers = {n: await trio.to_thread.run_sync(_responses, client, 2) for n, client in enumerate(clients)}
        assert appends == [8]  # one write for the eight records of four connections
        assert len(writes) == 4  # each connection's two answers in one writev
        offsets = []
        for n, ((first_id, first_error, first), (second_id, second_error, second)) in answers.items():
            assert (first_id, second_id, first_error, second_error) == (2 * n, 2 * n + 1, 0, 0)
            assert second == first + 1  # a connection's requests stay in its order
            offsets += [first, second]
        assert sorted(offsets) == list(range(8))
        stored = ctx.services.replicas.fetch(TopicPartition("orders", 0), 0, 1 << 20, True).records
        assert all(b"a%d" % n in stored and b"b%d" % n in stored for n in range(4))
        for client in clients:
            client.close()
        ctx.shutting_down.set()
        ctx.services.appends.notify_all()
        with trio.fail_after(10):
            await trio.testing.wait_all_tasks_blocked()
        nursery.cancel_scope.cancel()
