"""The Schema Registry's adapter: schema formats (the domain's `SchemaFormat` port), the `_schemas`
topic it is stored in, and the service the REST API calls."""

from .avro import AvroFormat
from .json_schema import JsonSchemaFormat
from .protobuf import ProtobufFormat
from .service import RegistryService
from .topic import SCHEMAS_TOPIC, SchemasTopic

__all__ = ["SCHEMAS_TOPIC", "AvroFormat", "JsonSchemaFormat", "ProtobufFormat", "RegistryService", "SchemasTopic"]
