"""The client side of SCRAM (RFC 5802), for tests that drive the broker's server side by hand."""

from __future__ import annotations

import base64
import hashlib
import hmac

import attrs


@attrs.define
class ScramClient:
    hash_name: str  # "sha256" or "sha512"
    user: str
    password: str
    nonce: str = "fyko+d2lbbFgONRv9qkxdawL"
    server_first: str = ""
    salted: bytes = b""
    auth: bytes = b""

    def client_first(self, authzid: str = "") -> bytes:
        gs2 = f"n,{'a=' + authzid if authzid else ''},"
        return (gs2 + self.bare).encode()

    @property
    def bare(self) -> str:
        return f"n={self.user.replace('=', '=3D').replace(',', '=2C')},r={self.nonce}"

    def client_final(self, server_first: bytes, nonce: str | None = None, proof: bytes | None = None) -> bytes:
        self.server_first = server_first.decode()
        fields = dict(item.split("=", 1) for item in self.server_first.split(","))
        combined = nonce if nonce is not None else fields["r"]
        self.salted = hashlib.pbkdf2_hmac(
            self.hash_name, self.password.encode(), base64.b64decode(fields["s"]), int(fields["i"])
        )
        without_proof = f"c=biws,r={combined}"
        auth = f"{self.bare},{self.server_first},{without_proof}".encode()
        client_key = hmac.new(self.salted, b"Client Key", self.hash_name).digest()
        stored = hashlib.new(self.hash_name, client_key).digest()
        signature = hmac.new(stored, auth, self.hash_name).digest()
        self.auth = auth
        computed = bytes(a ^ b for a, b in zip(client_key, signature))
        return f"{without_proof},p={base64.b64encode(proof if proof is not None else computed).decode()}".encode()

    def verify_server_final(self, server_final: bytes) -> bool:
        server_key = hmac.new(self.salted, b"Server Key", self.hash_name).digest()
        expected = hmac.new(server_key, self.auth, self.hash_name).digest()
        return server_final.decode() == "v=" + base64.b64encode(expected).decode()
