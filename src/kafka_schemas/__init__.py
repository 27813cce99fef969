"""Kafka's message schemas, in Kafka's own JSON format (the files of Kafka's
`clients/src/main/resources/common/message/` and of its internal topics' records), that kafka-python
3.0.12 does not ship: the records of `__cluster_metadata`, `__consumer_offsets`,
`__transaction_state` and `__share_group_state`, and the KIP-848, KIP-932 and KIP-714 requests and
responses. kafka-python's schema compiler turns each into a class (`load_json=kafka_schemas`).

One leaf package, shared by the broker (`adapters/filesystem/metadata_records.py`,
`adapters/kafka/wire/messages`, the telemetry room) and the operator commands (`app/ops`, which
import nothing else of the broker: `tests/unit/test_layers.py`); it holds data and imports nothing.
"""
