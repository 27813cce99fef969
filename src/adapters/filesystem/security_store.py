"""SCRAM credentials, ACLs and delegation tokens in the KRaft metadata log (`__cluster_metadata-0`), as Kafka's controller keeps them.

An upsertion is a UserScramCredentialRecord (salt, stored key, server key, iterations: never the
password), a deletion a RemoveUserScramCredentialRecord; on startup the credentials are rebuilt by
replaying the log, including one Kafka wrote. A delegation token is a DelegationTokenRecord (its
information, never its HMAC), its removal a RemoveDelegationTokenRecord.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

from trafka.domain.security.acls import AclBinding, AclOperation, AclPermissionType, PatternType, ResourceType
from trafka.domain.security.delegation_tokens import TokenInformation
from trafka.domain.security.principal import KafkaPrincipal
from trafka.domain.security.scram import ScramCredential, ScramMechanism

from .internal_log import InternalLog
from .metadata_records import (
    AccessControlEntryRecord,
    DelegationTokenRecord,
    RemoveAccessControlEntryRecord,
    RemoveDelegationTokenRecord,
    RemoveUserScramCredentialRecord,
    UserScramCredentialRecord,
    decode_metadata_record,
    encode_metadata_record,
)


class FileScramCredentialStore:
    def __init__(self, metadata_log: InternalLog) -> None:
        self._log = metadata_log

    def load(self) -> Mapping[tuple[str, ScramMechanism], ScramCredential]:
        out: dict[tuple[str, ScramMechanism], ScramCredential] = {}
        for _, _, value in self._log.records():
            if value is None:
                continue
            record = decode_metadata_record(value)
            if isinstance(record, UserScramCredentialRecord):
                mechanism = ScramMechanism.from_type(record.mechanism)
                if mechanism is not None:
                    out[(record.name, mechanism)] = ScramCredential(
                        record.salt, record.stored_key, record.server_key, record.iterations
                    )
            elif isinstance(record, RemoveUserScramCredentialRecord):
                mechanism = ScramMechanism.from_type(record.mechanism)
                if mechanism is not None:
                    out.pop((record.name, mechanism), None)
        return out

    def credentials_changed(
        self,
        upserted: Sequence[tuple[str, ScramMechanism, ScramCredential]],
        removed: Sequence[tuple[str, ScramMechanism]],
    ) -> None:
        values = [
            encode_metadata_record(RemoveUserScramCredentialRecord(version=0, name=name, mechanism=m.type_id), 0)
            for name, m in removed
        ]
        values += [
            encode_metadata_record(
                UserScramCredentialRecord(
                    version=0,
                    name=name,
                    mechanism=m.type_id,
                    salt=c.salt,
                    stored_key=c.stored_key,
                    server_key=c.server_key,
                    iterations=c.iterations,
                ),
                0,
            )
            for name, m, c in upserted
        ]
        self._log.append([(None, v) for v in values])


class FileAclStore:
    """ACLs as AccessControlEntryRecord / RemoveAccessControlEntryRecord, replayed at startup."""

    def __init__(self, metadata_log: InternalLog) -> None:
        self._log = metadata_log

    def load(self) -> Mapping[uuid.UUID, AclBinding]:
        out: dict[uuid.UUID, AclBinding] = {}
        for _, _, value in self._log.records():
            if value is None:
                continue
            record = decode_metadata_record(value)
            if isinstance(record, AccessControlEntryRecord):
                out[record.id] = AclBinding(
                    ResourceType(record.resource_type),
                    record.resource_name,
                    PatternType(record.pattern_type),
                    record.principal,
                    record.host,
                    AclOperation(record.operation),
                    AclPermissionType(record.permission_type),
                )
            elif isinstance(record, RemoveAccessControlEntryRecord):
                out.pop(record.id, None)
        return out

    def acls_changed(self, added: Sequence[tuple[uuid.UUID, AclBinding]], removed: Sequence[uuid.UUID]) -> None:
        values = [encode_metadata_record(RemoveAccessControlEntryRecord(version=0, id=acl_id), 0) for acl_id in removed]
        values += [
            encode_metadata_record(
                AccessControlEntryRecord(
                    version=0,
                    id=acl_id,
                    resource_type=int(acl.resource_type),
                    resource_name=acl.resource_name,
                    pattern_type=int(acl.pattern_type),
                    principal=acl.principal,
                    host=acl.host,
                    operation=int(acl.operation),
                    permission_type=int(acl.permission_type),
                ),
                0,
            )
            for acl_id, acl in added
        ]
        self._log.append([(None, v) for v in values])


class FileDelegationTokenStore:
    """Delegation tokens as DelegationTokenRecord / RemoveDelegationTokenRecord, replayed at startup."""

    def __init__(self, metadata_log: InternalLog) -> None:
        self._log = metadata_log

    def load_tokens(self) -> Sequence[TokenInformation]:
        out: dict[str, TokenInformation] = {}
        for _, _, value in self._log.records():
            if value is None:
                continue
            record = decode_metadata_record(value)
            if isinstance(record, DelegationTokenRecord):
                out.pop(record.token_id, None)
                out[record.token_id] = TokenInformation(
                    record.token_id,
                    _principal(record.owner),
                    _principal(record.requester),
                    tuple(_principal(r) for r in record.renewers),
                    record.issue_timestamp,
                    record.max_timestamp,
                    record.expiration_timestamp,
                )
            elif isinstance(record, RemoveDelegationTokenRecord):
                out.pop(record.token_id, None)
        return list(out.values())

    def token_written(self, token: TokenInformation) -> None:
        record = DelegationTokenRecord(
            version=0,
            owner=str(token.owner),
            requester=str(token.requester),
            renewers=[str(r) for r in token.renewers],
            issue_timestamp=token.issue_ms,
            max_timestamp=token.max_ms,
            expiration_timestamp=token.expiry_ms,
            token_id=token.token_id,
        )
        self._log.append([(None, encode_metadata_record(record, 0))])

    def token_removed(self, token_id: str) -> None:
        record = RemoveDelegationTokenRecord(version=0, token_id=token_id)
        self._log.append([(None, encode_metadata_record(record, 0))])


def _principal(text: str) -> KafkaPrincipal:
    """A principal as a DelegationTokenRecord holds it, read as Kafka's SecurityUtils.parseKafkaPrincipal
    does: split at the first colon, an empty type kept (a token's owner may have one)."""
    principal_type, _, name = text.partition(":")
    return KafkaPrincipal(principal_type, name)
