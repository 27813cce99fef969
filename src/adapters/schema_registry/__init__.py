"""The Schema Registry's adapter: schema formats (the domain's `SchemaFormat` port), the `_schemas`
topic it is stored in, and the service the REST API calls.

`ProtobufFormat` is imported on first use: protoc and protobuf's runtime cost a broker that never
sees a Protobuf schema some 25 MiB of memory."""

from typing import Any

from .avro import AvroFormat
from .json_schema import JsonSchemaFormat
from .schemas_topic import SCHEMAS_TOPIC, SchemasTopic
from .service import RegistryService


def __getattr__(name: str) -> Any:
    if name == "ProtobufFormat":
        from .protobuf import ProtobufFormat

        return ProtobufFormat
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["SCHEMAS_TOPIC", "AvroFormat", "JsonSchemaFormat", "ProtobufFormat", "RegistryService", "SchemasTopic"]
