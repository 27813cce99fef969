"""The embeddable broker: a real Kafka broker inside the test process, for other projects' tests.

    with trafka.Broker(topics={"orders": 3}) as broker:
        producer = Producer({"bootstrap.servers": broker.bootstrap_servers})

`Broker` runs the same broker as `trafka serve` (the same wiring and run loop, `runtime.run_broker`)
on 127.0.0.1 and an ephemeral port, in memory unless given a `data_dir`, in a background thread's Trio
loop (one loop for every broker of the process, ADR 126), so sync, asyncio and Trio tests all use it. Its helpers (`records`, `committed`,
`create_topic`, the fault switches) run inside that loop through `trio.from_thread`, so they see the
broker's state exactly as a request would, without locks. From Trio code, `open_broker` runs the same
broker in the caller's loop and yields a `RunningBroker` whose helpers are plain calls.

Every broker has its own state: many can run in one process at once.

The package: `running.py` (`RunningBroker`, its helpers), `opening.py` (`open_broker`, the settings
and the simulated cluster's listeners), `threaded.py` (`Broker`, `Cluster`), and the test helpers that
go with them: `intercepting.py` (`broker.intercept`), `testing_http.py` (the `/testing/` controls of
`trafka serve --testing`) and `pytest_plugin.py` (the fixtures). Imported lazily, so that loading the
pytest plugin costs nothing until a fixture is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .opening import attach_cluster, cluster_listeners, embedded_settings, open_broker
    from .running import BrokerError, Record, RunningBroker
    from .threaded import Broker, Cluster

__all__ = [
    "Broker",
    "BrokerError",
    "Cluster",
    "Record",
    "RunningBroker",
    "attach_cluster",
    "cluster_listeners",
    "embedded_settings",
    "open_broker",
]

_WHERE = {
    "Broker": "threaded",
    "Cluster": "threaded",
    "BrokerError": "running",
    "Record": "running",
    "RunningBroker": "running",
    "attach_cluster": "opening",
    "cluster_listeners": "opening",
    "embedded_settings": "opening",
    "open_broker": "opening",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
