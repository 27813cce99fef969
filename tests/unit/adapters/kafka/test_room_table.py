"""ApiVersions is computed from the registry (rule 2) although the rooms load on first use (ADR 110): the
table it reads (`apis.ROOMS`) is proven equal, here, to what every room declares once imported. A stale
table fails CI with the table to paste."""

from __future__ import annotations

import pytest

from trafka.adapters.kafka.api import HandlerRegistry, Room
from trafka.adapters.kafka.apis import ROOMS, TELEMETRY_ROOMS, build_registry, declared_rooms, load


def _as_source(rooms: dict[int, Room]) -> str:
    return "\n".join(f"    {key}: Room{tuple(room)!r}," for key, room in rooms.items())


def test_the_room_table_is_what_the_rooms_declare():
    declared = declared_rooms()
    table = {**ROOMS, **TELEMETRY_ROOMS}
    assert table == declared, "apis/__init__.py's tables are stale; they should read:\n" + _as_source(declared)


def test_every_api_advertised_is_served_as_advertised():
    """What ApiVersions lists before any room is imported is what the rooms serve once imported."""
    lazy, eager = build_registry(telemetry=True), HandlerRegistry()
    for key in (*ROOMS, *TELEMETRY_ROOMS):
        eager.register(load(key))
    before = lazy.supported()
    assert before == eager.supported()
    assert [api.api_key for api in lazy.apis()] == [api.api_key for api in eager.apis()]
    assert lazy.supported() == before


def test_a_stale_entry_fails_when_its_room_loads():
    stale = {0: ROOMS[0]._replace(max_version=ROOMS[0].max_version + 1)}
    registry = HandlerRegistry(stale, load)
    assert registry.supported()[0][2] == ROOMS[0].max_version + 1
    with pytest.raises(RuntimeError, match="the rooms' table says"):
        registry.get(0)


def test_the_table_answers_without_importing_a_room():
    registry = build_registry()
    assert registry.versions(68) == (ROOMS[68].min_version, ROOMS[68].max_version)
    assert registry.key_of("consumergroupheartbeat") == 68
    assert registry.versions(999) is None and registry.key_of("Nothing") is None
    assert registry._apis == {}
