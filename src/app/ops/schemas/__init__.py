"""Kafka's JSON schemas of the records in its internal topics (`__cluster_metadata`, `__consumer_offsets`,
`__transaction_state`), the ones `dump-log` decodes: copies of the broker's own
(`adapters/filesystem/schemas`), so that the operator commands read them without importing the broker.
A unit test keeps each copy equal to the broker's file."""
