"""The HTTP listener: health endpoints, Prometheus metrics and the web console, on hypercorn's Trio worker.

`build_app` makes the Starlette application from `BrokerView` (the domain services and facts about the
broker, handed in by the composition root); `serve_http` runs it in the caller's nursery; `run_listener` does both and samples the charts' history. This adapter
never imports another adapter: what it knows of the Kafka listener comes in through `BrokerView`,
including, when the Kafka listeners have security, how to check a password and the authorizer
(`ConsoleSecurity`: the console's login and ACLs, the Schema Registry's Basic authentication).
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import build_app
    from .server import HttpBindError, run_listener, serve_http
    from .view import BrokerInfo, BrokerView, ConsoleSecurity, HttpOptions, Readiness

# Each name loads its module on first use (PEP 562): `HttpBindError` or the view's types do not bring
# Starlette, hypercorn and the console's templates with them (ADR 70).
_HOME = {
    "build_app": ".app",
    "HttpBindError": ".server",
    "run_listener": ".server",
    "serve_http": ".server",
    "BrokerInfo": ".view",
    "BrokerView": ".view",
    "ConsoleSecurity": ".view",
    "HttpOptions": ".view",
    "Readiness": ".view",
}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        return getattr(import_module(_HOME[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BrokerInfo",
    "HttpBindError",
    "HttpOptions",
    "BrokerView",
    "ConsoleSecurity",
    "Readiness",
    "build_app",
    "run_listener",
    "serve_http",
]
