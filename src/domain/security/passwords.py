"""Checking a user's password outside SASL (the console's login, the Schema Registry's HTTP Basic auth)
against the same users Kafka clients authenticate as.

A SCRAM user is checked as a SCRAM server would check the proof, but from the password itself: the
SaltedPassword is derived with the stored salt and iterations (PBKDF2, RFC 5802's Hi), and the
StoredKey and ServerKey computed from it must equal the stored ones (constant-time compares). The
broker never holds a SCRAM password, only those keys, so there is nothing else to compare with.

A PLAIN user is checked as Kafka's PlainServerCallbackHandler does: the `user_<name>` option of the
listener's JAAS entry is the password, username and password must not be empty, and the compare is
constant-time. A user found in neither way fails, and costs the same derivation as a wrong SCRAM
password so the time taken does not tell whether the user exists.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable, Mapping

from .scram import MIN_ITERATIONS, CredentialLookup, ScramCredential, ScramMechanism

_DECOY_SALT = b"trafka-decoy-salt-for-unknown-users"


class PasswordCheck:
    """`verify(user, password)` against SCRAM credentials of the enabled mechanisms and PLAIN's JAAS users."""

    def __init__(
        self,
        credentials: CredentialLookup,
        scram_mechanisms: Iterable[ScramMechanism],
        plain_users: Iterable[Mapping[str, str]] = (),
    ) -> None:
        self._credentials = credentials
        self._mechanisms = tuple(scram_mechanisms)
        self._plain_users = tuple(plain_users)  # one mapping per PLAIN listener's JAAS entry

    def verify(self, user: str, password: str) -> bool:
        if not user or not password:
            return False
        accepted = False
        checked = False
        for mechanism in self._mechanisms:
            credential = self._credentials(user, mechanism)
            if credential is not None:
                checked = True
                accepted |= scram_password_matches(mechanism, credential, password)
        for users in self._plain_users:
            expected = users.get(user)
            if expected is not None:
                accepted |= hmac.compare_digest(expected.encode(), password.encode())
        if not checked:
            _decoy(password)
        return accepted


def scram_password_matches(mechanism: ScramMechanism, credential: ScramCredential, password: str) -> bool:
    salted = mechanism.salted_password(password, credential.salt, credential.iterations)
    derived = ScramCredential.from_salted_password(mechanism, salted, credential.salt, credential.iterations)
    stored_ok = hmac.compare_digest(derived.stored_key, credential.stored_key)
    server_ok = hmac.compare_digest(derived.server_key, credential.server_key)
    return stored_ok and server_ok


def _decoy(password: str) -> None:
    """The work of checking a SCRAM password, for a user who has no credential."""
    ScramMechanism.SCRAM_SHA_256.salted_password(password, _DECOY_SALT, MIN_ITERATIONS)
