"""A package's names imported from their modules on first use (PEP 562: a module's `__getattr__`), so
importing a package for one light name does not load its heavy modules (ADRs 110 and 118)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`: each name of `homes` taken from its module (`homes[name]`,
    a module of the package) when it is first asked for."""

    def __getattr__(name: str) -> Any:
        module = homes.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return __getattr__
