"""Every served API is decided by the authorization table (or filters its answer, or needs nothing)."""

from __future__ import annotations

from trafka.adapters.kafka.handlers import build_registry
from trafka.adapters.kafka.security.authorization import _SPECIAL, ACL_TABLE, UNCHECKED


def test_every_served_api_has_an_authorization_rule():
    registry = build_registry()
    served = {registry.get(key).name for key, _, _ in registry.supported()}
    covered = set(ACL_TABLE) | set(_SPECIAL) | UNCHECKED
    assert served - covered == set()
    assert covered - served == set(), "rules for APIs that are not served"
    assert not set(ACL_TABLE) & set(_SPECIAL)
