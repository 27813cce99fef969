"""The authorizer decides as Kafka's StandardAuthorizer: patterns, implications, DENY wins, hosts,
super users, allow.everyone.if.no.acl.found; ACLs created, described and deleted through filters."""

from __future__ import annotations

import itertools
import uuid

import pytest

from trafka.adapters.memory import MemoryAclStore
from trafka.domain.errors import ErrorCode
from trafka.domain.security import KafkaPrincipal
from trafka.domain.security.acls import (
    AclBinding,
    AclBindingFilter,
    Authorizer,
)
from trafka.domain.security.acls import (
    AclOperation as Op,
)
from trafka.domain.security.acls import (
    AclPermissionType as Perm,
)
from trafka.domain.security.acls import (
    PatternType as Pattern,
)
from trafka.domain.security.acls import (
    ResourceType as Res,
)

ALICE, BOB = KafkaPrincipal.user("alice"), KafkaPrincipal.user("bob")


def authorizer(*acls, **options) -> Authorizer:
    counter = itertools.count(1)
    found = Authorizer(MemoryAclStore(), lambda: uuid.UUID(int=next(counter)), **options)
    assert all(r.error is ErrorCode.NONE for r in found.create(list(acls)))
    return found


def acl(name, op, perm=Perm.ALLOW, principal="User:alice", pattern=Pattern.LITERAL, res=Res.TOPIC, host="*"):
    return AclBinding(res, name, pattern, principal, host, op, perm)


def test_literal_prefixed_and_wildcard_patterns():
    found = authorizer(
        acl("orders", Op.WRITE),
        acl("logs-", Op.READ, pattern=Pattern.PREFIXED),
        acl("*", Op.DESCRIBE, principal="User:bob"),
    )
    assert found.authorize(ALICE, "h", Op.WRITE, Res.TOPIC, "orders")
    assert not found.authorize(ALICE, "h", Op.WRITE, Res.TOPIC, "orders-2")
    assert found.authorize(ALICE, "h", Op.READ, Res.TOPIC, "logs-app")
    assert not found.authorize(ALICE, "h", Op.READ, Res.TOPIC, "log")
    assert found.authorize(BOB, "h", Op.DESCRIBE, Res.TOPIC, "anything")


def test_read_write_delete_alter_imply_describe_and_alter_configs_implies_describe_configs():
    found = authorizer(acl("t", Op.READ), acl("u", Op.ALTER_CONFIGS))
    assert found.authorize(ALICE, "h", Op.DESCRIBE, Res.TOPIC, "t")
    assert not found.authorize(ALICE, "h", Op.WRITE, Res.TOPIC, "t")
    assert found.authorize(ALICE, "h", Op.DESCRIBE_CONFIGS, Res.TOPIC, "u")
    assert not found.authorize(ALICE, "h", Op.DESCRIBE, Res.TOPIC, "u")


def test_deny_wins_over_a_prefixed_allow_and_implications_hold_for_allow_only():
    found = authorizer(
        acl("team-", Op.ALL, pattern=Pattern.PREFIXED),
        acl("team-secret", Op.WRITE, Perm.DENY),
        acl("team-x", Op.READ, Perm.DENY),
    )
    assert found.authorize(ALICE, "h", Op.WRITE, Res.TOPIC, "team-public")
    assert not found.authorize(ALICE, "h", Op.WRITE, Res.TOPIC, "team-secret")
    assert found.authorize(ALICE, "h", Op.DESCRIBE, Res.TOPIC, "team-x"), "a DENY of READ does not deny DESCRIBE"


def test_hosts_and_the_wildcard_principal():
    found = authorizer(acl("t", Op.READ, principal="User:*", host="10.0.0.1"))
    assert found.authorize(BOB, "10.0.0.1", Op.READ, Res.TOPIC, "t")
    assert not found.authorize(BOB, "10.0.0.2", Op.READ, Res.TOPIC, "t")


def test_super_users_and_the_no_acl_default():
    found = authorizer(acl("t", Op.READ), super_users={"User:admin"}, allow_everyone_if_no_acl_found=True)
    assert found.authorize(KafkaPrincipal.user("admin"), "h", Op.DELETE, Res.TOPIC, "t")
    assert found.authorize(BOB, "h", Op.WRITE, Res.TOPIC, "no-acls-here"), "no ACL on the resource: allowed"
    assert not found.authorize(BOB, "h", Op.READ, Res.TOPIC, "t"), "ACLs on the resource, none for bob: denied"
    assert not authorizer().authorize(BOB, "h", Op.READ, Res.TOPIC, "t"), "the default denies"


def test_authorized_operations_per_resource_type():
    found = authorizer(acl("g", Op.READ, res=Res.GROUP))
    assert found.authorized_operations(ALICE, "h", Res.GROUP, "g") == [Op.READ, Op.DESCRIBE]


def test_describe_and_delete_by_filter_including_match():
    found = authorizer(acl("orders", Op.WRITE), acl("ord", Op.READ, pattern=Pattern.PREFIXED), acl("*", Op.DESCRIBE))
    match = AclBindingFilter(Res.TOPIC, "orders", Pattern.MATCH, None, None, Op.ANY, Perm.ANY)
    assert len(found.acls(match)) == 3
    literal = AclBindingFilter(Res.ANY, None, Pattern.LITERAL, "User:alice", None, Op.ANY, Perm.ANY)
    assert {a.resource_name for a in found.acls(literal)} == {"orders", "*"}
    [deleted] = found.delete([AclBindingFilter(Res.TOPIC, "ord", Pattern.PREFIXED, None, None, Op.ANY, Perm.ANY)])
    assert [a.resource_name for a in deleted] == ["ord"]
    assert not found.authorize(ALICE, "h", Op.READ, Res.TOPIC, "ordinal")


@pytest.mark.parametrize(
    "binding, message",
    [
        (acl("t", Op.ANY), "Invalid operation ANY"),
        (acl("t", Op.READ, pattern=Pattern.MATCH), "Invalid patternType MATCH"),
        (acl("other", Op.ALTER, res=Res.CLUSTER), "The only valid name for the CLUSTER resource is kafka-cluster"),
        (acl("t", Op.READ, principal="alice"), "Could not parse principal"),
        (acl("", Op.READ), "Resource name should not be empty"),
    ],
)
def test_invalid_bindings_are_refused_one_by_one(binding, message):
    found = authorizer()
    [refused, accepted] = found.create([binding, acl("fine", Op.READ)])
    assert refused.error is ErrorCode.INVALID_REQUEST and message in refused.message
    assert accepted.error is ErrorCode.NONE


def test_authorize_by_resource_type_as_kafkas_default_authorizer():
    """Allowed on at least one resource of the type: an ALLOW for the operation or ALL that no DENY of the
    same literal name or of one of its prefixes overrides (InitProducerId's WRITE on any topic)."""

    def by_type(*acls, principal=ALICE, **options):
        return authorizer(*acls, **options).authorize_by_resource_type(principal, "h", Op.WRITE, Res.TOPIC)

    assert not by_type()
    assert not by_type(acl("orders", Op.READ))
    assert by_type(acl("orders", Op.WRITE))
    assert by_type(acl("orders", Op.ALL))
    assert not by_type(acl("orders", Op.WRITE), acl("orders", Op.WRITE, Perm.DENY))
    assert not by_type(acl("orders", Op.WRITE), acl("ord", Op.WRITE, Perm.DENY, pattern=Pattern.PREFIXED))
    assert by_type(acl("orders", Op.WRITE), acl("orders-", Op.WRITE, Perm.DENY, pattern=Pattern.PREFIXED))
    assert by_type(acl("team-", Op.WRITE, pattern=Pattern.PREFIXED), acl("team-secret", Op.WRITE, Perm.DENY))
    assert not by_type(acl("*", Op.WRITE), acl("*", Op.WRITE, Perm.DENY))
    assert by_type(acl("*", Op.WRITE, principal="User:*"))
    assert not by_type(acl("orders", Op.WRITE, host="10.0.0.1"))
    assert not by_type(acl("orders", Op.WRITE, res=Res.GROUP))
    assert by_type(super_users=["User:alice"])
    assert by_type(allow_everyone_if_no_acl_found=True)
    assert not by_type(acl("orders", Op.WRITE), principal=BOB)
