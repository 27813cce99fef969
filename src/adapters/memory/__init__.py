"""In-memory implementations of the domain's storage ports, for unit tests and `trafka serve --memory`."""

from .catalog_store import MemoryCatalogStore
from .group_config_store import MemoryGroupConfigStore
from .log import MemoryLogStore, MemoryPartitionLog
from .offset_store import MemoryOffsetStore
from .quota_store import MemoryClientQuotaStore
from .security_store import MemoryAclStore, MemoryScramCredentialStore
from .share_state_store import MemoryShareStateStore
from .transaction_store import MemoryTransactionStore

__all__ = [
    "MemoryGroupConfigStore",
    "MemoryAclStore",
    "MemoryClientQuotaStore",
    "MemoryScramCredentialStore",
    "MemoryCatalogStore",
    "MemoryLogStore",
    "MemoryOffsetStore",
    "MemoryPartitionLog",
    "MemoryShareStateStore",
    "MemoryTransactionStore",
]
