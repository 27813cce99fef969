"""`trafka user add NAME --mechanism SCRAM-SHA-256`: a SCRAM credential written into a stopped broker's log dir.

For operators without an admin client at hand, as Kafka's `kafka-storage format --add-scram`: the
password comes from stdin (or a prompt, asked twice, on a terminal), a random salt is drawn, and the
credential (salt, stored key, server key, iterations: never the password) is appended to
`__cluster_metadata` as the UserScramCredentialRecord AlterUserScramCredentials would write. Run it
while the broker is stopped; a running broker takes users through AlterUserScramCredentials.
"""

from __future__ import annotations

import argparse
import getpass
import os
import secrets
import sys
from typing import Any

SALT_BYTES = 32
# Kafka's mechanisms and iteration bounds (the domain's ScramMechanism, MIN_/MAX_ITERATIONS; a unit
# test holds them equal), written out so that building the parser loads no domain (ADR 70).
MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
ITERATIONS = (4096, 16384)


def add_user_parser(commands: Any) -> None:
    user = commands.add_parser("user", help="manage SCRAM users in a stopped broker's log dir")
    verbs = user.add_subparsers(dest="user_command", required=True)
    add = verbs.add_parser("add", help="add or replace a user's SCRAM credential (password from stdin or a prompt)")
    add.add_argument("name")
    add.add_argument("--mechanism", required=True, choices=MECHANISMS)
    add.add_argument("--iterations", type=int, default=ITERATIONS[0], help=f"{ITERATIONS[0]}..{ITERATIONS[1]}")
    add.add_argument("--data-dir", help="the broker's log dir (default: from --config and TRAFKA_* variables)")
    add.add_argument("--config", help="TOML configuration file")


def read_password(stdin=sys.stdin) -> str:
    from ..config.settings import ConfigError

    if stdin.isatty():
        first = getpass.getpass("Password: ")
        if first != getpass.getpass("Password again: "):
            raise ConfigError("the passwords do not match")
        return first
    return stdin.readline().rstrip("\r\n")


def run_user(args: argparse.Namespace, stdin=sys.stdin) -> int:
    from trafka.domain.security import ScramCredential, ScramMechanism, UserScramCredentials
    from trafka.domain.security.scram import MAX_ITERATIONS, MIN_ITERATIONS

    from ..config.settings import ConfigError, load_settings  # the broker's configuration and stores, on use
    from ..wiring.bootstrap import default_adapters

    try:
        mechanism = ScramMechanism.from_name(args.mechanism)
        assert mechanism is not None
        if not MIN_ITERATIONS <= args.iterations <= MAX_ITERATIONS:
            raise ConfigError(f"--iterations must be {MIN_ITERATIONS}..{MAX_ITERATIONS}, as Kafka requires")
        if not args.name:
            raise ConfigError("the user name must not be empty")
        overrides: dict[str, Any] = {"storage": {"kind": "filesystem"}}
        if args.data_dir:
            overrides["storage"]["data_dir"] = args.data_dir
        settings = load_settings(args.config, os.environ, overrides)
        password = read_password(stdin)
        if not password:
            raise ConfigError("the password must not be empty")
        adapters = default_adapters(settings)
    except ConfigError as exc:
        print(f"trafka: {exc}", file=sys.stderr)
        return 2
    try:
        credential = ScramCredential.from_password(
            mechanism, password, secrets.token_bytes(SALT_BYTES), args.iterations
        )
        UserScramCredentials(adapters.scram_store).upsert(args.name, mechanism, credential)
    finally:
        adapters.stop()
    print(f"{mechanism.mechanism_name} credential for {args.name} written to {settings.storage.data_dir}")
    return 0
