"""The SCRAM credential admin APIs: DescribeUserScramCredentials (key 50): v0 and
AlterUserScramCredentials (key 51): v0, stored as KRaft records in `__cluster_metadata`.

Authorization: DESCRIBE on the cluster to describe, ALTER to change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.security import ScramDeletion, ScramUpsertion
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.schema_codec.messages import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
)

from ..api import KafkaApi, top_level_error
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks, the_cluster

if TYPE_CHECKING:
    from trafka.domain.security import UserScramCredentials


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    credentials: UserScramCredentials


def handle_alter_user_scram_credentials(
    ctx: Uses, request: AlterUserScramCredentialsRequest, version: int, client: ClientInfo
):
    results = ctx.credentials.alter(
        [ScramDeletion(d.name, d.mechanism) for d in request.deletions],
        [ScramUpsertion(u.name, u.mechanism, u.iterations, u.salt, u.salted_password) for u in request.upsertions],
    )
    Result = AlterUserScramCredentialsResponse.AlterUserScramCredentialsResult
    return AlterUserScramCredentialsResponse(
        version=version,
        throttle_time_ms=0,
        results=[Result(user=r.user, error_code=r.error, error_message=r.message) for r in results],
    )


def handle_describe_user_scram_credentials(
    ctx: Uses, request: DescribeUserScramCredentialsRequest, version: int, client: ClientInfo
):
    users = None if request.users is None else [u.name for u in request.users]
    Result = DescribeUserScramCredentialsResponse.DescribeUserScramCredentialsResult
    Info = Result.CredentialInfo
    return DescribeUserScramCredentialsResponse(
        version=version,
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        error_message="",  # Kafka's answer: the field's default, not null
        results=[
            Result(
                user=r.user,
                error_code=r.error,
                error_message=r.message,
                credential_infos=[Info(mechanism=m, iterations=i) for m, i in r.credentials],
            )
            for r in ctx.credentials.describe(users)
        ],
    )


def _alter_refusal(response_class: Any, request: Any, version: int, error: int) -> Any:
    result = response_class.AlterUserScramCredentialsResult
    users = dict.fromkeys([d.name for d in request.deletions] + [u.name for u in request.upsertions])
    return response_class(
        version=version,
        throttle_time_ms=0,
        results=[result(user=u, error_code=error, error_message=None) for u in users],
    )


DESCRIBE_USER_SCRAM_CREDENTIALS = KafkaApi(
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
    (0, 0),
    handle_describe_user_scram_credentials,
    authorization=Checks((Check(Res.CLUSTER, Op.DESCRIBE, the_cluster),)),
    refusal=top_level_error,
    read_only=False,
)
ALTER_USER_SCRAM_CREDENTIALS = KafkaApi(
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
    (0, 0),
    handle_alter_user_scram_credentials,
    authorization=Checks((Check(Res.CLUSTER, Op.ALTER, the_cluster),)),
    refusal=lambda api, request, version, error: _alter_refusal(api.response, request, version, error),
    read_only=False,
)
APIS = (DESCRIBE_USER_SCRAM_CREDENTIALS, ALTER_USER_SCRAM_CREDENTIALS)
