"""Wiring the HTTP adapter to a built broker: its view of the domain services, and its place in the nursery.

`run_http` is started by `run_broker` when `http.port` is set, once the Kafka listeners are bound (a
taken Kafka port stops the broker before any HTTP address is announced); /readyz says 503 until the
broker marks them accepting, and after shutdown begins. It stops when the broker's shutdown event is set.
"""

from __future__ import annotations

import ipaddress
import logging
import secrets
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

import attrs
import trio
from starlette.routing import BaseRoute

from trafka._version import __version__
from trafka.adapters.http import BrokerInfo, BrokerView, ConsoleSecurity, HttpOptions, run_listener
from trafka.adapters.http.metrics import BrokerMetrics
from trafka.adapters.kafka.apis import delete_groups
from trafka.adapters.kafka.context import BrokerContext
from trafka.adapters.kafka.runtime import group_configs
from trafka.adapters.kafka.runtime.unit_of_work import committed

from .. import extras

if TYPE_CHECKING:
    pass
from trafka.domain.security import PasswordCheck, ScramMechanism

from ..config.settings import Settings, host_patterns
from .schema_registry import schema_formats, schema_registry
from .tls import http_ssl_context

log = logging.getLogger("trafka.http")


def observe_broker(settings: Settings, ctx: BrokerContext, started_ms: int) -> BrokerView:
    """The HTTP adapter's view of the broker; its metrics become the Kafka listener's observer."""

    def info() -> BrokerInfo:
        advertised = tuple(
            f"{listener.name}://{listener.advertised_host}:{listener.advertised_port}" for listener in ctx.listeners
        )  # as bound: empty until the Kafka listener is up
        return BrokerInfo(
            version=__version__,
            node_id=ctx.services.policy.node_id,
            cluster_id=ctx.services.policy.cluster_id,
            started_ms=started_ms,
            listeners=advertised or (f"PLAINTEXT://{ctx.advertised.host}:{ctx.advertised.port}",),
            config=settings_with_sources(settings),
        )

    view = BrokerView(
        catalog=ctx.services.catalog,
        replicas=ctx.services.replicas,
        coordinator=ctx.services.groups.coordinator,
        offsets=ctx.services.groups.offsets,
        clock_ms=ctx.services.clock_ms,
        info=info,
        metrics=ctx.services.observer if isinstance(ctx.services.observer, BrokerMetrics) else BrokerMetrics(),
        security=console_security(settings, ctx),
        consumer_groups=ctx.services.groups.consumer,
        share=ctx.services.share.groups if ctx.services.share is not None else None,
        streams_groups=ctx.services.groups.streams,
        quotas=ctx.services.quotas,
        telemetry=ctx.services.telemetry,
        delete_group=committed(
            ctx.services.unit_of_work, partial(delete_groups.delete_group, ctx.view(delete_groups.Uses))
        ),
        share_changed=ctx.services.share.settled if ctx.services.share is not None else lambda: None,
        group_configs=partial(group_configs.describe, ctx.services),
    )
    return view


def console_security(settings: Settings, ctx: BrokerContext) -> ConsoleSecurity | None:
    """When any Kafka listener uses SASL or an authorizer is configured, the console and the registry need
    a login by the SASL listeners' users: SCRAM users of the SCRAM mechanisms they enable (both without
    a SASL listener) and PLAIN users of their JAAS configs."""
    sasl = ctx.authentication.listeners
    if not sasl and ctx.services.authorization is None:
        return None
    enabled = {m for listener in sasl.values() for m in listener.enabled_mechanisms}
    mechanisms = [m for m in ScramMechanism if m.mechanism_name in enabled or not sasl]
    plain = [listener.plain_users for listener in sasl.values() if "PLAIN" in listener.enabled_mechanisms]
    check = PasswordCheck(ctx.services.credentials.lookup, mechanisms, plain)
    return ConsoleSecurity(
        prepare=check.prepare,
        authorizer=None if ctx.services.authorization is None else ctx.services.authorization.authorizer,
        failed_authentication_delay_ms=ctx.authentication.failed_authentication_delay_ms,
        session_secret=settings.http.session_secret or secrets.token_urlsafe(32),
        session_lifetime_ms=settings.http.session_lifetime_ms,
    )


def schema_registry_routes(ctx: BrokerContext) -> list[BaseRoute]:
    """Confluent's Schema Registry API over this broker's `_schemas` topic; without the registry
    extra, its paths answer 501 with the extra to install."""
    if not extras.installed("registry"):
        return _registry_missing_routes()
    from trafka.adapters.schema_registry.rest import registry_routes

    return registry_routes(schema_registry(ctx), [schema_type.value for schema_type in schema_formats()])


def _registry_missing_routes() -> list[BaseRoute]:
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    try:
        extras.require("registry", "the Schema Registry")
    except extras.MissingExtra as exc:
        message = str(exc)
    log.warning("%s", message)

    async def missing(request: Request) -> JSONResponse:
        # Confluent's error body; 50101 is its code for an unsupported operation.
        return JSONResponse({"error_code": 50101, "message": message}, status_code=501)

    methods = ["GET", "POST", "PUT", "DELETE"]
    return [
        Route(path, missing, methods=methods)
        for prefix in ("/subjects", "/schemas", "/config", "/mode", "/compatibility")
        for path in (prefix, prefix + "/{rest:path}")
    ]


# Kafka's PASSWORD-type configs (and trafka's session secret): DescribeConfigs never shows their values.
SENSITIVE_KEYS = frozenset(
    {"ssl_key_password", "ssl_keystore_key", "plain_sasl_jaas_config", "session_secret", "delegation_token_secret_key"}
)
SENSITIVE_VALUE = "(sensitive)"


def settings_with_sources(settings: Settings) -> tuple[tuple[str, str, str], ...]:
    """Every setting as ("section.key", value, "default" or "configured"); per-listener settings as
    "security.listener_name.<listener>.key"; a sensitive value that is set shows as "(sensitive)"."""
    rows: list[tuple[str, str, str]] = []
    _add_rows(rows, "", attrs.asdict(settings), attrs.asdict(Settings()))
    return tuple(rows)


def _add_rows(rows: list[tuple[str, str, str]], prefix: str, values: dict, defaults: dict) -> None:
    for key, value in values.items():
        default = defaults.get(key)
        if isinstance(value, dict):
            _add_rows(rows, f"{prefix}{key}.", value, default if isinstance(default, dict) else {})
            continue
        source = "default" if value == default else "configured"
        shown = "" if value is None else SENSITIVE_VALUE if key in SENSITIVE_KEYS else str(value)
        rows.append((f"{prefix}{key}", shown, source))


def http_options(settings: Settings) -> HttpOptions:
    return HttpOptions(
        allowed_hosts=host_patterns(settings.http.allowed_hosts),
        max_request_bytes=settings.http.max_request_bytes,
        metrics_authentication=settings.http.metrics_authentication,
        ssl_context=http_ssl_context(settings),
    )


def warn_if_passwords_in_clear(settings: Settings, view: BrokerView) -> None:
    """A login (console form, HTTP Basic) over plain HTTP off loopback sends passwords in clear."""
    if view.security is None or settings.http.ssl_enabled or is_loopback(settings.http.host):
        return
    log.warning(
        "the HTTP listener on %s asks for passwords (console login, HTTP Basic) over plain HTTP: "
        "they cross the network in clear; set http.ssl_enabled (with the ssl.* keystore) or bind http.host to loopback",
        settings.http.host,
    )


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


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
    options = http_options(settings)
    warn_if_passwords_in_clear(settings, view)
    async with trio.open_nursery() as nursery:
        host, port = await nursery.start(
            run_listener,
            view,
            settings.http.host,
            settings.http.port,
            shutting_down,
            extra_routes,
            options,
        )
        if started is not None:
            started(host, port)
        task_status.started((host, port))
