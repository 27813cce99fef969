"""Running a wired broker inside a Trio nursery: the supervisor of the server and of every service.

    run_broker ── services: the group coordinator's runtime, the purgatory's timer, the share groups'
              │   runtime (they outlive the listeners until every connection is drained)
              └─ listeners: storage maintenance, the log cleaner, the Kafka listeners (the TCP server,
                 which starts no service of its own), the HTTP listener

Both `trafka serve` (which adds signal handling) and the embeddable `trafka.Broker` run a broker this
way. `run_broker` reports the bound port through `task_status` once the broker accepts connections and
returns after `ctx.shutting_down` is set and the connections are drained. `close_broker` is the
synchronous part of a stop, after the Trio loop has ended: producer snapshots and the store's close.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import trio

from trafka.adapters.kafka.connection.server import serve
from trafka.adapters.kafka.context import BrokerContext

from ..cleaner.runtime import LogCleaner
from ..config.settings import Settings
from .bootstrap import Adapters, limits_from, listeners_from

if TYPE_CHECKING:
    from starlette.routing import BaseRoute

log = logging.getLogger("trafka")


async def run_broker(
    settings: Settings,
    ctx: BrokerContext,
    adapters: Adapters,
    *,
    http_started: Callable[[str, int], None] | None = None,
    http_routes: Sequence[BaseRoute] = (),
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """With `http.port` set, the HTTP listener runs here too (with `http_routes` beside its own);
    `http_started(host, port)` once it is bound."""
    if adapters.health is not None:  # a failed log dir stops the broker, as Kafka halts
        adapters.health.on_offline = lambda: request_shutdown(ctx)
    cleaner = adapters.cleaning.cleaner = LogCleaner(
        settings.log_cleaner,
        ctx,
        adapters.logs,
        adapters.checksum,
        adapters.decompress,
        adapters.cleaner_checkpoints,
        adapters.compacted_internal,
    )
    async with trio.open_nursery() as services:
        run_services(services, ctx)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(maintain, settings, ctx, adapters)
            nursery.start_soon(cleaner.run)
            view = None
            if settings.http.port is not None:
                # The HTTP stack (hypercorn, Starlette, the console, the registry) loads only when it serves.
                from .http import observe_broker, run_http, schema_registry_routes

                view = observe_broker(settings, ctx, adapters.clock_ms())
                view.first_dirty_offset = cleaner.first_dirty_offset
                view.metrics.watch_cleaner(cleaner.metric_values)
                view.readiness.log_dir_recovered = True  # bootstrap recovered every log before we got here
            # The Kafka listeners bind first: a taken Kafka port stops the broker before the HTTP listener
            # has announced an address that is about to go away.
            bound = await nursery.start(serve, ctx, listeners_from(settings), limits_from(settings))
            if view is not None:
                routes = [*schema_registry_routes(ctx), *http_routes]
                await nursery.start(run_http, settings, view, ctx.shutting_down, http_started, routes)
                view.readiness.listeners_accepting = True
            task_status.started(bound[0].port)
            await ctx.shutting_down.wait()
            if view is not None:
                view.readiness.shutting_down = True
            log.info("shutting down")
        services.cancel_scope.cancel()  # the connections are drained: nothing waits on the services


def run_services(nursery: trio.Nursery, ctx: BrokerContext) -> None:
    """The supervisor's background services, which outlive the listeners until every connection is
    drained: the group coordinator's runtime, the purgatory's expiry timer (ADR 80), the share groups'
    runtime."""
    nursery.start_soon(ctx.services.groups.run)
    nursery.start_soon(ctx.services.appends.run)
    if ctx.services.share_groups is not None:  # its timer starts when it is built (ADR 118)
        ctx.services.share_groups.when_built(lambda share: nursery.start_soon(share.run))


def request_shutdown(ctx: BrokerContext) -> None:
    """Stop accepting, answer what is in flight (parked fetches at once), then end `run_broker`."""
    ctx.shutting_down.set()
    ctx.services.appends.notify_all()


def close_broker(ctx: BrokerContext, adapters: Adapters) -> None:
    ctx.services.replicas.snapshot_producers()
    adapters.stop()


async def maintain(settings: Settings, ctx: BrokerContext, adapters: Adapters) -> None:
    """Background storage work: flush.ms, recovery-point checkpoints, retention, transaction timeouts."""
    storage = settings.storage
    broker = settings.broker
    next_checkpoint = adapters.clock_ms()
    next_retention = next_checkpoint + storage.retention_initial_delay_ms
    next_producer_expiry = next_checkpoint + broker.producer_id_expiration_check_interval_ms
    next_transactional_id_expiry = next_checkpoint + broker.transaction_remove_expired_transaction_cleanup_interval_ms
    groups = settings.groups
    next_offsets_expiry = next_checkpoint + groups.offsets_retention_check_interval_ms
    moved = _Moves(adapters)
    while not ctx.shutting_down.is_set():
        now = adapters.clock_ms()
        adapters.maintain(now)
        transactions = ctx.services.transactions_built  # built at the first use (ADR 124): none to time out before
        for transactional_id in transactions.expire(now) if transactions is not None else ():
            log.info("transaction %s timed out and was aborted", transactional_id)
            ctx.services.appends.notify_all()
        if now >= next_checkpoint:  # producer snapshots are taken at each roll and at shutdown, as Kafka's
            adapters.checkpoint()
            next_checkpoint = now + storage.checkpoint_interval_ms
        if now >= next_producer_expiry:
            removed = ctx.services.replicas.expire_producers(now, broker.producer_id_expiration_ms)
            if removed:
                log.info("expired %d producer id entries idle for producer.id.expiration.ms", removed)
            next_producer_expiry = now + broker.producer_id_expiration_check_interval_ms
        if now >= next_transactional_id_expiry:
            gone = (
                []
                if transactions is None
                else transactions.coordinator.expire_transactional_ids(now, broker.transactional_id_expiration_ms)
            )
            if gone:
                log.info("expired %d transactional ids (transactional.id.expiration.ms)", len(gone))
            next_transactional_id_expiry = now + broker.transaction_remove_expired_transaction_cleanup_interval_ms
        if now >= next_offsets_expiry:
            removed = ctx.services.groups.offsets.expire(now, groups.offsets_retention_minutes * 60_000)
            if removed:
                log.info("removed %d expired committed offsets (offsets.retention.minutes)", removed)
            next_offsets_expiry = now + groups.offsets_retention_check_interval_ms
        if now >= next_retention:
            for tp, start in ctx.services.replicas.enforce_retention(now).items():
                log.info("retention: %s now starts at offset %d", tp, start)
            next_retention = now + storage.retention_check_interval_ms
        await moved.pause(ctx.shutting_down)


class _Moves:
    """The maintenance loop's pause: a second of wall time, or under a manual clock until it moves."""

    def __init__(self, adapters: Adapters) -> None:
        self.manual = adapters.clock.manual
        self.event = trio.Event()
        adapters.clock.listen(self.moved)

    def moved(self) -> None:
        self.event.set()

    async def pause(self, shutting_down: trio.Event) -> None:
        if not self.manual:
            with trio.move_on_after(1):
                await shutting_down.wait()
            return
        await _first(self.event, shutting_down)
        self.event = trio.Event()


async def _first(*events: trio.Event) -> None:
    """Return once one of `events` is set."""
    async with trio.open_nursery() as nursery:

        async def until(event: trio.Event) -> None:
            await event.wait()
            nursery.cancel_scope.cancel()

        for event in events:
            nursery.start_soon(until, event)
