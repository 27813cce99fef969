"""Kafka's principals: `User:alice`, with the anonymous user of an unauthenticated listener.

As DefaultKafkaPrincipalBuilder: PLAINTEXT connections are `User:ANONYMOUS`, SASL connections the
authorization id, SSL connections the client certificate's subject (or ANONYMOUS without one).
"""

from __future__ import annotations

import attrs

USER_TYPE = "User"


@attrs.frozen
class KafkaPrincipal:
    principal_type: str
    name: str

    @classmethod
    def user(cls, name: str) -> KafkaPrincipal:
        return cls(USER_TYPE, name)

    @classmethod
    def parse(cls, text: str) -> KafkaPrincipal:
        """`Type:name`, as Kafka's SecurityUtils.parseKafkaPrincipal."""
        principal_type, sep, name = text.partition(":")
        if not sep or not principal_type or not name:
            raise ValueError(f"expected a string in format principalType:principalName but got {text}")
        return cls(principal_type, name)

    def __str__(self) -> str:
        return f"{self.principal_type}:{self.name}"


ANONYMOUS = KafkaPrincipal(USER_TYPE, "ANONYMOUS")
