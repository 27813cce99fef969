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
