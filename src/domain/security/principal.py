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
    # Logged in with a delegation token (SCRAM `tokenauth=true`): Kafka's tokenAuthenticated, which its
    # equals leaves out, as here
    token_authenticated: bool = attrs.field(default=False, eq=False, repr=False)

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


# RFC 2253 keywords, as Java's X500Principal.getName() prints them (other attributes by Python's name).
_KEYWORDS = {
    "commonName": "CN",
    "countryName": "C",
    "localityName": "L",
    "stateOrProvinceName": "ST",
    "organizationName": "O",
    "organizationalUnitName": "OU",
    "streetAddress": "STREET",
    "domainComponent": "DC",
    "userId": "UID",
}


def x500_name(subject: tuple[tuple[tuple[str, str], ...], ...]) -> str:
    """A certificate subject (Python's `getpeercert()["subject"]`, RDNs in certificate order) as RFC 2253:
    the most specific RDN first, `CN=client,OU=eng,O=Example,C=US`, which is what Kafka's
    DefaultKafkaPrincipalBuilder takes as an SSL client's principal name."""
    return ",".join(
        "+".join(f"{_KEYWORDS.get(attribute, attribute)}={_escape(value)}" for attribute, value in rdn)
        for rdn in reversed(subject)
    )


def _escape(value: str) -> str:
    out = "".join("\\" + ch if ch in ',+"\\<>;' else ch for ch in value)
    if out.startswith(("#", " ")):
        out = "\\" + out
    if out.endswith(" ") and not out.endswith("\\ "):
        out = out[:-1] + "\\ "
    return out
