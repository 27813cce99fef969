"""The connections waiting in a listener's backlog are taken in one turn of the accept loop, as Kafka's
Acceptor (a thread of its own) takes them as they come. Taken one per scheduler turn, a broker whose
loop is busy left a burst of new connections unanswered for seconds: franz-go opens a connection from
the goroutine that writes every request to that broker, so its heartbeats waited behind the first
answer on a new connection and group members were expired (kgo's TestTxnEtl under load, issue 41)."""

from __future__ import annotations

import socket

import trio

from trafka.adapters.kafka.connection.admission import ConnectionLimits
from trafka.adapters.kafka.connection.limits import ServerLimits
from trafka.adapters.kafka.connection.server import serve
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters, listeners_from

from .test_connection_core import metadata

CLIENTS = 40


def _answered(sock: socket.socket) -> bool:
    try:
        return bool(sock.recv(4, socket.MSG_PEEK | socket.MSG_DONTWAIT))
    except BlockingIOError:
        return False


async def _broker(nursery: trio.Nursery, limits: ServerLimits = ServerLimits()) -> int:
    settings = load_settings(overrides={"storage": {"kind": "memory"}, "server": {"host": "127.0.0.1", "port": 0}})
    ctx = bootstrap(settings, default_adapters(settings))
    bound = await nursery.start(serve, ctx, listeners_from(settings), limits)
    return bound[0].port


async def _turns_until_answered(clients: list[socket.socket], most: int) -> int:
    """Scheduler turns until every client has an answer (at most `most`)."""
    for turn in range(most):
        if all(_answered(client) for client in clients):
            return turn
        await trio.lowlevel.cancel_shielded_checkpoint()
    return most


async def test_a_burst_of_new_connections_is_accepted_and_answered_in_a_few_turns():
    async with trio.open_nursery() as nursery:
        port = await _broker(nursery)
        # Connected while the loop does not run (the kernel completes each handshake): all of them wait
        # in the backlog at once, each with its first request sent, as a client's burst on a busy broker.
        clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(CLIENTS)]
        for number, client in enumerate(clients):
            client.sendall(metadata(number))
        turns = await _turns_until_answered(clients, 10 * CLIENTS)
        assert turns < CLIENTS // 4, f"{turns} scheduler turns to answer {CLIENTS} new connections"
        for client in clients:
            client.close()
        nursery.cancel_scope.cancel()


async def test_taking_the_backlog_stops_at_max_connections():
    async with trio.open_nursery() as nursery:
        port = await _broker(nursery, ServerLimits(connections=ConnectionLimits(max_connections=3)))
        clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(5)]
        for number, client in enumerate(clients):
            client.sendall(metadata(number))
        await _turns_until_answered(clients, 50)
        assert [_answered(client) for client in clients] == [True] * 3 + [False] * 2
        clients[0].close()  # a slot frees: the next one waiting is taken
        await _turns_until_answered(clients[1:4], 50)
        assert [_answered(client) for client in clients[1:]] == [True] * 3 + [False]
        for client in clients:
            client.close()
        nursery.cancel_scope.cancel()


def test_an_exhaustion_is_said_once_and_over_when_the_backlog_is_taken_whole(caplog):
    """A descriptor freed for a moment (a file read, a connection's close) and taken by the next client
    while others wait does not end the failure; taking every client waiting does, whatever the count
    of connections open: closes free their descriptors before the count drops (CI saw the backlog taken
    whole between the two, and the recovery never said)."""
    from trafka.adapters.kafka.connection.admission import Admission, ConnectionLimits

    admission = Admission(ConnectionLimits())
    for _ in range(3):
        assert admission.admit("127.0.0.1")
    caplog.set_level("WARNING", logger="trafka.server")
    admission.accept_failed("PLAINTEXT", OSError(24, "Too many open files"))
    assert admission.admit("127.0.0.1")  # one taken, and the next accept fails again: the same exhaustion
    admission.accept_failed("PLAINTEXT", OSError(24, "Too many open files"))
    said = [r.getMessage() for r in caplog.records]
    assert len([m for m in said if "cannot accept" in m]) == 1 and not any("again" in m for m in said)
    admission.caught_up("PLAINTEXT")  # as many open as at the failure, the backlog empty
    admission.caught_up("PLAINTEXT")
    assert len([r for r in caplog.records if "accepts connections again" in r.getMessage()]) == 1
    admission.accept_failed("PLAINTEXT", OSError(24, "Too many open files"))  # a new exhaustion is said
    assert len([r for r in caplog.records if "cannot accept" in r.getMessage()]) == 2


async def test_the_backlog_says_whether_it_took_every_connection_waiting():
    from trafka.adapters.kafka.connection.admission import Admission, Backlog

    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    backlog = Backlog(listeners[0])
    clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
    admission = Admission(ConnectionLimits())
    taken = list(backlog.waiting(admission, 2))
    assert len(taken) == 2 and not backlog.empty  # stopped at its limit: one may still wait
    taken += list(backlog.waiting(admission, 2))
    assert len(taken) == 3 and backlog.empty
    full = Admission(ConnectionLimits(max_connections=0))
    assert not list(backlog.waiting(full, 2)) and not backlog.empty  # no slot: nothing known
    for stream in taken:
        await stream.aclose()
    for client in clients:
        client.close()
    backlog.close()
    await listeners[0].aclose()
