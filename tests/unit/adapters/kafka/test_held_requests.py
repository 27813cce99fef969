"""A request an interceptor delays (`Held`) waits in the purgatory (ADR 106): its timer answers it, the
connection reads nothing more meanwhile (as Kafka mutes the channel), and a connection dropped before
the deadline forgets it."""

from __future__ import annotations

import socket

import trio
import trio.testing

from trafka.adapters.kafka.connection.faults import Delay, Interceptor
from trafka.adapters.kafka.connection.limits import ServerLimits
from trafka.adapters.kafka.connection.server import serve
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters, listeners_from

from .test_connection_core import metadata

METADATA = 3


def _pending(sock: socket.socket) -> bytes:
    sock.setblocking(False)
    try:
        return sock.recv(65536)
    except BlockingIOError:
        return b""


async def _broker(nursery: trio.Nursery):
    settings = load_settings(overrides={"storage": {"kind": "memory"}, "server": {"host": "127.0.0.1", "port": 0}})
    ctx = bootstrap(settings, default_adapters(settings))
    bound = await nursery.start(serve, ctx, listeners_from(settings), ServerLimits())
    return ctx, bound[0].port


async def test_a_held_request_is_answered_by_the_purgatory_timer_and_nothing_after_it_before(autojump_clock):
    async with trio.open_nursery() as nursery:
        ctx, port = await _broker(nursery)  # the purgatory's timer is not running yet
        ctx.faults.intercept(Interceptor(METADATA, lambda request: Delay(30), 1))
        client = socket.create_connection(("127.0.0.1", port))
        client.sendall(metadata(1) + metadata(2))
        await trio.sleep(120)  # four times the delay (a virtual clock): no sleep of the reader's answers it
        assert _pending(client) == b""
        nursery.start_soon(ctx.services.appends.run)  # the timer: the held request expires at once
        await trio.sleep(1)
        await trio.testing.wait_all_tasks_blocked()
        answered = _pending(client)
        first = int.from_bytes(answered[:4], "big")
        assert answered[4:8] == (1).to_bytes(4, "big")  # the held one first,
        assert answered[8 + first : 12 + first] == (2).to_bytes(4, "big")  # then the one read after it
        client.close()
        nursery.cancel_scope.cancel()


async def test_a_connection_dropped_while_its_request_is_held_forgets_it(autojump_clock):
    async with trio.open_nursery() as nursery:
        ctx, port = await _broker(nursery)
        nursery.start_soon(ctx.services.appends.run)
        served = []
        ctx.faults.intercept(Interceptor(METADATA, lambda request: served.append(request) or Delay(30), 1))
        client = socket.create_connection(("127.0.0.1", port))
        client.sendall(metadata(1))
        await trio.sleep(1)
        assert len(served) == 1 and len(ctx.services.appends._deadlines) == 1  # parked, on its deadline alone
        assert ctx.faults.drop_connections() == 1
        await trio.sleep(1)
        await trio.testing.wait_all_tasks_blocked()
        assert all(op.finished for _, _, op in ctx.services.appends._deadlines)  # forgotten with its connection
        await trio.sleep(60)  # past the deadline: nothing is served for the closed connection
        assert len(served) == 1 and _pending(client) == b""  # closed, unanswered
        client.close()
        nursery.cancel_scope.cancel()
