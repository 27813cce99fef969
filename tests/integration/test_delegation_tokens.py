"""Delegation tokens (KIP-48, ADR 139) with a real client: franz-go's kadm and its SCRAM token login
(tests/go/dtoken), against trafka with a SASL_PLAINTEXT listener, SCRAM users and a secret key; and what
a broker without a secret key answers. The domain's rules are tests/unit/domain/security."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from trafka.schema_codec.messages import CreateDelegationTokenRequest, CreateDelegationTokenResponse

from .secured import SCRAM_USERS, add_scram_users, sasl_config, secured_broker
from .wire import WireClient

GO_TESTS = Path(__file__).resolve().parent.parent / "go"
SECRET = 'delegation_token_secret_key = "a-secret-only-this-test-knows"'


def _go_test(sasl: str, plain: str) -> subprocess.CompletedProcess[str]:
    go = shutil.which("go")
    if go is None:
        pytest.fail("the go toolchain is needed (tests/go): install Go 1.24 or later")
    return subprocess.run(
        [go, "test", "-count=1", "-v", "-run", "TestDelegationTokens", "./dtoken/"],
        cwd=GO_TESTS,
        env={**os.environ, "TRAFKA_SASL_BOOTSTRAP": sasl, "TRAFKA_PLAIN_BOOTSTRAP": plain},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_franz_go_creates_logs_in_with_renews_describes_and_expires_a_token(tmp_path):
    config = sasl_config("SASL_PLAINTEXT://127.0.0.1:0,PLAINTEXT://127.0.0.1:0", security=SECRET)
    with secured_broker(tmp_path, config, args=("--data-dir", str(tmp_path / "data")), listen=False) as listeners:
        add_scram_users(listeners["PLAINTEXT"]["bootstrap"], SCRAM_USERS)
        result = _go_test(listeners["SASL_PLAINTEXT"]["bootstrap"], listeners["PLAINTEXT"]["bootstrap"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "--- PASS: TestDelegationTokens" in result.stdout


def _create(bootstrap: str, version: int):
    request = CreateDelegationTokenRequest(
        version=version, owner_principal_type=None, owner_principal_name=None, renewers=[], max_lifetime_ms=-1
    )
    with WireClient(bootstrap) as client:
        client.send(request, version)
        return client.receive(CreateDelegationTokenResponse, version)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_a_token_request_on_plaintext_is_not_allowed_as_kafka_answers(tmp_path, version):
    config = sasl_config("SASL_PLAINTEXT://127.0.0.1:0,PLAINTEXT://127.0.0.1:0", security=SECRET)
    with secured_broker(tmp_path, config, listen=False) as listeners:
        answer = _create(listeners["PLAINTEXT"]["bootstrap"], version)
    assert answer.error_code == 64  # DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    assert (answer.principal_type, answer.principal_name, answer.token_id) == ("User", "ANONYMOUS", "")
    assert (answer.issue_timestamp_ms, answer.expiry_timestamp_ms, answer.max_timestamp_ms) == (-1, -1, -1)


def test_the_same_token_flow_passes_against_apache_kafka(tmp_path):
    """The yardstick: the Go test above, unchanged, against Apache Kafka with the same listeners, users
    and a secret key."""
    from tests.kafka.reference import ReferenceKafka

    with ReferenceKafka(tmp_path / "kafka", properties={"delegation.token.secret.key": "kafka-secret"}) as kafka:
        add_scram_users(kafka.bootstrap, SCRAM_USERS)
        result = _go_test(kafka.listeners["SASL_PLAINTEXT"], kafka.bootstrap)
        log = kafka.log_tail()
    assert result.returncode == 0, result.stdout + result.stderr + log
    assert "--- PASS: TestDelegationTokens" in result.stdout


def _sasl_plain(bootstrap: str, user: str, password: str) -> WireClient:
    """A wire connection authenticated with SASL/PLAIN (SaslHandshake v1, SaslAuthenticate v2)."""
    from trafka.schema_codec.messages import (
        SaslAuthenticateRequest,
        SaslAuthenticateResponse,
        SaslHandshakeRequest,
        SaslHandshakeResponse,
    )

    client = WireClient(bootstrap)
    assert client.request(SaslHandshakeRequest(version=1, mechanism="PLAIN"), SaslHandshakeResponse, 1).error_code == 0
    token = f"\0{user}\0{password}".encode()
    answer = client.request(SaslAuthenticateRequest(version=2, auth_bytes=token), SaslAuthenticateResponse, 2)
    assert answer.error_code == 0, answer
    return client


def test_odd_owner_principals_are_answered_as_kafka_and_survive_a_restart(tmp_path):
    """An owner principal without a type is Kafka's error answer (its KafkaPrincipal refuses a null type),
    and one with an empty type is a token whose record a restarted broker reads back, as Kafka's
    parseKafkaPrincipal does: no client can leave a record that stops the tokens from loading."""
    from trafka.schema_codec.messages import DescribeDelegationTokenRequest, DescribeDelegationTokenResponse

    config = sasl_config("SASL_PLAINTEXT://127.0.0.1:0,PLAINTEXT://127.0.0.1:0", security=SECRET)
    args = ("--data-dir", str(tmp_path / "data"))

    def create(client: WireClient, owner_type: str | None):
        request = CreateDelegationTokenRequest(
            version=3, owner_principal_type=owner_type, owner_principal_name="odd", renewers=[], max_lifetime_ms=-1
        )
        return client.request(request, CreateDelegationTokenResponse, 3)

    with secured_broker(tmp_path, config, args=args, listen=False) as listeners:
        with _sasl_plain(listeners["SASL_PLAINTEXT"]["bootstrap"], "alice", "alice-secret") as client:
            nameless = create(client, None)
            assert (nameless.error_code, nameless.principal_name, nameless.token_id) == (-1, "alice", "")
            untyped = create(client, "")
            assert (untyped.error_code, untyped.principal_type, untyped.principal_name) == (0, "", "odd")
    with secured_broker(tmp_path, config, args=args, listen=False) as listeners:
        with _sasl_plain(listeners["SASL_PLAINTEXT"]["bootstrap"], "alice", "alice-secret") as client:
            Owner = DescribeDelegationTokenRequest.DescribeDelegationTokenOwner
            request = DescribeDelegationTokenRequest(version=3, owners=[Owner(principal_type="", principal_name="odd")])
            described = client.request(request, DescribeDelegationTokenResponse, 3)
    assert described.error_code == 0
    assert [t.token_id for t in described.tokens] == [untyped.token_id]  # alice requested it: hers to see
