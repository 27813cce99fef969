"""The registry stored in `_schemas` through the broker's produce path (in-memory adapter)."""

from __future__ import annotations

import json

from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from trafka.adapters.schema_registry import AvroFormat, RegistryService, SchemasTopic
from trafka.domain.batch import iter_batches
from trafka.domain.schema_registry import CompatibilityLevel, Schema, SchemaRegistry, SchemaType
from trafka.domain.topics import TopicPartition

V1 = Schema(json.dumps({"type": "record", "name": "U", "fields": [{"name": "id", "type": "long"}]}))
TP = TopicPartition("_schemas", 0)


def service(cluster) -> RegistryService:
    topic = SchemasTopic(cluster.catalog, cluster.replicas, lambda: 1_700_000_000_000)
    return RegistryService(SchemaRegistry({SchemaType.AVRO: AvroFormat()}), topic)


def produce(cluster, records: list[tuple[bytes, bytes | None]]) -> None:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0,
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=2**31 - 1,
    )
    for delta, (key, value) in enumerate(records):
        builder.append(delta, timestamp=0, key=key, value=value, headers=[])
    assert cluster.replicas.produce(TP, bytes(builder.build()), 0).error.name == "NONE"


def test_the_first_write_creates_a_compacted_schemas_topic(cluster):
    registry = service(cluster)
    assert cluster.catalog.get("_schemas") is None
    version = registry.change(lambda r: r.register("t-value", V1))
    topic = cluster.catalog.get("_schemas")
    assert topic.partition_count == 1 and topic.configs["cleanup.policy"] == "compact"
    assert version.schema_id == 1
    assert cluster.replicas.watermarks(TP)[1] == 1


def test_a_new_service_over_the_same_log_serves_the_same_registry(cluster):
    first = service(cluster)
    first.change(lambda r: r.register("t-value", V1))
    first.change(lambda r: r.set_config(None, "FULL"))
    first.change(lambda r: r.delete_subject("t-value", permanent=False))
    again = service(cluster).current()
    assert again.subjects() == [] and again.subjects(deleted=True) == ["t-value"]
    assert again.compatibility(None) is CompatibilityLevel.FULL
    assert again.parsed_by_id(1).schema == V1


def test_records_produced_by_clients_are_served_and_garbage_is_skipped(cluster):
    registry = service(cluster)
    registry.change(lambda r: r.set_config(None, "NONE"))
    produce(
        cluster,
        [
            (b"not json", b"{}"),
            (b'{"keytype":"NOOP","magic":0}', None),
            (
                b'{"keytype":"SCHEMA","subject":"c-value","version":1,"magic":1}',
                b'{"subject":"c-value","version":1,"id":40,"schema":"\\"string\\"","deleted":false}',
            ),
            (b'{"keytype":"CONFIG","subject":"c-value","magic":0}', b'{"compatibilityLevel":"SIDEWAYS"}'),
        ],
    )
    state = registry.current()
    assert state.version("c-value", 1).schema_id == 40
    assert state.compatibility("c-value") is CompatibilityLevel.NONE
    assert registry.change(lambda r: r.register("d-value", V1)).schema_id == 41


def test_a_hard_delete_writes_tombstones(cluster):
    registry = service(cluster)
    registry.change(lambda r: r.register("t-value", V1))
    registry.change(lambda r: r.delete_version("t-value", 1, permanent=False))
    registry.change(lambda r: r.delete_version("t-value", 1, permanent=True))
    raw = cluster.replicas.fetch(TP, 0, 1 << 20, True).records
    values = [rec.value for pos, h in iter_batches(raw) for rec in DefaultRecordBatch(bytes(raw[pos : pos + h.size]))]
    assert values[-1] is None
    assert service(cluster).current().subjects(deleted=True) == []


def test_the_registry_keeps_to_its_layers():
    """The domain imports the standard library and attrs; the adapter no other adapter, and the
    HTTP adapter does not know the registry (app/wiring/http hands it the routes)."""
    import ast
    from pathlib import Path

    src = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").exists()) / "src"
    domain_modules = sorted((src / "domain" / "schema_registry").glob("*.py"))
    adapter_modules = sorted((src / "adapters" / "schema_registry").glob("*.py"))
    assert domain_modules and adapter_modules  # the folders as named today (once `schemas/`)
    for module in domain_modules:
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert name.split(".")[0] in {"__future__", "attrs", "collections", "enum", "json", "typing"} or (
                    name.startswith("trafka.domain.")
                ), (
                    module,
                    name,
                )
    for module in adapter_modules:
        text = module.read_text()
        assert "trafka.adapters." not in text and "from .." not in text, module
    for module in (src / "adapters" / "http").rglob("*.py"):
        assert "schemas" not in module.read_text().replace("filesystem.schemas", ""), module


def test_the_brokers_registry_wakes_fetches_parked_on_schemas_and_drops_the_kept_append(cluster):
    """The wired registry's write tells the purgatory, as a Produce does (ADR 127): a Fetch parked on
    `_schemas` wakes, and the append's bytes kept for parked Fetches are dropped after it."""
    from trafka.adapters.kafka.runtime.purgatory import Purgatory
    from trafka.app.wiring.schema_registry import build_schema_registry

    appends = Purgatory()
    registry = build_schema_registry(cluster.catalog, cluster.replicas, lambda: 1_700_000_000_000, appends)
    parked = appends.waiter([TP])
    registry.change(lambda r: r.set_config(None, "FULL"))
    assert parked.is_set()
    assert cluster.replicas._appended == {}
