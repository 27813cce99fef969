"""Group configs (the GROUP config resource) kept in memory, for tests and `--memory`."""

from __future__ import annotations

from collections.abc import Mapping


class MemoryGroupConfigStore:
    def __init__(self) -> None:
        self.configs: dict[str, dict[str, str]] = {}

    def load(self) -> Mapping[str, Mapping[str, str]]:
        return {group_id: dict(configs) for group_id, configs in self.configs.items()}

    def group_configs_changed(self, group_id: str, changes: Mapping[str, str | None]) -> None:
        configs = self.configs.setdefault(group_id, {})
        for name, value in changes.items():
            if value is None:
                configs.pop(name, None)
            else:
                configs[name] = value
        if not configs:
            del self.configs[group_id]
