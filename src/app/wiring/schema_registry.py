"""The broker's Schema Registry, wired: built on first use over the `_schemas` topic, with every schema
format. A leaf of the wiring (bootstrap makes it, the HTTP listener serves it), and lazy: importing it
loads none of the registry's libraries (Avro, JSON Schema, protoc) nor the registry's domain."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

import attrs

from trafka.adapters.kafka.context import BrokerContext
from trafka.adapters.kafka.services import AppendNotifier
from trafka.domain.catalog import TopicCatalog
from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.replica_manager import ReplicaManager
from trafka.domain.topics import TopicPartition

from .. import extras

if TYPE_CHECKING:
    from trafka.adapters.schema_registry.service import RegistryService
    from trafka.domain.schema_registry import SchemaFormat, SchemaType


@attrs.define
class SchemaRegistryOnFirstUse:
    """The broker's Schema Registry, built the first time a topic with schema validation is produced to
    (or the HTTP listener serves it), so a broker that uses neither never imports its libraries
    (Avro, JSON Schema, protoc): they would add tens of MiB to every broker's memory. Made once per
    broker by `bootstrap`; the REST routes and broker-side validation share it."""

    _build: Callable[[], RegistryService]
    _service: RegistryService | None = None

    def service(self) -> RegistryService:
        if self._service is None:
            self._service = self._build()
        return self._service

    def schema_ids(self, subject: str) -> Collection[int]:
        """The subject's schema ids. Without the registry extra (a topic configured for validation by a
        full install, served by a light one), INVALID_RECORD with what to install, as Confluent Server
        refuses a record it cannot validate, instead of failing inside the produce path."""
        try:
            service = self.service()
        except (extras.MissingExtra, ImportError) as exc:
            raise KafkaError(
                ErrorCode.INVALID_RECORD,
                f"Broker-side schema validation of subject {subject} needs the Schema Registry, which this "
                f"broker was installed without: pip install 'trafka[registry]' ({exc})",
            ) from None
        return service.schema_ids(subject)


def _avro_format() -> SchemaFormat:
    from trafka.adapters.schema_registry.avro import AvroFormat  # the registry's libraries, on first use

    return AvroFormat()


def _json_schema_format() -> SchemaFormat:
    from trafka.adapters.schema_registry.json_schema import JsonSchemaFormat

    return JsonSchemaFormat()


def _protobuf_format() -> SchemaFormat:
    from trafka.adapters.schema_registry.protobuf import (
        ProtobufFormat,  # protoc is loaded with the registry, not the broker
    )

    return ProtobufFormat()


def schema_formats() -> dict[SchemaType, Callable[[], SchemaFormat]]:
    """Every schema format the registry serves, each made on first use."""
    from trafka.domain.schema_registry import SchemaType

    return {SchemaType.AVRO: _avro_format, SchemaType.JSON: _json_schema_format, SchemaType.PROTOBUF: _protobuf_format}


def schema_registry(ctx: BrokerContext) -> RegistryService:
    """The broker's registry over its `_schemas` topic (read on first use), made once per broker by
    `bootstrap`: the REST API and broker-side schema validation (the replica manager's admission's `schema_ids`)
    share it."""
    registry = ctx.services.replicas.admission.schema_ids
    if not isinstance(registry, SchemaRegistryOnFirstUse):
        raise TypeError("this broker was not wired with a schema registry")
    return registry.service()


def build_schema_registry(
    catalog: TopicCatalog, replicas: ReplicaManager, clock_ms: Callable[[], int], appends: AppendNotifier
) -> RegistryService:
    """A registry over the broker's `_schemas` topic, with every schema format."""
    from trafka.adapters.schema_registry import RegistryService, SchemasTopic
    from trafka.adapters.schema_registry.offloop import SHARED_WORKER, OffLoopFormat
    from trafka.domain.schema_registry import SchemaRegistry

    extras.require("registry", "the Schema Registry")
    formats = [OffLoopFormat(new(), new) for new in schema_formats().values()]  # parsing in a worker process

    def appended(tp: TopicPartition) -> None:
        appends.notify((tp,))  # a Fetch parked on `_schemas` wakes, as after a Produce
        replicas.forget_appended()

    topic = SchemasTopic(catalog, replicas, clock_ms, appended)
    registry = SchemaRegistry({fmt.schema_type: fmt for fmt in formats})
    return RegistryService(registry, topic, formats, SHARED_WORKER)
