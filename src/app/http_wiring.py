"""Wiring the HTTP adapter to a built broker: its view of the domain services, and its place in the nursery.

`run_http` is started by `run_broker` when `http.port` is set. It binds the HTTP listener before the
Kafka listener starts, so /healthz answers at once and /readyz says 503 until Kafka clients can
connect; it stops when the broker's shutdown event is set.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs
import trio
from starlette.routing import BaseRoute

from trafka import __version__
from trafka.adapters.http import BrokerInfo, BrokerView, run_listener
from trafka.adapters.kafka.context import BrokerContext
from trafka.adapters.schemas import AvroFormat, JsonSchemaFormat, ProtobufFormat, RegistryService, SchemasTopic
from trafka.adapters.schemas.rest import registry_routes
from trafka.domain.schemas import SchemaRegistry, SchemaType

from .config import Settings


def observe_broker(settings: Settings, ctx: BrokerContext, started_ms: int) -> BrokerView:
    """The HTTP adapter's view of the broker; its metrics become the Kafka listener's observer."""
    def info() -> BrokerInfo:
        advertised = f"PLAINTEXT://{ctx.advertised.host}:{ctx.advertised.port}"
        return BrokerInfo(
            version=__version__,
            node_id=ctx.policy.node_id,
            cluster_id=ctx.policy.cluster_id,
            started_ms=started_ms,
            listeners=(advertised,),
            config=settings_with_sources(settings),
        )

    view = BrokerView(
        catalog=ctx.catalog,
        replicas=ctx.replicas,
        coordinator=ctx.groups.coordinator,
        offsets=ctx.groups.offsets,
        clock_ms=ctx.clock_ms,
        info=info,
    )
    ctx.observer = view.metrics
    return view


SCHEMA_FORMATS = {SchemaType.AVRO: AvroFormat, SchemaType.JSON: JsonSchemaFormat, SchemaType.PROTOBUF: ProtobufFormat}


def schema_registry_routes(ctx: BrokerContext) -> list[BaseRoute]:
    """Confluent's Schema Registry API over this broker's `_schemas` topic (read on its first request)."""
    formats = {schema_type: new() for schema_type, new in SCHEMA_FORMATS.items()}
    topic = SchemasTopic(ctx.catalog, ctx.replicas, ctx.clock_ms, lambda tp: ctx.appends.notify([tp]))
    service = RegistryService(SchemaRegistry(formats), topic)
    return registry_routes(service, [schema_type.value for schema_type in formats])


def settings_with_sources(settings: Settings) -> tuple[tuple[str, str, str], ...]:
    """Every setting as ("section.key", value, "default" or "configured")."""
    defaults = attrs.asdict(Settings())
    rows = []
    for section, values in attrs.asdict(settings).items():
        if not isinstance(values, dict):
            rows.append((section, str(values), "default" if values == defaults[section] else "configured"))
            continue
        for key, value in values.items():
            source = "default" if value == defaults[section][key] else "configured"
            rows.append((f"{section}.{key}", "" if value is None else str(value), source))
    return tuple(rows)


async def run_http(
    settings: Settings,
    view: BrokerView,
    shutting_down: trio.Event,
    started: Callable[[str, int], None] | None,
    extra_routes: Sequence[BaseRoute] = (),
    *,
    task_status: trio.TaskStatus[tuple[str, int]] = trio.TASK_STATUS_IGNORED,
) -> None:
    assert settings.http.port is not None
    async with trio.open_nursery() as nursery:
        host, port = await nursery.start(
            run_listener, view, settings.http.host, settings.http.port, shutting_down, extra_routes
        )
        if started is not None:
            started(host, port)
        task_status.started((host, port))
