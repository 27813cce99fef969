"""Kafka's message schemas, in Kafka's own JSON format (the files of Kafka's
`clients/src/main/resources/common/message/` and of its internal topics' records): every request and
response the broker serves (as kafka-python 3.0.12 ships them, their `about` texts left out, ADR 92),
the KIP-848, KIP-932 and KIP-714 messages and Kafka 4.4's newer versions it does not ship, and the
records of `__cluster_metadata`, `__consumer_offsets`, `__transaction_state` and `__share_group_state`.
`trafka.schema_codec` compiles them.

One leaf package, shared by the broker (`trafka.schema_codec`, the filesystem's records) and the
operator commands (`app/ops`, which import nothing else of the broker: `tests/unit/test_layers.py`);
it holds data and imports nothing.
"""
