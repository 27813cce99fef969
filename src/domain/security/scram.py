"""SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka's ScramSaslServer does them, sans I/O.

`ScramServer` is fed the client's messages and answers with the server's, as a table-driven state
machine (RECEIVE_CLIENT_FIRST -> RECEIVE_CLIENT_FINAL -> COMPLETE, any failure -> FAILED). The
server nonce comes from an injected function and credentials from an injected lookup, so the
exchange is a pure function of its inputs. Credentials are what Kafka stores (salt, stored key,
server key, iterations), never a password: `ScramCredential.from_salted_password` is what the
controller computes from an AlterUserScramCredentials upsertion.

Failures carry the message Kafka logs; the client is told Kafka's generic text (see `sasl.py`),
except for an authorization id other than the user name, whose message Kafka passes through.
"""

from __future__ import annotations

import base64
import enum
import functools
import hashlib
import hmac
import re
from collections.abc import Callable

import attrs

from .sasl import SaslAuthenticationFailed, SaslException, client_text

MIN_ITERATIONS = 4096  # Kafka's ScramMechanism.minIterations, for both mechanisms
MAX_ITERATIONS = 16384  # ScramControlManager.MAX_ITERATIONS


class ScramMechanism(enum.Enum):
    """Kafka's mechanisms with their type byte (the `Mechanism` field of the records and APIs)."""

    SCRAM_SHA_256 = ("SCRAM-SHA-256", 1, "sha256")
    SCRAM_SHA_512 = ("SCRAM-SHA-512", 2, "sha512")

    def __init__(self, mechanism_name: str, type_id: int, hash_name: str) -> None:
        self.mechanism_name = mechanism_name
        self.type_id = type_id
        self.hash_name = hash_name

    @property
    def min_iterations(self) -> int:
        return MIN_ITERATIONS

    @classmethod
    def from_type(cls, type_id: int) -> ScramMechanism | None:
        return next((m for m in cls if m.type_id == type_id), None)

    @classmethod
    def from_name(cls, name: str) -> ScramMechanism | None:
        return next((m for m in cls if m.mechanism_name == name), None)

    def hmac(self, key: bytes, message: bytes) -> bytes:
        return hmac.new(key, message, self.hash_name).digest()

    def hash(self, data: bytes) -> bytes:
        return hashlib.new(self.hash_name, data).digest()

    def salted_password(self, password: str, salt: bytes, iterations: int) -> bytes:
        return hashlib.pbkdf2_hmac(self.hash_name, password.encode(), salt, iterations)


@attrs.frozen(repr=False)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    @classmethod
    def from_salted_password(
        cls, mechanism: ScramMechanism, salted: bytes, salt: bytes, iterations: int
    ) -> ScramCredential:
        client_key = mechanism.hmac(salted, b"Client Key")
        return cls(salt, mechanism.hash(client_key), mechanism.hmac(salted, b"Server Key"), iterations)

    @classmethod
    def from_password(cls, mechanism: ScramMechanism, password: str, salt: bytes, iterations: int) -> ScramCredential:
        return cls.from_salted_password(
            mechanism, mechanism.salted_password(password, salt, iterations), salt, iterations
        )

    def __repr__(self) -> str:
        return f"ScramCredential(iterations={self.iterations}, [hidden])"


CredentialLookup = Callable[[str, ScramMechanism], "ScramCredential | None"]
# A delegation token's id -> (its owner's name, its SCRAM credential, its expiry timestamp), or None (KIP-48)
TokenLookup = Callable[[str, ScramMechanism], "tuple[str, ScramCredential, int] | None"]

_SASLNAME = r"(?:[\x01-\x2B\x2D-\x3C\x3E-\x7F]|=2C|=3D)+"
_PRINTABLE = r"[\x21-\x2B\x2D-\x7E]+"
_VALUE = r"[\x01-\x2B\x2D-\x7F]+"
_BASE64 = r"(?:[a-zA-Z0-9/+]{4})*(?:[a-zA-Z0-9/+]{3}=|[a-zA-Z0-9/+]{2}==)?"
_EXTENSIONS = rf"(?:,[A-Za-z]+={_VALUE})*"


# Compiled at the first SCRAM exchange, not at every broker's start (session 15)
@functools.cache
def _client_first_pattern() -> re.Pattern[str]:
    return re.compile(
        rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,(?P<bare>(?:m={_VALUE},)?n=(?P<saslname>{_SASLNAME}),r=(?P<nonce>{_PRINTABLE})(?P<extensions>{_EXTENSIONS}))"
    )


@functools.cache
def _client_final_pattern() -> re.Pattern[str]:
    return re.compile(
        rf"(?P<without_proof>c=(?P<channel>{_BASE64}),r=(?P<nonce>{_PRINTABLE}){_EXTENSIONS}),p=(?P<proof>{_BASE64})"
    )


def username_of(saslname: str) -> str:
    return saslname.replace("=2C", ",").replace("=3D", "=")


class ScramState(enum.Enum):
    RECEIVE_CLIENT_FIRST = "RECEIVE_CLIENT_FIRST"
    RECEIVE_CLIENT_FINAL = "RECEIVE_CLIENT_FINAL"
    COMPLETE = "COMPLETE"
    FAILED = "FAILED"


class ScramServer:
    """One SCRAM exchange on the server side: `evaluate(client_message) -> server_message`."""

    def __init__(
        self,
        mechanism: ScramMechanism,
        credentials: CredentialLookup,
        new_nonce: Callable[[], str],
        tokens: TokenLookup | None = None,
    ) -> None:
        self.mechanism = mechanism
        self._credentials = credentials
        self._new_nonce = new_nonce
        self._tokens = tokens
        self.token_authenticated = False  # the client named a delegation token (extension tokenauth=true)
        self.credential_expiry_ms: int | None = (
            None  # the token's expiry: the session's end (Kafka's CREDENTIAL_LIFETIME_MS)
        )
        self.state = ScramState.RECEIVE_CLIENT_FIRST
        self.authorization_id: str | None = None
        self._credential: ScramCredential | None = None
        self._client_first_bare = ""
        self._server_first = ""
        self._nonce = ""

    @property
    def mechanism_name(self) -> str:
        return self.mechanism.mechanism_name

    @property
    def complete(self) -> bool:
        return self.state is ScramState.COMPLETE

    def evaluate(self, message: bytes) -> bytes:
        step = _STEPS.get(self.state)
        if step is None:
            raise SaslException(f"Unexpected challenge in Sasl server state {self.state.value}")
        try:
            return step(self, message.decode("utf-8", errors="replace"))
        except SaslException:
            self.state = ScramState.FAILED
            self._credential = None
            raise

    def _client_first(self, message: str) -> bytes:
        parsed = _client_first_pattern().fullmatch(message)
        if parsed is None:
            raise SaslException(f"Invalid SCRAM client first message format: {client_text(message)}")
        username = username_of(parsed["saslname"])
        if "tokenauth=true" in parsed["extensions"].split(","):  # Kafka's ScramExtensions.tokenAuthenticated
            token = self._tokens(username, self.mechanism) if self._tokens is not None else None
            if token is None:
                raise SaslException(f"Token Authentication failed: Invalid tokenId : {username}")
            owner, credential, self.credential_expiry_ms = token
            self.token_authenticated = True
        else:
            owner, found = username, self._credentials(username, self.mechanism)
            if found is None:
                raise SaslException("Authentication failed: Invalid user credentials")
            credential = found
        authzid = parsed["authzid"]
        if authzid and username_of(authzid) != username:
            raise SaslAuthenticationFailed(
                "Authentication failed: Client requested an authorization id that is different from username"
            )
        if credential.iterations < self.mechanism.min_iterations:
            raise SaslException(
                f"Iterations {credential.iterations} is less than the minimum {self.mechanism.min_iterations} "
                f"for {self.mechanism.mechanism_name}"
            )
        self._credential = credential
        self.authorization_id = owner  # a token's owner (Kafka: DelegationTokenCredentialCallback.tokenOwner)
        self._client_first_bare = parsed["bare"]
        self._nonce = parsed["nonce"] + self._new_nonce()
        salt = base64.b64encode(credential.salt).decode()
        self._server_first = f"r={self._nonce},s={salt},i={credential.iterations}"
        self.state = ScramState.RECEIVE_CLIENT_FINAL
        return self._server_first.encode()

    def _client_final(self, message: str) -> bytes:
        parsed = _client_final_pattern().fullmatch(message)
        if parsed is None:
            raise SaslException(f"Invalid SCRAM client final message format: {client_text(message)}")
        if parsed["nonce"] != self._nonce:
            raise SaslException("Invalid client nonce in the final client message.")
        credential = self._credential
        assert credential is not None
        auth_message = f"{self._client_first_bare},{self._server_first},{parsed['without_proof']}".encode()
        client_signature = self.mechanism.hmac(credential.stored_key, auth_message)
        proof = base64.b64decode(parsed["proof"])
        if len(proof) != len(client_signature):
            raise SaslException("Invalid client credentials")
        client_key = bytes(a ^ b for a, b in zip(proof, client_signature))
        if not hmac.compare_digest(self.mechanism.hash(client_key), credential.stored_key):
            raise SaslException("Invalid client credentials")
        server_signature = self.mechanism.hmac(credential.server_key, auth_message)
        self._credential = None
        self.state = ScramState.COMPLETE
        return b"v=" + base64.b64encode(server_signature)


_STEPS: dict[ScramState, Callable[[ScramServer, str], bytes]] = {
    ScramState.RECEIVE_CLIENT_FIRST: ScramServer._client_first,
    ScramState.RECEIVE_CLIENT_FINAL: ScramServer._client_final,
}
