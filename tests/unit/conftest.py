from __future__ import annotations

import itertools
import uuid

import crc32c
import pytest

from trafka.adapters.compression import decompress
from trafka.adapters.memory import MemoryCatalogStore, MemoryLogStore
from trafka.domain.catalog import TopicCatalog
from trafka.domain.configs import BrokerPolicy
from trafka.domain.replica_manager import ReplicaManager


def sequential_ids():
    counter = itertools.count(1)
    return lambda: uuid.UUID(int=next(counter))


class Cluster:
    """The domain wired to the in-memory adapter, as the composition root wires it."""

    def __init__(self, policy: BrokerPolicy | None = None, store: MemoryCatalogStore | None = None) -> None:
        self.policy = policy or BrokerPolicy()
        self.store = store or MemoryCatalogStore()
        self.logs = MemoryLogStore()
        self.catalog = TopicCatalog(self.store, self.logs, self.policy, sequential_ids())
        self.replicas = ReplicaManager(self.catalog, self.logs, self.policy, crc32c.crc32c, decompress)


@pytest.fixture
def cluster() -> Cluster:
    return Cluster()
