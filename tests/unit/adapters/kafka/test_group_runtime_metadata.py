"""GroupRuntime writes the group metadata the coordinator queues before it answers, and a write that
fails (a full disk) is one WARNING while the group carries on, as Kafka does for the empty group."""

from __future__ import annotations

import errno
import logging

from trafka.adapters.kafka.runtime.group_runtime import GroupRuntime
from trafka.adapters.kafka.runtime.purgatory import Purgatory
from trafka.adapters.kafka.runtime.unit_of_work import UnitOfWork, committed
from trafka.adapters.memory.offset_store import MemoryOffsetStore
from trafka.domain.errors import ErrorCode
from trafka.domain.groups import GroupCoordinator, GroupSettings, JoinRequest, OffsetManager, Protocol, SyncRequest


class FullDisk(MemoryOffsetStore):
    def store_group(self, group_id, metadata):
        raise OSError(errno.ENOSPC, "No space left on device")


class _Served:
    """The runtime as a room reaches it: every call followed by the unit of work's commit (ADR 79)."""

    def __init__(self, runtime: GroupRuntime, uow: UnitOfWork) -> None:
        self.runtime, self.uow = runtime, uow

    def __getattr__(self, name: str):
        found = getattr(self.runtime, name)
        return committed(self.uow, found) if callable(found) else found


def _runtime(store) -> _Served:
    coordinator = GroupCoordinator(GroupSettings(initial_rebalance_delay_ms=0), lambda client: f"{client}-1")
    uow = UnitOfWork()
    offsets = OffsetManager(coordinator, store, catalog=None, now=0)
    return _Served(GroupRuntime(coordinator, offsets, lambda: 1_000, uow, Purgatory(uow)), uow)


def _join_and_sync(runtime: _Served):
    join = JoinRequest(
        "g", "", "consumer", (Protocol("range", b"s"),), 10_000, 10_000, client_id="c", require_known_member_id=False
    )
    joined = runtime.join(join)
    assert joined.error is ErrorCode.NONE, joined
    return runtime.sync(SyncRequest("g", joined.member_id, joined.generation_id, ((joined.member_id, b"a"),)))


def test_the_leaders_sync_is_stored_before_it_is_answered():
    store = MemoryOffsetStore()
    synced = _join_and_sync(_runtime(store))
    assert synced.error is ErrorCode.NONE and synced.assignment == b"a"
    assert store.group_metadata()["g"].generation_id == 1


def test_a_metadata_write_that_fails_is_logged_and_the_group_carries_on(caplog):
    runtime = _runtime(FullDisk())
    with caplog.at_level(logging.WARNING, logger="trafka.groups"):
        synced = _join_and_sync(runtime)
    assert synced.error is ErrorCode.NONE and synced.assignment == b"a"
    # the group as its join created it (generation 0), then its first generation
    assert [r.getMessage() for r in caplog.records] == [
        "group metadata of g could not be written: [Errno 28] No space left on device"
    ] * 2
    assert runtime.coordinator.describe("g").state.value == "Stable"
