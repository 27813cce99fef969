"""The registry's rules (domain) with the Avro format: ids, versions, deletes, levels, modes, replay."""

from __future__ import annotations

import json

import pytest

from trafka.adapters.schema_registry import AvroFormat
from trafka.domain.schema_registry import (
    CompatibilityLevel,
    Mode,
    RegistryEntry,
    RegistryError,
    Schema,
    SchemaReference,
    SchemaRegistry,
    SchemaType,
)


def avro(fields: list[dict], name: str = "User") -> Schema:
    return Schema(json.dumps({"type": "record", "name": name, "fields": fields}))


V1 = avro([{"name": "id", "type": "long"}])
V2 = avro([{"name": "id", "type": "long"}, {"name": "email", "type": ["null", "string"], "default": None}])
NO_DEFAULT = avro([{"name": "id", "type": "long"}, {"name": "email", "type": "string"}])


class Store:
    """The registry and its log: every change is written, then applied, as the service does."""

    def __init__(self) -> None:
        self.log: list[RegistryEntry] = []
        self.registry = SchemaRegistry({SchemaType.AVRO: AvroFormat()})

    def commit(self, result):
        value, entries = result
        for entry in entries:
            self.log.append(entry)
            self.registry.apply(entry)
        return value

    def register(self, subject: str, schema: Schema):
        return self.commit(self.registry.register(subject, schema))

    def replayed(self) -> SchemaRegistry:
        fresh = SchemaRegistry({SchemaType.AVRO: AvroFormat()})
        for entry in self.log:
            fresh.apply(RegistryEntry.from_json(entry.key.to_json(), entry.value_json()))
        return fresh


def error_code(call) -> int:
    with pytest.raises(RegistryError) as caught:
        call()
    return caught.value.error_code


def test_ids_are_global_and_the_same_schema_keeps_its_id():
    s = Store()
    first = s.register("a-value", V1)
    again = s.register("a-value", Schema(json.dumps(json.loads(V1.text), indent=4)))
    other_subject = s.register("b-value", V1)
    second = s.register("a-value", V2)
    assert (first.schema_id, first.version) == (1, 1)
    assert again == first and len(s.log) == 3
    assert (other_subject.schema_id, other_subject.version) == (1, 1)
    assert (second.schema_id, second.version) == (2, 2)
    assert s.registry.subjects() == ["a-value", "b-value"]
    assert s.registry.subject_versions_of_id(1) == [("a-value", 1), ("b-value", 1)]


def test_a_changed_default_is_a_new_schema():
    s = Store()
    with_default = avro([{"name": "id", "type": "long", "default": 1}])
    assert s.register("x", V1).schema_id == 1
    assert s.register("x", with_default).schema_id == 2


def test_default_level_is_backward_and_rejects_a_field_without_default():
    s = Store()
    s.register("x", V1)
    assert s.registry.compatibility("x") is CompatibilityLevel.BACKWARD
    assert error_code(lambda: s.registry.register("x", NO_DEFAULT)) == 40901
    s.commit(s.registry.set_config("x", "NONE"))
    assert s.register("x", NO_DEFAULT).version == 2


def test_forward_and_full_levels():
    s = Store()
    s.register("x", V2)
    s.commit(s.registry.set_config(None, "FORWARD"))
    # Removing a field with a default: old readers still read new data (their default fills it).
    assert s.register("x", V1).version == 2
    s.commit(s.registry.set_config("x", "FULL"))
    assert error_code(lambda: s.registry.register("x", NO_DEFAULT)) == 40901
    # Already a live version: its id and version come back, nothing is written.
    assert s.register("x", V2).version == 1


def test_transitive_levels_check_every_live_version():
    s = Store()
    s.commit(s.registry.set_config("x", "NONE"))
    s.register("x", NO_DEFAULT)
    s.register("x", V1)
    s.commit(s.registry.set_config("x", "FORWARD"))
    candidate = avro([{"name": "id", "type": "long"}, {"name": "other", "type": "int", "default": 0}])
    assert s.registry.incompatibilities("x", candidate) == []
    s.commit(s.registry.set_config("x", "FORWARD_TRANSITIVE"))
    assert s.registry.incompatibilities("x", candidate) != []
    assert error_code(lambda: s.registry.register("x", candidate)) == 40901


def test_versions_lookup_and_errors():
    s = Store()
    s.register("x", V1)
    s.register("x", V2)
    assert s.registry.version("x", "latest").version == 2
    assert s.registry.version("x", -1).version == 2
    assert s.registry.lookup("x", V1).version == 1
    assert error_code(lambda: s.registry.version("y", 1)) == 40401
    assert error_code(lambda: s.registry.version("x", 3)) == 40402
    assert error_code(lambda: s.registry.version("x", "zero")) == 42202
    assert error_code(lambda: s.registry.version("x", 0)) == 42202
    assert error_code(lambda: s.registry.lookup("y", V1)) == 40401
    assert error_code(lambda: s.registry.lookup("x", NO_DEFAULT)) == 40403
    assert error_code(lambda: s.registry.schema_by_id(9)) == 40403
    assert error_code(lambda: s.registry.register("x", Schema("{not json"))) == 42201
    assert error_code(lambda: s.registry.register("x", Schema('{"type": "nope"}'))) == 42201
    assert error_code(lambda: s.registry.set_config(None, "SIDEWAYS")) == 42203
    assert error_code(lambda: s.registry.set_mode(None, "WRITEONLY")) == 42204
    assert error_code(lambda: s.registry.compatibility("x", default_to_global=False)) == 40408


def test_soft_then_hard_delete_of_a_version():
    s = Store()
    s.register("x", V1)
    s.register("x", V2)
    assert error_code(lambda: s.registry.delete_version("x", 1, permanent=True)) == 40407
    assert s.commit(s.registry.delete_version("x", 1, permanent=False)) == 1
    assert s.registry.versions("x") == [2]
    assert s.registry.versions("x", deleted=True) == [1, 2]
    assert error_code(lambda: s.registry.version("x", 1)) == 40402
    assert s.registry.version("x", 1, deleted=True).deleted
    assert error_code(lambda: s.registry.delete_version("x", 1, permanent=False)) == 40406
    assert s.commit(s.registry.delete_version("x", 1, permanent=True)) == 1
    assert s.registry.versions("x", deleted=True) == [2]
    # The id stays known: schemas by id outlive the versions that held them, as in Confluent.
    assert s.registry.parsed_by_id(1).schema == V1


def test_soft_then_hard_delete_of_a_subject_and_versions_continue():
    s = Store()
    s.register("x", V1)
    s.register("x", V2)
    s.commit(s.registry.set_config("x", "NONE"))
    assert error_code(lambda: s.registry.delete_subject("x", permanent=True)) == 40405
    assert s.commit(s.registry.delete_subject("x", permanent=False)) == [1, 2]
    assert s.registry.subjects() == [] and s.registry.subjects(deleted=True) == ["x"]
    assert error_code(lambda: s.registry.versions("x")) == 40401
    assert error_code(lambda: s.registry.delete_subject("x", permanent=False)) == 40404
    # Registering again after a soft delete continues the version numbers, and reuses the id.
    again = s.register("x", V1)
    assert (again.version, again.schema_id) == (3, 1)
    s.commit(s.registry.delete_subject("x", permanent=False))
    assert s.commit(s.registry.delete_subject("x", permanent=True)) == [1, 2, 3]
    assert s.registry.subjects(deleted=True) == []
    assert error_code(lambda: s.registry.compatibility("x", default_to_global=False)) == 40408
    assert error_code(lambda: s.registry.delete_subject("x", permanent=False)) == 40401
    fresh = s.register("x", V2)
    assert (fresh.version, fresh.schema_id) == (1, 2)


def test_modes():
    s = Store()
    s.register("x", V1)
    assert s.registry.mode(None) is Mode.READWRITE
    s.commit(s.registry.set_mode("x", "READONLY"))
    assert error_code(lambda: s.registry.register("x", V2)) == 42205
    assert error_code(lambda: s.registry.delete_version("x", 1, permanent=False)) == 42205
    assert error_code(lambda: s.registry.set_mode(None, "IMPORT")) == 42205
    assert error_code(lambda: s.registry.mode("y", default_to_global=False)) == 40409
    s.commit(s.registry.delete_mode("x"))
    assert s.registry.mode("x") is Mode.READWRITE


def test_import_mode_keeps_the_given_ids():
    s = Store()
    s.commit(s.registry.set_mode(None, "IMPORT"))
    imported = s.commit(s.registry.register("x", V1, schema_id=42))
    assert (imported.schema_id, imported.version) == (42, 1)
    s.commit(s.registry.set_mode(None, "READWRITE"))
    assert error_code(lambda: s.registry.register("x", V2, schema_id=50)) == 42205
    assert s.register("x", V2).schema_id == 43


def test_references_resolve_named_types_from_another_subject():
    s = Store()
    address = Schema(json.dumps({"type": "record", "name": "Address", "fields": [{"name": "city", "type": "string"}]}))
    s.register("address", address)
    user = Schema(
        json.dumps({"type": "record", "name": "User", "fields": [{"name": "home", "type": "Address"}]}),
        references=(SchemaReference("Address", "address", 1),),
    )
    registered = s.register("user", user)
    assert registered.schema_id == 2
    assert error_code(lambda: s.registry.register("other", Schema(user.text))) == 42201
    assert error_code(lambda: s.registry.delete_subject("address", permanent=False)) == 42206


def test_replaying_the_log_rebuilds_the_same_state():
    s = Store()
    s.register("x", V1)
    s.register("x", V2)
    s.register("y", V1)
    s.commit(s.registry.delete_version("x", 1, permanent=False))
    s.commit(s.registry.delete_subject("y", permanent=False))
    s.commit(s.registry.set_config(None, "FULL"))
    s.commit(s.registry.set_mode("x", "READONLY"))
    fresh = s.replayed()
    assert fresh.subjects(deleted=True) == ["x", "y"] and fresh.subjects() == ["x"]
    assert fresh.versions("x") == [2]
    assert fresh.version("x", 2).schema_id == 2
    assert fresh.compatibility("x") is CompatibilityLevel.FULL
    assert fresh.mode("x") is Mode.READONLY
    assert fresh.max_schema_id() == 2


def test_log_keys_and_values_are_confluents():
    s = Store()
    s.register("x", V1)
    s.commit(s.registry.set_config("x", "FULL"))
    s.commit(s.registry.delete_subject("x", permanent=False))
    assert [e.key.to_json() for e in s.log] == [
        b'{"keytype":"SCHEMA","subject":"x","version":1,"magic":1}',
        b'{"keytype":"CONFIG","subject":"x","magic":0}',
        b'{"keytype":"DELETE_SUBJECT","subject":"x","magic":0}',
    ]
    assert s.log[0].value == {"subject": "x", "version": 1, "id": 1, "schema": V1.text, "deleted": False}
    assert s.log[1].value == {"subject": "x", "compatibilityLevel": "FULL"}
    assert s.log[2].value == {"subject": "x", "version": 1}


def test_a_confluent_log_with_unknown_key_types_replays():
    registry = SchemaRegistry({SchemaType.AVRO: AvroFormat()})
    registry.apply(RegistryEntry.from_json(b'{"keytype":"NOOP","magic":0}', None))
    registry.apply(
        RegistryEntry.from_json(
            b'{"keytype":"SCHEMA","subject":"t-value","version":1,"magic":1}',
            b'{"subject":"t-value","version":1,"id":7,"schemaType":"AVRO","schema":"\\"string\\"","deleted":false}',
        )
    )
    assert registry.version("t-value", 1).schema_id == 7
    assert registry.max_schema_id() == 7
