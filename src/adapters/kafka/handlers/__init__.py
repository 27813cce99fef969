"""One module per API family; `build_registry` registers them all."""

from __future__ import annotations

from ..api import HandlerRegistry
from . import (
    acls,
    alter,
    api_versions,
    cluster_admin,
    describe,
    fetch,
    groups,
    init_producer_id,
    list_offsets,
    metadata,
    offsets,
    produce,
    sasl,
    topics_admin,
    transactions,
)

MODULES = (
    api_versions,
    metadata,
    produce,
    fetch,
    list_offsets,
    topics_admin,
    describe,
    alter,
    groups,
    offsets,
    init_producer_id,
    transactions,
    cluster_admin,
    acls,
    sasl,
)


def build_registry() -> HandlerRegistry:
    registry = HandlerRegistry()
    for module in MODULES:
        module.register(registry)
    return registry


__all__ = ["build_registry"]
