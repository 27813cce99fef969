"""Group configs (the GROUP config resource, type 32) in the KRaft metadata log (`__cluster_metadata-0`),
as Kafka 4's controller keeps them: one ConfigRecord of resource type GROUP per set key, one with a null
value per removed key. On startup they are rebuilt by replaying the log, including one Kafka wrote.
"""

from __future__ import annotations

from collections.abc import Mapping

from trafka.domain.configs import ConfigResourceType

from .internal_log import InternalLog
from .metadata_records import ConfigRecord, decode_metadata_record, encode_metadata_record


class FileGroupConfigStore:
    def __init__(self, metadata_log: InternalLog) -> None:
        self._log = metadata_log

    def load(self) -> Mapping[str, Mapping[str, str]]:
        out: dict[str, dict[str, str]] = {}
        for _, _, value in self._log.records():
            if value is None:
                continue
            record = decode_metadata_record(value)
            if not isinstance(record, ConfigRecord) or record.resource_type != ConfigResourceType.GROUP:
                continue
            configs = out.setdefault(record.resource_name, {})
            if record.value is None:
                configs.pop(record.name, None)
                if not configs:
                    del out[record.resource_name]
            else:
                configs[record.name] = record.value
        return out

    def group_configs_changed(self, group_id: str, changes: Mapping[str, str | None]) -> None:
        if not changes:
            return
        records = [
            ConfigRecord(version=0, resource_type=ConfigResourceType.GROUP, resource_name=group_id, name=k, value=v)
            for k, v in sorted(changes.items())
        ]
        self._log.append([(None, encode_metadata_record(r, 0)) for r in records])
