"""What trafka covers of Kafka, as a page generated from the code (docs/COVERAGE.md).

    python scripts/coverage_page.py          # rewrite docs/COVERAGE.md
    python scripts/coverage_page.py --check  # exit 1 if it is out of date

Every part is read from what the broker runs: the handler registry (APIs and versions served), the
per-release tables (`kafka_version`), the topic configs the domain knows and those it acts on, the
Kafka broker keys the configuration maps, accepts as dynamic configs with nothing to apply, or
ignores, and the test controls of `trafka.Broker`. `tests/unit/app/test_coverage_page.py` fails when
the page and the code disagree, as fakeredis publishes the commands it supports.
"""

from __future__ import annotations

import inspect

from trafka.adapters.kafka.apis import build_registry
from trafka.adapters.kafka.releases import api_versions, releases
from trafka.domain.broker_configs import INERT, KAFKA_DYNAMIC
from trafka.domain.configs import HONOURED_TOPIC_CONFIGS, TOPIC_CONFIG_DEFAULTS

from .config.kafka_keys import IMPLEMENTED_KAFKA_KEYS
from .config.kafka_names import kafka_broker_keys
from .embedded import Broker, Cluster

# Names of the APIs kafka-python has no class for (trafka serves none of them).
_OTHER_NAMES = {
    38: "CreateDelegationToken",
    39: "RenewDelegationToken",
    40: "ExpireDelegationToken",
    41: "DescribeDelegationToken",
    64: "UnregisterBroker",
    68: "ConsumerGroupHeartbeat",
    69: "ConsumerGroupDescribe",
    71: "GetTelemetrySubscriptions",
    72: "PushTelemetry",
    76: "ShareGroupHeartbeat",
    77: "ShareGroupDescribe",
    78: "ShareFetch",
    79: "ShareAcknowledge",
    80: "AddRaftVoter",
    81: "RemoveRaftVoter",
    83: "InitializeShareGroupState",
    84: "ReadShareGroupState",
    85: "WriteShareGroupState",
    86: "DeleteShareGroupState",
    87: "ReadShareGroupStateSummary",
    88: "StreamsGroupHeartbeat",
    89: "StreamsGroupDescribe",
    90: "DescribeShareGroupOffsets",
    91: "AlterShareGroupOffsets",
    92: "DeleteShareGroupOffsets",
    93: "StreamsGroupTopologyDescriptionUpdate",
}

_KAFKA_PYTHON_NAMES = {
    57: "UpdateFeatures",
    74: "ListConfigResources",
}


def _range(versions: tuple[int, int] | None) -> str:
    if versions is None:
        return "—"
    low, high = versions
    return f"{low}" if low == high else f"{low}–{high}"


def _apis() -> list[str]:
    registry = build_registry()
    with_http = {api.api_key: api for api in build_registry(telemetry=True).apis()}
    latest = releases()[-1]
    kafka = api_versions(latest)
    served = {api.api_key: api for api in registry.apis()}
    lines = [
        "## Kafka APIs",
        "",
        f"Every API a Kafka {latest} broker serves to clients, and what trafka serves of it (its ApiVersions",
        "answer; a broker pinned with `kafka_version` serves the intersection with that release's table).",
        "",
        f"| key | API | trafka | Kafka {latest} |",
        "|---:|---|---|---|",
    ]
    for key in sorted(set(kafka) | set(served)):
        api = served.get(key)
        if api is not None:
            name = api.name
        else:
            name = _OTHER_NAMES.get(key) or _KAFKA_PYTHON_NAMES.get(key) or f"key {key}"
        if api is not None:
            ours = _range(api.versions)
        elif key in with_http:  # KIP-714's telemetry APIs (ADR 47)
            name = with_http[key].name
            ours = f"{_range(with_http[key].versions)} with `--http-port`"
        else:
            ours = "not served"
        lines.append(f"| {key} | {name} | {ours} | {_range(kafka.get(key))} |")
    count = sum(1 for key in kafka if key in served)
    lines += ["", f"{count} of Kafka {latest}'s {len(kafka)} APIs served.", ""]
    return lines


def _releases() -> list[str]:
    return [
        "## Kafka releases a broker can be pinned to",
        "",
        "`trafka.Broker(kafka_version=...)`, `trafka serve --kafka-version`, or the setting `broker.kafka_version`:",
        "",
        ", ".join(f"`{name}`" for name in releases()) + ".",
        "",
    ]


def _topic_configs() -> list[str]:
    lines = [
        "## Topic configs",
        "",
        "Honoured: the broker acts on it. Reported: validated, stored and described as Kafka does, with",
        "nothing to act on (one broker and one replica; preallocation, index sizing).",
        "",
        "| config | Kafka's default | trafka |",
        "|---|---|---|",
    ]
    for name, (default, _) in sorted(TOPIC_CONFIG_DEFAULTS.items()):
        support = "honoured" if name in HONOURED_TOPIC_CONFIGS else "reported"
        lines.append(f"| `{name}` | `{default}` | {support} |")
    lines.append("")
    return lines


def _broker_configs() -> list[str]:
    implemented = sorted(IMPLEMENTED_KAFKA_KEYS)
    inert = sorted(INERT & KAFKA_DYNAMIC)
    ignored = sorted(kafka_broker_keys() - IMPLEMENTED_KAFKA_KEYS - set(inert))
    return [
        "## Broker configs (Kafka's names)",
        "",
        f"Honoured ({len(implemented)}), in `server.properties`, `KAFKA_*` variables or `trafka.Broker` keywords:",
        "",
        ", ".join(f"`{name}`" for name in implemented) + ".",
        "",
        f"Dynamic, accepted and described with nothing to apply ({len(inert)}):",
        "",
        ", ".join(f"`{name}`" for name in inert) + ".",
        "",
        f"Every other Kafka broker key ({len(ignored)}) is accepted and ignored, with a warning "
        "(`trafka config show` lists them).",
        "",
    ]


def _call(name: str, function: object) -> str:
    parameters = [
        p.name if p.default is inspect.Parameter.empty else f"{p.name}={p.default!r}"
        for p in inspect.signature(function).parameters.values()  # type: ignore[arg-type]
        if p.name != "self"
    ]
    return f"`{name}({', '.join(parameters)})`"


def _summary(function: object) -> str:
    return " ".join((inspect.getdoc(function) or "").split("\n\n")[0].split()).replace("|", "\\|")


def _controls() -> list[str]:
    from trafka import testing

    lines = [
        "## Test controls",
        "",
        "`trafka.Broker`'s faults, clock and state helpers (the same on `open_broker`'s broker):",
        "",
        "| method | what it does |",
        "|---|---|",
    ]
    for name, member in sorted(vars(Broker).items()):
        if name.startswith("_") or not inspect.isfunction(member) or name in ("start", "stop"):
            continue
        lines.append(f"| {_call(name, member)} | {_summary(member)} |")
    lines += [
        "",
        "`trafka.Cluster(brokers=N)` has every method above, and:",
        "",
        "| method | what it does |",
        "|---|---|",
    ]
    for name, member in sorted(vars(Cluster).items()):
        if name.startswith("_") or not inspect.isfunction(member):
            continue
        lines.append(f"| {_call(name, member)} | {_summary(member)} |")
    lines += ["", "What an interceptor returns (`trafka.testing`):", "", "| verdict | what it does |", "|---|---|"]
    for name in ("respond", "delay", "drop"):
        member = getattr(testing, name)
        lines.append(f"| {_call(name, member)} | {_summary(member)} |")
    lines.append("")
    return lines


def _other_languages() -> list[str]:
    from .cli.main import build_parser
    from .embedded.testing_http import __doc__ as endpoints

    serve = next(
        action
        for action in build_parser()._subparsers._group_actions[0].choices.values()  # type: ignore[union-attr]
        if action.prog.endswith(" serve")
    )
    flags = [
        f"| `{', '.join(action.option_strings)}` | {' '.join((action.help or '').split())} |"
        for action in serve._actions
        if action.option_strings and action.dest in ("brokers", "kafka_version", "clock", "testing", "ready_file")
    ]
    assert endpoints is not None
    table = endpoints[endpoints.index("    POST") :].rstrip()
    return [
        "## From other languages",
        "",
        "`trafka serve --memory --port 0 --http-port 0 --testing --ready-file F`, with:",
        "",
        "| flag | what it does |",
        "|---|---|",
        *flags,
        "",
        "The control endpoints on the HTTP listener (JSON; 400 with the reason when impossible):",
        "",
        "```",
        *(line[4:] for line in table.splitlines()),
        "```",
        "",
    ]


def render() -> str:
    lines = [
        "# What trafka covers",
        "",
        "Generated from the code by `python scripts/coverage_page.py`; a test fails when it drifts.",
        "",
    ]
    for part in (_apis, _releases, _topic_configs, _broker_configs, _controls, _other_languages):
        lines += part()
    return "\n".join(lines).rstrip("\n") + "\n"
