"""Running a wired broker inside a Trio nursery: the server, and the storage maintenance beside it.

Both `trafka serve` (which adds signal handling) and the embeddable `trafka.Broker` run a broker this
way. `run_broker` reports the bound port through `task_status` once the broker accepts connections and
returns after `ctx.shutting_down` is set and the connections are drained. `close_broker` is the
synchronous part of a stop, after the Trio loop has ended: producer snapshots and the store's close.
"""

from __future__ import annotations

import logging

import trio

from trafka.adapters.kafka.context import BrokerContext
from trafka.adapters.kafka.server import serve

from .bootstrap import Adapters, advertised_endpoint, limits_from, listeners_from
from .config import Settings

log = logging.getLogger("trafka")


async def run_broker(
    settings: Settings,
    ctx: BrokerContext,
    adapters: Adapters,
    *,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    async with trio.open_nursery() as nursery:
        nursery.start_soon(maintain, settings, ctx, adapters)
        bound = await nursery.start(serve, ctx, listeners_from(settings), limits_from(settings))
        ctx.advertised = advertised_endpoint(bound[0])
        task_status.started(bound[0].port)
        await ctx.shutting_down.wait()
        log.info("shutting down")


def request_shutdown(ctx: BrokerContext) -> None:
    """Stop accepting, answer what is in flight (parked fetches at once), then end `run_broker`."""
    ctx.shutting_down.set()
    ctx.appends.notify_all()


def close_broker(ctx: BrokerContext, adapters: Adapters) -> None:
    ctx.replicas.snapshot_producers()
    adapters.stop()


async def maintain(settings: Settings, ctx: BrokerContext, adapters: Adapters) -> None:
    """Background storage work: flush.ms, recovery-point checkpoints, retention, transaction timeouts."""
    storage = settings.storage
    next_checkpoint = adapters.clock_ms()
    next_retention = next_checkpoint + storage.retention_initial_delay_ms
    while not ctx.shutting_down.is_set():
        now = adapters.clock_ms()
        adapters.maintain(now)
        for transactional_id in ctx.transactions.expire(now):
            log.info("transaction %s timed out and was aborted", transactional_id)
            ctx.appends.notify_all()
        if now >= next_checkpoint:
            ctx.replicas.snapshot_producers()
            adapters.checkpoint()
            next_checkpoint = now + storage.checkpoint_interval_ms
        if now >= next_retention:
            for tp, start in ctx.replicas.enforce_retention(now).items():
                log.info("retention: %s now starts at offset %d", tp, start)
            next_retention = now + storage.retention_check_interval_ms
        with trio.move_on_after(1):
            await ctx.shutting_down.wait()
