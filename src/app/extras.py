"""The optional features and the extra that installs each (ADR 70).

`pip install trafka` is the broker, the embedded broker and its fixtures, and the CLI. The HTTP
listener (health, /metrics, the console, /testing), the Schema Registry, the client telemetry
decoder (KIP-714) and the log cleaner's compiled key scan come with extras. A feature asked for
without its extra fails at once with one line naming the extra (`MissingExtra`, a `ConfigError`);
what Kafka itself leaves out when a plugin is absent (the telemetry APIs, when no ClientTelemetry
receiver is configured) is left out the same way.

Whether an extra is there is asked with `importlib.util.find_spec`, which finds a module without
importing it: the check costs a broker nothing it would not load anyway. The search of the
import path is done once a process (a later `trafka.Broker()` asks again): an extra installed while
a process runs is seen by the next one.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from functools import cache

from .config.settings import ConfigError

# extra -> the modules it installs that trafka imports (pyproject.toml's optional dependencies).
EXTRAS: dict[str, tuple[str, ...]] = {
    "console": ("hypercorn", "starlette", "prometheus_client", "jinja2", "itsdangerous"),
    "registry": ("fastavro", "jsonschema", "grpc_tools", "google.protobuf"),
    "telemetry": ("opentelemetry.proto", "google.protobuf"),
}


class MissingExtra(ConfigError):
    """A feature was asked for whose extra is not installed; the message says which one to install."""


def missing(extra: str) -> list[str]:
    """The modules of `extra` that cannot be found."""
    absent = []
    for module in EXTRAS[extra]:
        try:
            found = _findable(module)
        except (ImportError, ValueError):  # a module set to None in sys.modules
            found = False
        if not found:
            absent.append(module)
    return absent


def _findable(module: str) -> bool:
    """Whether `module` can be imported, without importing it or its parent packages (`find_spec` of
    a dotted name imports the parents: `google.protobuf` would import `google`)."""
    if module in sys.modules:  # imported already, or set to None: known missing
        return sys.modules[module] is not None
    top = module.partition(".")[0]
    if top in sys.modules and sys.modules[top] is None:
        return False
    return _on_path(module)


@cache
def _on_path(module: str) -> bool:
    top, *rest = module.split(".")
    spec = importlib.util.find_spec(top)
    for part in rest:
        if spec is None or not spec.submodule_search_locations:
            return False
        spec = importlib.machinery.PathFinder.find_spec(part, list(spec.submodule_search_locations))
    return spec is not None


def installed(extra: str) -> bool:
    return not missing(extra)


def require(extra: str, feature: str) -> None:
    """Raise `MissingExtra` unless `extra` is installed."""
    absent = missing(extra)
    if absent:
        raise MissingExtra(
            f"{feature} needs trafka's {extra} extra: pip install 'trafka[{extra}]' (missing: {', '.join(absent)})"
        )
