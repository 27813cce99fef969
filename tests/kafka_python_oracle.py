"""kafka-python as the oracle of the broker's encoding (ADR 92): a message the broker built, framed by
kafka-python's own class of the same name (decoded from the broker's body bytes, then encoded with
kafka-python's header and size). Tests compare the broker's frames (fast paths included) to it."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any


@functools.cache
def kafka_python_class(name: str) -> Any:
    import importlib
    import pkgutil

    import kafka.protocol

    for module in pkgutil.walk_packages(kafka.protocol.__path__, "kafka.protocol."):
        if ".old" in module.name or "generate" in module.name:
            continue
        found = getattr(importlib.import_module(module.name), name, None)
        if found is not None:
            return found
    raise LookupError(f"kafka-python has no {name}")


def kafka_python_frame(message: Any, version: int, correlation_id: int) -> bytes:
    theirs = kafka_python_class(type(message).__name__).decode(message.encode(version), version=version)
    theirs._header = None  # a decoded message has no header slot set
    theirs.API_VERSION = version
    theirs.with_header(correlation_id=correlation_id)
    return bytes(theirs.encode(header=True, framed=True))


@functools.cache
def kafka_python_class_from_trafkas_schema(name: str) -> Any:
    """kafka-python's compiler over trafka's schema file `name` (the schema the broker serves): a client
    class for a test that builds requests with kafka-python's machinery (its loader warns on 3.11+).
    kafka-python's own response classes stay registered (`kafka_python_responses_kept`)."""
    import warnings

    from kafka.protocol.api_message import ApiMessage

    import trafka.kafka_schemas as kafka_schemas

    with warnings.catch_warnings(), kafka_python_responses_kept():
        warnings.simplefilter("ignore", DeprecationWarning)
        return type(name, (ApiMessage,), {}, load_json=kafka_schemas)


@contextlib.contextmanager
def kafka_python_responses_kept() -> Iterator[None]:
    """Around compiling kafka-python message classes: kafka-python registers each response class it
    compiles as the one its clients read for that API key, process-wide, the last compiled winning. A test
    must leave the client library as it found it (a kafka-python consumer later in the same run reads
    ApiVersions with kafka-python's class, whose header is never flexible): every API key kafka-python
    declares keeps kafka-python's class; a class for an API it does not declare stays registered, so that
    its clients can read those answers."""
    from kafka.protocol.api_header import ResponseClassRegistry

    registry = ResponseClassRegistry._response_class_registry
    kept = dict(registry)
    try:
        yield
    finally:
        registry.update(kept)
