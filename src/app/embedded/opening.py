"""Opening a broker in the current Trio loop (`open_broker`): the settings a test broker starts with,
the simulated cluster's listeners and nodes, the topics created before the body runs."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any

import attrs
import trio

from trafka.adapters.kafka.cluster import ClusterMap
from trafka.adapters.kafka.context import BrokerContext
from trafka.adapters.kafka.request_context import Endpoint

from ..config.kafka_keys import overrides_from_config_names
from ..config.kafka_names import is_kafka_key
from ..config.settings import Settings, load_settings
from ..wiring.bootstrap import bootstrap, default_adapters
from ..wiring.runtime import close_broker, request_shutdown, run_broker
from .running import BrokerError, RunningBroker


def _trafka_field(name: str) -> tuple[str, str] | None:
    """A trafka setting with no Kafka name (`shutdown_grace_seconds`...): (section, field)."""
    defaults = Settings()
    for section in attrs.fields(Settings):
        kind = type(getattr(defaults, section.name))
        if attrs.has(kind) and name in attrs.fields_dict(kind):
            return section.name, name
    return None


def embedded_settings(
    *,
    data_dir: str | None = None,
    auto_create_topics: bool = True,
    host: str = "127.0.0.1",
    port: int = 0,
    settings: Mapping[str, Any] | None = None,
) -> Settings:
    """Settings for a broker in a test: memory store, an ephemeral port, no group join delay. They depend
    on the arguments only (no file, no environment) and are frozen, so the same arguments give the
    settings built the first time: a process's later brokers do not build them again (ADR 118)."""
    arguments = (data_dir, auto_create_topics, host, port, tuple(sorted((settings or {}).items())))
    try:  # each value with its type: 1 and True are equal keys, not equal settings
        return _remembered_settings(tuple((type(a), a) for a in (*arguments[:4], *arguments[4])), arguments)
    except TypeError:  # unhashable (a list among the settings, say): built each time
        return _embedded_settings(*arguments)


_REMEMBERED: dict[tuple[Any, ...], Settings] = {}


def _remembered_settings(key: tuple[Any, ...], arguments: tuple[Any, ...]) -> Settings:
    found = _REMEMBERED.get(key)
    if found is None:
        found = _embedded_settings(*arguments)
        if len(_REMEMBERED) < 64:  # a test suite's few broker shapes
            _REMEMBERED[key] = found
    return found


def _embedded_settings(
    data_dir: str | None, auto_create_topics: bool, host: str, port: int, settings: tuple[tuple[str, Any], ...]
) -> Settings:
    overrides: dict[str, dict[str, Any]] = {
        "server": {"host": host, "port": port, "shutdown_grace_seconds": 1.0},
        "broker": {"auto_create_topics_enable": auto_create_topics},
        # Kafka's 3 s initial rebalance delay only slows tests down; testcontainers sets it to 0 too.
        "groups": {"initial_rebalance_delay_ms": 0, "streams_initial_rebalance_delay_ms": 0},
        "storage": {"kind": "memory"} if data_dir is None else {"kind": "filesystem", "data_dir": str(data_dir)},
    }
    kafka_names: dict[str, Any] = {}
    for name, value in settings:
        key = name.replace("_", ".")
        field = None if is_kafka_key(name) or is_kafka_key(key) else _trafka_field(name)
        if field is None:
            kafka_names[name] = value
        else:
            overrides.setdefault(field[0], {})[field[1]] = value
    try:
        for section, values in overrides_from_config_names(kafka_names).items():
            if isinstance(values, Mapping):
                overrides.setdefault(section, {}).update(values)
            else:
                overrides[section] = values
        return load_settings(None, None, overrides)
    except Exception as exc:
        raise BrokerError(str(exc)) from exc


def cluster_listeners(brokers: int, host: str) -> dict[str, str]:
    """The settings of a simulated cluster's listeners: one per node, each on an ephemeral port."""
    if not isinstance(brokers, int) or brokers < 1:
        raise BrokerError("a cluster needs brokers >= 1")
    names = [f"BROKER{n}" for n in range(1, brokers + 1)]
    return {
        "listeners": ",".join(f"{name}://{host}:0" for name in names),
        "listener_security_protocol_map": ",".join(f"{name}:PLAINTEXT" for name in names),
    }


def attach_cluster(ctx: BrokerContext, cluster: ClusterMap) -> None:
    """The cluster's nodes on the bound listeners (in order), and stopping one closes its connections."""
    bound = {listener.name: listener for listener in ctx.listening.listeners}
    names = {node: f"BROKER{index}" for index, node in enumerate(cluster.node_ids, start=1)}
    cluster.listener_nodes = {name: node for node, name in names.items()}
    cluster.endpoints = {
        node: Endpoint(bound[name].advertised_host, bound[name].advertised_port) for node, name in names.items()
    }

    def close_connections(node: int) -> None:
        ctx.faults.drop_connections(names[node])

    cluster.on_stop = close_connections


def _initial_topics(topics: Mapping[str, int] | Iterable[str] | None) -> dict[str, int]:
    if topics is None:
        return {}
    if isinstance(topics, Mapping):
        return dict(topics)
    if isinstance(topics, str):
        return {topics: -1}
    return dict.fromkeys(topics, -1)


@contextlib.asynccontextmanager
async def open_broker(
    *,
    data_dir: str | None = None,
    topics: Mapping[str, int] | Iterable[str] | None = None,
    auto_create_topics: bool = True,
    host: str = "127.0.0.1",
    port: int = 0,
    brokers: int | None = None,
    **settings: Any,
) -> AsyncIterator[RunningBroker]:
    """Run a broker in the current Trio loop for the body of the `async with`.

    Options as `Broker`'s; `brokers=N` makes it a simulated cluster of N brokers (as
    `trafka.Cluster`). The broker accepts connections when the body starts and is stopped
    gracefully when it ends.
    """
    if brokers is not None:
        settings = {**settings, **cluster_listeners(brokers, host)}
    config = embedded_settings(
        data_dir=data_dir, auto_create_topics=auto_create_topics, host=host, port=port, settings=settings
    )
    adapters = default_adapters(config)
    ctx = bootstrap(config, adapters)
    if brokers is not None:
        ctx = attrs.evolve(
            ctx,
            services=attrs.evolve(
                ctx.services, cluster=ClusterMap(range(config.broker.node_id, config.broker.node_id + brokers))
            ),
        )
    try:
        async with trio.open_nursery() as nursery:
            bound = await nursery.start(run_broker, config, ctx, adapters)
            if ctx.services.cluster is not None:
                attach_cluster(ctx, ctx.services.cluster)
            running = RunningBroker(config, ctx, adapters, bound)
            try:
                for name, partitions in _initial_topics(topics).items():
                    if ctx.services.catalog.get(name) is None:
                        running.create_topic(name, partitions)
                yield running
            finally:
                request_shutdown(ctx)
    finally:
        close_broker(ctx, adapters)
