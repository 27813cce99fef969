"""Schema formats for the Schema Registry: the domain's `SchemaFormat` port, one module per type."""

from .avro import AvroFormat

__all__ = ["AvroFormat"]
