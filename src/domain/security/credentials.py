"""SCRAM credentials by user and mechanism, altered and described as Kafka's controller does.

`UserScramCredentials` keeps the credentials in memory and writes every change through the
`ScramCredentialStore` port (the filesystem adapter appends Kafka's UserScramCredentialRecord and
RemoveUserScramCredentialRecord to `__cluster_metadata`). `alter` follows ScramControlManager:
a user altered twice in one request is DUPLICATE_RESOURCE, iterations outside 4096..16384 are
UNACCEPTABLE_CREDENTIAL, deleting a missing credential is RESOURCE_NOT_FOUND, an unknown mechanism
UNSUPPORTED_SASL_MECHANISM; the server computes stored and server keys from the salted password.
`describe` follows ScramImage.describe (all users when none are named).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

import attrs

from ..errors import ErrorCode

if TYPE_CHECKING:  # SCRAM's hashes load with the first credential altered or used, not at start (issue 39)
    from .scram import ScramCredential, ScramMechanism

_TWICE = "A user credential cannot be altered twice in the same request"


@attrs.frozen
class ScramDeletion:
    name: str
    mechanism: int


@attrs.frozen
class ScramUpsertion:
    name: str
    mechanism: int
    iterations: int
    salt: bytes
    salted_password: bytes = attrs.field(repr=False)


@attrs.frozen
class UserResult:
    user: str
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None
    credentials: tuple[tuple[int, int], ...] = ()  # (mechanism type, iterations)


class ScramCredentialStore(Protocol):
    """Where SCRAM credentials live (Kafka: UserScramCredentialRecord in `__cluster_metadata`)."""

    def load(self) -> Mapping[tuple[str, ScramMechanism], ScramCredential]:
        """Every stored credential by (user, mechanism)."""

    def credentials_changed(
        self,
        upserted: Sequence[tuple[str, ScramMechanism, ScramCredential]],
        removed: Sequence[tuple[str, ScramMechanism]],
    ) -> None:
        """Persist one alteration, durably, before it takes effect."""


class UserScramCredentials:
    def __init__(self, store: ScramCredentialStore) -> None:
        self._store = store
        self._credentials: dict[tuple[str, ScramMechanism], ScramCredential] = dict(store.load())

    def lookup(self, user: str, mechanism: ScramMechanism) -> ScramCredential | None:
        return self._credentials.get((user, mechanism))

    def upsert(self, user: str, mechanism: ScramMechanism, credential: ScramCredential) -> None:
        """Store one credential (the operator's `trafka user add`)."""
        self._store.credentials_changed([(user, mechanism, credential)], [])
        self._credentials[(user, mechanism)] = credential

    def alter(self, deletions: Sequence[ScramDeletion], upsertions: Sequence[ScramUpsertion]) -> list[UserResult]:
        errors: dict[str, UserResult] = {}
        deleting: dict[str, ScramDeletion] = {}
        upserting: dict[str, ScramUpsertion] = {}
        for deletion in deletions:
            if deletion.name in errors:
                continue
            if deleting.pop(deletion.name, None) is not None:
                errors[deletion.name] = UserResult(deletion.name, ErrorCode.DUPLICATE_RESOURCE, _TWICE)
                continue
            failure = self._check_deletion(deletion)
            if failure is None:
                deleting[deletion.name] = deletion
            else:
                errors[deletion.name] = failure
        for upsertion in upsertions:
            if upsertion.name in errors:
                continue
            if deleting.pop(upsertion.name, None) is not None or upserting.pop(upsertion.name, None) is not None:
                errors[upsertion.name] = UserResult(upsertion.name, ErrorCode.DUPLICATE_RESOURCE, _TWICE)
                continue
            failure = _check_upsertion(upsertion)
            if failure is None:
                upserting[upsertion.name] = upsertion
            else:
                errors[upsertion.name] = failure
        removed = [(d.name, _mechanism(d.mechanism)) for d in deleting.values()]
        upserted = []
        for u in upserting.values():
            mechanism = _mechanism(u.mechanism)
            from .scram import ScramCredential

            credential = ScramCredential.from_salted_password(mechanism, u.salted_password, u.salt, u.iterations)
            upserted.append((u.name, mechanism, credential))
        if removed or upserted:
            self._store.credentials_changed(upserted, removed)
        for key in removed:
            self._credentials.pop(key, None)
        for name, mechanism, credential in upserted:
            self._credentials[(name, mechanism)] = credential
        done = [UserResult(name) for name in [*deleting, *upserting]]
        return done + list(errors.values())

    def describe(self, users: Sequence[str] | None) -> list[UserResult]:
        if not users:
            wanted = {name: False for name, _ in self._credentials}
        else:
            wanted = {}
            for name in users:
                wanted[name] = name in wanted
        out = []
        for name, duplicate in wanted.items():
            if duplicate:
                message = f"Cannot describe SCRAM credentials for the same user twice in a single request: {name}"
                out.append(UserResult(name, ErrorCode.DUPLICATE_RESOURCE, message))
                continue
            found = tuple(
                (mechanism.type_id, credential.iterations)
                for (user, mechanism), credential in sorted(self._credentials.items(), key=lambda i: i[0][1].type_id)
                if user == name
            )
            if found:
                out.append(UserResult(name, credentials=found))
            else:
                message = f"Attempt to describe a user credential that does not exist: {name}"
                out.append(UserResult(name, ErrorCode.RESOURCE_NOT_FOUND, message))
        return out

    def _check_deletion(self, deletion: ScramDeletion) -> UserResult | None:
        failure = _check_name_and_mechanism(deletion.name, deletion.mechanism)
        if failure is None and (deletion.name, _mechanism(deletion.mechanism)) not in self._credentials:
            return UserResult(
                deletion.name, ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"
            )
        return failure


def _mechanism(type_id: int) -> ScramMechanism:
    from .scram import ScramMechanism

    mechanism = ScramMechanism.from_type(type_id)
    assert mechanism is not None
    return mechanism


def _check_name_and_mechanism(name: str, mechanism: int) -> UserResult | None:
    if not name:
        return UserResult(name, ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty")
    from .scram import ScramMechanism

    if ScramMechanism.from_type(mechanism) is None:
        return UserResult(name, ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")
    return None


def _check_upsertion(upsertion: ScramUpsertion) -> UserResult | None:
    failure = _check_name_and_mechanism(upsertion.name, upsertion.mechanism)
    if failure is not None:
        return failure
    if upsertion.iterations < _mechanism(upsertion.mechanism).min_iterations:
        return UserResult(upsertion.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations")
    from .scram import MAX_ITERATIONS

    if upsertion.iterations > MAX_ITERATIONS:
        return UserResult(upsertion.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations")
    return None
