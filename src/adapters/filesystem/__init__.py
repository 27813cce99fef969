"""Kafka's on-disk log dir format: segments, indexes, checkpoints, and the KRaft metadata and
`__consumer_offsets` logs, implementing the domain's storage ports."""

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
