"""SCRAM credentials live in `__cluster_metadata` as Kafka's UserScramCredentialRecord: written by
AlterUserScramCredentials or `trafka user add`, surviving a restart, never holding the password."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from kafka.record import MemoryRecords

from trafka.adapters.filesystem.metadata_records import UserScramCredentialRecord, decode_metadata_record

from ..scram_client import ScramClient
from .secured import add_scram_users, sasl_config, secured_broker
from .test_sasl_wire import authenticate, handshake
from .wire import WireClient

CONFIG = sasl_config("PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0")


def scram_login(bootstrap: str, user: str, password: str, mechanism: str = "SCRAM-SHA-256") -> int:
    client = ScramClient("sha" + mechanism[-3:], user, password)
    with WireClient(bootstrap) as wire:
        handshake(wire, mechanism)
        first = authenticate(wire, client.client_first())
        if first.error_code:
            return first.error_code
        return authenticate(wire, client.client_final(first.auth_bytes)).error_code


def metadata_records(data_dir: Path) -> list:
    out = []
    for segment in sorted((data_dir / "__cluster_metadata-0").glob("*.log")):
        batches = MemoryRecords(segment.read_bytes())
        while (batch := batches.next_batch()) is not None:
            out += [decode_metadata_record(record.value) for record in batch if record.value is not None]
    return out


def user_add(data_dir: Path, name: str, mechanism: str, password: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "trafka",
            "user",
            "add",
            name,
            "--mechanism",
            mechanism,
            "--data-dir",
            str(data_dir),
            *extra,
        ],
        input=password + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_credentials_altered_through_the_admin_api_survive_a_restart(tmp_path):
    data_dir = tmp_path / "logs"
    with secured_broker(tmp_path, CONFIG, ("--data-dir", str(data_dir))) as listeners:
        add_scram_users(listeners["PLAINTEXT"]["bootstrap"], {"erin": "erin-secret"})
    with secured_broker(tmp_path, CONFIG, ("--data-dir", str(data_dir))) as listeners:
        assert scram_login(listeners["SASL_PLAINTEXT"]["bootstrap"], "erin", "erin-secret") == 0
        assert scram_login(listeners["SASL_PLAINTEXT"]["bootstrap"], "erin", "wrong", "SCRAM-SHA-512") == 58
    records = [r for r in metadata_records(data_dir) if isinstance(r, UserScramCredentialRecord)]
    assert sorted((r.name, r.mechanism, r.iterations) for r in records) == [("erin", 1, 4096), ("erin", 2, 4096)]
    assert not any(b"erin-secret" in p.read_bytes() for p in (data_dir / "__cluster_metadata-0").iterdir())


def test_trafka_user_add_writes_a_credential_the_broker_accepts(tmp_path):
    data_dir = tmp_path / "logs"
    done = user_add(data_dir, "frank", "SCRAM-SHA-512", "frank-secret", "--iterations", "8192")
    assert done.returncode == 0, done.stderr
    assert "SCRAM-SHA-512 credential for frank written" in done.stdout
    with secured_broker(tmp_path, CONFIG, ("--data-dir", str(data_dir))) as listeners:
        assert scram_login(listeners["SASL_PLAINTEXT"]["bootstrap"], "frank", "frank-secret", "SCRAM-SHA-512") == 0
        assert scram_login(listeners["SASL_PLAINTEXT"]["bootstrap"], "frank", "frank-secret", "SCRAM-SHA-256") == 58
    [record] = [r for r in metadata_records(data_dir) if isinstance(r, UserScramCredentialRecord)]
    assert (record.name, record.mechanism, record.iterations) == ("frank", 2, 8192)


@pytest.mark.parametrize(
    "args, password, message",
    [
        (("--iterations", "100"), "pw", "--iterations must be 4096..16384"),
        ((), "", "the password must not be empty"),
    ],
)
def test_trafka_user_add_refuses_in_one_line(tmp_path, args, password, message):
    done = user_add(tmp_path / "logs", "gina", "SCRAM-SHA-256", password, *args)
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1
