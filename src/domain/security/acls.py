"""ACLs and the authorizer, with the semantics of Kafka's StandardAuthorizer.

An ACL binds a resource pattern (type, name, LITERAL or PREFIXED; the LITERAL name `*` matches every
name) to an entry (principal or `User:*`, host or `*`, operation, ALLOW or DENY). `Authorizer.authorize`
decides one action as StandardAuthorizerData does:

- a super user is allowed everything;
- among the ACLs whose pattern matches the resource, one DENY matching the principal, host and
  operation (or ALL) denies: DENY wins;
- otherwise an ALLOW matching them allows; an ALLOW of READ, WRITE, DELETE or ALTER also allows
  DESCRIBE, and ALTER_CONFIGS allows DESCRIBE_CONFIGS (implications hold for ALLOW only);
- with no ACL on the resource at all, `allow.everyone.if.no.acl.found` decides; with ACLs on it but
  none for this principal, the action is denied.

ACLs are kept through the `AclStore` port (Kafka: AccessControlEntryRecord in `__cluster_metadata`),
each with an id. The numbers of the enums are Kafka's wire values.

A client's host is its address as Java's `InetAddress.getHostAddress` renders it (`kafka_host`:
IPv6 in eight uncompressed groups, `0:0:0:0:0:0:0:1`), which is what an ACL's host is compared
with in Kafka; an ACL written in the compressed form (`::1`) matches too.
"""

from __future__ import annotations

import enum
import functools
import ipaddress
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol

import attrs

from ..errors import ErrorCode
from .principal import KafkaPrincipal


class ResourceType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class AclPermissionType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


WILDCARD = "*"
WILDCARD_PRINCIPAL = "User:*"
CLUSTER_NAME = "kafka-cluster"

_IMPLIES_DESCRIBE = {
    AclOperation.DESCRIBE,
    AclOperation.READ,
    AclOperation.WRITE,
    AclOperation.DELETE,
    AclOperation.ALTER,
}
_IMPLIES_DESCRIBE_CONFIGS = {AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS}

# The operations that exist for each resource type (Kafka's AclEntry.supportedOperations).
SUPPORTED_OPERATIONS: dict[ResourceType, tuple[AclOperation, ...]] = {
    ResourceType.TOPIC: (
        AclOperation.READ,
        AclOperation.WRITE,
        AclOperation.CREATE,
        AclOperation.DESCRIBE,
        AclOperation.DELETE,
        AclOperation.ALTER,
        AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS,
    ),
    ResourceType.GROUP: (  # configs since KIP-848's GROUP config resource
        AclOperation.READ,
        AclOperation.DESCRIBE,
        AclOperation.DELETE,
        AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS,
    ),
    ResourceType.CLUSTER: (
        AclOperation.CREATE,
        AclOperation.CLUSTER_ACTION,
        AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS,
        AclOperation.IDEMPOTENT_WRITE,
        AclOperation.ALTER,
        AclOperation.DESCRIBE,
    ),
    ResourceType.TRANSACTIONAL_ID: (AclOperation.DESCRIBE, AclOperation.WRITE),
    ResourceType.DELEGATION_TOKEN: (AclOperation.DESCRIBE,),
    ResourceType.USER: (AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS),
}


@functools.lru_cache(maxsize=4096)
def kafka_host(address: str) -> str:
    """An address as Kafka renders it (Java's getHostAddress): IPv6 as eight groups of hex without leading
    zeros or `::` compression (a zone kept after `%`), an IPv4-mapped IPv6 address as its IPv4 address;
    anything else (IPv4, `*`, a name) unchanged."""
    if ":" not in address:
        return address
    literal, percent, zone = address.partition("%")
    try:
        parsed = ipaddress.IPv6Address(literal)
    except ValueError:
        return address
    if parsed.ipv4_mapped is not None:
        return str(parsed.ipv4_mapped)
    groups = ":".join(f"{int(group, 16):x}" for group in parsed.exploded.split(":"))
    return groups + percent + zone


def _host_matches(acl_host: str, host: str) -> bool:
    return acl_host == WILDCARD or acl_host == host or kafka_host(acl_host) == host


@attrs.frozen
class AclBinding:
    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType

    def matches_resource(self, resource_type: ResourceType, name: str) -> bool:
        if self.resource_type is not resource_type:
            return False
        if self.pattern_type is PatternType.LITERAL:
            return self.resource_name == name or self.resource_name == WILDCARD
        return self.pattern_type is PatternType.PREFIXED and name.startswith(self.resource_name)

    def decides(self, principals: set[str], host: str, operation: AclOperation) -> AclPermissionType | None:
        """ALLOW or DENY when this ACL applies to the action, None when it does not (StandardAuthorizer's findResult)."""
        if self.principal not in principals or not _host_matches(self.host, host):
            return None
        if self.operation is not AclOperation.ALL:
            if self.permission_type is AclPermissionType.ALLOW:
                if operation is AclOperation.DESCRIBE:
                    if self.operation not in _IMPLIES_DESCRIBE:
                        return None
                elif operation is AclOperation.DESCRIBE_CONFIGS:
                    if self.operation not in _IMPLIES_DESCRIBE_CONFIGS:
                        return None
                elif operation is not self.operation:
                    return None
            elif operation is not self.operation:
                return None
        return self.permission_type


@attrs.frozen
class AclBindingFilter:
    """DescribeAcls/DeleteAcls filters: None (or ANY) matches anything; MATCH finds every pattern
    that would apply to the named resource."""

    resource_type: ResourceType
    resource_name: str | None
    pattern_type: PatternType
    principal: str | None
    host: str | None
    operation: AclOperation
    permission_type: AclPermissionType

    def matches(self, acl: AclBinding) -> bool:
        if self.resource_type is not ResourceType.ANY and acl.resource_type is not self.resource_type:
            return False
        if not self._matches_pattern(acl):
            return False
        if self.principal is not None and acl.principal != self.principal:
            return False
        if self.host is not None and acl.host != self.host:
            return False
        if self.operation is not AclOperation.ANY and acl.operation is not self.operation:
            return False
        return self.permission_type is AclPermissionType.ANY or acl.permission_type is self.permission_type

    def _matches_pattern(self, acl: AclBinding) -> bool:
        if self.pattern_type is PatternType.MATCH:
            if self.resource_name is None:
                return True
            if acl.pattern_type is PatternType.LITERAL:
                return acl.resource_name in (self.resource_name, WILDCARD)
            return acl.pattern_type is PatternType.PREFIXED and self.resource_name.startswith(acl.resource_name)
        if self.pattern_type not in (PatternType.ANY, acl.pattern_type):
            return False
        return self.resource_name is None or acl.resource_name == self.resource_name


@attrs.frozen
class AclCreationResult:
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None


class AclStore(Protocol):
    """Where ACLs live, each with an id (Kafka: AccessControlEntryRecord in `__cluster_metadata`)."""

    def load(self) -> Mapping[uuid.UUID, AclBinding]:
        """Every stored ACL by id."""

    def acls_changed(self, added: Sequence[tuple[uuid.UUID, AclBinding]], removed: Sequence[uuid.UUID]) -> None:
        """Persist one change, durably, before it takes effect."""


class Authorizer:
    def __init__(
        self,
        store: AclStore,
        new_id: Callable[[], uuid.UUID],
        super_users: Iterable[str] = (),
        allow_everyone_if_no_acl_found: bool = False,
    ) -> None:
        self._store = store
        self._new_id = new_id
        self.super_users = frozenset(super_users)
        self.allow_everyone_if_no_acl_found = allow_everyone_if_no_acl_found
        self._acls: dict[uuid.UUID, AclBinding] = dict(store.load())

    def authorize(
        self, principal: KafkaPrincipal, host: str, operation: AclOperation, resource_type: ResourceType, name: str
    ) -> bool:
        if str(principal) in self.super_users:
            return True
        principals = {str(principal), WILDCARD_PRINCIPAL}
        found_resource_acls = allowed = False
        for acl in self._acls.values():
            if not acl.matches_resource(resource_type, name):
                continue
            found_resource_acls = True
            decision = acl.decides(principals, host, operation)
            if decision is AclPermissionType.DENY:
                return False
            if decision is AclPermissionType.ALLOW:
                allowed = True
        if allowed:
            return True
        return not found_resource_acls and self.allow_everyone_if_no_acl_found

    def authorize_by_resource_type(
        self, principal: KafkaPrincipal, host: str, operation: AclOperation, resource_type: ResourceType
    ) -> bool:
        """Whether the principal may do `operation` on at least one resource of the type (Kafka's
        Authorizer.authorizeByResourceType, which InitProducerId asks for WRITE on any topic): an ALLOW
        (for the operation itself or ALL) that no DENY of the same literal name or of a prefix of it
        overrides; a DENY on the literal `*` refuses everything."""
        if self.authorize(principal, host, operation, resource_type, "hardcode"):  # Kafka's check for super users
            return True
        principals = {str(principal), WILDCARD_PRINCIPAL}
        denied: dict[PatternType, set[str]] = {PatternType.LITERAL: set(), PatternType.PREFIXED: set()}
        allowed: dict[PatternType, set[str]] = {PatternType.LITERAL: set(), PatternType.PREFIXED: set()}
        for acl in self._acls.values():
            if (
                acl.resource_type is not resource_type
                or not _host_matches(acl.host, host)
                or acl.principal not in principals
                or acl.operation not in (operation, AclOperation.ALL)
                or acl.pattern_type not in denied
            ):
                continue
            if acl.permission_type is AclPermissionType.DENY:
                denied[acl.pattern_type].add(acl.resource_name)
            elif acl.permission_type is AclPermissionType.ALLOW:
                allowed[acl.pattern_type].add(acl.resource_name)
        if WILDCARD in denied[PatternType.LITERAL]:
            return False
        if WILDCARD in allowed[PatternType.LITERAL]:
            return True
        for pattern, names in allowed.items():
            for name in names:
                if pattern is PatternType.LITERAL and name in denied[PatternType.LITERAL]:
                    continue
                if not any(name[:end] in denied[PatternType.PREFIXED] for end in range(1, len(name) + 1)):
                    return True
        return False

    def authorized_operations(
        self, principal: KafkaPrincipal, host: str, resource_type: ResourceType, name: str
    ) -> list[AclOperation]:
        return [
            op for op in SUPPORTED_OPERATIONS[resource_type] if self.authorize(principal, host, op, resource_type, name)
        ]

    def acls(self, filter_: AclBindingFilter) -> list[AclBinding]:
        return [acl for acl in self._acls.values() if filter_.matches(acl)]

    def create(self, bindings: Sequence[AclBinding]) -> list[AclCreationResult]:
        results: list[AclCreationResult] = []
        added: list[tuple[uuid.UUID, AclBinding]] = []
        existing = set(self._acls.values())
        for binding in bindings:
            problem = _invalid(binding)
            if problem is not None:
                results.append(AclCreationResult(ErrorCode.INVALID_REQUEST, problem))
                continue
            if binding not in existing:
                added.append((self._new_id(), binding))
                existing.add(binding)
            results.append(AclCreationResult())
        if added:
            self._store.acls_changed(added, [])
            self._acls.update(added)
        return results

    def delete(self, filters: Sequence[AclBindingFilter]) -> list[list[AclBinding]]:
        """The ACLs each filter deleted (an ACL matched by several filters is reported by each)."""
        matched = [[(i, acl) for i, acl in self._acls.items() if f.matches(acl)] for f in filters]
        removed = list({i for found in matched for i, _ in found})
        if removed:
            self._store.acls_changed([], removed)
            for acl_id in removed:
                del self._acls[acl_id]
        return [[acl for _, acl in found] for found in matched]


def _invalid(binding: AclBinding) -> str | None:
    """Why Kafka refuses to create this binding (AclControlManager.validateNewAcl), or None."""
    if binding.resource_type in (ResourceType.ANY, ResourceType.UNKNOWN):
        return "Invalid resourceType " + binding.resource_type.name
    if binding.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        return "Invalid patternType " + binding.pattern_type.name
    if binding.operation in (AclOperation.ANY, AclOperation.UNKNOWN):
        return "Invalid operation " + binding.operation.name
    if binding.permission_type not in (AclPermissionType.ALLOW, AclPermissionType.DENY):
        return "Invalid permissionType " + binding.permission_type.name
    if not binding.resource_name:
        return "Resource name should not be empty"
    if binding.resource_type is ResourceType.CLUSTER and binding.resource_name != CLUSTER_NAME:
        return "The only valid name for the CLUSTER resource is " + CLUSTER_NAME
    try:
        KafkaPrincipal.parse(binding.principal)
    except ValueError as exc:
        return f"Could not parse principal from `{binding.principal}` ({exc})"
    return None
