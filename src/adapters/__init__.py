"""Implementations of the domain's ports: the Kafka wire protocol, storage, compression."""
