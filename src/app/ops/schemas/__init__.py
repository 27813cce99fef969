"""Kafka's JSON schemas of the records in its internal topics (`__cluster_metadata`, `__consumer_offsets`,
`__transaction_state`), the ones `dump-log` decodes: copies of the broker's own
(`adapters/filesystem/schemas`), so that the operator commands read them without importing the broker.
The ConsumerGroupDescribe request and response (`adapters/kafka/wire/messages`, kafka-python has no
class for them) are copied here too, for `trafka group describe` of a KIP-848 consumer group, and so are
ShareGroupDescribe, DescribeShareGroupOffsets and AlterShareGroupOffsets, for share groups. A unit
test keeps each copy equal to the broker's file."""
