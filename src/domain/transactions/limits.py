"""The transaction coordinator's bounds the settings name, without the coordinator (ADR 124)."""

MAX_TRANSACTION_TIMEOUT_MS = 900_000  # transaction.max.timeout.ms
