"""SCRAM credentials (and, for the authorizer, ACLs) kept in memory, for tests and `--memory`."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from trafka.domain.security.acls import AclBinding

if TYPE_CHECKING:  # SCRAM's hashes are loaded with the first SCRAM credential (issue 39)
    from trafka.domain.security.delegation_tokens import TokenInformation
    from trafka.domain.security.scram import ScramCredential, ScramMechanism


class MemoryScramCredentialStore:
    def __init__(self) -> None:
        self.credentials: dict[tuple[str, ScramMechanism], ScramCredential] = {}

    def load(self) -> Mapping[tuple[str, ScramMechanism], ScramCredential]:
        return dict(self.credentials)

    def credentials_changed(
        self,
        upserted: Sequence[tuple[str, ScramMechanism, ScramCredential]],
        removed: Sequence[tuple[str, ScramMechanism]],
    ) -> None:
        for key in removed:
            self.credentials.pop(key, None)
        for user, mechanism, credential in upserted:
            self.credentials[(user, mechanism)] = credential


class MemoryAclStore:
    def __init__(self) -> None:
        self.acls: dict[uuid.UUID, AclBinding] = {}

    def load(self) -> Mapping[uuid.UUID, AclBinding]:
        return dict(self.acls)

    def acls_changed(self, added: Sequence[tuple[uuid.UUID, AclBinding]], removed: Sequence[uuid.UUID]) -> None:
        for acl_id in removed:
            self.acls.pop(acl_id, None)
        self.acls.update(added)


class MemoryDelegationTokenStore:
    def __init__(self) -> None:
        self.tokens: dict[str, TokenInformation] = {}

    def load_tokens(self) -> Sequence[TokenInformation]:
        return list(self.tokens.values())

    def token_written(self, token: TokenInformation) -> None:
        self.tokens.pop(token.token_id, None)
        self.tokens[token.token_id] = token

    def token_removed(self, token_id: str) -> None:
        self.tokens.pop(token_id, None)
