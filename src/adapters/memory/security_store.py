"""SCRAM credentials (and, for the authorizer, ACLs) kept in memory, for tests and `--memory`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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
