"""trafka's schema-driven codec against kafka-python 3's for the same Kafka JSON schemas (ADR 71): for
every schema given and every valid version, hypothesis draws a message; trafka's encoding must be what
kafka-python decodes and re-encodes to the same bytes, and trafka must decode its own bytes back to the
message. kafka-python is the oracle here only, in the tests.

Two sets of schemas: every request and response trafka carries (`trafka.kafka_schemas`, compiled by
kafka-python from trafka's files), and every request and response kafka-python ships (its copies of
Kafka's schema files, against its own classes): every API at every version kafka-python knows. And
the classes the broker's rooms use (`wire/messages`, ADR 92): what they decode reads as kafka-python's
objects read (same attributes, same values) and encodes back to the same bytes."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trafka.kafka_schemas as kafka_schemas
from tests.kafka_python_oracle import kafka_python_class_from_trafkas_schema
from trafka.schema_codec import Field, Schema, SchemaError, messages

MESSAGES = Path(kafka_schemas.__file__).parent  # the one schema package
# the requests and responses trafka carries (the package also holds the records dump-log decodes)
SCHEMAS = sorted(p for p in MESSAGES.glob("*.json") if p.stem.endswith(("Request", "Response")))
assert len(SCHEMAS) >= 120, MESSAGES  # every API the broker serves, both directions


def _kafka_python_class_of(path: Path) -> type:
    """kafka-python's class compiled from trafka's file, leaving kafka-python's own classes registered."""
    return kafka_python_class_from_trafkas_schema(path.stem)


def _kafka_python_classes() -> dict[str, type]:
    import importlib
    import pkgutil

    import kafka.protocol
    from kafka.protocol.api_message import ApiMessage

    classes: dict[str, type] = {}
    for module in pkgutil.walk_packages(kafka.protocol.__path__, "kafka.protocol."):
        if ".old" in module.name or "generate" in module.name:
            continue
        for name, value in vars(importlib.import_module(module.name)).items():
            if isinstance(value, type) and issubclass(value, ApiMessage) and value is not ApiMessage:
                classes.setdefault(name, value)
    return classes


KAFKA_PYTHON = _kafka_python_classes()
KAFKA_PYTHON_SCHEMAS = sorted(
    path
    for path in (Path(__import__("kafka.protocol").protocol.__file__).parent / "schemas" / "resources").glob("*.json")
    if path.stem in KAFKA_PYTHON
)

_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


def scalar(type_: str, nullable: bool) -> st.SearchStrategy:
    if type_ in _RANGES:
        low, high = _RANGES[type_]
        base: st.SearchStrategy = st.integers(low, high)
    elif type_ == "float64":
        base = st.floats(allow_nan=False)
    elif type_ == "bool":
        base = st.booleans()
    elif type_ == "uuid":
        base = st.uuids() | st.just(uuid.UUID(int=0))
    elif type_ == "string":
        base = st.text(max_size=12)
    elif type_ in ("bytes", "records"):
        base = st.binary(max_size=24)
    else:
        raise AssertionError(type_)
    return base | st.none() if nullable else base


def struct(fields: tuple[Field, ...], version: int) -> st.SearchStrategy:
    return st.fixed_dictionaries({f.name: field(f, version) for f in fields if version in f.versions})


def field(f: Field, version: int) -> st.SearchStrategy:
    nullable = version in f.nullable
    if f.is_array:
        element = struct(f.fields, version) if f.is_struct else scalar(f.element, False)
        items = st.lists(element, max_size=3)
        return items | st.none() if nullable else items
    if f.is_struct:
        inner = struct(f.fields, version)
        return inner | st.none() if nullable else inner
    return scalar(f.type, nullable)


def kafka_python_round_trip(cls: type, data: bytes, version: int) -> tuple[bytes, int]:
    """kafka-python's compiled decoder and encoder for the class it built from the same schema: its
    encoding of what it decoded from `data`, and how many bytes it read."""
    from kafka.protocol.api_message import EncodeBufferPool

    flexible = cls.flexible_version_q(version)
    decoded, end = cls._struct.compiled_decode_from(version, compact=flexible, tagged=flexible, data_class=cls[None])(
        memoryview(data), 0
    )
    with EncodeBufferPool.acquire() as out:
        cls._struct.compiled_encode_into(version, compact=flexible, tagged=flexible)(decoded, out)
        return bytes(out.result()), end


def check(schema: Schema, cls: type, data: st.DataObject) -> None:
    high = schema.valid.high
    assert high is not None
    version = data.draw(st.integers(schema.valid.low, high), label="version")
    value = data.draw(struct(schema.fields, version), label="message")
    ours = schema.encode(value, version)
    assert kafka_python_round_trip(cls, ours, version) == (ours, len(ours))
    assert schema.decode(ours, version) == value


@pytest.mark.parametrize("path", SCHEMAS, ids=[p.stem for p in SCHEMAS])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_byte_identical_to_kafka_python_for_trafkas_schemas(path, data):
    schema = Schema.load(path)
    check(schema, _kafka_python_class_of(path), data)


def _plain(value: object) -> object:
    """A decoded kafka-python or trafka object as nested dicts and lists."""
    to_dict = getattr(value, "to_dict", None)
    if to_dict is not None:
        fields = to_dict(json=False) if "json" in to_dict.__code__.co_varnames else to_dict()
        return {k: _plain(v) for k, v in fields.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, set):
        return sorted(value)
    if isinstance(value, memoryview):
        return bytes(value)
    return value


@pytest.mark.parametrize("path", SCHEMAS, ids=[p.stem for p in SCHEMAS])
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_rooms_classes_read_as_kafka_pythons_and_encode_the_same_bytes(path, data):
    schema = Schema.load(path)
    ours = messages.compiled(schema.name)
    # kafka-python's own class where it ships one with every version (with its patches: authorized
    # operations as sets), else its compiler over trafka's file (Kafka 4.4's newer versions)
    shipped = KAFKA_PYTHON.get(schema.name)
    oracle = shipped if shipped is not None and shipped.max_version >= (schema.valid.high or 0) else None
    oracle = oracle or _kafka_python_class_of(path)
    high = schema.valid.high
    assert high is not None
    version = data.draw(st.integers(schema.valid.low, high), label="version")
    encoded = schema.encode(data.draw(struct(schema.fields, version), label="message"), version)
    decoded = ours.decode(encoded, version)
    assert decoded.encode(version) == encoded
    flexible = oracle.flexible_version_q(version)
    theirs, _ = oracle._struct.compiled_decode_from(
        version, compact=flexible, tagged=flexible, data_class=oracle[None]
    )(memoryview(encoded), 0)
    mine = _plain(decoded)
    assert mine == _within(_plain(theirs), mine)


def _within(theirs: object, mine: object) -> object:
    """kafka-python's decoded values, keeping only the fields of the version (the ones trafka sets)."""
    if isinstance(theirs, dict) and isinstance(mine, dict):
        assert set(mine) <= set(theirs), set(mine) - set(theirs)
        return {k: _within(theirs[k], mine[k]) for k in mine}
    if isinstance(theirs, list) and isinstance(mine, list) and len(theirs) == len(mine):
        return [_within(a, b) for a, b in zip(theirs, mine, strict=True)]
    return theirs


def test_every_schema_has_its_class_declared_for_mypy():
    from trafka.schema_codec import _declared

    declared = {name for name, value in vars(_declared).items() if isinstance(value, type) and name != "Any"}
    assert declared == {p.stem for p in MESSAGES.glob("*.json")}


def test_every_api_kafka_python_ships_is_covered():
    assert len(KAFKA_PYTHON_SCHEMAS) >= 100  # every request and response, both directions


@pytest.mark.parametrize("path", KAFKA_PYTHON_SCHEMAS, ids=[p.stem for p in KAFKA_PYTHON_SCHEMAS])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_byte_identical_to_kafka_python_for_every_api(path, data):
    schema = Schema.load(path)
    check(schema, KAFKA_PYTHON[schema.name], data)


def test_a_truncated_or_padded_message_is_refused():
    schema = Schema.load(MESSAGES / "ShareGroupHeartbeatRequest.json")
    encoded = schema.encode({"GroupId": "g", "MemberId": "m", "MemberEpoch": 0}, 1)
    with pytest.raises(SchemaError, match="ends inside"):
        schema.decode(encoded[:-3], 1)
    with pytest.raises(SchemaError, match="left over"):
        schema.decode(encoded + b"\x00", 1)
    with pytest.raises(SchemaError, match="no version 9"):
        schema.encode({}, 9)
