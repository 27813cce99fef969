"""Authorized operations, as a Kafka broker without an authorizer reports them: everything allowed.

Kafka answers the operations a resource type supports when a client asks (KIP-430) and the
"omitted" value otherwise. Bits are Kafka's AclOperation codes.
"""

from __future__ import annotations

READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE = (
    3,
    4,
    5,
    6,
    7,
    8,
    9,
    10,
    11,
    12,
)
OMITTED = -2147483648

TOPIC_OPERATIONS = frozenset({READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS})
CLUSTER_OPERATIONS = frozenset(
    {CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE}
)
GROUP_OPERATIONS = frozenset({READ, DELETE, DESCRIBE})


def as_bits(operations: frozenset[int] | None) -> set[int] | None:
    """For kafka.protocol's bitfield type: the set of bits, or None for Kafka's "omitted"."""
    return set(operations) if operations is not None else None


def as_int32(operations: frozenset[int] | None) -> int:
    """For plain int32 fields: the bit field as a signed int, or Kafka's "omitted" value."""
    if operations is None:
        return OMITTED
    value = sum(1 << op for op in operations)
    return value - (1 << 32) if value >= 1 << 31 else value
