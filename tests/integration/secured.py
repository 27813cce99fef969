"""A real broker with secured listeners, for the SASL (and TLS) suites: its config, users and clients' settings."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

from confluent_kafka.admin import AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion

from .broker import DATA_DIR_ENV, BrokerProcess

PLAIN_USERS = {"alice": "alice-secret", "bob": "bob-secret"}
SCRAM_USERS = {"carol": "carol-secret", "dave": "dave-secret"}
JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    + " ".join(f'user_{name}="{password}"' for name, password in PLAIN_USERS.items())
    + ";"
)


def sasl_config(listeners: str, extra: str = "", security: str = "") -> str:
    """Listeners with SASL: PLAIN users from JAAS, both SCRAMs; `security` lines go in [security]."""
    return f"""
[server]
listeners = "{listeners}"

[security]
sasl_enabled_mechanisms = "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512"
connection_failed_authentication_delay_ms = 100
{security}

[security.listener_name.sasl_plaintext]
plain_sasl_jaas_config = '{JAAS}'
{extra}
"""


@contextlib.contextmanager
def secured_broker(
    folder: Path, config: str, args: tuple[str, ...] = ("--memory",), listen: bool = True
) -> Iterator[dict]:
    """Start a broker with `config`; yield its listeners by name (the ready file's), stop it after.
    `listen=False`: the config's listeners exactly, not rebound to 127.0.0.1 by --host/--port."""
    (folder / "trafka.toml").write_text(config)
    ready = folder / "ready.json"
    ready.unlink(missing_ok=True)
    broker = BrokerProcess(
        [*args, "--config", str(folder / "trafka.toml"), "--ready-file", str(ready)], env=DATA_DIR_ENV, listen=listen
    )
    broker.start()
    try:
        listeners = json.loads(ready.read_text())["listeners"]
        yield {
            name: {**listener, "bootstrap": f"127.0.0.1:{listener['port']}", "process": broker}
            for name, listener in listeners.items()
        }
    finally:
        if broker.process.poll() is None:
            assert broker.stop() == 0, broker.log()


def add_scram_users(bootstrap: str, users: dict[str, str], **security) -> None:
    """Both SCRAM mechanisms for each user, through AlterUserScramCredentials (the admin API Kafka's tools use);
    one request per mechanism, as Kafka refuses a user altered twice in one request."""
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0, **security})
    for mechanism in (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512):
        upsertions = [
            UserScramCredentialUpsertion(name, ScramCredentialInfo(mechanism, 4096), password.encode())
            for name, password in users.items()
        ]
        for future in admin.alter_user_scram_credentials(upsertions).values():
            assert future.result(15) is None
