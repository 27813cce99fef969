"""Each room opens with Kafka's version notes for its API (kfake's "Version notes", issue 40 item 1): a
reader learns from the module's first screen what each version changed and which ones it serves."""

from __future__ import annotations

import inspect
import sys

import pytest

from trafka.adapters.kafka.apis import build_registry

APIS = build_registry(telemetry=True).apis()


def _room(api):
    handle = inspect.unwrap(api.handle)
    return sys.modules[handle.__module__]


@pytest.mark.parametrize("api", APIS, ids=[a.name for a in APIS])
def test_a_room_keeps_its_apis_version_notes(api):
    doc = _room(api).__doc__ or ""
    assert "\nVersion notes:\n" in doc, f"{_room(api).__name__} has no version notes"
    notes = doc.split("\nVersion notes:\n", 1)[1]
    assert notes.strip(), f"{_room(api).__name__}'s version notes are empty"
    assert f"v{api.max_version}" in notes, f"{api.name}'s notes say nothing of v{api.max_version}, the newest it serves"
