"""`trafka quota alter|describe`: client quotas, set the way `kafka-configs.sh` sets them.

    trafka quota alter --user alice --client app --add-config producer_byte_rate=1048576,request_percentage=50
    trafka quota alter --client-defaults --delete-config consumer_byte_rate
    trafka quota alter --ip 10.0.0.7 --add-config connection_creation_rate=20
    trafka quota describe [--user U | --user-defaults] [--client C | --client-defaults] [--ip I | --ip-defaults]

The entity flags are `kafka-configs.sh`'s (`--user`, `--client`, `--ip` and their `--*-defaults`), and
`--add-config`/`--delete-config` take its comma-separated lists. `alter` sends AlterClientQuotas,
`describe` DescribeClientQuotas (the entities named match exactly, the others any; with no entity
flag, every quota), through the operator commands' client (ADR 101).
"""

from __future__ import annotations

import argparse
from typing import Any

from .client import CommandError, add_connection_options, admin_client, run_operator
from .output import OK, USAGE, print_rows

_KINDS = (("user", "user"), ("client", "client-id"), ("ip", "ip"))
DEFAULT = "<default>"


def add_quota_parser(commands: Any) -> None:
    quota = commands.add_parser("quota", help="alter and describe client quotas (as kafka-configs.sh)")
    verbs = quota.add_subparsers(dest="verb", required=True)
    alter = verbs.add_parser("alter", help="add or delete quota configs of an entity")
    _entity_options(alter)
    alter.add_argument("--add-config", default="", metavar="K=V[,K=V...]", help="e.g. producer_byte_rate=1048576")
    alter.add_argument("--delete-config", default="", metavar="K[,K...]")
    alter.add_argument("--validate-only", action="store_true", help="check, change nothing")
    add_connection_options(alter)
    describe = verbs.add_parser("describe", help="the quotas set, on the entities named (default: all)")
    _entity_options(describe)
    add_connection_options(describe)


def _entity_options(parser: argparse.ArgumentParser) -> None:
    for flag, kind in _KINDS:
        group = parser.add_mutually_exclusive_group()
        group.add_argument(f"--{flag}", metavar="NAME", help=f"the {kind} entity")
        group.add_argument(f"--{flag}-defaults", action="store_true", help=f"the default {kind} entity")


def _entity(args: argparse.Namespace) -> dict[str, str | None]:
    entity: dict[str, str | None] = {}
    for flag, kind in _KINDS:
        if getattr(args, f"{flag}_defaults"):
            entity[kind] = None
        elif getattr(args, flag) is not None:
            entity[kind] = getattr(args, flag)
    return entity


def run_quota(args: argparse.Namespace) -> int:
    return run_operator(_alter if args.verb == "alter" else _describe, args)


def _send(args: argparse.Namespace, name: str, **fields: Any) -> Any:
    admin = admin_client(args)
    try:
        return admin.client.send(name, **fields)
    finally:
        admin.close()


def parse_add_config(text: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CommandError(f"--add-config wants KEY=VALUE, got {item!r}", USAGE)
        try:
            out[key.strip()] = float(value)
        except ValueError:
            raise CommandError(f"the value of {key} is not a number: {value!r}", USAGE) from None
    return out


def _alter(args: argparse.Namespace) -> int:
    from trafka.schema_codec.messages import AlterClientQuotasRequest

    entity = _entity(args)
    if not entity:
        raise CommandError("name an entity: --user, --client, --ip or their --*-defaults", USAGE)
    added = parse_add_config(args.add_config)
    deleted = [key.strip() for key in args.delete_config.split(",") if key.strip()]
    if not added and not deleted:
        raise CommandError("nothing to do: give --add-config and/or --delete-config", USAGE)
    Entry = AlterClientQuotasRequest.EntryData
    ops = [Entry.OpData(key=k, value=v, remove=False) for k, v in added.items()]
    ops += [Entry.OpData(key=k, value=0.0, remove=True) for k in deleted]
    (result,) = _send(
        args,
        "AlterClientQuotas",
        entries=[Entry(entity=[Entry.EntityData(entity_type=t, entity_name=n) for t, n in entity.items()], ops=ops)],
        validate_only=args.validate_only,
    ).entries
    if result.error_code:
        raise CommandError(result.error_message or f"error {result.error_code}")
    done = "Validated" if args.validate_only else "Completed"
    print(f"{done} updating quota configs for {_describe_entity(entity)}.")
    return OK


def _describe(args: argparse.Namespace) -> int:
    from trafka.schema_codec.messages import DescribeClientQuotasRequest

    Component = DescribeClientQuotasRequest.ComponentData
    components = [
        Component(entity_type=kind, match_type=1 if name is None else 0, match=name)
        for kind, name in _entity(args).items()
    ]
    response = _send(args, "DescribeClientQuotas", components=components, strict=False)
    if response.error_code:
        raise CommandError(response.error_message or f"error {response.error_code}")
    rows = []
    for entry in response.entries:
        entity = {e.entity_type: e.entity_name for e in entry.entity}
        for value in entry.values:
            rows.append(
                {
                    "user": _name(entity, "user"),
                    "client_id": _name(entity, "client-id"),
                    "ip": _name(entity, "ip"),
                    "quota": value.key,
                    "value": _number(value.value),
                }
            )
    rows.sort(key=lambda r: tuple(str(r[c]) for c in ("user", "client_id", "ip", "quota")))
    print_rows(rows, ["user", "client_id", "ip", "quota", "value"], args.output)
    return OK


def _name(entity: dict[str, str | None], kind: str) -> str | None:
    if kind not in entity:
        return None
    return DEFAULT if entity[kind] is None else entity[kind]


def _number(value: float) -> float | int:
    return int(value) if value.is_integer() else value


def _describe_entity(entity: dict[str, str | None]) -> str:
    words = {"user": "user-principal", "client-id": "client-id", "ip": "ip"}
    return ", ".join(
        f"the default {words[kind]}" if name is None else f"{words[kind]} '{name}'" for kind, name in entity.items()
    )
