"""SASL/PLAIN (RFC 4616) as Kafka's PlainSaslServer checks it: `[authzid] NUL authcid NUL passwd`.

Users and passwords come from the listener's JAAS configuration (`user_<name>="<password>"`, as
Kafka's PlainServerCallbackHandler reads them); SCRAM credentials are not consulted, as in Kafka.
Passwords are compared in constant time. Every failure message is Kafka's and reaches the client.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from .sasl import SaslAuthenticationFailed

MECHANISM = "PLAIN"


class PlainServer:
    mechanism_name = MECHANISM

    def __init__(self, users: Mapping[str, str]) -> None:
        self._users = users
        self.complete = False
        self.authorization_id: str | None = None

    def evaluate(self, token: bytes) -> bytes:
        if self.complete:
            raise SaslAuthenticationFailed("Unexpected SASL/PLAIN token after authentication completed")
        tokens = token.decode("utf-8", errors="replace").split("\0", 3)
        if len(tokens) != 3:
            raise SaslAuthenticationFailed(f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(tokens)}")
        authzid, username, password = tokens
        if not username:
            raise SaslAuthenticationFailed("Authentication failed: username not specified")
        if not password:
            raise SaslAuthenticationFailed("Authentication failed: password not specified")
        expected = self._users.get(username)
        if expected is None or not hmac.compare_digest(expected.encode(), password.encode()):
            raise SaslAuthenticationFailed("Authentication failed: Invalid username or password")
        if authzid and authzid != username:
            raise SaslAuthenticationFailed(
                "Authentication failed: Client requested an authorization id that is different from username"
            )
        self.authorization_id = username
        self.complete = True
        return b""
