"""Authorized operations (KIP-430), as a Kafka broker without an authorizer reports them: everything allowed.

Kafka answers the operations a resource type supports when a client asks and the "omitted" value
otherwise; with an authorizer, the API's filter replaces them with what the ACLs allow. Bits are the
domain's `AclOperation` codes.
"""

from __future__ import annotations

from trafka.domain.security.acls import AclOperation as Op

OMITTED = -2147483648


def _codes(*operations: Op) -> frozenset[int]:
    return frozenset(int(op) for op in operations)


TOPIC_OPERATIONS = _codes(
    Op.READ, Op.WRITE, Op.CREATE, Op.DELETE, Op.ALTER, Op.DESCRIBE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS
)


CLUSTER_OPERATIONS = _codes(
    Op.CREATE, Op.ALTER, Op.DESCRIBE, Op.CLUSTER_ACTION, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS, Op.IDEMPOTENT_WRITE
)


GROUP_OPERATIONS = _codes(Op.READ, Op.DELETE, Op.DESCRIBE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS)  # AclEntry 4.2


def as_bits(operations: frozenset[int] | None) -> set[int] | None:
    """For kafka.protocol's bitfield type: the set of bits, or None for Kafka's "omitted"."""
    return set(operations) if operations is not None else None


def as_int32(operations: frozenset[int] | None) -> int:
    """For plain int32 fields: the bit field as a signed int, or Kafka's "omitted" value."""
    if operations is None:
        return OMITTED
    value = sum(1 << op for op in operations)
    return value - (1 << 32) if value >= 1 << 31 else value
