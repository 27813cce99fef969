"""Both conversions of the online migration (ADR 50) are durable: what the coordinators write to
`__consumer_offsets` (the classic group's tombstone and the consumer group's records on upgrade; the
consumer group's tombstones and the classic GroupMetadata on downgrade) is what a restart loads."""

from __future__ import annotations

import pytest

from tests.contract.test_group_metadata_store import FileStores
from tests.unit.domain.groups.consumer_harness import Client, G, Harness
from tests.unit.domain.groups.test_consumer_group_migration import stable_classic_group
from trafka.adapters.memory.offset_store import MemoryOffsetStore
from trafka.domain.groups import GroupState
from trafka.domain.groups.group_metadata import snapshot
from trafka.domain.groups.modern import ConsumerHeartbeat


@pytest.fixture(params=["file", "memory"])
def reopen(request, tmp_path):
    """A function giving the store, and the same store as a restart sees it."""
    if request.param == "memory":
        store = MemoryOffsetStore()
        yield lambda: store
        return
    stores = FileStores(str(tmp_path / "logs"))
    yield stores.open
    stores.logs.close()
    stores.logdir.unlock()


def write(h: Harness, store) -> None:
    for record in h.classic.take_metadata_records():
        store.store_group(record.group_id, record.metadata)
    store.store_consumer_group_records(h.coordinator.take_records())


def restarted(h: Harness, store) -> Harness:
    again = Harness(fake_topics=h.topics)
    again.classic.load(store.group_metadata(), 1_000)
    again.coordinator.load(store.consumer_group_records(), 1_000)
    return again


def test_an_upgraded_and_then_downgraded_group_is_loaded_as_it_was_left(reopen):
    store = reopen()
    h = Harness()
    a, b = stable_classic_group(h)
    store.store_group(G, snapshot(h.classic.group(G)))  # the Stable classic group, as Kafka left it
    c = Client("c")
    h.heartbeat(c)  # upgrade
    write(h, store)
    store = reopen()
    after_upgrade = restarted(h, store)
    assert after_upgrade.classic.group(G) is None
    group = after_upgrade.coordinator.groups[G]
    assert set(group.members) == {a, b, "c"}
    assert group.members[a].classic == h.group.members[a].classic and group.members["c"].classic is None
    assert group.group_epoch == h.group.group_epoch

    h.coordinator.heartbeat(ConsumerHeartbeat(G, "c", -1), 5)  # downgrade
    write(h, store)
    store = reopen()
    after_downgrade = restarted(h, store)
    assert G not in after_downgrade.coordinator.groups
    classic = after_downgrade.classic.group(G)
    assert classic is not None and set(classic.members) == {a, b}
    assert classic.state is GroupState.STABLE and classic.protocol_type == "consumer"
    assert all(m.assignment for m in classic.members.values())


def test_an_upgrade_interrupted_between_its_two_writes_loads_the_consumer_group(reopen):
    store = reopen()
    h = Harness()
    stable_classic_group(h)
    store.store_group(G, snapshot(h.classic.group(G)))
    h.heartbeat(Client("c"))
    store.store_consumer_group_records(h.coordinator.take_records())  # the crash: no classic tombstone
    again = restarted(h, reopen())
    assert G in again.coordinator.groups and again.classic.group(G) is None
    assert [(r.group_id, r.metadata) for r in again.classic.take_metadata_records()] == [(G, None)]
