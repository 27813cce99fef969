"""Schemas of the records trafka keeps in Kafka's internal logs, in Kafka's JSON schema format.

They declare the field layout Kafka uses for KRaft metadata records (`__cluster_metadata`) and for
committed offsets (`__consumer_offsets`); kafka-python's schema compiler turns them into encoders and
decoders, as it does for the wire protocol.
"""
