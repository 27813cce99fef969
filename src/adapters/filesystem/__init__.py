"""Kafka's on-disk log dir format: segments, indexes, checkpoints, and the KRaft metadata and
`__consumer_offsets` logs, implementing the domain's storage ports."""

from __future__ import annotations

from typing import TYPE_CHECKING

from trafka.domain.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .catalog_store import FileCatalogStore
    from .group_config_store import FileGroupConfigStore
    from .internal_log import METADATA_TOPIC_ID, InternalLog
    from .layout import DataDirError, LogDir
    from .log_store import FileLogStore
    from .offset_store import FileOffsetStore
    from .quota_store import FileClientQuotaStore
    from .security_store import FileAclStore, FileScramCredentialStore
    from .share_state_store import FileShareStateStore
    from .transaction_store import FileTransactionStore

# Each name's module, imported on first use (ADR 110): a module of this package (the log cleaner's
# `partition_log`) is imported without the stores a memory broker never opens.
_EXPORTS = {
    "FileCatalogStore": "catalog_store",
    "FileGroupConfigStore": "group_config_store",
    "METADATA_TOPIC_ID": "internal_log",
    "InternalLog": "internal_log",
    "DataDirError": "layout",
    "LogDir": "layout",
    "FileLogStore": "log_store",
    "FileOffsetStore": "offset_store",
    "FileClientQuotaStore": "quota_store",
    "FileAclStore": "security_store",
    "FileScramCredentialStore": "security_store",
    "FileShareStateStore": "share_state_store",
    "FileTransactionStore": "transaction_store",
}


__getattr__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    "FileGroupConfigStore",
    "FileAclStore",
    "FileClientQuotaStore",
    "FileScramCredentialStore",
    "DataDirError",
    "FileCatalogStore",
    "FileLogStore",
    "FileOffsetStore",
    "FileShareStateStore",
    "FileTransactionStore",
    "InternalLog",
    "LogDir",
    "METADATA_TOPIC_ID",
]
